// What a widget draws of a run: one view (heatmap, grid, steps, mixing, pipeline or lines) in
// the frame's stage, with its legend, read-out and table, and the figure as a file to save. The
// views themselves are the explorer's (www/js/views/); this module gives them the widget's room,
// colours and words. The views beyond the heatmap and the grid load when a widget first needs
// them, each with the widget's side of it (its *-figure.js here): a blog reader downloads what
// the post shows.

import { chunkFailed, coded } from "../errors.js";
import { lutFor } from "../render/colormap.js";
import { drawLegend } from "../render/heatmap.js";
import { heatmapSvg } from "../render/svg.js";
import { offAt } from "../settings.js";
import { el, offer, sizeCanvas } from "../views/dom.js";
import { HeadGrid, kvHeadOf, thumbSize } from "../views/head-grid.js";
import { deviceRatio, drawHead, drawHeadTable, headLayout, plotOf } from "../views/head-figure.js";
import { HeatmapView } from "../views/heatmap-view.js";
import { readoutText } from "../views/readout.js";

/** The views a widget loads on first use; a chunk that cannot be fetched is said as such. */
const chunks = {
  atlas: () => import("./atlas-figure.js"),
  flow: () => import("./flow-figure.js"),
  generate: () => import("./generate-figure.js"),
  lines: () => import("./lines-figure.js"),
  mixing: () => import("./mixing-figure.js"),
  pipeline: () => import("./pipeline-figure.js"),
  predict: () => import("./predict-figure.js"),
  qk: () => import("./qk-figure.js"),
  rollout: () => import("./rollout-figure.js"),
  steps: () => import("./steps-figure.js"),
};
const lazy = Object.fromEntries(
  Object.entries(chunks).map(([name, load]) => [name, () => load().catch((e) => Promise.reject(chunkFailed(e)))]),
);

/** The files each view can be saved as: a view offers exactly these buttons. */
export const SAVE_FORMATS = {
  heatmap: ["png", "svg", "json"],
  grid: ["png", "svg", "json"],
  steps: ["png", "svg", "json"],
  mixing: ["png", "svg", "json"],
  lines: ["png", "json"],
  pipeline: ["json"],
  atlas: ["png", "svg", "json"],
  rollout: ["png"],
  qk: ["png"],
  predict: ["json"],
  lens: ["json"],
  flow: ["json"],
  generate: ["json"],
};

/** The widget's table shows at most this many rows and columns (a screen reader's patience). */
const TABLE_CELLS = 32;

export class WidgetFigure {
  /**
   * `hostOf()` gives the element's state as it is now: { client, parts (the frame's elements),
   * T, lang, settings, modelInfo, reader (the reader's choices, kept between drawings), sel
   * (what is drawn), colors(), dark(), onSelect(layer, head), onError(e), clearError() }.
   */
  constructor(hostOf) {
    this.hostOf = hostOf;
    this.shown = null; // the figure's numbers, for read-outs and saving
    this.trace = null;
    this.run = null;
    this.saveFailed = false; // an error of a save, which the next save that works takes away
  }

  get host() {
    return this.hostOf();
  }

  /** Draws view `view` of run `r` at `sel`; resolves once drawn (false if a newer run came). */
  async draw(r, sel, width) {
    this.run = r;
    const place = r.info.places[0];
    const tokens = r.tokens[sel.place][sel.row];
    const labels = { queries: tokens.queries.map((t) => t.label), keys: tokens.keys.map((t) => t.label) };
    const common = { r, place, sel, tokens, labels, width };
    const view = this.host.settings.view;
    const { parts } = this.host;
    parts.legend.hidden = false;
    parts.readout.hidden = false;
    if (view === "lines") await this.#lines(common);
    else if (view === "pipeline") await this.#pipeline(common);
    else if (view === "rollout") await this.#rollout(common);
    else if (view === "predict" || view === "lens") await (await lazy.predict()).predictFigure(this, view, common);
    else if (view === "flow") await (await lazy.flow()).flowFigure(this, common);
    else if (view === "generate") await (await lazy.generate()).generateFigure(this, common);
    else await this.#heatmapLike(common, view);
    return this.run === r;
  }

