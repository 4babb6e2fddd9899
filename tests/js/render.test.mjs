// The pure pieces of the front end: colour map, layout, heatmap pixels, statistics.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { VIRIDIS, colorOf, lutIndex, luminance } from "../../www/js/render/colormap.js";
import { HATCH, PAD_ROW_FADE, formatWeight, paintHeatmap } from "../../www/js/render/heatmap.js";
import { cellAt, labelAt, labelStep, layoutHeatmap, truncateLabel } from "../../www/js/render/layout.js";
import { escapeXml, heatmapSvg } from "../../www/js/render/svg.js";
import { thumbSize } from "../../www/js/views/head-grid.js";
import { checkWeights } from "../../www/js/views/mixing.js";
import { normalise } from "../../www/js/views/steps.js";

const rgbAt = (pixels, width, x, y) => Array.from(pixels.slice((y * width + x) * 4, (y * width + x) * 4 + 3));

describe("colour map", () => {
  it("runs from viridis purple to yellow and gets lighter all the way", () => {
    assert.deepEqual(colorOf(0), [68, 1, 84]);
    assert.deepEqual(colorOf(1), [253, 231, 37]);
    let previous = -1;
    for (let i = 0; i < 256; i += 5) {
      const l = luminance([VIRIDIS[i * 3], VIRIDIS[i * 3 + 1], VIRIDIS[i * 3 + 2]]);
      assert.ok(l > previous, `luminance rises at ${i}`);
      previous = l;
    }
  });

  it("clamps out-of-range values and treats NaN as zero", () => {
    assert.equal(lutIndex(2), 255);
    assert.equal(lutIndex(-1), 0);
    assert.equal(lutIndex(Number.NaN), 0);
    assert.equal(lutIndex(0.5, 0.5), 255, "the range maximum is the brightest colour");
  });
});

describe("heatmap pixels", () => {
  const weights = new Float32Array([1, 0, 0.5, 0.5]); // 2 x 2
  it("hatches masked cells with the mask colours, never a weight colour", () => {
    const allowed = new Uint8Array([1, 0, 1, 1]);
    const px = new Uint8ClampedArray(20 * 20 * 4);
    paintHeatmap(px, 20, 20, weights, 2, 2, 10, { allowed, grid: false });
    const masked = new Set();
    for (let y = 0; y < 10; y++) for (let x = 10; x < 20; x++) masked.add(rgbAt(px, 20, x, y).join());
    assert.deepEqual([...masked].sort(), [HATCH.base.join(), HATCH.stripe.join()].sort(), "both stripe colours, nothing else");
    assert.deepEqual(rgbAt(px, 20, 2, 2), colorOf(1));
  });

  it("fades PAD query rows toward white", () => {
    const px = new Uint8ClampedArray(20 * 20 * 4);
    paintHeatmap(px, 20, 20, weights, 2, 2, 10, { queryValid: [true, false], grid: false });
    const [r] = colorOf(0.5);
    assert.equal(rgbAt(px, 20, 5, 15)[0], Math.round(r + (255 - r) * PAD_ROW_FADE));
  });

  it("paints pooled values one per pixel, hatching the ones whose cells are all masked", () => {
    // the core's max-pooling gives one value per pixel, -1 where every cell is masked
    const pooled = new Float32Array([1, -1]);
    const px = new Uint8ClampedArray(2 * 1 * 4);
    paintHeatmap(px, 2, 1, pooled, 1, 2, 1, { grid: false });
    assert.deepEqual(rgbAt(px, 2, 0, 0), colorOf(1));
    assert.ok([HATCH.base.join(), HATCH.stripe.join()].includes(rgbAt(px, 2, 1, 0).join()), "a masked pixel is hatched");
  });

  it("formats weights for read-outs", () => {
    assert.equal(formatWeight(0), "0");
    assert.equal(formatWeight(0.12345), "0.123");
    assert.equal(formatWeight(-Infinity), "−∞");
    assert.equal(formatWeight(0.00001234), "1.2e-5");
  });
});

