// Text as the model writes it: each token with its probability, and for a chosen token what the
// position that wrote it read — every head of one layer as a thin row over the tokens before
// it, the watched head's row lit — and the KV cache of that head, a row of K and of V per token
// read, the newest lit. The numbers come from the worker's `write` (the core's generation over
// its cache). Used by the explorer's "generate" panel and the widget's `view="generate"`. Text
// is drawn on canvas or set as textContent, never as HTML.

import { cssColorOf } from "../render/colormap.js";
import { el, sizeCanvas } from "./dom.js";
import { FONT } from "./heatmap-view.js";
import { percent, pieceText } from "./predictions.js";

/** At most this many characters of a token label. */
const LABEL_CHARS = 8;
const short = (s) => (s.length > LABEL_CHARS ? `${s.slice(0, LABEL_CHARS - 1)}…` : s);

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

/** `rows` [H, keys] of one layer as thin rows, the watched head lit, the key tokens below. */
export class RowsView {
  constructor(container) {
    this.canvas = el("canvas", { class: "gen-rows", role: "img" });
    container.replaceChildren(el("div", { class: "flow-scroll" }, this.canvas));
  }

  /** `data`: { rows, heads, keys, labels (the keys' tokens), head, width, lut, ink, label }. */
  draw({ rows, heads, keys, labels, head, width, lut, ink = "#444", label = "" }) {
    const gutter = 34;
    const bottom = 60;
    const cell = Math.max(10, Math.min(36, Math.floor((width - gutter) / Math.max(1, keys))));
    const rowHeight = heads > 12 ? 6 : heads > 8 ? 12 : 16;
    const w = gutter + cell * keys;
    const h = rowHeight * heads + bottom;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    let top = 0;
    for (let j = 0; j < keys; j++) top = Math.max(top, rows[head * keys + j] ?? 0);
    for (let hd = 0; hd < heads; hd++) {
      let max = 0;
      for (let j = 0; j < keys; j++) max = Math.max(max, rows[hd * keys + j]);
      for (let j = 0; j < keys; j++) {
        ctx.fillStyle = cssColorOf(rows[hd * keys + j], max || 1, lut);
        ctx.fillRect(gutter + j * cell, hd * rowHeight, cell - 1, rowHeight - 1);
      }
    }
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
    this.geometry = { gutter, cell, rowHeight, keys, heads, top };
  }
}

/** K and V of one head as the cache keeps them, a row per token read, the newest outlined. */
export class CacheView {
  constructor(container) {
    this.canvas = el("canvas", { class: "gen-cache", role: "img" });
    container.replaceChildren(el("div", { class: "flow-scroll" }, this.canvas));
  }

  /** `data`: { keys, values (Float32Array [T, dK]), dK, labels, newRows, width, ink, titles: [K, V], label }. */
  draw({ keys, values, dK, labels, newRows = 1, width, ink = "#444", titles = ["K", "V"], label = "" }) {
    const t = dK ? keys.length / dK : 0;
    const gutter = 64;
    const gap = 16;
    const cellW = Math.max(2, Math.min(8, Math.floor((width - gutter - gap) / (2 * Math.max(1, dK)))));
    const cellH = t > 40 ? 4 : 14;
    const block = cellW * dK;
    const w = gutter + 2 * block + gap;
    const h = 18 + cellH * t;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    ctx.fillStyle = ink;
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    ctx.fillText(titles[0], gutter + block / 2, 8);
    ctx.fillText(titles[1], gutter + block + gap + block / 2, 8);
    const paint = (m, x0) => {
      let max = 0;
      for (const v of m) max = Math.max(max, Math.abs(v));
      for (let r = 0; r < t; r++) {
        for (let c = 0; c < dK; c++) {
          const v = m[r * dK + c] / (max || 1);
          ctx.fillStyle = v >= 0 ? `rgba(179, 38, 30, ${v.toFixed(3)})` : `rgba(42, 111, 151, ${(-v).toFixed(3)})`;
          ctx.fillRect(x0 + c * cellW, 18 + r * cellH, cellW, cellH);
        }
      }
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
    const cell = Math.max(10, Math.min(32, Math.floor((width - gutter) / keys)));
    const rowHeight = Math.max(12, Math.min(22, cell));
    const w = gutter + cell * keys;
    const h = rowHeight * rows.length + bottom;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    ctx.textBaseline = "middle";
    rows.forEach((row, i) => {
      let max = 0;
      for (const v of row) max = Math.max(max, v);
      for (let j = 0; j < row.length; j++) {
        ctx.fillStyle = cssColorOf(row[j], max || 1, lut);
        ctx.fillRect(gutter + j * cell, i * rowHeight, cell - 1, rowHeight - 1);
      }
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
