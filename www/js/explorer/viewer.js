// What the explorer shows of a run: one head as a heatmap, every head as a thumbnail, the
// steps of the head, the weights as a table, the mixing of V, and read-outs. The worker
// paints the cells; this module lays out labels, places the bitmaps and words the numbers.
// It draws the state it is given (already fitted to the run by the store) and changes it only
// by asking the store, as the reader's taps do.

import { offAt } from "../settings.js";
import { el } from "../views/dom.js";
import { HeadGrid, kvHeadOf, thumbSize } from "../views/head-grid.js";
import { deviceRatio, drawHead, drawHeadTable, headLayout, plotOf } from "../views/head-figure.js";
import { HeatmapView } from "../views/heatmap-view.js";
import { MixingView } from "../views/mixing.js";
import { readoutText } from "../views/readout.js";
import { STEPS_LIMIT, drawSteps } from "../views/steps.js";
import { drawLegend, showCost, showGridNote, showNotes } from "./notes.js";

export class Viewer {
  constructor(app) {
    this.app = app;
    const $ = app.$;
    this.heatmap = new HeatmapView($("heatmap"), $("overlay"), { onHover: (hit) => this.readout(hit) });
    this.grid = new HeadGrid($("grid"), {
      label: (layer, head) => {
        const label = app.T("gridLabel", { layer: layer + 1, head: head + 1 });
        const kv = kvHeadOf(this.modelPlace(), head);
        return kv === null ? label : `${label} · ${app.T("gridKv", { kv: kv + 1 })}`;
      },
      corner: () => app.T("gridCorner"),
      onSelect: async (layer, head, { focus = false } = {}) => {
        if (!focus && app.tapTurnsOff(layer, head)) return; // arrow keys still move
        app.set({ layer, head });
        app.notices.set("clamp", null);
        await app.render();
        if (focus) this.grid.focusSelected();
      },
    });
    this.mixing = new MixingView($("mixing"), app.client, app.lang);
    this.seq = 0; // counts renders: one that waited for the worker gives way to a newer one
    this.gridKey = ""; // what the thumbnails were last painted from
    this.labels = { key: "", queries: [], keys: [] };
    this.trace = null; // the steps of the shown head, once they arrive
    this.shown = null; // what the main heatmap shows, for read-outs and saving
    this.lastQuery = 0; // the query of the cell last hovered or tapped, for the mixing table
    this.zoom = 1; // how many times the fitted width the heatmap is drawn, for long texts
  }

  bind() {
    const { app } = this;
    const $ = app.$;
    // choosing one of the two pins both: the head shown is then the reader's
    for (const id of ["layer", "head"]) {
      $(id).addEventListener("change", () => {
        app.set({ layer: Number($("layer").value), head: Number($("head").value) });
        app.notices.set("clamp", null);
        app.render();
      });
    }
    $("table-details").addEventListener("toggle", () => this.drawTable());
    const zoomBy = (factor) => {
      this.zoom = Math.min(this.maxZoom ?? 1, Math.max(1, this.zoom * factor));
      app.render();
    };
    $("zoom-in").addEventListener("click", () => zoomBy(2));
    $("zoom-out").addEventListener("click", () => zoomBy(0.5));
    $("mixing-seed").addEventListener("click", () => this.mixing.seed());
    $("mixing-from-head").addEventListener("click", () => this.mixFromHead());
    // only a change of width moves the heatmap (its height follows from the width)
    let lastWidth = innerWidth;
    let timer = 0;
    addEventListener("resize", () => {
      if (innerWidth === lastWidth) return;
      lastWidth = innerWidth;
      clearTimeout(timer);
      timer = setTimeout(() => app.render(), 100);
    });
    this.mixing.render();
  }

  afterModelChange() {
    this.gridKey = "";
  }

