// What the model predicts, under the heatmap: the top token at every position (tap one for its
// top 10), heads turned off from here, the grid or a link (`off=1.0,1.3`, with before and after),
// the logit lens, and activation patching with its map. The numbers come from the worker's
// `predict` and `patch` (the core's, as `headmap predict` and `headmap patch` write them); this
// module draws them as text, never as HTML.

import { lutFor } from "../render/colormap.js";
import { defaultHeadPlace, headNames, offAt, offKept, offSplit, offTyped, placeOf, specOf, toggleOff, turnsHeadsOff } from "../settings.js";
import { el } from "../views/dom.js";
import { FlowView, flowShares } from "../views/flow.js";
import { lensRows, predictionDetail, predictionStrip } from "../views/predictions.js";
import { cssNumber } from "../views/sizes.js";

/** How many candidates a position's detail lists. */
const TOP = 10;
/** Layers × positions × a real vocabulary (50,000) past which the lens is computed for one position only. */
const LENS_ALL_CELLS = 2e7;

/** A share in [0, 1] in steps of 0.05: one stylesheet rule per step, not per value. */
const share = (p) => Math.round(20 * Math.min(1, Math.max(0, p))) / 20;

export class Predictor {
  #app;
  #position = null; // the position whose detail is open
  #shown = null; // { after, before } predictions documents of the last run
  #patchSignal = null;
  #patched = null; // the patching document on show, drawn again in another language
  #flow = null; // the FlowView
  #flowShares = { key: "", value: null }; // every layer's shares of the run on show

  constructor(app) {
    this.#app = app;
  }

