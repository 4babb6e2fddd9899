// The words for what is under the pointer, a finger or the keyboard cursor: a query, a key, or
// a cell with its weight (and, once the head's steps are known, its raw and scaled score).
// Shared by the explorer and the widget.

import { formatWeight } from "../render/heatmap.js";

/** What a token is, when it is not a plain word: unknown, part of a character, a continuation. */
export function describeToken(token, T) {
  if (token.kind === "unknown") return T("tokenUnknown", { text: token.text });
  if (token.kind === "part") return T("tokenPart", { k: token.part[0], n: token.part[1], text: token.text });
  if (token.kind === "continuation") return T("tokenContinuation");
  if (token.kind === "special") return T("tokenSpecial");
  if (token.kind === "pad") return T("pad");
  return "";
}

/**
 * The read-out of `hit` ({ axis: "cell", i, j } or { axis: "query" | "key", index }) over the
 * shown head: { tokens, labels, weights, allowed, entropies, entropyMax, tk }; `trace` (or null)
 * adds the scores. Returns { text, weight } (weight only for a cell).
 */
export function readoutText(hit, shown, trace, T) {
  const { tk, tokens, labels } = shown;
  const name = (side, index) => {
    const token = side === "query" ? tokens.queries[index] : tokens.keys[index];
    const what = describeToken(token, T);
    const label = side === "query" ? labels.queries[index] : labels.keys[index];
    return `“${label}” (#${index + 1}${what ? `, ${what}` : ""})`;
  };
  if (hit.axis === "query") {
    return { text: `${T("query")} ${name("query", hit.index)} · ${T("entropy")} ${shown.entropies[hit.index].toFixed(2)} / ${shown.entropyMax[hit.index].toFixed(2)}` };
  }
  if (hit.axis === "key") return { text: `${T("key")} ${name("key", hit.index)}` };
  const k = hit.i * tk + hit.j;
  const allowed = shown.allowed[k] !== 0;
  const parts = [
    `${T("query")} ${name("query", hit.i)} → ${T("key")} ${name("key", hit.j)}`,
    `${T(shown.norm ? "normValue" : "weight")} ${formatWeight(shown.weights[k])}${allowed ? "" : ` (${T("masked")})`}`,
  ];
  if (trace) {
    parts.push(`${T("score")} ${formatWeight(trace.scores.data[k])}`);
    parts.push(`${T("scaled")} ${formatWeight(trace.scaled.data[k])}${allowed ? "" : " → −∞"}`);
  }
  parts.push(`${T("entropy")} ${shown.entropies[hit.i].toFixed(2)}`);
  return { text: parts.join(" · "), weight: shown.weights[k] };
}
