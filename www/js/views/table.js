// The heatmap as a table, for screen readers and for copying numbers.

import { formatWeight } from "../render/heatmap.js";
import { el } from "./dom.js";

export const TABLE_LIMIT = 64;

export function drawTable(table, { weights, tq, tk, queries, keys, allowed }, t) {
  const rows = Math.min(tq, TABLE_LIMIT);
  const cols = Math.min(tk, TABLE_LIMIT);
  const head = el("tr", {}, el("th", { scope: "col", text: `${t("query")} \\ ${t("key")}` }));
  for (let j = 0; j < cols; j++) head.append(el("th", { scope: "col", text: keys[j] }));
  const body = [];
  for (let i = 0; i < rows; i++) {
    const tr = el("tr", {}, el("th", { scope: "row", text: queries[i] }));
    for (let j = 0; j < cols; j++) {
      const k = i * tk + j;
      tr.append(el("td", { text: allowed[k] ? formatWeight(weights[k]) : t("masked") }));
    }
    body.push(tr);
  }
  const caption = tq > rows || tk > cols ? `${rows} × ${cols} of ${tq} × ${tk}` : `${tq} × ${tk}`;
  table.replaceChildren(el("caption", { text: caption }), el("thead", {}, head), el("tbody", {}, ...body));
}
