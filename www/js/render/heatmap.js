// Pure canvas renderers: they draw what they are given and know nothing of wasm or the DOM
// around the canvas. Weights are one head's [Tq x Tk] row-major Float32Array.

import { VIRIDIS, lutIndex } from "./colormap.js";

/** Colours of masked cells: light grey with darker diagonal stripes, never a weight colour. */
export const HATCH = { base: [236, 236, 236], stripe: [150, 150, 150], period: 7, width: 2 };
/** How far PAD query rows fade toward white (0 none … 1 white). */
export const PAD_ROW_FADE = 0.6;

/**
 * Paints a heatmap of `weights` (Tq x Tk) into an RGBA buffer of `width` x `height` device
 * pixels, each cell `cellPx` ≥ 1 device pixels wide. With more cells than pixels, pool first:
 * the core's max-pooling (`Run.pooled`) gives one value per pixel, -1 where all is masked.
 *
 * opts: `allowed` Uint8Array [Tq x Tk] (0 = masked, drawn hatched), `queryValid` boolean[Tq]
 * (false = PAD row, faded), `max` the weight drawn brightest (default 1), `lut`, `grid`
 * (a 1-pixel line between cells when they are large). A value below 0 is drawn hatched too.
 */
export function paintHeatmap(pixels, width, height, weights, tq, tk, cellPx, opts = {}) {
  const { allowed = null, queryValid = null, max = 1, lut = VIRIDIS, grid = cellPx >= 14 } = opts;
  const cell = Math.max(1, cellPx);
  const colStart = new Int32Array(width + 1);
  for (let x = 0; x <= width; x++) colStart[x] = Math.min(tk, Math.floor(x / cell));
  const rowStart = new Int32Array(height + 1);
  for (let y = 0; y <= height; y++) rowStart[y] = Math.min(tq, Math.floor(y / cell));

  // 1. per query row, the weight under each pixel column (-1: masked)
  const rowPool = new Float32Array(tq * width).fill(-1);
  for (let i = 0; i < tq; i++) {
    for (let x = 0; x < width; x++) {
      const k = i * tk + colStart[x];
      if (colStart[x] < tk && (allowed === null || allowed[k] !== 0)) rowPool[i * width + x] = weights[k];
    }
  }

  // 2. per pixel, the largest over the query rows it covers, then its colour
  for (let y = 0; y < height; y++) {
    const i0 = Math.min(rowStart[y], tq - 1);
    const i1 = Math.min(tq, Math.max(i0 + 1, rowStart[y + 1]));
    const fade = queryValid && !queryValid[i0] ? PAD_ROW_FADE : 0;
    const rowLine = grid && y > 0 && rowStart[y - 1] !== rowStart[y];
    for (let x = 0; x < width; x++) {
      let best = rowPool[i0 * width + x];
      for (let i = i0 + 1; i < i1; i++) if (rowPool[i * width + x] > best) best = rowPool[i * width + x];
      let r, g, b;
      if (best < 0) {
        const c = (x + y) % HATCH.period < HATCH.width ? HATCH.stripe : HATCH.base;
        r = c[0];
        g = c[1];
        b = c[2];
      } else {
        const li = lutIndex(best, max) * 3;
        r = lut[li];
        g = lut[li + 1];
        b = lut[li + 2];
      }
      if (grid && (rowLine || (x > 0 && colStart[x - 1] !== colStart[x]))) r = g = b = 255;
      const o = (y * width + x) * 4;
      pixels[o] = r + (255 - r) * fade;
      pixels[o + 1] = g + (255 - g) * fade;
      pixels[o + 2] = b + (255 - b) * fade;
      pixels[o + 3] = 255;
    }
  }
}

/**
 * Draws one head's heatmap on `ctx` at CSS position (`x`, `y`) with cells of `cell` CSS pixels,
 * through one ImageData (no node per cell). `ctx.canvas` is `dpr` times its CSS size.
 */
export function drawHeatmap(ctx, weights, tq, tk, { x = 0, y = 0, cell, dpr = 1, ...opts }) {
  const width = Math.max(1, Math.round(cell * tk * dpr));
  const height = Math.max(1, Math.round(cell * tq * dpr));
  const image = ctx.createImageData(width, height);
  paintHeatmap(image.data, width, height, weights, tq, tk, cell * dpr, opts);
  ctx.putImageData(image, Math.round(x * dpr), Math.round(y * dpr));
}

/**
 * Token labels: queries down the left, keys along the top (rotated when `layout.angle` is set).
 * `highlight` = { axis: "query" | "key", index } draws that label bold on a tinted band.
 */
