// The explorer's "generate" panel: the model writes from a prompt, token by token over its KV
// cache, each token shown with its probability as it comes; the attention of the position that
// wrote it, every head of the shown layer as thin rows (the shown head lit), and the KV cache of
// that head growing by a row a step with the cost it saves, counted and measured. Heads turned
// off on the page stay off while it writes. When it ends, the whole text can open in every view.

import { lutFor } from "../render/colormap.js";
import { RANGES, offKept } from "../settings.js";
import { CacheView, RowsView, endedText, stepCost, stoppedText, writtenStrip } from "../views/generation.js";
import { pieceText } from "../views/predictions.js";
import { wholeField } from "./form.js";

export class Generator {
  #app;
  #signal = null;
  #steps = []; // per token: { token, rows, cross, keys, keptRows, ms, cacheBytes }
  #kept = null; // the watched head's KV cache as it is now: { keys, values, dK, layer, head }
  #context = []; // the labels of every token the decoder has read, in order
  #source = []; // an encoder–decoder's prompt tokens (what cross-attention reads)
  #chosen = null;
  #done = null; // { id, generation, ms } once the text has ended
  #stopped = false; // the reader stopped the writing
  #rows;
  #cache;

  constructor(app) {
    this.#app = app;
  }

  bind() {
    const { $ } = this.#app;
    this.#rows = new RowsView($("gen-rows"));
    this.#cache = new CacheView($("gen-kv"));
    $("gen-run").addEventListener("click", () => this.#write());
    $("gen-stop").addEventListener("click", () => this.#signal?.abort());
    $("gen-open").addEventListener("click", () => this.#open());
    $("gen-cache").addEventListener("toggle", () => this.#drawChosen());
    $("text").addEventListener("input", () => this.#suggest()); // an empty prompt writes from the text as it is now
    // what the page holds of a writing: every token's rows and the cache (the bench reads it)
    this.#app.probe.generatedBytes = () =>
      this.#steps.reduce((sum, s) => sum + s.rows.byteLength + (s.cross?.byteLength ?? 0), 0) + (this.#kept ? this.#kept.keys.byteLength * 2 : 0);
  }

  /** A new model: its own prompt, nothing written. */
  afterModelChange() {
    this.#signal?.abort();
    this.#signal = null; // a writing stopped by a new model is not the reader's stop
    this.#reset();
    this.#rows.clear();
    this.#app.$("generate-panel").classList.add("idle");
    this.#app.$("gen-prompt").value = "";
    this.applyLanguage();
  }

  applyLanguage() {
    const { $, model } = this.#app;
    // a decoder writes: decoder-only models and encoder–decoders, not encoders, the toy or a file
    const canWrite = Boolean(model && !model.info.fromFile && model.info.architecture !== "toy" && model.info.places.some((p) => p.place === "decoder_self"));
    $("gen-run").disabled = !canWrite;
    $("gen-note").hidden = canWrite;
    if (!canWrite && model) $("gen-note").textContent = this.#app.T("gen.cannot", { architecture: this.#app.architecture(model.info) });
    this.#suggest();
    if (this.#done) this.#showDone();
    else if (this.#stopped) this.#showStopped();
    else if (!$("gen-stop").hidden) $("gen-status").textContent = this.#app.T("gen.writing");
    this.#drawChosen();
  }

  /** The prompt's placeholder: the page's text, which an empty prompt writes from. */
  #suggest() {
    const { $, model } = this.#app;
    if (model) $("gen-prompt").placeholder = $("text").value.trim();
  }

  /** The text written, and why it ends there (its end token, the count asked for, the model's positions). */
  #showDone() {
    const { T, model } = this.#app;
    this.#app.$("gen-status").textContent = endedText(T, this.#done.generation, model.info.maxTokens);
  }

  /** What was written before the reader stopped it, and that it was stopped. */
  #showStopped() {
    this.#app.$("gen-status").textContent = stoppedText(this.#app.T, this.#steps.map((s) => s.token));
  }

  /** After a run: the shown layer and head may have changed. */
  update() {
    this.#drawChosen();
  }

  #reset() {
    this.#steps = [];
    this.#kept = null;
    this.#context = [];
    this.#chosen = null;
    this.#done = null;
    this.#stopped = false;
    const { $ } = this.#app;
    $("gen-tokens").replaceChildren();
    $("gen-looked").textContent = "";
    $("gen-cost").textContent = "";
    $("gen-open").hidden = true;
    $("gen-error").hidden = true;
  }

  /** The place whose rows are drawn: cross-attention when the page shows it, else the decoder's. */
  #watch() {
    const { shown, model } = this.#app;
    const decoder = model.info.places.find((p) => p.place === "decoder_self") ?? model.info.places.at(-1);
    const place = shown?.place.place === "cross" ? "cross" : "decoder_self";
    const layer = Math.min(shown?.layer ?? 0, decoder.layers - 1);
    const head = Math.min(shown?.head ?? 0, decoder.heads - 1);
    return { place, layer, head, heads: decoder.heads, layers: decoder.layers };
  }

  async #write() {
    const { $, model, state } = this.#app;
    if (!model) return;
    const prompt = $("gen-prompt").value.trim() || $("text").value.trim();
    $("gen-prompt").value = prompt;
    if (!prompt) {
      $("gen-error").hidden = false;
      $("gen-error").textContent = this.#app.T("gen.emptyPrompt");
      return;
    }
    const temperature = $("gen-temperature").value.trim();
    let request;
    try {
      const whole = (id, setting, range, empty) => wholeField($(id), { panel: "writing", code: "bad_write_setting", setting, range, empty });
      request = { prompt, maxNewTokens: whole("gen-max", "new tokens", RANGES["max-new-tokens"]) };
      // the seed matters only when sampling (a temperature)
      if (temperature) Object.assign(request, { temperature: Number(temperature), seed: whole("gen-seed", "seed", RANGES.seed, 0) });
    } catch (e) {
      $("gen-error").hidden = false;
      $("gen-error").textContent = this.#app.errorText(e);
      return;
    }
    const off = offKept(state.off, model.info);
    if (off) Object.assign(request, { ablate: off, ...(state.offMean ? { ablation: "mean" } : {}) });
    this.#signal?.abort();
    const signal = (this.#signal = new AbortController()).signal;
    this.#reset();
    $("generate-panel").classList.remove("idle");
    const watch = this.#watch();
    this.#rows.reserve(watch.heads, this.#width());
    $("gen-stop").hidden = false;
    $("gen-run").disabled = true;
    $("gen-status").textContent = this.#app.T("gen.writing");
    try {
      const onProgress = (step) => {
        if (signal.aborted) return;
        this.#context = step.read;
        this.#source = step.source ?? [];
        // the cache only grows: an earlier step's is the first rows of the newest
        if (step.kept) this.#kept = { ...step.kept, layer: watch.layer, head: watch.head };
        const keptRows = step.kept ? step.kept.keys.length / step.kept.dK : 0;
        this.#steps.push({ ...step.token, rows: step.rows, cross: step.cross, keptRows, ms: step.ms, cacheBytes: step.cacheBytes });
        this.#chosen = this.#steps.length - 1;
        this.#drawTokens();
        this.#drawChosen();
      };
      const done = await this.#app.client.call("write", { key: model.key, request, watch: { layer: watch.layer, head: watch.head } }, { signal, onProgress });
      this.#done = done;
      this.#app.probe.generation = done.generation;
      this.#drawChosen();
      $("gen-open").hidden = false;
      this.#showDone();
      this.#app.client.call("free", { run: done.id }).catch(() => {});
    } catch (e) {
      if (e.code !== "cancelled") {
        $("gen-error").hidden = false;
        $("gen-error").textContent = this.#app.errorText(e);
      }
      // a writing another one or a new model replaced says nothing; the reader's stop says so
      if (this.#signal?.signal === signal) {
        this.#stopped = e.code === "cancelled";
        if (this.#stopped) this.#showStopped();
        else $("gen-status").textContent = "";
      }
    } finally {
      if (!this.#steps.length) this.#rows.clear();
      $("gen-stop").hidden = true;
      $("gen-run").disabled = false;
    }
  }

  #drawTokens() {
    const pick = (i) => {
      this.#chosen = i;
      this.#drawTokens();
      this.#drawChosen();
    };
    const strip = writtenStrip(this.#steps, { chosen: this.#chosen, onPick: pick });
    this.#app.$("gen-tokens").replaceChildren(...strip.children);
  }

  /** The rows' width in CSS pixels: the panel's. */
  #width() {
    return Math.max(240, (this.#app.$("generate-panel").clientWidth || 600) - 30);
  }

  /** The chosen token's rows in the watched layer, and the cache when that part is open. */
  #drawChosen() {
    const { $, model } = this.#app;
    const step = this.#steps[this.#chosen];
    if (!step || !model) return;
    const watch = this.#watch();
    const cross = watch.place === "cross" && step.cross;
    const all = cross ? step.cross : step.rows;
    const keys = all.length / (watch.layers * watch.heads);
    const rows = all.subarray(watch.layer * watch.heads * keys, (watch.layer + 1) * watch.heads * keys);
    const labels = cross ? this.#source : this.#context.slice(0, keys);
    const width = this.#width();
    const writer = labels[keys - 1] ?? "";
    const text = this.#app.T(cross ? "gen.lookedCross" : "gen.looked", { layer: watch.layer + 1, head: watch.head + 1, token: pieceText(step.token), at: writer });
    $("gen-looked").textContent = text;
    this.#rows.draw({ rows, heads: watch.heads, keys, labels, head: watch.head, width, lut: lutFor("viridis"), label: text });
    // the cost of this step, counted, and the time it took against the whole text at once
    const n = step.keys;
    const d = watch.heads * (this.#kept?.dK ?? 0);
    const { cached, full } = stepCost(n, d);
    const measured = this.#done ? this.#app.T("gen.measured", { ms: step.ms.toFixed(1), full: this.#done.msFull.toFixed(1) }) : this.#app.T("gen.stepMs", { ms: step.ms.toFixed(1) });
    $("gen-cost").textContent = `${this.#app.T("gen.cost", { n, cached: cached.toLocaleString(this.#app.lang), full: full.toLocaleString(this.#app.lang), times: Math.max(1, Math.round(full / Math.max(1, cached))), kb: Math.round(step.cacheBytes / 1024) })} ${measured}`;
    if ($("gen-cache").open && this.#kept) {
      const { keys, values, dK, layer, head } = this.#kept;
      const rowsKept = step.keptRows;
      const label = this.#app.T("gen.cacheLabel", { layer: layer + 1, head: head + 1, n: rowsKept });
      const upTo = rowsKept * dK;
      this.#cache.draw({ keys: keys.subarray(0, upTo), values: values.subarray(0, upTo), dK, labels: this.#context.slice(0, rowsKept), newRows: this.#chosen === 0 ? rowsKept : 1, width, titles: ["K", "V"], label });
    }
    this.#app.probe.generated = { chosen: this.#chosen, keys, tokens: this.#steps.map((s) => s.token), rows: Array.from(rows) };
  }

  /** The whole text in every view: a decoder-only model's as the sentence, an encoder–decoder's as the target. */
  async #open() {
    const { $, model } = this.#app;
    const g = this.#done?.generation;
    if (!g || !model) return;
    if (model.info.encoderDecoder) {
      const text = $("gen-prompt").value;
      $("text").value = text;
      $("target").value = g.text;
      this.#app.set({ text, target: g.text, row: 0 }, { step: true });
    } else {
      $("text").value = g.text;
      this.#app.set({ text: g.text, row: 0 }, { step: true });
    }
    await this.#app.recompute();
    $("heatmap").scrollIntoView({ block: "nearest" });
  }
}
