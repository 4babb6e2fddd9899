// Multi-head attention as a pipeline, with the live shapes of the text on screen: X → the
// projections → h heads of width d_k → each head's softmax(QKᵀ/√d_k)·V → Concat → W_O. Below,
// the cost the seed article works out: h · n² · d/h = n²d, the same as one full-width head.

import { addStrings, tf } from "../i18n.js";
import { VIEW_WORDS } from "../strings/views.js";
import { el } from "./dom.js";

addStrings(VIEW_WORDS); // the words come with the view

/**
 * `shape`: { n (query tokens), m (key tokens), dModel, heads, dK, scale }; `thumbs`: one
 * canvas per head (the head's weights, drawn by the caller), or none.
 */
export function drawPipeline(container, shape, lang, thumbs = []) {
  const t = (key, values) => tf(lang, key, values);
  const { n, m, dModel, heads, dK, scale } = shape;
  const box = (title, formula, size, extra = []) =>
    el("div", { class: "pipe-box" }, el("strong", { text: title }), el("code", { text: formula }), el("span", { class: "shape", text: size }), ...extra);
  const arrow = () => el("div", { class: "arrow", "aria-hidden": "true", text: "↓" });
  const headBoxes = el(
    "div",
    { class: "heads" },
    ...Array.from({ length: heads }, (_, h) =>
      el("div", { class: "head-box" }, el("span", { text: `${t("head")} ${h + 1}` }), ...(thumbs[h] ? [thumbs[h]] : []), el("code", { text: `[${n}, ${m}] → [${n}, ${dK}]` })),
    ),
  );
  const divide = scale ? "/√d_k" : "";
  const macs = heads * n * m * dK;
  container.replaceChildren(
    el(
      "div",
      { class: "pipeline" },
      box(t("pipe.input"), "X", `[${n}, ${dModel}]`),
      arrow(),
      box(t("pipe.linear"), "Q = X W_Q, K = X W_K, V = X W_V", `[${n}, ${dModel}] × [${dModel}, ${dModel}] = [${n}, ${dModel}]`),
      arrow(),
      box(t("pipe.split", { heads }), `d_k = d_model / h = ${dModel} / ${heads} = ${dK}`, `Q_i, K_i, V_i: [${n}, ${dK}]`),
      arrow(),
      box(t("pipe.heads"), `softmax(Q_i K_iᵀ${divide}) V_i`, `[${n}, ${dK}] × [${dK}, ${m}] = [${n}, ${m}] → × [${m}, ${dK}] = [${n}, ${dK}]`, [headBoxes]),
      arrow(),
      box(t("pipe.concat"), "Concat(head_1, …, head_h)", `[${n}, ${heads} × ${dK}] = [${n}, ${heads * dK}]`),
      arrow(),
      box(t("pipe.output"), "Concat(…) W_O", `[${n}, ${heads * dK}] × [${heads * dK}, ${dModel}] = [${n}, ${dModel}]`),
      el("p", { class: "cost", text: t("pipe.cost", { h: heads, n, m, dk: dK, d: heads * dK, macs: macs.toLocaleString(lang === "ko" ? "ko-KR" : "en-US") }) }),
    ),
  );
}
