// What the model predicts, drawn from the predictions document (`headmap predict`'s): the strip
// of positions with each one's top token, a position's top k as bars (before and after heads
// are turned off), and the logit lens as a table. Plain data in, DOM out, text as text: the
// explorer and the widget's view="predict" and view="lens" both draw with these.

import { el } from "./dom.js";
import { cssNumber } from "./sizes.js";

/** A share in [0, 1] in steps of 0.05: one stylesheet rule per step, not per value. */
const share = (p) => Math.round(20 * Math.min(1, Math.max(0, p))) / 20;

export const percent = (p) => `${(100 * p).toFixed(p >= 0.1 ? 0 : 1)}%`;

/** A vocabulary piece as a reader reads it: GPT-2's Ġ and SentencePiece's ▁ as ␣, Ċ as ⏎. */
export const pieceText = (piece) => piece.replace(/^[Ġ▁]/, "␣").replaceAll("Ċ", "⏎");

/** Whether a token is a masked LM's mask, where its predictions are what it is for. */
export const isMask = (token) => /^(\[MASK\]|<mask>)$/.test(token);

/**
 * The strip of `after` (a predictions document): per position its token and the top
 * prediction, struck through under it the one `before` (heads on) gave when it differs.
 * `chosen` is pressed; `onPick(t)` is told of a tap.
 */
export function predictionStrip({ after, before = null, chosen = null, onPick }) {
  const row = after.rows[0];
  const cells = row.tokens.map((token, t) => {
    const best = row.predictions[t]?.[0];
    const was = before?.rows[0].predictions[t]?.[0];
    const button = el("button", { type: "button", class: isMask(token) ? "predict-cell masked" : "predict-cell", "aria-pressed": String(t === chosen) });
    button.append(el("span", { class: "predict-token", text: token }));
    if (best) {
      button.append(el("span", { class: "predict-top", text: pieceText(best.token) }), el("span", { class: "predict-p", text: percent(best.p) }));
      if (was && was.id !== best.id) button.append(el("s", { class: "predict-was", text: pieceText(was.token) }));
    }
    button.addEventListener("click", () => onPick?.(t));
    return button;
  });
  return el("div", { class: "predict-strip", role: "group" }, ...cells);
}

/** Position `t`'s top k as bars: one list, or two side by side titled `titles` when `before` is given. */
export function predictionDetail({ after, before = null, t, title, titles = ["", ""] }) {
  const list = (doc, heading) => {
    const items = (doc.rows[0].predictions[t] ?? []).map((c) => {
      const bar = el("span", { class: "bar" });
      cssNumber(bar, "p", share(c.p));
      return el("li", {}, el("span", { class: "piece", text: pieceText(c.token) }), el("span", { class: "bar-track" }, bar), el("span", { class: "p", text: percent(c.p) }));
    });
    return el("div", { class: "predict-list" }, el("p", { class: "small-label", text: heading }), el("ol", {}, ...items));
  };
  const lists = before ? [list(before, titles[0]), list(after, titles[1])] : [list(after, "")];
  return el("div", { class: "predict-detail" }, el("p", { class: "predict-at", text: title }), el("div", { class: "predict-lists" }, ...lists));
}

/**
 * The logit lens of `doc` (asked with `lens`) as table rows: per layer (`layerName(n)`, n counted
 * from 1 as the page counts layers: the stream after layer n), each position's top token, shaded
 * by the probability it gives the last layer's answer.
 */
export function lensRows(doc, layerName) {
  const row = doc.rows[0];
  const guesses = row.lens ?? [];
  const positions = row.tokens.map((_, t) => t).filter((t) => guesses.some((g) => g[t]));
  const head = el("tr", {}, el("th", {}), ...positions.map((t) => el("th", { scope: "col", text: row.tokens[t] })));
  const body = guesses.map((layer, l) =>
    el(
      "tr",
      {},
      el("th", { scope: "row", text: layerName(l + 1) }),
      ...positions.map((t) => {
        const g = layer[t];
        const cell = el("td", { text: g ? pieceText(g.token) : "" });
        if (g) {
          cssNumber(cell, "p", share(g.p_final));
          if (g.p_final > 0.5) cell.classList.add("strong");
          cell.title = `${percent(g.p)} · ${percent(g.p_final)}`;
        }
        return cell;
      }),
    ),
  );
  return [el("thead", {}, head), el("tbody", {}, ...body)];
}
