// The two-column view readers know from BertViz: tokens down both sides, a line from each query
// (left) to each key (right), as opaque as its weight, one colour per head. Pure arithmetic and
// canvas drawing; the numbers come in as one layer's weights [H, Tq, Tk].

/** One colour per head, distinct on white and on dark backgrounds. */
export const HEAD_COLORS = [
  [31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40], [148, 103, 189], [140, 86, 75],
  [227, 119, 194], [127, 127, 127], [188, 189, 34], [23, 190, 207], [57, 59, 121], [173, 73, 74],
];

/** Head `h`'s colour; on a dark background mixed halfway to white, so no head fades into it. */
export const headColor = (h, alpha = 1, dark = false) => {
  const [r, g, b] = HEAD_COLORS[h % HEAD_COLORS.length].map((c) => (dark ? Math.round((c + 255) / 2) : c));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
};

/** Where the columns go in a `width`-wide box: labels take `labelWidth` on each side. */
export function layoutLines({ tq, tk, width, labelWidth, rowHeight = 20, top = 8 }) {
  const rows = Math.max(tq, tk);
  const left = Math.min(labelWidth, width * 0.3);
  const right = Math.max(width - left, left + 40);
  return { leftX: left, rightX: right, top, rowHeight, tq, tk, width, height: Math.ceil(top * 2 + rows * rowHeight) };
}

const yOf = (layout, index) => layout.top + (index + 0.5) * layout.rowHeight;

/** The token under a point: { side: "query" | "key", index }, or null. */
export function tokenAt(layout, x, y) {
  const index = Math.floor((y - layout.top) / layout.rowHeight);
  if (x <= layout.leftX && index >= 0 && index < layout.tq) return { side: "query", index };
  if (x >= layout.rightX && index >= 0 && index < layout.tk) return { side: "key", index };
  return null;
}

/**
 * The strongest line among `heads` of `weights` [H, Tq, Tk]: through the focused token when
 * there is one. Returns { query, key, head, weight }.
 */
export function strongest(weights, heads, tq, tk, focus = null) {
  let best = { query: -1, key: -1, head: -1, weight: -1 };
  for (const h of heads) {
    for (let i = 0; i < tq; i++) {
      if (focus?.side === "query" && focus.index !== i) continue;
      for (let j = 0; j < tk; j++) {
        if (focus?.side === "key" && focus.index !== j) continue;
        const w = weights[(h * tq + i) * tk + j];
        if (w > best.weight) best = { query: i, key: j, head: h, weight: w };
      }
    }
  }
  return best;
}

/**
 * Draws the lines and labels. opts: `weights` [H, Tq, Tk], `heads` (which to draw), `queries`,
 * `keys` (labels), `focus` ({ side, index } or null), `font`, `ink`, `faded` (PAD labels),
 * `queryValid`, `keyValid`, `dark` (a dark background: lighter head colours).
 */
export function drawLines(ctx, layout, { weights, heads, queries, keys, focus = null, font, ink = "#222", faded = "#999", queryValid = null, keyValid = null, dark = false }) {
  const { tq, tk, leftX, rightX } = layout;
  ctx.save();
  for (const h of heads) {
    for (let i = 0; i < tq; i++) {
      if (focus?.side === "query" && focus.index !== i) continue;
      for (let j = 0; j < tk; j++) {
        if (focus?.side === "key" && focus.index !== j) continue;
        const w = weights[(h * tq + i) * tk + j];
        if (!(w > 0.01)) continue;
        // weight shows twice: in how opaque and how thick a line is, so a strong line of a
        // dim colour still stands out
        ctx.strokeStyle = headColor(h, Math.min(1, (focus ? 0.25 : 0.1) + w * (focus ? 0.75 : 0.7)), dark);
        ctx.lineWidth = 1 + 3 * w;
        ctx.beginPath();
        ctx.moveTo(leftX + 4, yOf(layout, i));
        ctx.lineTo(rightX - 4, yOf(layout, j));
        ctx.stroke();
      }
    }
  }
  ctx.textBaseline = "middle";
  ctx.font = font;
  const label = (text, x, y, align, valid, on) => {
    ctx.textAlign = align;
    if (on) {
      ctx.fillStyle = "rgba(228, 87, 46, 0.2)";
      const w = Math.min(ctx.measureText(text).width + 8, leftX);
      ctx.fillRect(align === "right" ? x - w + 2 : x - 2, y - layout.rowHeight / 2, w, layout.rowHeight);
    }
    ctx.fillStyle = valid ? ink : faded;
    ctx.fillText(text, x, y, leftX - 8);
  };
  queries.forEach((t, i) => label(t, leftX - 6, yOf(layout, i), "right", queryValid?.[i] ?? true, focus?.side === "query" && focus.index === i));
  keys.forEach((t, j) => label(t, rightX + 6, yOf(layout, j), "left", keyValid?.[j] ?? true, focus?.side === "key" && focus.index === j));
  ctx.restore();
}
