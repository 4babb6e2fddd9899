// What the explorer says around the heatmap: the colour bar and its swatches, the notes above
// it (a what-if, no scaling, decoder rows, how much of the text the model read, with one-tap
// choices of a model that reads it), which heads share K and V, and what a sentence costs.

import { formatBytes } from "../i18n.js";
import { drawLegend as paintLegend, paintHeatmap } from "../render/heatmap.js";
import { el, sizeCanvas } from "../views/dom.js";
import { headNotes } from "../views/head-grid.js";
import { figureNotes } from "../views/notes.js";

/** What the built-in models read, for the note on a text a model read badly. */
const READS = { trained: "reads.trained", induction: "reads.induction", minilm: "reads.minilm" };

/** The built-in models whose vocabulary covers Korean and English: their unknown tokens are words they never learnt, not a script they cannot read. */
const COVERS_SCRIPTS = ["trained", "induction"];

/** The colour bar from 0 to `max`, and the masked and PAD swatches. */
export function drawLegend(app, max) {
  const $ = app.$;
  const { ctx, dpr } = sizeCanvas($("legend"), 240, 34);
  paintLegend(ctx, { x: 8, y: 2, width: 220, height: 12, max, dpr });
  const swatch = (id, paint) => {
    const { ctx: c, dpr: d } = sizeCanvas($(id), 28, 14);
    const w = Math.round(28 * d);
    const h = Math.round(14 * d);
    const image = c.createImageData(w, h);
    paint(image.data, w, h);
    c.putImageData(image, 0, 0);
  };
  swatch("swatch-masked", (px, w, h) => paintHeatmap(px, w, h, new Float32Array(1), 1, 1, Math.max(w, h), { allowed: new Uint8Array(1) }));
  swatch("swatch-pad", (px, w, h) => paintHeatmap(px, w, h, new Float32Array([0.15]), 1, 1, Math.max(w, h), { queryValid: [false] }));
}

/** Says which heads share keys and values, and which layers see only nearby tokens. */
export function showGridNote(app, modelPlace) {
  const lines = headNotes(modelPlace, app.T);
  app.$("grid-note").hidden = !lines.length;
  app.$("grid-note").textContent = lines.join(" ");
}

/** The what-if, no-scaling, decoder-rows and coverage notes above the heatmap, each in its box. */
export function showNotes(app, place, tokens) {
  const $ = app.$;
  const notes = figureNotes({ T: app.T, info: app.model.info, place, tokens, model: app.model.name, reads: READS[app.model.choice] ?? null, script: !COVERS_SCRIPTS.includes(app.model.choice) });
  for (const [id, text] of [["what-if", notes.whatIf], ["scale-note", notes.scale], ["decoder-note", notes.decoder], ["coverage-text", notes.coverage]]) {
    $(id).textContent = text ?? "";
    $(id === "coverage-text" ? "coverage" : id).hidden = !text;
  }
  const note = notes.coverage;
  const text = [tokens.queries, tokens.keys].flat().map((t) => t.text).join("");
  const order = /[\uac00-\ud7a3]/.test(text) ? ["trained", "minilm", "toy"] : ["minilm", "trained", "toy"];
  const choices = note ? order.filter((c) => c !== app.model.choice) : [];
  $("coverage-choices").replaceChildren(...choices.map((c) => el("button", { type: "button", class: "small-button", "data-model": c, text: app.T(`seeIn.${c}`), onclick: () => app.chooseModel(c) })));
}

/** What one sentence costs at this place: multiply-adds, operations, bytes of weights. */
export function showCost(app, place) {
  const info = app.model.info;
  const c = place.cost;
  const locale = app.lang === "ko" ? "ko-KR" : "en-US";
  app.$("cost").title = ""; // the build's name, for a real model computed here (below)
  // weights from a file: nothing was computed here, and the model's sizes are not known
  if (info.fromFile) return void (app.$("cost").textContent = app.T("fileCost", { size: formatBytes(app.lang, c.weightBytes), layers: place.layers, heads: place.heads }));
  const dk = info.places.find((p) => p.place === place.place).dK;
  const shape = app.T("shapeToy", { d: info.dModel, h: place.heads, dk });
  app.$("cost").textContent = app.T("cost", {
    macs: c.scoreMacs.toLocaleString(locale),
    layers: place.layers,
    flops: c.flops.toLocaleString(locale),
    size: formatBytes(app.lang, c.weightBytes),
    shape: `${app.architecture(info)} · ${shape}`,
  });
  // a real model: on how many threads (the threaded build on an isolated page, else one)
  const how = info.compute;
  if (how) {
    app.$("cost").textContent += ` · ${app.T(how.build === "threads" ? "compute.threads" : `compute.${how.why}`, { threads: how.threads })}`;
    app.$("cost").title = `wasm: ${how.package}`; // which build, for whoever compares speeds
  }
}
