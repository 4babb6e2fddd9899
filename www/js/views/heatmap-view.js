// The main heatmap: one head's cells (a bitmap the worker painted), token labels on both axes,
// entropy bars, an overlay for highlights, and a read-out of the cell under the pointer,
// under a finger (tap or long-press) or under the keyboard cursor (arrow keys).

import { drawEntropyBars, drawHighlight, drawLabelBand, drawLabels } from "../render/heatmap.js";
import { cellAt, labelAt, layoutHeatmap } from "../render/layout.js";
import { sizeCanvas } from "./dom.js";

export const FONT = "system-ui, 'Noto Sans CJK KR', 'Noto Sans KR', sans-serif";

export class HeatmapView {
  /**
   * `canvas` takes focus and pointer events; `overlay` above it shows highlights.
   * `onHover({ axis: "cell", i, j } | { axis: "query" | "key", index } | null)` follows the
   * pointer, a tap or the keyboard cursor.
   */
  constructor(canvas, overlay, { onHover }) {
    this.canvas = canvas;
    this.overlay = overlay;
    this.onHover = onHover;
    this.layout = null;
    this.view = null;
    this.cursor = null; // the keyboard's cell
    canvas.tabIndex = 0;
    const hitAt = (e) => {
      if (!this.layout) return null;
      const r = this.canvas.getBoundingClientRect();
      const x = e.clientX - r.left;
      const y = e.clientY - r.top;
      const cell = cellAt(this.layout, x, y);
      return cell ? { axis: "cell", ...cell } : labelAt(this.layout, x, y);
    };
    canvas.addEventListener("pointermove", (e) => {
      if (e.pointerType === "touch") return; // a finger scrolls; a tap selects (below)
      this.show(hitAt(e));
    });
    // a tap or a long-press shows the read-out, as hovering does
    canvas.addEventListener("pointerdown", (e) => {
      if (e.pointerType !== "mouse") this.show(hitAt(e));
    });
    canvas.addEventListener("contextmenu", (e) => {
      if (this.layout && hitAt(e)) e.preventDefault(); // a long-press reads the cell instead
    });
    canvas.addEventListener("pointerleave", (e) => {
      if (e.pointerType === "mouse") this.show(null);
    });
    canvas.addEventListener("keydown", (e) => this.key(e));
    canvas.addEventListener("blur", () => {
      this.cursor = null;
    });
  }

  show(hit) {
    this.highlight(hit);
    if (hit && hit.axis !== "cell" && this.view) {
      const list = hit.axis === "query" ? this.view.queries : this.view.keys;
      this.canvas.title = list[hit.index] ?? "";
    } else {
      this.canvas.title = "";
    }
    this.onHover(hit);
  }

  /** Arrow keys move a cursor over the cells; Home and End jump along the row. */
  key(e) {
    if (!this.layout || !this.view) return;
    const { tq, tk } = this.view;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const c = this.cursor ?? { i: 0, j: 0 };
    let next = null;
    if (moves[e.key]) next = { i: c.i + moves[e.key][0], j: c.j + moves[e.key][1] };
    else if (e.key === "Home") next = { i: c.i, j: 0 };
    else if (e.key === "End") next = { i: c.i, j: tk - 1 };
    else if (e.key === "Escape") {
      this.cursor = null;
      this.show(null);
      return;
    }
    if (!next) return;
    e.preventDefault();
    this.cursor = { i: Math.min(tq - 1, Math.max(0, next.i)), j: Math.min(tk - 1, Math.max(0, next.j)) };
    this.show({ axis: "cell", ...this.cursor });
  }

  // Measuring thousands of labels is slow: the layout is kept while the tokens and the size
  // stay the same (switching heads or layers).
  layoutFor({ queries, keys, ...sizes }) {
    const c = this.cached;
    const key = JSON.stringify(sizes);
    if (c && c.queries === queries && c.keys === keys && c.key === key) return c.layout;
    const probe = this.canvas.getContext("2d");
    probe.font = `${sizes.fontPx}px ${FONT}`;
    const layout = layoutHeatmap({ ...sizes, queries, keys, measure: (t) => probe.measureText(t).width });
    this.cached = { queries, keys, key, layout };
    return layout;
  }

  /**
   * view: { image (the cells, plotWidth x plotHeight CSS pixels at the device's ratio), layout,
   * tq, tk, queries, keys, queryValid, keyValid, entropies, entropyMax, label, ink?, faded? }.
   */
  draw(view) {
    this.view = view;
    const { layout } = view;
    this.layout = layout;
    const { ctx } = sizeCanvas(this.canvas, layout.width, layout.height);
    sizeCanvas(this.overlay, layout.width, layout.height);
    ctx.clearRect(0, 0, layout.width, layout.height);
    ctx.imageSmoothingEnabled = false;
    if (view.image) ctx.drawImage(view.image, layout.left, layout.top, layout.plotWidth, layout.plotHeight);
    drawLabels(ctx, layout, { queryValid: view.queryValid, keyValid: view.keyValid, font: FONT, ink: view.ink, faded: view.faded });
    if (view.entropies) drawEntropyBars(ctx, layout, view.entropies, view.entropyMax);
    this.canvas.setAttribute("aria-label", view.label);
    if (this.cursor && (this.cursor.i >= view.tq || this.cursor.j >= view.tk)) this.cursor = null;
    return layout;
  }

  highlight(hit) {
    if (!this.layout) return;
    const ctx = this.overlay.getContext("2d");
    ctx.clearRect(0, 0, this.layout.width, this.layout.height);
    if (!hit) return;
    if (hit.axis === "cell") {
      drawHighlight(ctx, this.layout, { axis: "query", index: hit.i }, "rgba(228, 87, 46, 0.5)");
      drawHighlight(ctx, this.layout, hit);
      drawLabelBand(ctx, this.layout, { axis: "query", index: hit.i });
      drawLabelBand(ctx, this.layout, { axis: "key", index: hit.j });
    } else {
      drawHighlight(ctx, this.layout, hit);
      drawLabelBand(ctx, this.layout, hit);
    }
  }
}