export function drawLabels(ctx, layout, { highlight = null, queryValid = null, keyValid = null, font = "system-ui, 'Noto Sans CJK KR', sans-serif", ink = "#222", faded = "#8a8a8a" } = {}) {
  const { left, top, cell, fontPx } = layout;
  ctx.save();
  ctx.textBaseline = "middle";
  const fontFor = (bold) => `${bold ? "600 " : ""}${fontPx}px ${font}`;
  // a skipped label leaves an axis tick, so the labels shown never read as one sentence (a dot
  // read as a "." token); ticks stand in the gap between the labels and the plot
  const tick = (x, y, across) => {
    ctx.fillStyle = faded;
    if (across) ctx.fillRect(x, y - 0.5, 4, 1);
    else ctx.fillRect(x - 0.5, y, 1, 4);
  };
  layout.queryLabels.forEach((label, i) => {
    const bold = highlight?.axis === "query" && highlight.index === i;
    if (i % layout.queryStep !== 0 && !bold) {
      if (cell >= 4) tick(left - 5, top + (i + 0.5) * cell, true);
      return;
    }
    ctx.font = fontFor(bold);
    ctx.textAlign = "right";
    ctx.fillStyle = queryValid && !queryValid[i] ? faded : ink;
    ctx.fillText(label, left - 6, top + (i + 0.5) * cell);
  });
  layout.keyLabels.forEach((label, j) => {
    const bold = highlight?.axis === "key" && highlight.index === j;
    if (j % layout.keyStep !== 0 && !bold) {
      if (cell >= 4) tick(left + (j + 0.5) * cell, top - 5, false);
      return;
    }
    ctx.font = fontFor(bold);
    ctx.fillStyle = keyValid && !keyValid[j] ? faded : ink;
    const cx = left + (j + 0.5) * cell;
    if (layout.angle) {
      ctx.save();
      ctx.translate(cx, top - 6);
      ctx.rotate(layout.angle);
      ctx.textAlign = "left";
      ctx.fillText(label, 0, 0);
      ctx.restore();
    } else {
      ctx.textAlign = "center";
      ctx.fillText(label, cx, top - fontPx / 2 - 4);
    }
  });
  ctx.restore();
}

/** Outlines row or column `highlight.index` of the plot (for hover on a token or a cell). */
export function drawHighlight(ctx, layout, highlight, color = "#e4572e") {
  if (!highlight) return;
  const { left, top, cell, plotWidth, plotHeight } = layout;
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = 2;
  if (highlight.axis === "query") ctx.strokeRect(left - 1, top + highlight.index * cell - 1, plotWidth + 2, cell + 2);
  if (highlight.axis === "key") ctx.strokeRect(left + highlight.index * cell - 1, top - 1, cell + 2, plotHeight + 2);
  if (highlight.axis === "cell") ctx.strokeRect(left + highlight.j * cell - 1, top + highlight.i * cell - 1, cell + 2, cell + 2);
  ctx.restore();
}

/** A translucent band over one token's label, so the hovered token stands out. */
export function drawLabelBand(ctx, layout, { axis, index }, color = "rgba(228, 87, 46, 0.18)") {
  const { left, top, cell } = layout;
  ctx.save();
  ctx.fillStyle = color;
  if (axis === "query") ctx.fillRect(0, top + index * cell, left - 2, cell);
  if (axis === "key") ctx.fillRect(left + index * cell, 0, cell, top - 2);
  ctx.restore();
}

/**
 * A bar per query row right of the plot, its length the row's entropy over the largest
 * possible. Rows thinner than a pixel share one bar per pixel: their mean.
 */
export function drawEntropyBars(ctx, layout, entropies, maxima, { color = "#5a6c8a" } = {}) {
  const { left, top, cell, plotWidth } = layout;
  const x0 = left + plotWidth + 6;
  const width = Math.max(8, (layout.gutterRight ?? 56) - 16);
  const per = Math.max(1, Math.floor(1 / cell)); // rows per bar
  const band = cell * per;
  ctx.save();
  ctx.fillStyle = "#e6e9ef";
  ctx.fillRect(x0, top, width, cell * entropies.length);
  ctx.fillStyle = color;
  for (let i0 = 0; i0 < entropies.length; i0 += per) {
    let f = 0;
    const i1 = Math.min(entropies.length, i0 + per);
    for (let i = i0; i < i1; i++) f += maxima[i] > 0 ? Math.min(1, entropies[i] / maxima[i]) : 0;
    const gap = band >= 3 ? band * 0.15 : 0;
    ctx.fillRect(x0, top + i0 * cell + gap, (width * f) / (i1 - i0), Math.max(band - 2 * gap, 0.5));
  }
  ctx.restore();
}

/** A horizontal colour legend from 0 to `max`, with ticks, at CSS (`x`, `y`). */
export function drawLegend(ctx, { x, y, width, height = 12, max = 1, lut = VIRIDIS, dpr = 1, fontPx = 12, ink = "#333" }) {
  const w = Math.max(1, Math.round(width * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  const image = ctx.createImageData(w, h);
  for (let px = 0; px < w; px++) {
    const li = Math.round((px / Math.max(1, w - 1)) * 255) * 3;
    for (let py = 0; py < h; py++) {
      const o = (py * w + px) * 4;
      image.data[o] = lut[li];
      image.data[o + 1] = lut[li + 1];
      image.data[o + 2] = lut[li + 2];
      image.data[o + 3] = 255;
    }
  }
  ctx.putImageData(image, Math.round(x * dpr), Math.round(y * dpr));
  ctx.save();
  ctx.font = `${fontPx}px system-ui, sans-serif`;
  ctx.fillStyle = ink;
  ctx.textBaseline = "top";
  for (const t of [0, 0.5, 1]) {
    ctx.textAlign = t === 0 ? "left" : t === 1 ? "right" : "center";
    ctx.fillText(formatWeight(max * t), x + width * t, y + height + 3);
  }
  ctx.restore();
}

/** A weight as people read it: 0, 1, or three significant digits. */
export function formatWeight(w) {
  if (w === 0) return "0";
  if (w === 1) return "1";
  if (!Number.isFinite(w)) return w > 0 ? "∞" : w < 0 ? "−∞" : "NaN";
  return Math.abs(w) >= 0.001 ? w.toFixed(3) : w.toExponential(1);
}