  /**
   * Nothing to show (an error, an empty text): what described the last run goes, so no note,
   * tab or button speaks of a text that is no longer there.
   */
  clear() {
    const $ = this.app.$;
    this.shown = null;
    this.trace = null;
    this.seq += 1;
    for (const id of ["what-if", "scale-note", "decoder-note", "coverage", "mixing-from-head"]) $(id).hidden = true;
    $("rows").replaceChildren();
    $("steps").replaceChildren();
    this.app.finder.clear();
  }

  applyLanguage() {
    this.mixing.setLang(this.app.lang);
    this.gridKey = ""; // the thumbnails' names change
    const $ = this.app.$;
    // the menus say "Layer 2" in the page's language even with nothing drawn
    for (const [id, key] of [["layer", "layer"], ["head", "head"]]) {
      for (const option of $(id).options) option.textContent = `${this.app.T(key)} ${Number(option.value) + 1}`;
    }
    this.app.render();
  }

  /** The labels of one row, kept while the run and row stay, so layouts can be reused. */
  labelsOf(result, place, row) {
    const key = `${result.id}|${place}|${row}`;
    if (this.labels.key !== key) {
      const tokens = result.tokens[place][row];
      this.labels = { key, tokens, queries: tokens.queries.map((t) => t.label), keys: tokens.keys.map((t) => t.label) };
    }
    return this.labels;
  }

  /** The main plot's width in CSS pixels before zoom: the heatmap area's, within 200–1,086. */
  fitted() {
    const area = this.app.$("heatmap-area").getBoundingClientRect();
    return Math.max(200, Math.min(area.width || 800, 1100) - 14);
  }

  /**
   * The longer side, in device pixels, of every head's thumbnail for a place of `heads` heads,
   * as `render` draws them: a run of a long text asks the core to pool each head to this size
   * as its layers run (`thumbs`), so the grid does not compute every layer again.
   */
  thumbPixels(heads) {
    const narrow = this.fitted() < 520;
    const thumb = thumbSize(this.app.$("grid").parentElement.clientWidth || 600, heads, narrow ? 48 : 72);
    return Math.max(1, Math.round(thumb * deviceRatio()));
  }