describe("layout", () => {
  const measure = (t) => 8 * [...t].length;
  it("truncates long tokens by grapheme, keeping emoji whole", () => {
    assert.equal(truncateLabel("antidisestablishmentarianism", 8), "antidis…");
    assert.equal(truncateLabel("👩‍👩‍👧‍👦👩‍👩‍👧‍👦👩‍👩‍👧‍👦", 2), "👩‍👩‍👧‍👦…");
    assert.equal(truncateLabel("동물이", 12), "동물이");
  });

  it("rotates key labels that do not fit flat, and maps points back to cells", () => {
    const tokens = ["동물이", "길을", "건너지", "않았다", "."];
    const l = layoutHeatmap({ tq: 5, tk: 5, width: 300, height: 300, queries: tokens, keys: tokens, measure });
    assert.ok(l.cell >= 2 && l.cell <= 48);
    assert.equal(l.plotWidth, 5 * l.cell);
    assert.ok(l.left + l.plotWidth <= 300, "fits the width");
    assert.deepEqual(cellAt(l, l.left + 1, l.top + 1), { i: 0, j: 0 });
    assert.deepEqual(cellAt(l, l.left + 4.5 * l.cell, l.top + 2.5 * l.cell), { i: 2, j: 4 });
    assert.equal(cellAt(l, l.left - 3, l.top + 1), null);
    assert.deepEqual(labelAt(l, l.left - 3, l.top + 1.5 * l.cell), { axis: "query", index: 1 });
    assert.deepEqual(labelAt(l, l.left + 3.5 * l.cell, l.top - 3), { axis: "key", index: 3 });
    const wide = layoutHeatmap({ tq: 2, tk: 2, width: 800, height: 800, queries: ["a", "b"], keys: ["a", "b"], measure });
    assert.equal(wide.angle, 0, "short labels stay flat");
    const tight = layoutHeatmap({ tq: 2, tk: 2, width: 800, height: 800, queries: ["a", "b"], keys: ["a-very-long-word", "b"], measure });
    assert.notEqual(tight.angle, 0);
  });

  it("skips labels when cells are too small to hold them", () => {
    assert.equal(labelStep(20, 13), 1);
    assert.equal(labelStep(1, 13), 17);
    const many = Array.from({ length: 2048 }, (_, i) => `t${i}`);
    const l = layoutHeatmap({ tq: 2048, tk: 2048, width: 900, height: 900, queries: many, keys: many, measure });
    assert.ok(l.cell < 1 && l.queryStep > 1);
    assert.ok(l.width <= 900 + 1);
  });
});

describe("views", () => {
  it("fits head thumbnails into the room there is", () => {
    assert.equal(thumbSize(800, 4), 72);
    assert.ok(thumbSize(560, 12) * 12 + 12 * 12 + 60 <= 560, "12 heads fit 560 px");
    assert.equal(thumbSize(200, 12), 16, "never smaller than 16 px: the grid scrolls instead");
  });

  it("tells which mixing weights softmax could give", () => {
    const seed = checkWeights([0.7, 0.1, 0.2]);
    assert.equal(seed.negative, false);
    assert.equal(seed.sumsToOne, true);
    assert.equal(checkWeights([0.5, -0.1]).negative, true);
    assert.equal(checkWeights([0.5, 0.1]).sumsToOne, false);
  });

  it("writes an SVG heatmap with escaped labels and hatched masked cells", () => {
    const svg = heatmapSvg({
      title: "a & b",
      weights: new Float32Array([1, 0, 0.4, 0.6]),
      tq: 2,
      tk: 2,
      queries: ["<b>", "동물이"],
      keys: ["<b>", "동물이"],
      allowed: new Uint8Array([1, 0, 1, 1]),
      queryValid: [true, true],
      max: 1,
    });
    assert.ok(svg.includes("&lt;b&gt;") && !svg.includes("<b>"));
    assert.ok(svg.includes("동물이") && svg.includes("a &amp; b"));
    assert.equal(svg.match(/fill="url\(#masked\)"/g).length, 2, "one masked cell and the legend swatch");
    assert.equal(escapeXml("\u0001'"), "\ufffd&apos;");
  });

  it("normalises step matrices over their finite range", () => {
    const n = normalise(new Float32Array([-2, 2, -Infinity, 0]));
    assert.deepEqual(Array.from(n.values), [0, 1, 0, 0.5]);
    assert.deepEqual(Array.from(n.allowed), [1, 1, 0, 1]);
    assert.equal(n.lo, -2);
  });
});
