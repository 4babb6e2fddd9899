// Text as the model writes it: each token with its probability, and for a chosen token what the
// position that wrote it read — every head of one layer as a thin row over the tokens before
// it, the watched head's row lit — and the KV cache of that head, a row of K and of V per token
// read, the newest lit. The numbers come from the worker's `write` (the core's generation over
// its cache). Used by the explorer's "generate" panel and the widget's `view="generate"`. Text
// is drawn on canvas or set as textContent, never as HTML.

import { addStrings } from "../i18n.js";
import { lutIndex } from "../render/colormap.js";
import { GENERATE } from "../strings/generate.js";
import { el, sizeCanvas } from "./dom.js";
import { FONT } from "./heatmap-view.js";
import { percent, pieceText } from "./predictions.js";

addStrings(GENERATE); // the words come with the view

/** At most this many characters of a token label. */
const LABEL_CHARS = 8;
const short = (s) => (s.length > LABEL_CHARS ? `${s.slice(0, LABEL_CHARS - 1)}…` : s);

/** The text written and why it ends there: its end token, the count asked for, the model's `maxTokens` positions. */
export const endedText = (T, generation, maxTokens) =>
  `${T("gen.done", { n: generation.generated.length, text: generation.text })} ${T(`gen.ended.${generation.ended}`, { max: maxTokens })}`;

/** The tokens written before the reader stopped the writing, and that it was stopped. */
export const stoppedText = (T, tokens) => `${tokens.join(" ")} ${T("gen.ended.stopped")}`.trim();

/**
 * The tokens written so far as buttons, each with its probability; `chosen` is pressed and
 * `onPick(index)` is told of a tap.
 */
export function writtenStrip(written, { chosen = null, onPick }) {
  const cells = written.map((w, i) => {
    const button = el("button", { type: "button", class: "predict-cell", "aria-pressed": String(i === chosen) });
    button.append(el("span", { class: "predict-top", text: pieceText(w.token) }), el("span", { class: "predict-p", text: percent(w.p) }));
    button.addEventListener("click", () => onPick?.(i));
    return button;
  });
  return el("div", { class: "predict-strip", role: "group" }, ...cells);
}

/**
 * Multiply–adds of one step's scores and weighted sum in one layer at context `n` (the keys the
 * new token reads), d = every head's width together: with the cache only the new query,
 * 2·n·d; without it the whole text again, 2·n²·d.
 */
export function stepCost(n, d) {
  return { cached: 2 * n * d, full: 2 * n * n * d };
}

/**
 * A grid of `rows` × `cols` cells at CSS (`x`, `y`), each `cellW` × `cellH` with a `gap` cleared
 * at its right and bottom, coloured by `rgba(r, c, pixel)` (it writes the cell's four bytes, or
 * leaves them 0 for none). One pixel per cell, then scaled without smoothing: a writing redraws
 * tens of thousands of cells a token, which one fillRect each made a frame of 100+ ms.
 */
function paintCells(ctx, { x, y, rows, cols, cellW, cellH, gap = 0, rgba }) {
  if (rows < 1 || cols < 1) return;
  const image = new ImageData(cols, rows);
  const pixel = new Uint8ClampedArray(4);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      pixel.fill(0);
      rgba(r, c, pixel);
      image.data.set(pixel, (r * cols + c) * 4);
    }
  }
  const small = typeof OffscreenCanvas === "function" ? new OffscreenCanvas(cols, rows) : Object.assign(document.createElement("canvas"), { width: cols, height: rows });
  small.getContext("2d").putImageData(image, 0, 0);
  ctx.save();
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(small, x, y, cols * cellW, rows * cellH);
  ctx.restore();
  if (!gap) return;
  for (let c = 1; c <= cols; c++) ctx.clearRect(x + c * cellW - gap, y, gap, rows * cellH);
  for (let r = 1; r <= rows; r++) ctx.clearRect(x, y + r * cellH - gap, cols * cellW, gap);
}

/** Writes `lut`'s colour of `value` on [0, `max`] into `pixel`, opaque. */
function lutPixel(pixel, value, max, lut) {
  const i = lutIndex(value, max) * 3;
  pixel[0] = lut[i];
  pixel[1] = lut[i + 1];
  pixel[2] = lut[i + 2];
  pixel[3] = 255;
}