  /** Draws `state` (the store's, fitted to the run on show) of the newest run. */
  async render(state) {
    const { app } = this;
    const r = app.result;
    if (!r) return;
    const seq = ++this.seq;
    app.probe.begun = seq;
    const t0 = performance.now();
    const $ = app.$;
    const place = r.info.places[0];
    const { layers, heads, tq, tk, batch } = place;
    // a head the reader chose, else the one the model suggests for this place (headmap.json)
    const suggestion = app.model.info.suggestions?.find((x) => x.place === place.place);
    const sel = {
      place: place.place,
      row: state.row,
      layer: state.layer ?? Math.min(suggestion?.layer ?? 0, layers - 1),
      head: state.head ?? Math.min(suggestion?.head ?? 0, heads - 1),
    };
    fillSelect($("layer"), layers, sel.layer, app.T("layer"));
    fillSelect($("head"), heads, sel.head, app.T("head"));
    this.rowTabs(r, place, state);
    const labels = this.labelsOf(r, place.place, sel.row);
    const { tokens } = labels;

    // 1. the layout, here: it measures text
    const fitted = this.fitted();
    const narrow = fitted < 520;
    // a long text has cells below a few pixels: zoom makes them big enough to read and to tap,
    // the frame scrolling sideways, up to a plot of 4,096 device pixels a side (a phone's
    // canvas and the worker's bitmap stay a few tens of megabytes)
    const dpr = deviceRatio();
    this.maxZoom = 2 ** Math.max(0, Math.floor(Math.log2(4096 / (fitted * dpr))));
    if (Math.max(tq, tk) * 6 < fitted) this.zoom = 1;
    this.zoom = Math.min(this.zoom, this.maxZoom);
    const zoom = this.zoom;
    const width = fitted * zoom;
    $("zoom").hidden = !(zoom > 1 || Math.max(tq, tk) * 6 > fitted);
    $("zoom-level").textContent = `×${zoom}`;
    $("zoom-in").disabled = zoom >= this.maxZoom;
    $("zoom-out").disabled = zoom <= 1;
    $("heatmap").parentElement.classList.toggle("zoomed", zoom > 1);
    // the plot fits the window, so the read-out above and the colour bar below stay in view
    const height = zoom > 1 ? width : Math.min(Math.max(width, 260), 760, Math.max(320, innerHeight - 200));
    const layout = headLayout(this.heatmap, { place, labels, width, height, narrow, gutters: [30, 56] });
    // 2. the cells and thumbnails, painted in the worker
    const thumb = this.thumbPixels(heads);
    const gridKey = `${r.id}|${sel.row}|${state.range}|${state.norm}|${thumb}|${dpr}|${app.lang}`;
    const wantThumbs = gridKey !== this.gridKey;
    let v;
    try {
      v = await app.client.call("view", { run: r.id, sel, plot: plotOf(layout), thumbs: wantThumbs ? { size: thumb } : null, range: state.range, norm: state.norm && !app.model.info.fromFile });
    } catch (e) {
      if (seq === this.seq) app.showStatus(app.errorText(e), "error");
      return;
    }
    if (seq !== this.seq) {
      v.image?.close();
      v.thumbs?.forEach((b) => b.close());
      return; // a newer render started while this one waited
    }
    const drawn = drawHead(this.heatmap, v, { layout, place, sel, labels, tokens, T: app.T, range: state.range });
    if (wantThumbs) {
      this.grid.draw({ thumbs: v.thumbs, layers, heads, selected: sel, dpr });
      this.gridKey = gridKey;
      const scroller = $("grid-scroll");
      $("grid-more").hidden = scroller.scrollWidth <= scroller.clientWidth + 1; // more heads to the right
    } else {
      this.grid.select(sel.layer, sel.head);
    }
    this.grid.markOff(offAt(state.off, place.place, app.model.info), app.T("offMark"));
    // weights read from a file have no values behind them to weigh
    const norm = state.norm && !app.model.info.fromFile;
    $("norm").checked = norm;
    $("norm").parentElement.hidden = Boolean(app.model.info.fromFile);
    $("norm-note").hidden = !norm;
    $("norm-note").textContent = norm ? app.T("normNote") : "";
    this.shown = { ...drawn, result: r, place };
    drawLegend(app, drawn.max);
    showNotes(app, place, tokens);
    showGridNote(app, this.modelPlace());
    showCost(app, place);
    this.drawTable();
    this.trace = null;
    this.readout(null);

    const probe = app.probe;
    probe.timings.drawMs = performance.now() - t0;
    probe.renders += 1;
    probe.drawn = seq; // the newest render drawn: one begun before a tap can end after it
    if (!probe.ready) {
      performance.mark("headmap:first-heatmap");
      probe.timings.firstHeatmapMs = performance.now();
      // the buttons that work on the run shown wait for the first one (a tap before did nothing)
      for (const button of document.querySelectorAll("[data-needs-run]")) {
        button.disabled = false;
        button.removeAttribute("data-needs-run");
      }
    }
    probe.ready = true;
    probe.meta = {
      place: place.place,
      mask: place.mask,
      whatIf: place.whatIf,
      scale: place.scale,
      batch,
      layers,
      heads,
      tq,
      tk,
      queries: labels.queries,
      keys: labels.keys,
      queryValid: tokens.queryValid,
      keyValid: tokens.keyValid,
      tokens,
    };
    probe.layout = layout;
    probe.shownWeights = drawn.weights;
    probe.state = { ...state, layer: sel.layer, head: sel.head };
    this.loadTrace(seq);
    app.finder.render();
    app.qk.refresh(place.layers);
    app.drawFlow();
  }

