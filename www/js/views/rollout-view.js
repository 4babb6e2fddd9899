// Attention rollout (Abnar & Zuidema 2020) as a heatmap: after layer l, how much each token's
// representation draws on each input token, the residual stream counted as half of every
// layer. The core computes it (Run.rollout); this paints it on the main thread, one small
// matrix, with the heatmap's labels, read-out and keyboard.

import { lutFor } from "../render/colormap.js";
import { formatWeight, paintHeatmap } from "../render/heatmap.js";
import { addStrings } from "../i18n.js";
import { FIND } from "../strings/find.js";
import { el } from "./dom.js";
import { HeatmapView } from "./heatmap-view.js";
import { drawTable } from "./table.js";

addStrings(FIND); // the words come with the view

export { FUSIONS } from "../find-names.js";

export class RolloutView {
  /** `container` receives the read-out and the heatmap; `T` words them. */
  constructor(container, { T }) {
    this.T = T;
    this.readout = el("p", { class: "readout", "aria-live": "polite" });
    const canvas = el("canvas", { class: "heatmap" });
    const overlay = el("canvas", { class: "overlay", "aria-hidden": "true" });
    this.heatmap = new HeatmapView(canvas, overlay, { onHover: (hit) => this.say(hit) });
    this.table = el("table");
    const details = el("details", { class: "atlas-details" }, el("summary", { text: T("atlas.table") }), el("div", { class: "table-scroll" }, this.table));
    container.replaceChildren(this.readout, el("div", { class: "heatmap-wrap" }, canvas, overlay), details);
    this.shown = null;
    this.drawing = 0; // counts draws: one that waited for its bitmap gives way to a newer one
  }

  /**
   * `data`: { rollout (Float32Array [L·T·T]), layer (after which layer), t, queries, keys
   * (labels), queryValid, keyValid, width, colormap, ink, faded }.
   */
  async draw(data) {
    const { rollout, layer, t, width } = data;
    const weights = rollout.subarray(layer * t * t, (layer + 1) * t * t);
    const narrow = width < 520;
    const layout = this.heatmap.layoutFor({ tq: t, tk: t, width, height: Math.min(Math.max(width, 240), 640), queries: data.queries, keys: data.keys, fontPx: narrow ? 11 : 13, gutterRight: narrow ? 26 : 48, maxLabelChars: narrow ? 8 : 12 });
    const dpr = Math.min(globalThis.devicePixelRatio || 1, 3);
    const w = Math.max(1, Math.round(layout.plotWidth * dpr));
    const h = Math.max(1, Math.round(layout.plotHeight * dpr));
    const image = new ImageData(w, h);
    let max = 0;
    for (const v of weights) if (v > max) max = v;
    paintHeatmap(image.data, w, h, weights, t, t, layout.cell * dpr, { max: max || 1, lut: lutFor(data.colormap), queryValid: data.queryValid });
    const mine = ++this.drawing;
    const bitmap = await createImageBitmap(image);
    if (mine !== this.drawing) {
      bitmap.close();
      return layout;
    }
    this.shown = { ...data, weights, max };
    this.heatmap.draw({ image: bitmap, layout, tq: t, tk: t, queries: data.queries, keys: data.keys, queryValid: data.queryValid, keyValid: data.keyValid, label: this.T("rollout.label", { layer: layer + 1, t }), ink: data.ink, faded: data.faded });
    bitmap.close();
    // the numbers, for screen readers and for copying: every cell is a share (no mask)
    const tokens = (labels) => labels.map((label) => ({ label }));
    drawTable(this.table, {
      weights,
      tq: t,
      tk: t,
      queries: tokens(data.queries),
      keys: tokens(data.keys),
      allowed: new Uint8Array(t * t).fill(1),
      caption: this.T("rollout.caption", { layer: layer + 1 }),
      clipped: (rows, cols) => this.T("tableClipped", { rows, cols, tq: t, tk: t }),
      corner: "",
      masked: "",
    });
    this.say(null);
    return layout;
  }

  say(hit) {
    const s = this.shown;
    if (!s || !hit || hit.axis !== "cell") {
      this.readout.textContent = this.T("rollout.readout");
      return;
    }
    const share = s.weights[hit.i * s.t + hit.j];
    this.readout.textContent = this.T("rollout.cell", { query: s.queries[hit.i], key: s.keys[hit.j], share: formatWeight(share), layer: s.layer + 1 });
  }
}