/** A thin row's height for a layer of `heads` heads. */
const rowHeightFor = (heads) => (heads > 12 ? 6 : heads > 8 ? 12 : 16);
/** Room below the rows for the keys' tokens. */
const ROWS_BOTTOM = 60;
/** Room left of the rows for the watched head's number. */
const GUTTER = 34;

/** `rows` [H, keys] of one layer as thin rows, the watched head lit, the key tokens below. */
export class RowsView {
  constructor(container) {
    this.container = container;
    this.canvas = el("canvas", { class: "gen-rows", role: "img" });
    container.replaceChildren(el("div", { class: "flow-scroll" }, this.canvas));
  }

  /**
   * Keeps the room `heads` rows take, `width` wide, before the first is drawn, so the page
   * below stays put: each head's row in faint grey, where its weights will come, not a blank.
   */
  reserve(heads, width) {
    const rowHeight = rowHeightFor(heads);
    const h = rowHeight * heads + ROWS_BOTTOM;
    this.container.style.minHeight = `${h}px`;
    const { ctx } = sizeCanvas(this.canvas, width, h);
    ctx.fillStyle = "#eceef2";
    for (let hd = 0; hd < heads; hd++) ctx.fillRect(GUTTER, hd * rowHeight, width - GUTTER, rowHeight - 1);
    this.canvas.setAttribute("aria-hidden", "true"); // nothing to read yet
  }

  /** Gives the reserved room back, when writing ended before its first token. */
  clear() {
    this.container.style.minHeight = "";
    sizeCanvas(this.canvas, 0, 0);
  }

  /** `data`: { rows, heads, keys, labels (the keys' tokens), head, width, lut, ink, label }. */
  draw({ rows, heads, keys, labels, head, width, lut, ink = "#444", label = "" }) {
    const gutter = GUTTER;
    const cell = Math.max(10, Math.min(36, Math.floor((width - gutter) / Math.max(1, keys))));
    const rowHeight = rowHeightFor(heads);
    const w = gutter + cell * keys;
    const h = rowHeight * heads + ROWS_BOTTOM;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    let top = 0;
    for (let j = 0; j < keys; j++) top = Math.max(top, rows[head * keys + j] ?? 0);
    const maxes = Array.from({ length: heads }, (_, hd) => {
      let max = 0;
      for (let j = 0; j < keys; j++) max = Math.max(max, rows[hd * keys + j]);
      return max || 1;
    });
    paintCells(ctx, { x: gutter, y: 0, rows: heads, cols: keys, cellW: cell, cellH: rowHeight, gap: 1, rgba: (hd, j, pixel) => lutPixel(pixel, rows[hd * keys + j], maxes[hd], lut) });
    // the watched head: outlined, and its number in the gutter
    ctx.strokeStyle = ink;
    ctx.lineWidth = 2;
    ctx.strokeRect(gutter - 1, head * rowHeight - 1, cell * keys + 1, rowHeight + 1);
    ctx.fillStyle = ink;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    ctx.fillText(String(head + 1), gutter - 6, (head + 0.5) * rowHeight);
    // the keys' tokens, written downwards
    ctx.save();
    ctx.textAlign = "right";
    for (let j = 0; j < keys; j++) {
      ctx.save();
      ctx.translate(gutter + (j + 0.5) * cell, heads * rowHeight + 4);
      ctx.rotate(-Math.PI / 3);
      ctx.fillText(short(labels[j] ?? ""), 0, 0);
      ctx.restore();
    }
    ctx.restore();
    this.canvas.setAttribute("aria-label", label);
    this.canvas.removeAttribute("aria-hidden");
    this.geometry = { gutter, cell, rowHeight, keys, heads, top };
  }
}

/** K and V of one head as the cache keeps them, a row per token read, the newest outlined. */
export class CacheView {
  constructor(container) {
    this.canvas = el("canvas", { class: "gen-cache", role: "img" });
    // a box of its own height: the cache grows a row a token without moving the page below
    this.box = el("div", { class: "flow-scroll gen-cache-box" }, this.canvas);
    container.replaceChildren(this.box);
  }

