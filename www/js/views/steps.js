// The steps of one head: QKᵀ, ÷√d_k, masked, softmax — each a small heatmap coloured over
// its own range, with that range written under it.

import { drawHeatmap, formatWeight } from "../render/heatmap.js";
import { el, sizeCanvas } from "./dom.js";

const SIZE = 150;

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

/** `mask` (Uint8Array [Tq x Tk], 0 = masked) hatches the masked cells of the softmax step too. */
export function drawSteps(container, trace, t, mask = null) {
  container.replaceChildren();
  const { tq, tk } = trace;
  const cell = SIZE / Math.max(tq, tk);
  for (const step of ["scores", "scaled", "masked", "weights"]) {
    const m = trace[step];
    const canvas = el("canvas", { "data-step": step });
    const norm = normalise(m.data);
    if (step === "weights" && mask) norm.allowed = mask;
    const caption = el(
      "figcaption",
      {},
      el("strong", { text: t(`step.${step}`) }),
      el("span", { text: ` ${formatWeight(norm.lo)} … ${formatWeight(norm.hi)}` }),
    );
    container.append(el("figure", { class: "step" }, canvas, caption));
    const { ctx, dpr } = sizeCanvas(canvas, cell * tk, cell * tq);
    drawHeatmap(ctx, norm.values, tq, tk, { cell, dpr, allowed: norm.allowed, grid: false });
  }
  container.append(
    el("p", {
      class: "step-note",
      text: `Q (${tq}×${trace.dK}) · Kᵀ (${trace.dK}×${tk}) ÷ ${trace.scale.toFixed(3)} → softmax → · V (${tk}×${trace.dK}) = (${tq}×${trace.dK})`,
    }),
  );
}
