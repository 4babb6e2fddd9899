// The main heatmap: one head on a canvas, labels on both axes, an overlay for hover
// highlights, and a read-out of the cell under the pointer.

import { drawEntropyBars, drawHeatmap, drawHighlight, drawLabelBand, drawLabels } from "../render/heatmap.js";
import { cellAt, labelAt, layoutHeatmap } from "../render/layout.js";
import { sizeCanvas } from "./dom.js";

const FONT = "system-ui, 'Noto Sans CJK KR', 'Noto Sans KR', sans-serif";

export class HeatmapView {
  /** `onHover({ i, j } | { axis, index } | null)` is called as the pointer moves. */
  constructor(canvas, overlay, { onHover }) {
    this.canvas = canvas;
    this.overlay = overlay;
    this.onHover = onHover;
    this.layout = null;
    this.view = null;
    const move = (e) => {
      if (!this.layout) return;
      const r = this.overlay.getBoundingClientRect();
      const x = e.clientX - r.left;
      const y = e.clientY - r.top;
      const cell = cellAt(this.layout, x, y);
      const label = cell ? null : labelAt(this.layout, x, y);
      const hit = cell ? { axis: "cell", ...cell } : label;
      this.highlight(hit);
      const tokens = this.view;
      if (label && tokens) {
        const list = label.axis === "query" ? tokens.queries : tokens.keys;
        this.overlay.title = list[label.index] ?? "";
      } else {
        this.overlay.title = "";
      }
      this.onHover(hit);
    };
    overlay.addEventListener("pointermove", move);
    overlay.addEventListener("pointerleave", () => {
      this.highlight(null);
      this.onHover(null);
    });
  }

  /**
   * view: { weights (Tq x Tk Float32Array), tq, tk, queries, keys, allowed, queryValid,
   * keyValid, max, entropies, entropyMax, width, height }, and `pooled(height, width)`, which
   * may give the weights already max-pooled to the plot's device pixels (-1 = all masked)
   * when there are more tokens than pixels.
   */
  async draw(view, pooled = null) {
    this.view = view;
    const layout = this.layoutFor(view);
    const dpr = Math.min(globalThis.devicePixelRatio || 1, 3);
    const pw = Math.max(1, Math.round(layout.cell * view.tk * dpr));
    const ph = Math.max(1, Math.round(layout.cell * view.tq * dpr));
    const pixels = pooled && layout.cell * dpr < 1 ? await pooled(ph, pw) : null;
    if (this.view !== view) return layout; // a newer draw started meanwhile
    this.layout = layout;
    const { ctx } = sizeCanvas(this.canvas, layout.width, layout.height);
    sizeCanvas(this.overlay, layout.width, layout.height);
    ctx.clearRect(0, 0, layout.width, layout.height);
    const at = { x: layout.left, y: layout.top, dpr, max: view.max };
    if (pixels) {
      // one pooled value per device pixel; a pixel row fades when its first query is PAD
      const rowValid = Array.from({ length: ph }, (_, y) => view.queryValid[Math.floor((y * view.tq) / ph)]);
      drawHeatmap(ctx, pixels, ph, pw, { ...at, cell: 1 / dpr, queryValid: rowValid, grid: false });
    } else {
      drawHeatmap(ctx, view.weights, view.tq, view.tk, { ...at, cell: layout.cell, allowed: view.allowed, queryValid: view.queryValid });
    }
    drawLabels(ctx, layout, { queryValid: view.queryValid, keyValid: view.keyValid, font: FONT });
    if (view.entropies) drawEntropyBars(ctx, layout, view.entropies, view.entropyMax);
    return layout;
  }

  // Measuring thousands of labels is slow: the layout is kept while the tokens and the size
  // stay the same (switching heads or layers).
  layoutFor({ tq, tk, width, height, queries, keys }) {
    const c = this.cached;
    if (c && c.queries === queries && c.keys === keys && c.width === width && c.height === height) return c.layout;
    const probe = this.canvas.getContext("2d");
    probe.font = `13px ${FONT}`;
    const layout = layoutHeatmap({ tq, tk, width, height, queries, keys, measure: (t) => probe.measureText(t).width });
    this.cached = { queries, keys, width, height, layout };
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
