// The explorer's "heads that form" panel: a small attention-only GPT-2 trained from random
// weights in the worker, a few dozen steps a message, while the page draws the loss, the copy
// accuracy and every head's induction and previous-token scores (each the number `headmap
// train` records for the same seed), and every head's attention on the probe. It pauses and
// goes on, starts again, and keeps the model as one more in the picker — every view opens it
// — with its files to download in GPT-2's layout.

import { addStrings } from "../i18n.js";
import { coded } from "../errors.js";
import { RANGES } from "../settings.js";
import { TRAIN } from "../strings/train.js";
import { el, sizeCanvas } from "../views/dom.js";
import { cssNumber, cssSizeOf } from "../views/sizes.js";
import { chartWidth, drawCurves, headColor, layerKeys, thinned } from "../views/curves.js";
import { wholeField } from "./form.js";

addStrings(TRAIN);

/** What the page trains: its limits, each refused by name past them (the core's are wider). */
const LIMITS = { layers: [1, 3], dModel: [16, 64], heads: [1, 8], steps: [50, 10_000] };
/** The rule `headmap train` marks the phase change by (src/train/timeline.rs). */
const PHASE = { accuracy: 0.6, induction: 0.5 };

export class Training {
  #app;
  #session = 0; // 0: none yet
  #made = null; // the settings the session's trainer was made from
  #signal = null;
  #steps = { xs: [], loss: [] }; // every step's loss
  #scores = []; // every scored step: { step, copyAccuracy, induction, previousToken }
  #thumbs = [];
  #probe = "";
  #phase = null; // { step, seconds, accuracy, layer, head, score }
  #ms = 0; // time spent training, pauses left out
  #since = 0; // when the current stretch began
  #rate = 0;
  #until = 0;
  #frame = 0;
  #links = [];
  #plan = { layers: 2, heads: 4, until: 3000 }; // the settings as typed, the last ones that were valid
  #figures = []; // a head's figure each: { node, canvas, induction, previous }, kept from draw to draw
  #figuresShape = ""; // the layers and heads they are made for
  #thumbsDrawn = ""; // the step, shape, size and language the heads' figures show
  #legendDrawn = ""; // the layers and language of the colour key

  constructor(app) {
    this.#app = app;
  }

