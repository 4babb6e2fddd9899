// The heatmap as a table, for screen readers and for copying numbers.

import { formatWeight } from "../render/heatmap.js";
import { el } from "./dom.js";

export const TABLE_LIMIT = 64;

/**
 * `caption` names what the table shows (sentence, place, layer, head); `clipped(rows, cols)`
 * words a table cut to its first rows and columns. Tokens are `{ label }` objects. With
 * `captionEl` the caption goes there (outside a table that scrolls sideways, so it is never
 * cut off) and names the table for screen readers; else into the table's <caption>. At most
 * `limit` rows and columns are shown.
 */
export function drawTable(table, { weights, tq, tk, queries, keys, allowed, caption, clipped, corner, masked, captionEl = null, limit = TABLE_LIMIT }) {
  const rows = Math.min(tq, limit);
  const cols = Math.min(tk, limit);
  const head = el("tr", {}, el("th", { scope: "col", text: corner }));
  for (let j = 0; j < cols; j++) head.append(el("th", { scope: "col", text: keys[j].label }));
  const body = [];
  for (let i = 0; i < rows; i++) {
    const tr = el("tr", {}, el("th", { scope: "row", text: queries[i].label }));
    for (let j = 0; j < cols; j++) {
      const k = i * tk + j;
      tr.append(el("td", { text: allowed[k] ? formatWeight(weights[k]) : masked }));
    }
    body.push(tr);
  }
  const text = tq > rows || tk > cols ? `${caption} (${clipped(rows, cols)})` : caption;
  if (captionEl) {
    captionEl.textContent = text;
    table.setAttribute("aria-labelledby", captionEl.id);
    table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
  } else {
    table.replaceChildren(el("caption", { text }), el("thead", {}, head), el("tbody", {}, ...body));
  }
}
