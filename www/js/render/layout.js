// Where the parts of a heatmap go: pure arithmetic on sizes, so it can be tested in Node.

/** Shortens `text` to at most `max` characters (grapheme-aware), ending with "…". */
export function truncateLabel(text, max) {
  if (text.length <= max) return text; // never more graphemes than UTF-16 units
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].map((s) => s.segment);
  if (graphemes.length <= max) return text;
  return graphemes.slice(0, Math.max(1, max - 1)).join("") + "…";
}

/** Label every `step`-th token so labels of `fontPx` never overlap at `cellPx` per token. */
export function labelStep(cellPx, fontPx) {
  const room = fontPx * 1.25;
  return cellPx >= room ? 1 : Math.ceil(room / Math.max(cellPx, 1e-6));
}

/**
 * Lays out a Tq × Tk heatmap in a `width` × `height` box.
 *
 * `measure(text)` gives a label's width in px at `fontPx`. Query labels go left of the plot,
 * key labels above it, rotated by `angle` radians when they do not fit flat. Returns the
 * cell size and every offset, in CSS pixels.
 */
export function layoutHeatmap({ tq, tk, width, height, queries, keys, measure, maxLabelChars = 12, fontPx = 13, gutterRight = 56 }) {
  const shortQ = queries.map((t) => truncateLabel(t, maxLabelChars));
  const shortK = keys.map((t) => truncateLabel(t, maxLabelChars));
  const widest = (labels) => labels.reduce((m, t) => Math.max(m, measure(t)), 0);
  const left = Math.ceil(widest(shortQ)) + 10;
  const keyWidth = widest(shortK);
  // A first guess of the cell size decides whether key labels must rotate.
  let cell = Math.min((width - left - gutterRight) / tk, 48);
  const rotate = keyWidth + 6 > cell;
  const angle = rotate ? -Math.PI / 3 : 0;
  const top = Math.ceil(rotate ? keyWidth * Math.sin(Math.PI / 3) + fontPx : fontPx + 10) + 6;
  cell = Math.max(Math.min((width - left - gutterRight) / tk, (height - top - 8) / tq, 48), 0.25);
  if (cell >= 2) cell = Math.floor(cell);
  return {
    cell,
    left,
    top,
    plotWidth: cell * tk,
    plotHeight: cell * tq,
    angle,
    fontPx,
    queryLabels: shortQ,
    keyLabels: shortK,
    gutterRight,
    queryStep: labelStep(cell, fontPx),
    // slanted labels stand closer than the cells: cell · sin 60° apart
    keyStep: rotate ? labelStep(cell * Math.sin(Math.PI / 3), fontPx) : 1,
    width: Math.ceil(left + cell * tk + gutterRight),
    height: Math.ceil(top + cell * tq + 8),
  };
}

/** The `{ i, j }` cell under CSS point (`x`, `y`), or `null` outside the plot. */
export function cellAt(layout, x, y) {
  const j = Math.floor((x - layout.left) / layout.cell);
  const i = Math.floor((y - layout.top) / layout.cell);
  const tk = Math.round(layout.plotWidth / layout.cell);
  const tq = Math.round(layout.plotHeight / layout.cell);
  if (x < layout.left || y < layout.top || i >= tq || j >= tk) return null;
  return { i, j };
}

/** The query row whose label is under (`x`, `y`), or the key column, or `null`. */
export function labelAt(layout, x, y) {
  const tk = Math.round(layout.plotWidth / layout.cell);
  const tq = Math.round(layout.plotHeight / layout.cell);
  if (x < layout.left && y >= layout.top && y < layout.top + layout.plotHeight) {
    return { axis: "query", index: Math.min(tq - 1, Math.floor((y - layout.top) / layout.cell)) };
  }
  if (y < layout.top && x >= layout.left && x < layout.left + layout.plotWidth) {
    return { axis: "key", index: Math.min(tk - 1, Math.floor((x - layout.left) / layout.cell)) };
  }
  return null;
}
