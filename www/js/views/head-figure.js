// One head as the explorer and the widget both draw it: the layout for the room given, the plot
// the worker paints into (at the device's pixel ratio), the heatmap with its labels and entropy
// bars, the record that read-outs, tables and saving read, and the table's words. The two hosts
// differ only in their room, their colours and where the pieces go.

import { drawTable } from "./table.js";

/** The pixel ratio figures are painted at (at most 3: a phone's canvases stay small). */
export function deviceRatio() {
  return Math.min(globalThis.devicePixelRatio || 1, 3);
}

/**
 * `heatmap`'s layout of `place`'s tokens in `width` × `height` CSS pixels; `narrow` rooms get
 * smaller labels and the right gutter `gutters[0]`, wide ones `gutters[1]` (the entropy bars).
 */
export function headLayout(heatmap, { place, labels, width, height, narrow, gutters }) {
  return heatmap.layoutFor({
    tq: place.tq,
    tk: place.tk,
    width,
    height,
    queries: labels.queries,
    keys: labels.keys,
    fontPx: narrow ? 11 : 13,
    gutterRight: narrow ? gutters[0] : gutters[1],
    maxLabelChars: narrow ? 8 : 12,
  });
}

/** The plot the worker paints for `layout`, in device pixels. */
export function plotOf(layout) {
  const dpr = deviceRatio();
  return { width: Math.max(1, Math.round(layout.plotWidth * dpr)), height: Math.max(1, Math.round(layout.plotHeight * dpr)), cell: layout.cell * dpr };
}

/**
 * Draws the head of `v` (what the client's `view` gave: the painted image and the head's
 * numbers) on `heatmap`, and returns what is shown: the selection, the tokens and the numbers a
 * read-out, a table or a saved file needs. `range` "one" colours 0–1, else 0 – the head's largest.
 */
export function drawHead(heatmap, v, { layout, place, sel, labels, tokens, T, range = "max", ink, faded }) {
  const { head } = v;
  const max = range === "one" && !head.norm ? 1 : head.maxima[sel.layer * place.heads + sel.head] || 1;
  heatmap.draw({
    image: v.image,
    layout,
    tq: place.tq,
    tk: place.tk,
    queries: labels.queries,
    keys: labels.keys,
    queryValid: tokens.queryValid,
    keyValid: tokens.keyValid,
    entropies: head.entropies,
    entropyMax: head.entropyLimits,
    label: T("heatmapLabel", { place: T(`place.${sel.place}`), layer: sel.layer + 1, head: sel.head + 1, tq: place.tq, tk: place.tk }),
    ink,
    faded,
  });
  v.image.close();
  return { ...sel, placeName: sel.place, tq: place.tq, tk: place.tk, tokens, labels, weights: head.weights, norm: Boolean(head.norm), allowed: head.allowed, entropies: head.entropies, entropyMax: head.entropyLimits, max, layout };
}

/** The shown head's weights as `table`, captioned with the sentence, place, layer and head shown. */
export function drawHeadTable(table, shown, T, { limit, captionEl = null } = {}) {
  const { tq, tk } = shown;
  drawTable(table, {
    captionEl,
    weights: shown.weights,
    tq,
    tk,
    queries: shown.tokens.queries,
    keys: shown.tokens.keys,
    allowed: shown.allowed,
    corner: `${T("query")} \\ ${T("key")}`,
    masked: T("masked"),
    limit,
    caption: T("tableCaption", { sentence: `${T("sentence")} ${shown.row + 1}`, place: T(`place.${shown.placeName}`), layer: shown.layer + 1, head: shown.head + 1 }),
    clipped: (rows, cols) => T("tableClipped", { rows, cols, tq, tk }),
  });
}