  bind() {
    const { $ } = this.#app;
    $("off").addEventListener("change", () => this.#setOff(offTyped($("off").value)));
    $("off-this").addEventListener("click", () => {
      const shown = this.#app.shown;
      if (!shown || this.#isOff(shown.layer, shown.head)) return;
      this.#toggle(shown.layer, shown.head);
    });
    // the two switches (by the grid, by the find-heads map) are one
    for (const id of ["off-tap", "off-tap-find"]) {
      $(id).addEventListener("change", () => {
        for (const other of ["off-tap", "off-tap-find"]) $(other).checked = $(id).checked;
      });
    }
    $("off-clear").addEventListener("click", () => this.#setOff(""));
    $("off-mean").addEventListener("change", () => {
      this.#app.set({ offMean: $("off-mean").checked });
      this.#app.recompute();
    });
    $("lens-details").addEventListener("toggle", () => this.#drawLens());
    $("flow-details").addEventListener("toggle", () => this.drawFlow());
    this.#flow = new FlowView($("flow"), { T: (k, v) => this.#app.T(k, v) });
    // the corrupted text starts as the clean one, for the reader to change a word of
    $("patch-details").addEventListener("toggle", () => {
      const clean = this.#app.result?.request?.texts?.[0];
      if ($("patch-details").open && !$("patch-corrupt").value && clean) $("patch-corrupt").value = clean;
    });
    $("patch-run").addEventListener("click", () => this.#patch());
    $("patch-stop").addEventListener("click", () => this.#patchSignal?.abort());
  }

  /** Turns the head off, or back on, when the reader asked taps to; answers whether it did. */
  tapTurnsOff(layer, head) {
    if (!this.#app.$("off-tap").checked || !this.#canTurnOff()) return false;
    this.#toggle(layer, head);
    return true;
  }

  /** Heads can be turned off on a trained model, not on the toy or weights read from an attention file. */
  #canTurnOff() {
    const model = this.#app.model;
    return Boolean(model && turnsHeadsOff(model.info));
  }

  /** The place whose heads the grid and the map show. */
  #place() {
    return this.#app.shown?.place.place ?? placeOf(this.#app.state, this.#app.model.info);
  }

  #isOff(layer, head) {
    return offAt(this.#app.state.off, this.#place(), this.#app.model.info).has(`${layer}.${head}`);
  }

  #toggle(layer, head) {
    this.#setOff(toggleOff(this.#app.state.off, { place: this.#place(), layer, head }, this.#app.model.info));
  }

  #setOff(spec) {
    this.#app.set({ off: spec }, { step: true });
    this.#showOff(); // at once: a file's weights draw without a run that would say it
    if (this.#patched) this.#drawPatch(this.#patched); // which says whether heads are off
    this.#app.recompute();
  }

  applyLanguage() {
    this.#showOff();
    this.drawFlow();
    if (this.#shown) this.#draw();
    if (this.#patched) this.#drawPatch(this.#patched);
  }

  /** Which heads are off: the field, the note above the heatmap in the reader's words, and the tap switches where they work. */
  #showOff() {
    const { $, state, model, T } = this.#app;
    const off = offTyped(state.off);
    $("off").value = off;
    $("off-clear").hidden = !off;
    $("off-note").hidden = !off || !model;
    $("off").setAttribute("aria-invalid", "false");
    if (!off || !model) return this.#showTaps();
    // heads the model lacks and items that are no head are left on, and said so here, not as
    // an error in the view's place; the untrained toy and a file turn no head off at all
    const { has, lacks, malformed } = offSplit(off, model.info);
    const turns = turnsHeadsOff(model.info);
    if (turns && lacks.length + malformed.length > 0) $("off").setAttribute("aria-invalid", "true");
    $("off-note").textContent = turns ? this.#offWords(has, lacks, malformed) : T(model.info.fromFile ? "offFile" : "offToy");
    this.#showTaps();
  }

  /** The heads off in the reader's words, then those left on and the items left out, with how heads are written. */
  #offWords(has, lacks, malformed) {
    const { state, model, T } = this.#app;
    const { info } = model;
    const words = [];
    if (has.length) words.push(T(state.offMean ? "offNoteMean" : "offNote", { heads: headNames(has, info, T), spec: `off=${specOf(has, info)}` }));
    if (lacks.length) {
      const sizes = info.places.map((p) => [info.places.length > 1 && T(`place.${p.place}`), T("offSize", { layers: p.layers, heads: p.heads })].filter(Boolean).join(": "));
      words.push(T("offMissing", { heads: headNames(lacks, info, T), sizes: sizes.join("; ") }));
    }
    if (malformed.length) words.push(T("offMalformed", { items: malformed.map((item) => `“${item}”`).join(", ") }));
    if (lacks.length || malformed.length) {
      words.push(T("offHow"));
      const place = T(`place.${defaultHeadPlace(info)}`);
      if (info.places.length > 1) words.push(T("offHowPlace", { place: place[0].toLowerCase() + place.slice(1) }));
    }
    return words.join(" ");
  }

  /** The tap switches and "turn this head off", where a head can be turned off. */
  #showTaps() {
    for (const label of document.querySelectorAll(".off-tap")) label.hidden = !this.#canTurnOff();
    this.#app.$("off-this").hidden = !this.#canTurnOff();
  }

  afterModelChange() {
    this.#position = null;
    this.#shown = null;
    this.#patched = null;
    this.#app.$("patch-map").replaceChildren();
    this.#app.$("patch-status").textContent = "";
    this.#app.$("patch-error").hidden = true;
    // a file's weights draw without a run (app.js), so its note is said here too
    this.#showOff();
  }

  /** The first text of the run on show, and an encoder–decoder's target (what its decoder predicts over). */
  #request() {
    const { result, model, state } = this.#app;
    const texts = result.request.texts.slice(0, 1);
    return model.info.encoderDecoder ? { texts, targets: [result.request.targets?.[0] ?? state.target] } : { texts };
  }

  /** After every run: the predictions with the heads off, and without them to compare. */
  async update() {
    const { $, state, model, result } = this.#app;
    const off = model ? offKept(state.off, model.info) : "";
    $("off-mean").checked = Boolean(state.offMean);
    this.#showOff();
    if (!model || !result?.request || model.info.fromFile) return this.#clear();
    const base = this.#request();
    const ablation = state.offMean ? { ablation: "mean" } : {};
    try {
      const call = (extra) => this.#app.client.call("predict", { key: model.key, request: { ...base, topK: TOP, ...extra } });
      // with the heads off as the run has them: from the run itself when it kept its output
      const ofRun = result.request.output ? this.#app.client.call("runPredictions", { run: result.id, row: 0, topK: TOP }) : call(off ? { ablate: off, ...ablation } : {});
      const [after, before] = await Promise.all([ofRun, off ? call({}) : null]);
      this.#shown = { after, before };
      this.#app.probe.predictions = { after, before, off, fromRun: Boolean(result.request.output) }; // for the tests
      $("predict-status").hidden = true;
      this.#draw();
      if ($("lens-details").open) this.#drawLens();
    } catch (e) {
      this.#clear();
      $("predict-status").hidden = false;
      this.#app.probe.predictions = { error: e.code };
      $("predict-status").textContent = e.code === "no_output_head" ? this.#app.T("predict.none", { architecture: this.#app.architecture(model.info) }) : this.#app.errorText(e);
    }
  }

  #clear() {
    this.#shown = null;
    this.#app.$("predict-strip").replaceChildren();
    this.#app.$("predict-detail").hidden = true;
    this.#app.$("lens-table").replaceChildren();
  }

  /** The strip, and the chosen position's top 10 (before and after, when heads are off). */
  #draw() {
    const { $ } = this.#app;
    const { after, before } = this.#shown;
    const pick = (t) => {
      this.#position = this.#position === t ? null : t;
      this.#draw();
      if ($("lens-details").open) this.#drawLens();
    };
    $("predict-strip").replaceChildren(...predictionStrip({ after, before, chosen: this.#position, onPick: pick }).children);
    const t = this.#position;
    const row = after.rows[0];
    const box = $("predict-detail");
    box.hidden = t === null || !row.predictions[t];
    if (box.hidden) return;
    const title = this.#app.T("predict.at", { position: t, token: row.tokens[t] });
    box.replaceChildren(predictionDetail({ after, before, t, title, titles: [this.#app.T("predict.before"), this.#app.T("predict.after")] }));
  }

  /** The lens: per layer, each position's top token, shaded by the probability of the last layer's answer. */
  async #drawLens() {
    const { $, model, state } = this.#app;
    if (!$("lens-details").open || !this.#shown) return;
    const row = this.#shown.after.rows[0];
    const layers = model.info.places.at(-1).layers;
    const all = layers * row.tokens.length * 50_000 <= LENS_ALL_CELLS;
    const lens = all ? true : (this.#position ?? row.tokens.length - 1);
    const off = offKept(state.off, model.info);
    try {
      const doc = await this.#app.client.call("predict", {
        key: model.key,
        request: { ...this.#request(), topK: 1, lens, ...(off ? { ablate: off, ...(state.offMean ? { ablation: "mean" } : {}) } : {}) },
      });
      $("lens-table").replaceChildren(...lensRows(doc, (layer) => this.#app.T("lens.layer", { layer })));
      this.#app.probe.lens = doc;
    } catch (e) {
      $("lens-table").replaceChildren(el("caption", { text: this.#app.errorText(e) }));
    }
  }

  /** What the shown head writes at every layer and token, when the reader opened it. */
  async drawFlow() {
    const { $, shown, model } = this.#app;
    if (!$("flow-details").open || !shown || !model) return;
    if (model.info.fromFile) {
      $("flow-status").hidden = false;
      $("flow-status").textContent = this.#app.T("flow.file");
      return;
    }
    const { place, row, head, result } = shown;
    const key = `${result.id}|${place.place}|${row}`;
    try {
      if (this.#flowShares.key !== key) {
        const call = (op, args) => this.#app.client.call(op, args);
        this.#flowShares = { key, value: await flowShares(call, { run: result.id, place: place.place, row, layers: place.layers, heads: place.heads, tq: place.tq }) };
      }
      if (this.#app.shown !== shown) return; // a newer render draws it
      $("flow-status").hidden = true;
      $("flow-title").textContent = this.#app.T("flow.title", { head: head + 1 });
      const width = Math.max(240, ($("predict-panel").clientWidth || 600) - 30);
      const shares = this.#flowShares.value;
      this.#flow.draw({ shares, layers: place.layers, heads: place.heads, tq: place.tq, head, labels: shown.labels.queries, valid: shown.tokens.queryValid, width, lut: lutFor("viridis") });
      this.#app.probe.flow = { key, head, layer: shown.layer, geometry: this.#flow.geometry, shares: Array.from(shares) };
    } catch (e) {
      $("flow-status").hidden = false;
      $("flow-status").textContent = this.#app.errorText(e);
    }
  }

  /** Activation patching of every head, with progress and Stop; the map opens a head when tapped. */
  async #patch() {
    const { $, model, result } = this.#app;
    if (!model || !result?.request) return;
    // the heads of the place on show; an encoder–decoder's decoder reads the view's target
    // in both runs, whichever place is shown (without it, it would read the source)
    const { targets } = this.#request();
    const request = {
      clean: result.request.texts[0],
      corrupt: $("patch-corrupt").value,
      answer: $("patch-answer").value,
      wrong: $("patch-wrong").value,
      place: this.#place(),
      ...(targets ? { target: targets[0] ?? "" } : {}),
    };
    // an empty field is named here, not refused by the core as "the text is empty"
    const empty = ["corrupt", "answer", "wrong"].filter((f) => !request[f].trim());
    for (const f of ["corrupt", "answer", "wrong"]) $(`patch-${f}`).setAttribute("aria-invalid", String(empty.includes(f)));
    if (empty.length || (targets && !request.target.trim())) {
      $("patch-error").hidden = false;
      $("patch-error").textContent = empty.length ? this.#app.T("patch.fill", { fields: empty.map((f) => this.#app.T(`patch.${f}`)).join(", ") }) : this.#app.T("emptyTarget");
      return;
    }
    this.#patchSignal?.abort();
    const signal = (this.#patchSignal = new AbortController()).signal;
    $("patch-error").hidden = true;
    $("patch-stop").hidden = false;
    $("patch-run").disabled = true;
    const progress = $("patch-progress");
    progress.hidden = false;
    progress.removeAttribute("value");
    try {
      const onProgress = ({ done, total }) => {
        progress.max = total;
        progress.value = done;
        $("patch-status").textContent = this.#app.T("patch.progress", { done, total });
      };
      const doc = await this.#app.client.call("patch", { key: model.key, request }, { signal, onProgress });
      this.#app.probe.patching = doc;
      this.#drawPatch(doc);
    } catch (e) {
      if (e.code !== "cancelled") {
        $("patch-error").hidden = false;
        $("patch-error").textContent = this.#app.errorText(e);
      }
      $("patch-status").textContent = "";
    } finally {
      $("patch-stop").hidden = true;
      $("patch-run").disabled = false;
      progress.hidden = true;
    }
  }

  #drawPatch(doc) {
    const { $, state, model } = this.#app;
    this.#patched = doc;
    const fixed = (v) => (Math.abs(v) < 0.005 ? 0 : v).toFixed(2); // never "-0.00"
    // which heads were patched, and where the logits were read: the map's heads open there;
    // patching runs every head (heads off apply to the views and predictions), and says so
    const where = this.#app.T("patch.where", { place: this.#app.T(`place.${doc.place}`), token: doc.tokens[doc.position] ?? "", position: doc.position });
    const allOn = offKept(state.off, model.info) ? ` ${this.#app.T("patch.allOn")}` : "";
    $("patch-status").textContent = `${where} ${this.#app.T("patch.done", { clean: fixed(doc.clean_diff), corrupt: fixed(doc.corrupt_diff) })}${allOn}`;
    const heads = doc.map[0]?.length ?? 0;
    // counted from 1, as the grid and every title on the page count layers and heads
    const head = el("tr", {}, el("th", { text: this.#app.T("gridCorner") }), ...Array.from({ length: heads }, (_, h) => el("th", { scope: "col", text: String(h + 1) })));
    const body = doc.map.map((row, l) =>
      el(
        "tr",
        {},
        el("th", { scope: "row", text: String(l + 1) }),
        ...row.map((v, h) => {
          const label = `${this.#app.T("gridLabel", { layer: l + 1, head: h + 1 })}: ${fixed(v)}`;
          const button = el("button", { type: "button", text: fixed(v), "aria-label": label, class: v >= 0 ? "up" : "down" });
          cssNumber(button, "p", share(Math.abs(v)));
          if (Math.abs(v) > 0.5) button.classList.add("strong");
          button.addEventListener("click", () => this.#app.openHead?.(l, h, doc.place));
          return el("td", {}, button);
        }),
      ),
    );
    $("patch-map").replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
  }
}