  bind() {
    const { $ } = this.#app;
    $("train-start").addEventListener("click", () => this.#train());
    $("train-pause").addEventListener("click", () => this.#signal?.abort());
    $("train-reset").addEventListener("click", () => this.#reset());
    $("train-keep").addEventListener("click", () => this.#keep());
    addEventListener("resize", () => this.#schedule());
    // before a session the charts' axis and the heads' figures follow the settings as typed
    $("train-panel").querySelector(".train-settings").addEventListener("input", () => {
      this.#label();
      if (!this.#session) this.#schedule();
    });
  }

  applyLanguage() {
    const { $, T } = this.#app;
    for (const option of $("train-task").options) option.textContent = T(`train.task.${option.value}`);
    this.#label();
    this.#draw();
    this.#say();
  }

  /** The settings as typed, checked against the page's limits: { settings, until } or a coded error. */
  #read() {
    const { $ } = this.#app;
    const whole = (id, setting, range) => wholeField($(id), { panel: "training", code: "bad_train_setting", setting, range });
    const layers = whole("train-layers", "layers", LIMITS.layers);
    const dModel = whole("train-d", "d_model", LIMITS.dModel);
    const heads = whole("train-heads", "heads", LIMITS.heads);
    if (dModel % heads) {
      throw coded(`the training setting heads is ${heads}: it must be a divisor of d_model ${dModel}`, "bad_train_setting", { setting: "heads", value: String(heads), expected: `a divisor of d_model ${dModel}` });
    }
    const seed = whole("train-seed", "seed", RANGES.seed);
    const lrText = $("train-lr").value.trim();
    const learningRate = Number(lrText);
    if (!lrText || !Number.isFinite(learningRate) || learningRate <= 0 || learningRate > 1) {
      throw coded(`the training setting learning rate is ${lrText || "empty"}: it must be a number above 0, at most 1`, "bad_train_setting", { setting: "learning rate", value: lrText || "—", expected: "a number above 0, at most 1" });
    }
    const steps = whole("train-steps", "steps", LIMITS.steps);
    const settings = { task: $("train-task").value, layers, dModel, heads, learningRate, seed };
    return { settings, until: Math.ceil(steps / 50) * 50 };
  }

  async #train() {
    const { $, client } = this.#app;
    let asked;
    try {
      asked = this.#read();
    } catch (e) {
      return this.#fail(e);
    }
    $("train-error").hidden = true;
    const same = this.#made && JSON.stringify(this.#made) === JSON.stringify(asked.settings);
    if (!same || this.#steps.xs.length >= asked.until) await this.#reset();
    if (!this.#session) {
      this.#session = Date.now() % 1e9;
      this.#made = asked.settings;
    }
    this.#until = asked.until;
    const signal = (this.#signal = new AbortController()).signal;
    const session = this.#session;
    this.#running(true);
    this.#since = performance.now();
    const thumb = Math.round(this.#thumbSize($("train-panel").clientWidth, asked.settings.heads) * Math.min(globalThis.devicePixelRatio || 1, 3));
    try {
      await client.call("train", { session, settings: asked.settings, until: asked.until, thumb, from: this.#steps.xs.length }, { signal, onProgress: (out) => session === this.#session && this.#progress(out) });
    } catch (e) {
      const mine = session === this.#session;
      // a model lost with a worker that stopped: the panel starts again from step 0, saying so
      if (e.code === "training_lost" && mine) await this.#reset();
      if (e.code !== "cancelled" && mine) this.#fail(e);
    } finally {
      if (session === this.#session) {
        this.#stretch();
        this.#signal = null;
        this.#running(false);
      }
      this.#say();
    }
  }

  /** Time trained so far, the stretch now running included. */
  #elapsed() {
    return this.#ms + (this.#since ? performance.now() - this.#since : 0);
  }

  #stretch() {
    if (this.#since) this.#ms += performance.now() - this.#since;
    this.#since = 0;
  }

  #progress({ step, reports, ms, scores, thumbs }) {
    for (const r of reports) {
      this.#steps.xs.push(r.step);
      this.#steps.loss.push(r.loss);
    }
    if (reports.length && ms > 0) this.#rate = (reports.length / ms) * 1000;
    if (scores) {
      this.#scores.push(scores);
      this.#probe = scores.probe;
      this.#thumbs = thumbs ?? [];
      this.#findPhase(scores);
    }
    const probe = this.#app.probe;
    probe.trainingScores = this.#scores;
    probe.training = { step, steps: this.#until, rate: this.#rate, phase: this.#phase, scores: this.#scores.at(-1), seconds: this.#elapsed() / 1000, losses: this.#steps.loss.length };
    this.#schedule();
  }

  /** The first scored step past both thresholds (`headmap train`'s phase_change). */
  #findPhase(s) {
    if (this.#phase || s.copyAccuracy < PHASE.accuracy) return;
    let best = { score: -1 };
    s.induction.forEach((row, layer) => row.forEach((score, head) => score > best.score && (best = { layer, head, score })));
    if (best.score < PHASE.induction) return;
    this.#phase = { step: s.step, seconds: this.#elapsed() / 1000, accuracy: s.copyAccuracy, ...best };
  }

  #schedule() {
    cancelAnimationFrame(this.#frame);
    this.#frame = requestAnimationFrame(() => {
      const started = performance.now();
      this.#draw();
      this.#say();
      (this.#app.probe.trainingDraws ??= []).push([Math.round(started), Math.round(performance.now() - started)]);
    });
  }

  #running(on) {
    const { $ } = this.#app;
    $("train-pause").hidden = !on;
    $("train-start").disabled = on;
    this.#label();
    $("train-keep").disabled = on || !this.#session;
  }

  /** "Go on" where the settings are the session's and more steps are asked, else "Train". */
  #label() {
    const { $, T } = this.#app;
    let resume = false;
    try {
      const { settings, until } = this.#read();
      this.#plan = { layers: settings.layers, heads: settings.heads, until };
      resume = !this.#since && Boolean(this.#made) && JSON.stringify(this.#made) === JSON.stringify(settings) && this.#steps.xs.length < until;
    } catch {
      // settings it would refuse: Train says why
    }
    $("train-start").textContent = T(resume ? "train.resume" : "train.start");
  }

  async #reset() {
    this.#signal?.abort();
    const { $, client } = this.#app;
    if (this.#session) await client.call("endTraining", { session: this.#session }).catch(() => {});
    this.#session = 0;
    this.#made = null;
    this.#steps = { xs: [], loss: [] };
    this.#scores = [];
    this.#thumbs = [];
    this.#phase = null;
    this.#thumbsDrawn = "";
    this.#ms = 0;
    this.#since = 0;
    this.#rate = 0;
    for (const url of this.#links) URL.revokeObjectURL(url);
    this.#links = [];
    $("train-files").replaceChildren();
    $("train-download").hidden = true;
    $("train-error").hidden = true;
    this.#app.probe.training = null;
    this.#running(false);
    this.#draw();
    this.#say();
  }

  #fail(e) {
    const box = this.#app.$("train-error");
    box.textContent = this.#app.errorText(e);
    box.hidden = false;
    this.#app.probe.errors.push(e.message);
  }

  /** The status line and the phase change, in the page's language. */
  #say() {
    const { $, T, lang } = this.#app;
    const n = (v, digits = 2) => v.toLocaleString(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits });
    const step = this.#steps.xs.length;
    if (!this.#session) {
      $("train-status").textContent = "";
      $("train-phase").textContent = T("train.phaseRule");
      return;
    }
    const last = this.#scores.at(-1);
    const running = Boolean(this.#since);
    const parts = [T("train.status", { step: step.toLocaleString(lang), steps: this.#until.toLocaleString(lang), loss: step ? n(this.#steps.loss.at(-1)) : "—", accuracy: last ? n(last.copyAccuracy) : "—", rate: Math.round(this.#rate).toLocaleString(lang) })];
    if (!running && step >= this.#until) parts.push(T("train.done", { steps: step.toLocaleString(lang), seconds: n(this.#ms / 1000, 1) }));
    else if (!running && step) parts.push(T("train.paused", { step: step.toLocaleString(lang) }));
    $("train-status").textContent = parts.join(" ");
    const p = this.#phase;
    $("train-phase").textContent = p
      ? T("train.phase", { step: p.step.toLocaleString(lang), seconds: n(p.seconds, 1), accuracy: n(p.accuracy), layer: p.layer + 1, head: p.head + 1, score: n(p.score) })
      : `${T("train.noPhase")} ${T("train.phaseRule")}`;
  }

  /** The CSS size of one head's probe heatmap in a panel `panel` CSS pixels wide: the `heads` of a layer side by side. */
  #thumbSize(panel, heads) {
    return Math.max(48, Math.min(120, Math.floor(((panel || 600) - 40) / heads) - 10));
  }

  /** The model drawn: the session's, else the settings as typed. */
  #shape() {
    const { layers, heads } = this.#made ?? this.#plan;
    return { layers, heads };
  }

  /**
   * The charts and every head's figure. They are there from the page's start, empty, with the
   * axis and the heads the settings ask for, so a reader sees what will be drawn; a session only
   * draws into them. Made while it trains, they were its one long task: the panel laid out anew,
   * a font looked up for each text size not yet on the page, a canvas buffer for each new canvas
   * (docs/perf-notes.md). The panel's width is read once, before anything is written.
   */
  #draw() {
    const { $, T, lang } = this.#app;
    const panel = $("train-panel").clientWidth || 600;
    const width = Math.max(240, panel - 30);
    const xMax = Math.max(this.#session ? this.#until : this.#plan.until, 50);
    const marks = this.#phase ? [{ x: this.#phase.step, label: T("train.phaseMark"), color: "#b2182b" }] : [];
    const steps = this.#scores.map((s) => s.step);
    const chart = (id, title, series, options = {}) => {
      const canvas = $(id);
      drawCurves(canvas, { width: chartWidth(width), height: 150, xMax, series, marks, title, lang, ...options });
      const ys = series[0]?.ys ?? [];
      canvas.setAttribute("aria-label", ys.length ? T("train.chart", { title, from: ys[0].toFixed(2), first: series[0].xs[0].toLocaleString(lang), to: ys.at(-1).toFixed(2), step: series[0].xs.at(-1).toLocaleString(lang) }) : title);
    };
    const loss = thinned(this.#steps.xs, this.#steps.loss, 300);
    const top = Math.max(1, Math.ceil(Math.max(...(loss.ys.length ? loss.ys : [1]))));
    chart("train-loss", T("train.loss"), [{ ...loss, color: "#444" }], { yMax: top, yTicks: [0, top / 2, top] });
    chart("train-accuracy", T("train.accuracy"), [{ xs: steps, ys: this.#scores.map((s) => s.copyAccuracy), color: "#222", width: 2 }]);
    for (const [id, title, key] of [["train-induction", T("train.induction"), "induction"], ["train-previous", T("train.previous"), "previousToken"]]) {
      const series = [];
      const first = this.#scores[0]?.[key] ?? [];
      first.forEach((row, layer) =>
        row.forEach((_, head) => series.push({ xs: steps, ys: this.#scores.map((s) => s[key][layer][head]), color: headColor(layer, head, row.length), label: `L${layer + 1}H${head + 1}` })),
      );
      chart(id, title, series);
    }
    const { layers } = this.#shape();
    if (this.#legendDrawn !== `${layers} ${lang}`) {
      this.#legendDrawn = `${layers} ${lang}`;
      $("train-legend").replaceChildren(...layerKeys(layers, (layer) => T("train.lineLayer", { layer: layer + 1 })));
    }
    this.#drawThumbs(panel);
  }

  /**
   * Every head's attention on the probe at the last scored step, a layer a row; before the
   * first, an empty figure for each head. The figures are made again only when the number of
   * heads changes: a scored step draws into their canvases and sets their numbers.
   */
  #drawThumbs(panel) {
    const { $, T, lang } = this.#app;
    const last = this.#scores.at(-1);
    const { layers, heads } = this.#shape();
    const size = this.#thumbSize(panel, heads);
    const key = `${last?.step} ${layers}x${heads} ${size} ${lang}`;
    if (this.#thumbsDrawn === key) return;
    this.#thumbsDrawn = key;
    $("train-heads-title").textContent = last ? T("train.heads.title", { step: last.step.toLocaleString(lang) }) : T("train.heads.before");
    $("train-heads-hint").textContent = last ? `${T("train.heads.probe", { length: this.#probe.split(" ").length / 2 })} ${T("train.heads.hint")}` : T("train.heads.hint");
    if (this.#figuresShape !== `${layers}x${heads}`) {
      this.#figuresShape = `${layers}x${heads}`;
      this.#figures = Array.from({ length: layers * heads }, (_, i) => {
        const figure = { canvas: el("canvas", { role: "img" }), caption: el("figcaption"), induction: el("span", { class: "small-label" }), previous: el("span", { class: "small-label" }) };
        figure.node = el("figure", { class: "train-head" }, figure.canvas, figure.caption, figure.induction, figure.previous);
        return figure;
      });
      $("train-thumbs").replaceChildren(...this.#figures.map((f) => f.node));
      cssNumber($("train-thumbs"), "heads", heads);
    }
    const n = (v) => (v === undefined ? "—" : v.toFixed(2));
    this.#figures.forEach(({ canvas, caption, induction, previous }, i) => {
      const [layer, head] = [Math.floor(i / heads), i % heads];
      caption.textContent = T("train.headShort", { layer: layer + 1, head: head + 1 });
      const bitmap = last && this.#thumbs[i];
      const height = bitmap ? (size * bitmap.height) / bitmap.width : size;
      const drawn = cssSizeOf(canvas);
      // sized again only when its size changes: sizing a canvas resets it
      const same = drawn?.width === size && Math.abs(drawn.height - height) < 0.01;
      const ctx = same ? canvas.getContext("2d") : sizeCanvas(canvas, size, height).ctx;
      ctx.clearRect(0, 0, size, height);
      if (bitmap) {
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(bitmap, 0, 0, size, height);
      } else {
        ctx.fillStyle = "#f4f4f4";
        ctx.fillRect(0, 0, size, height);
      }
      const scores = { induction: n(last?.induction[layer][head]), previous: n(last?.previousToken[layer][head]) };
      canvas.setAttribute("aria-label", T("train.headLabel", { layer: layer + 1, head: head + 1, ...scores }));
      induction.textContent = `${T("train.short.induction")} ${scores.induction}`;
      previous.textContent = `${T("train.short.previous")} ${scores.previous}`;
    });
  }

  /** The model as it is now: one more choice in the picker, open in every view, and its files to download. */
  async #keep() {
    const { $, T, client, lang } = this.#app;
    if (!this.#session) return;
    try {
      const { id, step, files } = await client.call("keep", { session: this.#session });
      for (const url of this.#links) URL.revokeObjectURL(url);
      this.#links = [];
      const links = Object.entries(files).map(([name, bytes]) => {
        const url = URL.createObjectURL(new Blob([bytes], { type: name.endsWith(".json") ? "application/json" : "application/octet-stream" }));
        this.#links.push(url);
        return el("a", { href: url, download: name, class: "small-button", text: name });
      });
      $("train-files").replaceChildren(...links);
      $("train-download").hidden = false;
      // it reads the numbers "0" to "31" only: the views open on the probe it was scored on,
      // alone (a second sentence of words would not split)
      $("text").value = this.#probe;
      $("text2").value = "";
      this.#app.set({ text: this.#probe, text2: "", row: 0 });
      await this.#app.chooseModel(`kept:${id}`, { name: T("train.kept", { seed: this.#made.seed, step: step.toLocaleString(lang) }) });
      // the reader asked to see it in the views: the heatmap, its model named above it
      $("heatmap").scrollIntoView({ block: "center" });
    } catch (e) {
      this.#fail(e);
    }
  }
}
