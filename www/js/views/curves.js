// Curves over training steps on a canvas: the loss, the copy accuracy, and every head's score,
// one line per head, coloured by its layer. The page's live training and a shipped timeline
// draw through the same function; the chosen step and the phase change are marked.

import { el, sizeCanvas } from "./dom.js";

const FONT = "system-ui, 'Noto Sans CJK KR', sans-serif";
const INK = "#333";
const GRID = "#e3e3e3";

/** A layer's hue: heads of one layer share it, lighter for later heads. */
const LAYER_HUES = [212, 24, 140, 290];

/** The colour of head `head` of `heads` in layer `layer`. */
export function headColor(layer, head, heads) {
  const hue = LAYER_HUES[layer % LAYER_HUES.length];
  const light = 32 + (heads > 1 ? (head / (heads - 1)) * 30 : 0);
  return `hsl(${hue} 70% ${light}%)`;
}

/** A round number of steps near `max / 4`, for the axis's ticks. */
function tickStep(max) {
  const raw = Math.max(1, max / 4);
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
}

/**
 * Draws `series` ([{ xs, ys, color, width?, label? }]) on `canvas`, `width` x `height` CSS
 * pixels: x from 0 to `xMax` steps, y from `yMin` to `yMax` (ticks `yTicks`). `marks`
 * ([{ x, label, color? }]) are vertical lines; a series' `label` is written at its last point
 * when there is room. `lang` formats the numbers. Answers nothing: a canvas is its own record
 * (its aria-label says what it shows).
 */
export function drawCurves(canvas, { width, height, xMax, yMin = 0, yMax = 1, yTicks = null, series, marks = [], title = "", lang = "en" }) {
  const { ctx } = sizeCanvas(canvas, width, height);
  const fontPx = 11;
  const left = 36;
  const right = 42;
  const top = title ? 18 : 6;
  const bottom = 18;
  const w = Math.max(10, width - left - right);
  const h = Math.max(10, height - top - bottom);
  const x = (step) => left + (Math.min(step, xMax) / Math.max(1, xMax)) * w;
  const y = (v) => top + h - ((Math.min(yMax, Math.max(yMin, v)) - yMin) / (yMax - yMin || 1)) * h;
  ctx.clearRect(0, 0, width, height);
  ctx.font = `${fontPx}px ${FONT}`;
  ctx.textBaseline = "middle";
  if (title) {
    ctx.fillStyle = INK;
    ctx.textAlign = "left";
    ctx.fillText(title, left, 8);
  }
  // the grid and its numbers
  const ticks = yTicks ?? [yMin, (yMin + yMax) / 2, yMax];
  ctx.strokeStyle = GRID;
  ctx.lineWidth = 1;
  ctx.textAlign = "right";
  ctx.fillStyle = INK;
  for (const t of ticks) {
    ctx.beginPath();
    ctx.moveTo(left, Math.round(y(t)) + 0.5);
    ctx.lineTo(left + w, Math.round(y(t)) + 0.5);
    ctx.stroke();
    ctx.fillText(t.toLocaleString(lang, { maximumFractionDigits: 2 }), left - 4, y(t));
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  const every = tickStep(xMax);
  for (let t = 0; t <= xMax; t += every) {
    ctx.fillText(t.toLocaleString(lang), Math.min(x(t), left + w - 8), top + h + 4);
  }
  // the marks under the lines, their labels over them
  const labels = [];
  for (const mark of marks) {
    ctx.strokeStyle = mark.color ?? "#999";
    ctx.setLineDash(mark.dash ?? [4, 3]);
    ctx.beginPath();
    ctx.moveTo(Math.round(x(mark.x)) + 0.5, top);
    ctx.lineTo(Math.round(x(mark.x)) + 0.5, top + h);
    ctx.stroke();
    ctx.setLineDash([]);
    if (mark.label) {
      // in the title's row, clear of the lines' end labels, unless it would cover the title;
      // inside the plot it is written over the lines, on a box of the background
      const tx = x(mark.x);
      const wide = ctx.measureText(mark.label).width;
      const flip = tx + 3 + wide > width - 2;
      const from = flip ? tx - 3 - wide : tx + 3;
      const titleEnd = title ? left + ctx.measureText(title).width + 6 : 0;
      const inTitleRow = title && from > titleEnd;
      labels.push({ label: mark.label, color: mark.color ?? "#666", from, y: inTitleRow ? 8 : top + 1, baseline: inTitleRow ? "middle" : "top", boxed: !inTitleRow });
    }
  }
  // the lines, and the labels of the ones whose end stands apart
  const ends = [];
  for (const s of series) {
    if (!s.xs.length) continue;
    ctx.strokeStyle = s.color;
    ctx.lineWidth = s.width ?? 1.5;
    ctx.lineJoin = "round";
    ctx.beginPath();
    for (let i = 0; i < s.xs.length; i++) {
      const px = x(s.xs[i]);
      const py = y(s.ys[i]);
      if (i === 0) ctx.moveTo(px, py);
      else ctx.lineTo(px, py);
    }
    ctx.stroke();
    if (s.label) ends.push({ y: y(s.ys.at(-1)), x: x(s.xs.at(-1)), label: s.label, color: s.color });
  }
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ends.sort((a, b) => a.y - b.y);
  let last = -Infinity;
  for (const end of ends) {
    if (end.y - last < fontPx) continue; // no label over another
    ctx.fillStyle = end.color;
    ctx.fillText(end.label, end.x + 3, end.y);
    last = end.y;
  }
  ctx.textAlign = "left";
  for (const m of labels) {
    ctx.textBaseline = m.baseline;
    if (m.boxed) {
      // a halo alone left the label hard to read over many curves (the heads' chart)
      ctx.fillStyle = "rgba(255, 255, 255, 0.88)";
      ctx.fillRect(m.from - 2, m.y - 1, ctx.measureText(m.label).width + 4, fontPx + 3);
    }
    ctx.fillStyle = m.color;
    ctx.fillText(m.label, m.from, m.y);
  }
}

/** Every `k`-th of `values` averaged over the `k` before it: a curve of thousands of steps in a few hundred points. */
export function thinned(xs, ys, points) {
  const k = Math.max(1, Math.ceil(xs.length / points));
  if (k === 1) return { xs, ys };
  const out = { xs: [], ys: [] };
  for (let i = 0; i < xs.length; i += k) {
    const end = Math.min(xs.length, i + k);
    let sum = 0;
    for (let j = i; j < end; j++) sum += ys[j];
    out.xs.push(xs[end - 1]);
    out.ys.push(sum / (end - i));
  }
  return out;
}

/** The width of one chart in a panel `width` CSS pixels wide: two side by side from 700 px, else one. */
export const chartWidth = (width) => (width >= 700 ? Math.floor(width / 2) - 8 : width);

/** The key to the layers' colours: a swatch and `name(layer)` for each of `layers`. */
export const layerKeys = (layers, name) =>
  Array.from({ length: layers }, (_, layer) => el("span", { class: "train-key" }, el("span", { class: `train-swatch layer-${layer % 4}`, "aria-hidden": "true" }), name(layer)));