  /** "Sentence 1 · 동물이 길을…" per batch row; the one shown is pressed. */
  rowTabs(r, place, state) {
    const { app } = this;
    // a file's rows are named by their own tokens: there are no texts typed for them
    const ofFile = (b) => r.tokens[place.place][b].queries.filter((_, i) => r.tokens[place.place][b].queryValid[i]).map((t) => t.label).join(" ");
    const texts = app.model.info.fromFile ? Array.from({ length: place.batch }, (_, b) => ofFile(b)) : [state.text, state.text2];
    const tabs = [];
    if (place.batch > 1) {
      for (let b = 0; b < place.batch; b++) {
        const text = texts[b] ?? "";
        tabs.push(
          el(
            "button",
            {
              type: "button",
              "aria-pressed": String(b === state.row),
              title: text.slice(0, 500),
              onclick: () => {
                app.set({ row: b });
                // a file's row: its tokens go in the (read-only) text field too
                if (app.model.info.fromFile) app.recompute();
                else app.render();
              },
            },
            `${app.T("sentence")} ${b + 1} · `,
            // the sentence in its own direction: Arabic or Hebrew does not reorder the label around it
            el("bdi", { text: text.slice(0, 120) }),
          ),
        );
      }
    }
    app.$("rows").replaceChildren(...tabs);
  }

  /** The model's description of the place on show ({ heads, kvHeads, windows, masks, … }). */
  modelPlace() {
    const place = this.app.result?.info.places[0];
    return place ? this.app.model.info.places.find((p) => p.place === place.place) : null;
  }

  drawTable() {
    const { app, shown } = this;
    if (!shown || !app.$("table-details").open) return;
    drawHeadTable(app.$("table"), shown, app.T, { captionEl: app.$("table-caption") });
  }

  async loadTrace(seq) {
    const { app, shown } = this;
    const $ = app.$;
    $("steps-hint").textContent = app.T(shown.place.scale ? "steps.hint" : "steps.hint.noscale");
    $("mixing-from-head").hidden = true;
    if (Math.max(shown.tq, shown.tk) > STEPS_LIMIT) {
      $("steps").replaceChildren(el("p", { class: "small-label", text: app.T("stepsTooLong", { max: STEPS_LIMIT }) }));
      return;
    }
    try {
      const trace = await app.client.call("trace", { run: shown.result.id, sel: { place: shown.place.place, row: shown.row, layer: shown.layer, head: shown.head } });
      if (seq !== this.seq) return;
      this.trace = trace;
      const p = this.modelPlace();
      drawSteps($("steps"), trace, app.lang, shown.allowed, Boolean(p && p.kvHeads < p.heads));
      this.mixButton();
    } catch (e) {
      if (seq === this.seq) $("steps").replaceChildren(el("p", { class: "small-label", text: app.errorText(e) }));
    }
  }

  mixButton() {
    const { app, shown } = this;
    const button = app.$("mixing-from-head");
    const i = Math.min(this.lastQuery, shown.tq - 1);
    button.textContent = app.T("mixing.fromHead", { query: shown.labels.queries[i] });
    button.hidden = false;
  }

  /** The mixing table from the shown head: the chosen query's weights over V. */
  mixFromHead() {
    const { shown, trace } = this;
    if (!shown || !trace) return;
    const i = Math.min(this.lastQuery, shown.tq - 1);
    this.mixing.fromHead({
      keys: shown.labels.keys,
      weights: trace.weights.data.subarray(i * shown.tk, (i + 1) * shown.tk),
      v: trace.v.data,
      dV: trace.v.cols,
      query: shown.labels.queries[i],
    });
  }

  readout(hit) {
    const { app, shown, trace } = this;
    const out = app.$("readout");
    out.classList.toggle("live", Boolean(shown && hit));
    if (!shown || !hit) {
      out.textContent = app.T("readout");
      delete out.dataset.weight;
      return;
    }
    if (hit.axis === "query") this.lastQuery = hit.index;
    if (hit.axis === "cell") {
      this.lastQuery = hit.i;
      if (trace) this.mixButton();
    }
    const { text, weight } = readoutText(hit, shown, trace, app.T);
    out.textContent = text;
    if (weight !== undefined) out.dataset.weight = String(weight);
  }
}

function fillSelect(select, count, selected, label) {
  const options = Array.from({ length: count }, (_, k) => el("option", { value: k, text: `${label} ${k + 1}` }));
  select.replaceChildren(...options);
  select.value = String(selected);
}