  /** `data`: { keys, values (Float32Array [T, dK]), dK, labels, newRows, width, ink, titles: [K, V], label }. */
  draw({ keys, values, dK, labels, newRows = 1, width, ink = "#444", titles = ["K", "V"], label = "" }) {
    const t = dK ? keys.length / dK : 0;
    const gutter = 64;
    const gap = 16;
    const cellW = Math.max(2, Math.min(8, Math.floor((width - gutter - gap) / (2 * Math.max(1, dK)))));
    const cellH = t > 40 ? 4 : 14;
    const block = cellW * dK;
    // the outline of the rows added runs 2 px past the last row and the last column
    const w = gutter + 2 * block + gap + 3;
    const h = 18 + cellH * t + 3;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    ctx.fillStyle = ink;
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    ctx.fillText(titles[0], gutter + block / 2, 8);
    ctx.fillText(titles[1], gutter + block + gap + block / 2, 8);
    // red for positive, blue for negative, as strong as the value against the largest
    const paint = (m, x0) => {
      let max = 0;
      for (const v of m) max = Math.max(max, Math.abs(v));
      const rgba = (r, c, pixel) => {
        const v = m[r * dK + c] / (max || 1);
        pixel.set(v >= 0 ? [179, 38, 30, 255 * v] : [42, 111, 151, -255 * v]);
      };
      paintCells(ctx, { x: x0, y: 18, rows: t, cols: dK, cellW, cellH, rgba });
    };
    paint(keys, gutter);
    paint(values, gutter + block + gap);
    ctx.fillStyle = ink;
    ctx.textAlign = "right";
    if (cellH >= 10) for (let r = 0; r < t; r++) ctx.fillText(short(labels[r] ?? ""), gutter - 4, 18 + (r + 0.5) * cellH);
    // what this step added
    const first = Math.max(0, t - newRows);
    ctx.strokeStyle = ink;
    ctx.lineWidth = 2;
    for (const x0 of [gutter, gutter + block + gap]) ctx.strokeRect(x0 - 1, 18 + first * cellH - 1, block + 2, (t - first) * cellH + 2);
    this.canvas.setAttribute("aria-label", label);
    // the newest rows in sight
    this.box.scrollTop = this.box.scrollHeight;
  }
}

/**
 * One head's rows of every token written, one under the other as they come: row i is what the
 * position that wrote token i read — the text before it, or the source in cross-attention.
 */
export class GrowingView {
  constructor(container) {
    this.canvas = el("canvas", { class: "gen-growing", role: "img" });
    container.replaceChildren(el("div", { class: "flow-scroll" }, this.canvas));
  }

  /** `data`: { rows ([Float32Array of its keys] per token), written (their tokens), labels (every key's token), width, lut, ink, label }. */
  draw({ rows, written, labels, width, lut, ink = "#444", label = "" }) {
    const keys = Math.max(1, labels.length);
    const gutter = 72;
    const bottom = 60;
    // 13 px at least: the labels, turned 60°, need that much apart (a narrow column scrolls)
    const cell = Math.max(13, Math.min(32, Math.floor((width - gutter) / keys)));
    const rowHeight = Math.max(12, Math.min(22, cell));
    const w = gutter + cell * keys;
    const h = rowHeight * rows.length + bottom;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    ctx.textBaseline = "middle";
    const maxes = rows.map((row) => {
      let max = 0;
      for (const v of row) max = Math.max(max, v);
      return max || 1;
    });
    // a row is as long as what its token read: the cells past it stay empty
    const rgba = (i, j, pixel) => j < rows[i].length && lutPixel(pixel, rows[i][j], maxes[i], lut);
    paintCells(ctx, { x: gutter, y: 0, rows: rows.length, cols: keys, cellW: cell, cellH: rowHeight, gap: 1, rgba });
    rows.forEach((row, i) => {
      ctx.fillStyle = ink;
      ctx.textAlign = "right";
      ctx.fillText(short(pieceText(written[i] ?? "")), gutter - 6, (i + 0.5) * rowHeight);
    });
    ctx.fillStyle = ink;
    ctx.textAlign = "right";
    for (let j = 0; j < keys; j++) {
      ctx.save();
      ctx.translate(gutter + (j + 0.5) * cell, rows.length * rowHeight + 4);
      ctx.rotate(-Math.PI / 3);
      ctx.fillText(short(labels[j] ?? ""), 0, 0);
      ctx.restore();
    }
    this.canvas.setAttribute("aria-label", label);
  }
}