  /** The heatmap, the grid (with the chosen head below), the steps or the mixing table. */
  async #heatmapLike({ r, place, sel, tokens, labels, width }, view) {
    const { T, parts, client, settings } = this.host;
    const narrow = width < 520;
    const canvas = el("canvas", { class: "heatmap" });
    const overlay = el("canvas", { class: "overlay", "aria-hidden": "true" });
    const heatmap = new HeatmapView(canvas, overlay, { onHover: (hit) => this.readout(hit) });
    const layout = headLayout(heatmap, { place, labels, width, height: Math.min(Math.max(width, 240), 640), narrow, gutters: [26, 48] });
    const thumb = thumbSize(width, place.heads, narrow ? 40 : 64);
    const thumbs = view === "grid" ? { size: Math.max(1, Math.round(thumb * deviceRatio())) } : null;
    const v = await client.call("view", { run: r.id, sel, plot: plotOf(layout), thumbs, range: "max", colormap: settings.colormap, norm: settings.norm && !this.host.modelInfo.fromFile });
    if (r !== this.run) return;
    this.shown = { ...drawHead(heatmap, v, { layout, place, sel, labels, tokens, T, ...this.host.colors() }), canvas };
    const { max } = this.shown;
    this.trace = null;
    const figure = el("div", { class: "stage" }, canvas, overlay);
    const children = [];
    if (view === "atlas" || view === "qk") {
      const above = view === "atlas" ? await this.#atlas(r, sel, place, width) : await this.#qk(r, sel, width);
      if (r !== this.run || !above) return; // a newer run or drawing is drawn meanwhile
      children.push(above, figure);
    } else if (view === "grid") {
      const grid = el("div", { class: "grid", role: "group", "aria-label": T("heads") });
      const modelPlace = this.host.modelInfo.places.find((p) => p.place === sel.place);
      const heads = new HeadGrid(grid, {
        label: (layer, h) => {
          const kv = kvHeadOf(modelPlace, h);
          const label = T("gridLabel", { layer: layer + 1, head: h + 1 });
          return kv === null ? label : `${label} · ${T("gridKv", { kv: kv + 1 })}`;
        },
        corner: () => T("gridCorner"),
        onSelect: (layer, h) => this.host.onSelect(layer, h),
      });
      heads.draw({ thumbs: v.thumbs, layers: place.layers, heads: place.heads, selected: sel, dpr: deviceRatio() });
      heads.markOff(offAt(this.host.settings.off, sel.place, this.host.modelInfo), T("offMark"));
      children.push(el("div", { class: "grid-scroll" }, grid), figure);
    } else if (view === "steps") {
      const steps = el("div", { class: "steps" });
      children.push(figure, steps);
      const grouped = kvHeadOf(this.host.modelInfo.places.find((p) => p.place === sel.place), sel.head) !== null;
      lazy.steps().then(({ stepsFigure }) => stepsFigure(this, r, sel, steps, grouped)).catch((e) => this.host.onError(e)); // the heatmap stays
    } else if (view === "mixing") {
      children.push(figure, (await lazy.mixing()).mixingFigure(this, r, sel));
    } else {
      children.push(figure);
    }
    parts.stage.replaceChildren(...children);
    this.#legend(max, width);
    this.#table();
    this.readout(null);
    canvas.dataset.max = String(max);
    if (this.lit) heatmap.show(this.lit); // the query–key point's token
    this.lit = undefined;
  }

  /** Every head coloured by the author's score (`score`); a tap opens a head below it. */
  async #atlas(r, sel, place, width) {
    const [{ atlasFigure }, found] = await Promise.all([lazy.atlas(), this.host.client.call("scores", { run: r.id, sel: { place: sel.place, row: sel.row } })]);
    return atlasFigure(this, sel, place, width, found);
  }

  /** The query–key picture of the corpus (widget/qk-figure.js, loaded on first use). */
  async #qk(r, sel, width) {
    return (await lazy.qk()).qkFigure(this, sel, width);
  }

  /** Attention rollout after the chosen layer (the last unless a layer is chosen). */
  async #rollout(common) {
    const { r, sel } = common;
    const [{ rolloutFigure }, rolled] = await Promise.all([lazy.rollout(), this.host.client.call("rollout", { run: r.id, sel: { place: sel.place, row: sel.row }, fusion: this.host.settings.fusion })]);
    if (r !== this.run) return;
    await rolloutFigure(this, common, rolled);
  }

  /** The shapes from the sentence to the heads' outputs, the layer's heads as thumbnails. */
  async #pipeline(common) {
    const { r, sel } = common;
    const dpr = deviceRatio();
    const [v, { pipelineFigure }] = await Promise.all([this.host.client.call("view", { run: r.id, sel, thumbs: { size: Math.round(40 * dpr) }, colormap: this.host.settings.colormap, norm: this.host.settings.norm && !this.host.modelInfo.fromFile }), lazy.pipeline()]);
    if (r !== this.run) return;
    pipelineFigure(this, common, v, dpr);
  }

  /** BertViz's two columns: every head of the layer as coloured lines; tap a token to focus it. */
  async #lines(common) {
    const { r, sel } = common;
    const [weights, { linesFigure }] = await Promise.all([this.host.client.call("layer", { run: r.id, sel }), lazy.lines()]);
    if (r !== this.run) return;
    linesFigure(this, common, weights);
  }

  /** The colour bar, as wide as the figure's `width` allows, up to 200 px. */
  #legend(max, width) {
    const canvas = el("canvas");
    const w = Math.min(200, width);
    const { ctx, dpr } = sizeCanvas(canvas, w, 30);
    drawLegend(ctx, { x: 4, y: 2, width: w - 10, height: 10, max, dpr, lut: lutFor(this.host.settings.colormap), ink: this.host.colors().ink, fontPx: 11 });
    this.host.parts.legend.replaceChildren(canvas, el("span", { text: this.host.T("legendMasked") + ": ▨" }));
  }

  /** The values as a table for screen readers, named by the sentence it shows. */
  #table() {
    const table = el("table");
    drawHeadTable(table, this.shown, this.host.T, { limit: TABLE_CELLS });
    this.host.parts.table.replaceChildren(table);
  }

  /** No picture without its title: what failed to draw leaves nothing that speaks of it. */
  clear() {
    const { parts } = this.host;
    if (!parts) return;
    for (const part of ["stage", "legend", "table"]) parts[part].replaceChildren();
    parts.title.textContent = "";
    parts.readout.textContent = "";
    this.shown = null;
  }

  readout(hit) {
    const out = this.host.parts.readout;
    const s = this.shown;
    out.classList.toggle("live", Boolean(s?.weights && hit));
    if (!s?.weights || !hit) {
      out.textContent = this.host.T("readout");
      delete out.dataset.weight;
      return;
    }
    const { text, weight } = readoutText(hit, s, this.trace, this.host.T);
    out.textContent = text;
    if (weight !== undefined) out.dataset.weight = String(weight);
  }

  // ---- saving -------------------------------------------------------------------------------

  /** The formats the drawn view can be saved as. */
  formats() {
    return SAVE_FORMATS[this.host.settings.view] ?? [];
  }

  #offered(format) {
    if (!this.formats().includes(format)) {
      throw coded(`this view cannot be saved as ${format.toUpperCase()}: use ${this.formats().join(", ")}`, "cannot_save", { format: format.toUpperCase(), formats: this.formats().map((f) => f.toUpperCase()) });
    }
    if (!this.shown) throw coded("nothing is drawn yet", "nothing_drawn");
  }

  /** The figure as a PNG Blob (the heatmap, the lines or the query–key picture as drawn). */
  async toPNG() {
    this.#offered("png");
    const canvas = this.host.settings.view === "qk" ? this.qkView.canvas : this.shown.canvas;
    return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  }

  /** The shown head as an SVG document. */
  toSVG(title) {
    this.#offered("svg");
    const s = this.shown;
    return heatmapSvg({ title, weights: s.weights, tq: s.tq, tk: s.tk, queries: s.labels.queries, keys: s.labels.keys, allowed: s.allowed, queryValid: s.tokens.queryValid, max: s.max, maskedLabel: this.host.T("masked") });
  }

  /** The figure as a file of `format` (png, svg, json) to offer: a Blob. */
  async blob(format, title) {
    if (format === "png") return this.toPNG();
    if (format === "svg") return new Blob([this.toSVG(title)], { type: "image/svg+xml" });
    return new Blob([await this.toJSON()], { type: "application/json" });
  }

  /** Offers the figure or the weights as a file of `format` to save, from `root`; never throws. */
  async save(format, title, root) {
    const { sel } = this.host;
    try {
      offer(await this.blob(format, title), `headmap-${sel.place}-l${sel.layer + 1}-h${sel.head + 1}.${format}`, root);
      // a save that worked takes away the error of one that did not
      if (this.saveFailed) {
        this.saveFailed = false;
        this.host.clearError();
      }
    } catch (e) {
      this.saveFailed = true;
      this.host.onError(e);
    }
  }

  /** The run's weights as the command line writes them (JSON text). */
  toJSON() {
    this.#offered("json");
    // view="predict" and "lens" save what they show: the predictions document
    if (this.shown?.predictions) return Promise.resolve(JSON.stringify(this.shown.predictions));
    if (this.shown?.generation) return Promise.resolve(JSON.stringify(this.shown.generation));
    if (this.shown?.flow) return Promise.resolve(JSON.stringify({ format: "headmap.flow", version: 1, place: this.shown.place, row: this.shown.row, head: this.shown.head, ...this.shown.flow }));
    return this.host.client.call("exportRun", { run: this.run.id, format: "json" });
  }
}
