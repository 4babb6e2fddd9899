// The steps of one head, from its input X through Q = XW_Q, K and V to QKᵀ, ÷√d_k (or not, with
// scaling off), the mask, softmax and · V — each a small heatmap coloured over its own range,
// with its shape and range written under it, and the shapes of the products below.

import { addStrings, tf } from "../i18n.js";
import { formatWeight, paintHeatmap } from "../render/heatmap.js";
import { VIEW_WORDS } from "../strings/views.js";
import { el } from "./dom.js";
import { cssSize } from "./sizes.js";

addStrings(VIEW_WORDS); // the words come with the view

const SIZE = 150;
/** Beyond this many tokens the steps are not drawn: five matrices of n² would not fit a page. */
export const STEPS_LIMIT = 256;

/** Values rescaled to [0, 1] over their finite range; non-finite cells come back as masked. */
export function normalise(data) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of data) {
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const out = new Float32Array(data.length);
  const allowed = new Uint8Array(data.length);
  const span = hi > lo ? hi - lo : 1;
  data.forEach((v, k) => {
    if (Number.isFinite(v)) {
      out[k] = (v - lo) / span;
      allowed[k] = 1;
    }
  });
  return { values: out, allowed, lo: lo === Infinity ? 0 : lo, hi: hi === -Infinity ? 0 : hi };
}

/** One matrix as a small heatmap: at least a device pixel per cell, shown at most SIZE wide. */
function matrixCanvas(m, allowed, name) {
  const { rows, cols } = m;
  const dpr = Math.min(globalThis.devicePixelRatio || 1, 3);
  const cssCell = SIZE / Math.max(rows, cols);
  const cell = Math.max(1, Math.floor(cssCell * dpr));
  const canvas = el("canvas", { "data-step": name, width: cell * cols, height: cell * rows });
  // more cells than pixels: the canvas keeps one pixel a cell and the browser shrinks it
  cssSize(canvas, cssCell * cols, cssCell * rows);
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(canvas.width, canvas.height);
  const norm = normalise(m.data);
  paintHeatmap(image.data, canvas.width, canvas.height, norm.values, rows, cols, cell, { allowed: allowed ?? norm.allowed, grid: false });
  ctx.putImageData(image, 0, 0);
  return { canvas, lo: norm.lo, hi: norm.hi };
}

/**
 * Draws the steps of `trace` into `container` in `lang`; `mask` (Uint8Array [Tq x Tk], 0 =
 * masked) hatches the masked cells of the softmax step too; `grouped` says the model's query
 * heads share key/value heads (the note then names the one this head reads).
 */
export function drawSteps(container, trace, lang, mask = null, grouped = false) {
  const t = (key, values) => tf(lang, key, values);
  const { tq, tk, dK } = trace;
  const scaled = trace.scale !== 1;
  // rotary models turn Q and K by position before the scores; T5 adds a learned bias by
  // distance after them: each family's extra steps sit where its arithmetic does them
  const steps = [
    ["xQ", "step.x", null],
    ["q", "step.q", null],
    ["k", "step.k", null],
    ["v", "step.v", null],
    ["qRotated", "step.qRotated", null],
    ["kRotated", "step.kRotated", null],
    ["scores", "step.scores", null],
    ["scaled", scaled ? "step.scaled" : "step.unscaled", null],
    ["positionBias", "step.positionBias", null],
    ["biased", "step.biased", null],
    ["masked", "step.masked", null],
    ["weights", "step.weights", mask],
    ["output", "step.output", null],
  ].filter(([step]) => trace[step]);
  const figures = steps.map(([step, caption, allowed]) => {
    const { canvas, lo, hi } = matrixCanvas(trace[step], allowed, step);
    const shape = `[${trace[step].rows}, ${trace[step].cols}]`;
    return el(
      "figure",
      { class: "step", "data-step": step },
      canvas,
      el("figcaption", {}, el("strong", { text: t(caption) }), el("span", { text: ` ${shape} ${formatWeight(lo)} … ${formatWeight(hi)}` })),
    );
  });
  const d = trace.dModel;
  const projections = t("stepProjections", { tq, tk, d, dk: dK });
  const shapes = scaled
    ? t("stepShapes", { tq, tk, dk: dK, scale: trace.scale.toFixed(3) })
    : t("stepShapesNoScale", { tq, tk, dk: dK });
  const notes = [projections, shapes];
  if (grouped) notes.push(t("stepSharedKv", { head: trace.head + 1, kv: trace.kvHead + 1 }));
  container.replaceChildren(...figures, ...notes.map((text) => el("p", { class: "step-note", text })));
}
