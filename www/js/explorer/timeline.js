// The training step of a trained model that ships its timeline (models/<name>/timeline/): a
// slider over its checkpoints — every view then shows the model as it was at that step, its
// f16 checkpoint loaded in place of the final weights — and the curves of its training: the
// loss, the accuracy its script measured, and every head's scores, the chosen step and the
// phase change marked. timeline.json is fetched the first time a model with one is shown.

import { addStrings } from "../i18n.js";
import { FOLDERS } from "../settings.js";
import { FIND } from "../strings/find.js";
import { TRAIN } from "../strings/train.js";
import { nearestCheckpoint, timelineAt } from "../timeline-file.js";
import { chartWidth, drawCurves, headColor, layerKeys } from "../views/curves.js";
import { el } from "../views/dom.js";

addStrings(FIND);
addStrings(TRAIN);

/** models/<name>/timeline/timeline.json beside the page, checked; null where it cannot be read. */
const timelineOf = (name) => timelineAt(new URL(`../../models/${name}/timeline/timeline.json`, import.meta.url));

export class TimelinePanel {
  #app;
  #timeline = null;
  #timer = 0;
  #legend = ""; // the layers and language the legend was written for

  constructor(app) {
    this.#app = app;
  }

  bind() {
    const { $ } = this.#app;
    $("timeline-step").addEventListener("input", () => this.#moved());
    $("timeline-prev").addEventListener("click", () => this.#nudge(-1));
    $("timeline-next").addEventListener("click", () => this.#nudge(1));
    $("timeline-charts").addEventListener("toggle", () => this.#draw());
    addEventListener("resize", () => this.#draw());
  }

  /** The step a link asked for, moved to the nearest checkpoint before the model loads: the step to load (null: the model as trained). */
  async resolve(choice, step) {
    if (step === null || !FOLDERS[choice]?.timeline) return null;
    const timeline = await timelineOf(FOLDERS[choice].name);
    if (!timeline) return null;
    const { at, load } = nearestCheckpoint(timeline, step);
    if (at !== step) this.#app.notices.set("step", this.#app.T("timeline.moved", { asked: step.toLocaleString(this.#app.lang), step: at.toLocaleString(this.#app.lang) }));
    return load;
  }

  /** A model was shown: its timeline, if it has one. */
  async afterModelChange() {
    const { $, model } = this.#app;
    const folder = FOLDERS[model?.choice];
    this.#timeline = folder?.timeline ? await timelineOf(folder.name) : null;
    $("timeline").hidden = !this.#timeline;
    if (!this.#timeline) return;
    const slider = $("timeline-step");
    slider.max = String(this.#timeline.checkpoints.length - 1);
    slider.value = String(this.#index());
    if (!this.#opened) {
      this.#opened = true;
      $("timeline-charts").open = innerWidth >= 700; // on a phone the curves wait for a tap
    }
    this.applyLanguage();
  }

  #opened = false;

  /** The slider's position: the chosen checkpoint, or the last (the model as trained). */
  #index() {
    const step = this.#app.state.step;
    const last = this.#timeline.checkpoints.length - 1;
    if (step === null) return last;
    const i = this.#timeline.checkpoints.findIndex((c) => c.step === step);
    return i < 0 ? last : i;
  }

  #nudge(by) {
    const slider = this.#app.$("timeline-step");
    slider.value = String(Math.min(Number(slider.max), Math.max(0, Number(slider.value) + by)));
    this.#moved();
  }

  /** The slider moved: say the step at once, load its model a moment after it stops. */
  #moved() {
    const { $ } = this.#app;
    const i = Number($("timeline-step").value);
    const checkpoint = this.#timeline.checkpoints[i];
    const step = i === this.#timeline.checkpoints.length - 1 ? null : checkpoint.step;
    this.#say(checkpoint.step);
    this.#draw(checkpoint.step);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (step === this.#app.state.step) return;
      this.#app.set({ step }, { step: false });
      this.#app.notices.set("step", null);
      this.#app.chooseModel(this.#app.model.choice, { keepHead: true });
    }, 200);
  }

  applyLanguage() {
    if (!this.#timeline) return;
    const step = this.#timeline.checkpoints[this.#index()].step;
    this.#say(step);
    this.#draw(step);
  }

  /** What the chosen step is: where it lies in training, its loss and accuracy. */
  #say(step) {
    const { $, T, lang } = this.#app;
    const t = this.#timeline;
    const point = t.curve.reduce((best, c) => (Math.abs(c.step - step) < Math.abs(best.step - step) ? c : best), t.curve[0]);
    const n = (v) => v.toLocaleString(lang, { maximumFractionDigits: 2, minimumFractionDigits: 2 });
    $("timeline-label").textContent = T(step === t.steps ? "timeline.final" : "timeline.of", { step: step.toLocaleString(lang), steps: t.steps.toLocaleString(lang) });
    const phase = t.phaseChange ? T("timeline.phase", { step: t.phaseChange.step.toLocaleString(lang), rule: t.phaseChange[lang] ?? t.phaseChange.en }) : "";
    $("timeline-note").textContent = `${T("timeline.point", { loss: n(point.loss), accuracy: n(point.accuracy), what: t.accuracy?.[lang] ?? t.accuracy?.en ?? "" })} ${phase}`;
    $("timeline-step").setAttribute("aria-valuetext", $("timeline-label").textContent);
  }

  /** The curves, the chosen step and the phase change marked; drawn only while they are open. */
  #draw(step = null) {
    const { $, T, lang } = this.#app;
    const t = this.#timeline;
    if (!t || !$("timeline-charts").open) return;
    const chosen = step ?? t.checkpoints[this.#index()].step;
    const width = Math.max(240, ($("timeline").clientWidth || 600) - 24);
    const marks = [{ x: chosen, color: "#222", dash: [] }, ...(t.phaseChange ? [{ x: t.phaseChange.step, label: T("train.phaseMark"), color: "#b2182b" }] : [])];
    const xs = t.curve.map((c) => c.step);
    const top = Math.ceil(Math.max(...t.curve.map((c) => c.loss)));
    // drawn into the canvases already there: a new canvas is a buffer made in the next frame,
    // and this draws at each move of the slider
    const box = $("timeline-curves");
    let drawn = 0;
    const chart = (title, series, options = {}) => {
      const canvas = box.children[drawn] ?? box.appendChild(el("canvas", { role: "img" }));
      drawn += 1;
      canvas.setAttribute("aria-label", title);
      drawCurves(canvas, { width: chartWidth(width), height: 150, xMax: t.steps, series, marks, title, lang, ...options });
    };
    chart(T("train.loss"), [{ xs, ys: t.curve.map((c) => c.loss), color: "#444" }], { yMax: top, yTicks: [0, top / 2, top] });
    chart(T("timeline.accuracy"), [{ xs, ys: t.curve.map((c) => c.accuracy), color: "#222", width: 2 }]);
    const hs = t.heads.map((h) => h.step);
    for (const score of t.scores ?? []) {
      const rows = t.heads[0]?.scores[score.name] ?? [];
      const series = rows.flatMap((row, layer) => row.map((_, head) => ({ xs: hs, ys: t.heads.map((h) => h.scores[score.name][layer][head]), color: headColor(layer, head, row.length), label: `L${layer + 1}H${head + 1}` })));
      // a mass between chosen tokens is named by them (the translator's 그것 → 동물), the rest as "find heads" names them
      const own = score[lang] ?? score.en;
      const name = (score.name === "mass" && own) || (FIND[lang]?.[`score.${score.name}`]?.split(":")[0] ?? own);
      chart(T("timeline.score", { score: name }), series);
    }
    while (box.children.length > drawn) box.lastElementChild.remove();
    const layers = t.heads[0]?.scores[t.scores?.[0]?.name]?.length ?? 0;
    if (this.#legend !== `${layers} ${lang}`) {
      this.#legend = `${layers} ${lang}`;
      $("timeline-legend").replaceChildren(...layerKeys(layers, (layer) => T("train.lineLayer", { layer: layer + 1 })));
    }
  }
}
