// <attention-heatmap>: live attention figures inside a blog post, from one script tag.
//
//   <script type="module" src="/assets/headmap/headmap.js"></script>
//   <attention-heatmap text="동물이 길을 건너지 않았다. 그것은 너무 피곤했다." mask="causal"
//                      layer="0" head="3"></attention-heatmap>
//
// Attributes (each mirrored by a property; changing one re-renders): text, text2, texts,
// target, mask, place, model, layer, head ("all" for the grid), scale, lang, controls, view,
// colormap, theme, seed — see attributes.js. Events: `load` (detail: { model, run }) once a
// model's first figure is drawn, `render` after every figure, `error` (detail: { message,
// code, attribute? }) instead of throwing. Every widget of a page shares one worker, one wasm
// instance and one model cache, and computes once it is scrolled into view.

import { AttentionClient } from "../client.js";
import { browserLang, errorText, tf } from "../i18n.js";
import { lutFor } from "../render/colormap.js";
import { drawLegend, formatWeight } from "../render/heatmap.js";
import { drawLines, headColor, layoutLines, strongest, tokenAt } from "../render/lines.js";
import { heatmapSvg } from "../render/svg.js";
import { el, sizeCanvas } from "../views/dom.js";
import { HeadGrid, headNotes, kvHeadOf, thumbSize } from "../views/head-grid.js";
import { FONT, HeatmapView } from "../views/heatmap-view.js";
import { MixingView } from "../views/mixing.js";
import { drawPipeline } from "../views/pipeline.js";
import { readoutText } from "../views/readout.js";
import { STEPS_LIMIT, drawSteps } from "../views/steps.js";
import { masksFor } from "../places.js";
import { ATTRIBUTES, DEFAULTS, MASKS, parseAttributes, requestOf, sourceOf } from "./attributes.js";
import { STYLES } from "./styles.js";

/** The widget's folder (where headmap.js is): its worker, wasm and models are found from here. */
let ASSETS = null;
let WORKER = null;

let sheet = null;
function styles() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
  }
  return sheet;
}

/** Widgets compute once they are near the screen; one observer serves them all. */
const visibility = new IntersectionObserver(
  (entries) => {
    for (const entry of entries) if (entry.isIntersecting) entry.target.onVisible();
  },
  { rootMargin: "200px" },
);

/** Properties that read as numbers, booleans or lists rather than strings. */
const TYPED = {
  layer: (v) => (v === null ? null : Number(v)),
  head: (v) => (v === null ? null : v === "all" ? "all" : Number(v)),
  seed: (v) => (v === null ? null : Number(v)),
  scale: (v) => v === null || !["false", "0", "off", "no"].includes(v.toLowerCase()),
  texts: (v) => (v === null ? null : v.trim().startsWith("[") ? JSON.parse(v) : v.split("\n").filter((s) => s.trim())),
  controls: (v) => (v === null ? null : v.split(/[\s,]+/).filter(Boolean)),
};
const WRITE = {
  texts: (v) => (Array.isArray(v) ? JSON.stringify(v) : String(v)),
  controls: (v) => (Array.isArray(v) ? v.join(" ") : String(v)),
};

export class AttentionHeatmap extends HTMLElement {
  static get observedAttributes() {
    return ATTRIBUTES;
  }

  #root;
  #client = null;
  #visible = false;
  #busy = false;
  #dirty = false;
  #settings = DEFAULTS;
  #lang = "en";
  #model = null; // { key, info, sourceKey }
  #result = null;
  #sel = null;
  #reader = {}; // what the reader changed with the controls: text, place, mask, layer, head, scale
  #targets = new Map(); // text → the model's own target
  #shown = null; // the figure's numbers, for read-outs and saving
  #trace = null;
  #loaded = new Set(); // model keys whose `load` event has fired
  #problems = "";
  /** The attributes' problems in this update ({ attribute, value, expected }), and its error. */
  #attrProblems = [];
  #lastError = null;
  #drawFailed = false;
  #parts = null;
  #ownLabel = false; // whether aria-label is ours (an author's own stays)
  #resize = null;
  #width = 0;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: "open" });
    this.#root.adoptedStyleSheets = [styles()];
  }

  connectedCallback() {
    if (!this.hasAttribute("role")) this.setAttribute("role", "figure");
    this.#reserve();
    this.#resize = new ResizeObserver(() => {
      const width = Math.round(this.clientWidth);
      if (this.#visible && width !== this.#width && this.#result) {
        this.#width = width;
        this.#draw();
      }
    });
    this.#resize.observe(this);
    visibility.observe(this);
  }

  disconnectedCallback() {
    visibility.unobserve(this);
    this.#resize?.disconnect();
    if (this.#result) this.#client?.free(this.#result.id);
    this.#result = null;
    this.#model = null;
  }

  attributeChangedCallback(name, old, value) {
    if (old === value) return;
    // an author's change wins over what the reader last chose for the same thing
    if (name === "text" || name === "texts" || name === "text2") {
      delete this.#reader.text;
      delete this.#reader.row;
    }
    else if (name in this.#reader) delete this.#reader[name];
    if (name === "mask" || name === "place") {
      delete this.#reader.mask;
      delete this.#reader.place;
    }
    this.#refresh();
  }

  /**
   * Until its first figure a widget holds about the room the figure will take, so links into a
   * page of widgets land where they point and nothing jumps as figures arrive.
   */
  #reserve() {
    if (this.#result) return;
    const width = Math.min(this.clientWidth || 600, 900);
    const view = this.getAttribute("view") ?? (this.getAttribute("head") === "all" ? "grid" : "heatmap");
    const heights = { heatmap: Math.min(width, 640) + 150, grid: Math.min(width, 640) + 320, steps: Math.min(width, 640) + 520, mixing: Math.min(width, 640) + 330, pipeline: 720, lines: 480 };
    this.style.minHeight = `${heights[view] ?? 400}px`;
  }

  /** Called by the shared observer when the widget first nears the screen. */
  onVisible() {
    if (this.#visible) return;
    this.#visible = true;
    visibility.unobserve(this);
    this.#refresh();
  }

  // ---- properties mirroring the attributes -------------------------------------------------

  static {
    for (const name of ATTRIBUTES) {
      const prop = name.replace(/-(\w)/g, (_, c) => c.toUpperCase());
      Object.defineProperty(this.prototype, prop, {
        get() {
          const value = this.getAttribute(name);
          try {
            return TYPED[name] ? TYPED[name](value) : value;
          } catch {
            return null;
          }
        },
        set(value) {
          if (value === null || value === undefined) this.removeAttribute(name);
          else this.setAttribute(name, WRITE[name] ? WRITE[name](value) : String(value));
        },
        configurable: true,
        enumerable: true,
      });
    }
  }

  /** What is drawn now: { model, run, place, layer, head }, or null before the first figure. */
  get figure() {
    if (!this.#result || !this.#sel) return null;
    return { model: this.#model.info, run: this.#result.info, ...this.#sel };
  }

  // ---- the update loop ----------------------------------------------------------------------

  #refresh() {
    if (!this.#visible) return;
    if (this.#busy) {
      this.#dirty = true;
      return;
    }
    this.#busy = true;
    queueMicrotask(async () => {
      try {
        do {
          this.#dirty = false;
          await this.#update();
        } while (this.#dirty);
      } finally {
        this.#busy = false;
      }
    });
  }

  #attrs() {
    const attrs = {};
    for (const name of ATTRIBUTES) if (this.hasAttribute(name)) attrs[name] = this.getAttribute(name);
    return attrs;
  }

  T = (key, values) => tf(this.#lang, key, values);

  async #update() {
    const { settings, problems } = parseAttributes(this.#attrs(), document.baseURI);
    this.#settings = settings;
    const pageLang = (this.closest("[lang]")?.getAttribute("lang") ?? document.documentElement.lang ?? "").toLowerCase();
    this.#lang = settings.lang ?? (pageLang.startsWith("ko") ? "ko" : pageLang.startsWith("en") ? "en" : browserLang());
    this.#build();
    // the error box is rebuilt on every update: the attributes' problems as they are now, then
    // what went wrong in this run, if anything
    this.#attrProblems = problems;
    this.#lastError = null;
    this.#showErrors();
    try {
      this.#client ??= new AttentionClient(WORKER);
      await this.#ensureModel();
      await this.#run();
      this.#draw();
    } catch (e) {
      this.#fail(e);
    } finally {
      this.#announceProblems();
    }
  }

  /** An `error` event per attribute problem, when the set of problems changed. */
  #announceProblems() {
    const described = JSON.stringify(this.#attrProblems);
    if (described === this.#problems) return;
    this.#problems = described;
    for (const p of this.#attrProblems) {
      const detail = { message: `${p.attribute}="${p.value}": use ${p.expected}`, code: "attribute", attribute: p.attribute, value: p.value, expected: p.expected };
      this.dispatchEvent(new CustomEvent("error", { detail }));
    }
  }

  async #ensureModel() {
    const source = sourceOf(this.#settings.model, this.#settings.seed, ASSETS);
    const sourceKey = JSON.stringify(source);
    if (this.#model?.sourceKey === sourceKey) return;
    this.#status(this.T("loading", { model: source.from === "toy" ? this.T("model.toy") : decodeURIComponent(source.base.split("/").filter(Boolean).pop()) }));
    const { key, info } = await this.#client.load(source);
    this.#model = { key, info, sourceKey };
    this.#status("");
  }

  /** The reader's choices over the author's. */
  #effective() {
    const s = this.#settings;
    const texts = this.#reader.text !== undefined ? [this.#reader.text, ...s.texts.slice(1)] : s.texts;
    return {
      ...s,
      texts,
      place: this.#reader.place !== undefined ? this.#reader.place : s.place,
      mask: this.#reader.mask !== undefined ? this.#reader.mask : s.mask,
      scale: this.#reader.scale ?? s.scale,
    };
  }

  async #run() {
    const info = this.#model.info;
    const settings = this.#effective();
    if (!settings.texts[0]?.trim()) throw { message: this.T("emptyHint"), code: "empty_text" };
    let request = requestOf(settings, info);
    if (settings.mask && request.mask === undefined && settings.mask !== info.places.find((p) => p.place === request.place)?.mask) {
      // the author's mask does not fit the place: drawn with the place's own, and said so
      this.#attrProblems = [...this.#attrProblems, { attribute: "mask", value: settings.mask, expected: masksFor(request.place).join(" | ") }];
      this.#showErrors();
    }
    // at an encoder–decoder's decoder, a model that can write its own target does, once per text
    if (request.targets === undefined && info.encoderDecoder && request.place !== "encoder_self" && info.canGenerate) {
      const text = request.texts[0];
      if (!this.#targets.has(text)) this.#targets.set(text, await this.#client.generate(this.#model.key, text));
      request = requestOf(settings, info, this.#targets.get(text));
    }
    const result = await this.#client.run(this.#model.key, request);
    if (!result) return; // a newer run of this widget superseded this one
    this.#result = result;
    const place = result.info.places[0];
    const suggestion = info.suggestions?.find((x) => x.place === place.place);
    const pick = (reader, author, suggested) => (reader ?? (typeof author === "number" ? author : null) ?? suggested ?? 0);
    const layer = Math.min(pick(this.#reader.layer, settings.layer, suggestion?.layer), place.layers - 1);
    const head = Math.min(pick(this.#reader.head, settings.head, suggestion?.head), place.heads - 1);
    this.#sel = { place: place.place, row: Math.min(this.#reader.row ?? 0, place.batch - 1), layer, head };
  }

  // ---- the shadow DOM -----------------------------------------------------------------------

  /** The frame: title, controls, notes, the view's stage, read-out, legend, saving. */
  #build() {
    const s = this.#settings;
    const shape = `${this.#lang}|${s.view}|${s.controls.join(",")}`;
    if (this.#parts?.shape === shape) return;
    const T = this.T;
    const parts = { shape };
    parts.title = el("p", { class: "title", id: "title" });
    parts.controls = el("div", { class: "controls", part: "controls" });
    parts.status = el("p", { class: "note", role: "status", hidden: true });
    parts.error = el("p", { class: "error", role: "alert", hidden: true });
    parts.note = el("p", { class: "note", role: "note", hidden: true });
    parts.stage = el("div", { class: "view", part: "view" });
    parts.readout = el("p", { class: "readout", "aria-live": "polite" });
    parts.legend = el("div", { class: "legend", "aria-hidden": "true" });
    parts.table = el("div", { class: "visually-hidden" });
    parts.save = el("div", { class: "save", role: "group", "aria-label": T("export") });
    if (s.controls.includes("save")) {
      for (const format of ["png", "svg", "json"]) parts.save.append(el("button", { type: "button", text: T(`export.${format}`), "data-export": format, onclick: () => this.save(format) }));
    } else parts.save.hidden = true;
    const frame = el("div", { class: "frame", part: "frame" }, parts.title, parts.controls, parts.status, parts.error, parts.note, parts.stage, parts.readout, parts.legend, parts.save, parts.table);
    this.#root.replaceChildren(frame);
    this.#parts = parts;
  }

  #status(text) {
    if (!this.#parts) return;
    this.#parts.status.textContent = text;
    this.#parts.status.hidden = !text;
  }

  /** The error box: one line per attribute problem, then the last error of this update. */
  #showErrors() {
    if (!this.#parts) return;
    const lines = this.#attrProblems.map((p) => this.#attributeText(p));
    if (this.#lastError) lines.push(errorText(this.#lang, this.#lastError));
    // each on its own line (the style keeps line breaks)
    this.#parts.error.textContent = lines.join("\n");
    this.#parts.error.hidden = !lines.length;
  }

  /** An attribute that fell back to its default, said in the reader's language. */
  #attributeText({ attribute, value, expected }) {
    const shown = [...String(value)].length > 40 ? `${[...String(value)].slice(0, 40).join("")}…` : String(value);
    const key = `expected.${attribute}`;
    const words = this.T(key);
    return this.T("badAttribute", { attribute, value: shown, expected: words === key ? expected : words });
  }

  /** Shows an error below the attributes' problems and fires the `error` event; never throws. */
  #fail(e) {
    this.#lastError = e;
    this.#showErrors();
    this.#status("");
    this.dispatchEvent(new CustomEvent("error", { detail: { message: e?.message ?? String(e), code: e?.code ?? "error" } }));
  }

  #controls() {
    const { T } = this;
    const s = this.#effective();
    const info = this.#model.info;
    const place = this.#result.info.places[0];
    const items = [];
    if (s.controls.includes("sentence")) {
      const area = el("textarea", { "aria-label": T("textDecoderOnly"), spellcheck: "false", rows: "2" });
      area.value = s.texts[0];
      let timer = 0;
      area.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          this.#reader.text = area.value;
          this.#refresh();
        }, 200);
      });
      items.push(el("label", { class: "sentence" }, area));
    }
    if (s.controls.includes("mask")) {
      const places = el("select", { "aria-label": T("place") });
      for (const p of info.places) places.append(el("option", { value: p.place, text: T(`place.${p.place}`) }));
      places.value = place.place;
      places.addEventListener("change", () => {
        this.#reader.place = places.value;
        this.#reader.mask = null;
        this.#refresh();
      });
      const trained = info.places.find((p) => p.place === place.place).mask;
      const masks = el("select", { "aria-label": T("mask") });
      for (const m of MASKS.filter((m) => masksFor(place.place).includes(m))) {
        const tag = m === trained ? T(info.trained ? "trainedWith" : "asInPaper") : T(info.trained ? "whatIf" : "forComparison");
        masks.append(el("option", { value: m, text: `${T(`mask.${m}`)} (${tag})` }));
      }
      masks.value = place.mask;
      masks.addEventListener("change", () => {
        this.#reader.place = place.place;
        this.#reader.mask = masks.value === trained ? null : masks.value;
        this.#refresh();
      });
      if (info.places.length > 1) items.push(places);
      items.push(masks);
    }
    const select = (name, count, value) => {
      const sel = el("select", { "aria-label": T(name) });
      for (let k = 0; k < count; k++) sel.append(el("option", { value: k, text: `${T(name)} ${k + 1}` }));
      sel.value = String(value);
      sel.addEventListener("change", () => {
        this.#reader[name] = Number(sel.value);
        this.#sel[name] = Number(sel.value);
        this.#draw();
      });
      return sel;
    };
    // a padded batch: the reader switches rows, to see the PAD of the shorter one
    if (place.batch > 1) {
      const rows = el("span", { class: "rows", role: "group", "aria-label": T("rowsLabel") });
      for (let b = 0; b < place.batch; b++) {
        const tab = el("button", { type: "button", "aria-pressed": String(b === this.#sel.row), text: `${T("sentence")} ${b + 1}`, title: s.texts[b] ?? "" });
        tab.addEventListener("click", () => {
          this.#reader.row = b;
          this.#sel.row = b;
          this.#draw();
        });
        rows.append(tab);
      }
      items.push(rows);
    }
    if (s.controls.includes("layer") && place.layers > 1) items.push(select("layer", place.layers, this.#sel.layer));
    if (s.controls.includes("head") && s.view !== "lines" && s.view !== "grid") items.push(select("head", place.heads, this.#sel.head));
    if (s.controls.includes("scale")) {
      const box = el("input", { type: "checkbox", checked: s.scale });
      box.addEventListener("change", () => {
        this.#reader.scale = box.checked;
        this.#refresh();
      });
      items.push(el("label", {}, box, T("scale")));
    }
    this.#parts.controls.replaceChildren(...items);
    this.#parts.controls.hidden = !items.length;
  }

  // ---- drawing ------------------------------------------------------------------------------

  /** Whether the frame is dark (theme="dark", or "auto" in a dark system theme). */
  #isDark() {
    const bg = getComputedStyle(this.#root.querySelector(".frame") ?? this).backgroundColor.match(/\d+/g)?.map(Number) ?? [255, 255, 255];
    return 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2] < 128;
  }

  #colors() {
    const style = getComputedStyle(this);
    return { ink: style.getPropertyValue("--hm-fg").trim() || "#1d2230", faded: style.getPropertyValue("--hm-muted").trim() || "#8a8a8a" };
  }

  async #draw() {
    if (!this.#result || !this.#parts) return;
    const { T } = this;
    const r = this.#result;
    const place = r.info.places[0];
    const sel = this.#sel;
    this.#width = Math.round(this.clientWidth);
    this.#controls();
    const tokens = r.tokens[sel.place][sel.row];
    const labels = { queries: tokens.queries.map((t) => t.label), keys: tokens.keys.map((t) => t.label) };
    const info = this.#model.info;
    const architecture = info.architecture === "toy" ? T("arch.toy") : info.architecture;
    const allHeads = ["lines", "pipeline", "grid"].includes(this.#settings.view);
    this.#parts.title.textContent = [T(`place.${sel.place}`), `${T("layer")} ${sel.layer + 1}`, ...(allHeads ? [] : [`${T("head")} ${sel.head + 1}`]), architecture].join(" · ");
    if (!this.hasAttribute("aria-label") || this.#ownLabel) {
      this.#ownLabel = true;
      this.setAttribute("aria-label", T("widgetLabel", { place: T(`place.${sel.place}`), layer: sel.layer + 1, head: sel.head + 1, text: this.#effective().texts[0].slice(0, 120) }));
    }
    const notes = [];
    if (place.whatIf) notes.push(T(info.trained ? "whatIfNote" : "comparisonNote", { model: architecture, trained: T(`mask.${info.places.find((p) => p.place === sel.place).mask}`), mask: T(`mask.${place.mask}`) }));
    if (!place.scale) notes.push(T("scaleOffNote"));
    if (info.trained && info.encoderDecoder && sel.place !== "encoder_self") notes.push(T("decoderRowsNote"));
    if (Math.max(tokens.unreadable.queries, tokens.unreadable.keys) > 0.5) notes.push(T("coverage", { model: architecture }));
    // shared key/value heads and local layers: said where they shape what is drawn
    const modelPlace = info.places.find((p) => p.place === sel.place);
    if (allHeads || this.#settings.view === "steps" || modelPlace.windows?.[sel.layer]) notes.push(...headNotes(modelPlace, T));
    this.#parts.note.textContent = notes.join(" ");
    this.#parts.note.hidden = !notes.length;
    const view = this.#settings.view;
    this.#parts.legend.hidden = false;
    this.#parts.readout.hidden = false;
    const width = Math.max(200, this.#width - 22);
    const common = { r, place, sel, tokens, labels, width };
    try {
      if (view === "lines") await this.#drawLines(common);
      else if (view === "pipeline") await this.#drawPipeline(common);
      else await this.#drawHeatmapLike(common, view);
    } catch (e) {
      this.#fail(e);
      this.#drawFailed = true;
      return;
    }
    if (this.#drawFailed) {
      // an earlier drawing's error goes once a drawing succeeds (a resize or a reader's choice
      // redraws without a new run); a run's error stays until the next run
      this.#drawFailed = false;
      this.#lastError = null;
      this.#showErrors();
    }
    this.style.minHeight = "";
    this.dispatchEvent(new CustomEvent("render", { detail: this.figure }));
    if (!this.#loaded.has(this.#model.key)) {
      this.#loaded.add(this.#model.key);
      this.dispatchEvent(new CustomEvent("load", { detail: this.figure }));
    }
  }

  /** The heatmap, the grid (with the chosen head below), the steps or the mixing table. */
  async #drawHeatmapLike({ r, place, sel, tokens, labels, width }, view) {
    const { T } = this;
    const stage = this.#parts.stage;
    const narrow = width < 520;
    const canvas = el("canvas", { class: "heatmap" });
    const overlay = el("canvas", { class: "overlay", "aria-hidden": "true" });
    const heatmap = new HeatmapView(canvas, overlay, { onHover: (hit) => this.#readout(hit) });
    const layout = heatmap.layoutFor({ tq: place.tq, tk: place.tk, width, height: Math.min(Math.max(width, 240), 640), queries: labels.queries, keys: labels.keys, fontPx: narrow ? 11 : 13, gutterRight: narrow ? 26 : 48, maxLabelChars: narrow ? 8 : 12 });
    const dpr = Math.min(globalThis.devicePixelRatio || 1, 3);
    const plot = { width: Math.max(1, Math.round(layout.plotWidth * dpr)), height: Math.max(1, Math.round(layout.plotHeight * dpr)), cell: layout.cell * dpr };
    const thumb = thumbSize(width, place.heads, narrow ? 40 : 64);
    const v = await this.#client.view(r.id, sel, { plot, thumbs: view === "grid" ? { size: Math.max(1, Math.round(thumb * dpr)) } : null, range: "max", colormap: this.#settings.colormap });
    if (r !== this.#result) return;
    const { head } = v;
    const max = head.maxima[sel.layer * place.heads + sel.head] || 1;
    const { ink, faded } = this.#colors();
    heatmap.draw({
      image: v.image,
      layout,
      tq: place.tq,
      tk: place.tk,
      queries: labels.queries,
      keys: labels.keys,
      queryValid: tokens.queryValid,
      keyValid: tokens.keyValid,
      entropies: head.entropies,
      entropyMax: head.entropyLimits,
      label: T("heatmapLabel", { place: T(`place.${sel.place}`), layer: sel.layer + 1, head: sel.head + 1, tq: place.tq, tk: place.tk }),
      ink,
      faded,
    });
    v.image.close();
    this.#shown = { ...sel, tq: place.tq, tk: place.tk, tokens, labels, weights: head.weights, allowed: head.allowed, entropies: head.entropies, entropyMax: head.entropyLimits, max, canvas, layout };
    this.#trace = null;
    const figure = el("div", { class: "stage" }, canvas, overlay);
    const children = [];
    if (view === "grid") {
      const grid = el("div", { class: "grid", role: "group", "aria-label": T("heads") });
      new HeadGrid(grid, {
        label: (layer, h) => {
          const kv = kvHeadOf(this.#model.info.places.find((p) => p.place === sel.place), h);
          const label = T("gridLabel", { layer: layer + 1, head: h + 1 });
          return kv === null ? label : `${label} · ${T("gridKv", { kv: kv + 1 })}`;
        },
        corner: () => T("gridCorner"),
        onSelect: (layer, h) => {
          this.#reader.layer = layer;
          this.#reader.head = h;
          Object.assign(this.#sel, { layer, head: h });
          this.#draw();
        },
      }).draw({ thumbs: v.thumbs, layers: place.layers, heads: place.heads, selected: sel, dpr });
      children.push(el("div", { class: "grid-scroll" }, grid), figure);
    } else if (view === "steps") {
      const steps = el("div", { class: "steps" });
      children.push(figure, steps);
      this.#loadSteps(r, sel, steps);
    } else if (view === "mixing") {
      children.push(figure, this.#mixing(r, sel));
    } else {
      children.push(figure);
    }
    this.#parts.stage.replaceChildren(...children);
    this.#legend(max);
    this.#table();
    this.#readout(null);
    canvas.dataset.max = String(max);
  }

  async #loadSteps(r, sel, container) {
    const { T } = this;
    if (Math.max(this.#shown.tq, this.#shown.tk) > STEPS_LIMIT) {
      container.replaceChildren(el("p", { class: "step-note", text: T("stepsTooLong", { max: STEPS_LIMIT }) }));
      return;
    }
    const trace = await this.#client.trace(r.id, sel);
    if (r !== this.#result) return;
    this.#trace = trace;
    const grouped = kvHeadOf(this.#model.info.places.find((p) => p.place === sel.place), sel.head) !== null;
    drawSteps(container, trace, this.#lang, this.#shown.allowed, grouped);
  }

  /** The article's weighted sum, editable, and the same table from the shown head for a chosen query. */
  #mixing(r, sel) {
    const { T } = this;
    const box = el("div", { class: "mixing-box" });
    const table = el("div", { class: "mixing" });
    const mixing = new MixingView(table, this.#client, this.#lang);
    const pick = el("select", { "aria-label": T("mixing.pick") });
    pick.append(el("option", { value: "", text: T("mixing.articleExample") }));
    this.#shown.labels.queries.forEach((q, i) => {
      if (this.#shown.tokens.queryValid[i]) pick.append(el("option", { value: String(i), text: T("mixing.fromHead", { query: q }) }));
    });
    pick.addEventListener("change", async () => {
      if (pick.value === "") return mixing.seed();
      this.#trace ??= await this.#client.trace(r.id, sel);
      const i = Number(pick.value);
      const { tk, labels } = this.#shown;
      mixing.fromHead({ keys: labels.keys, weights: this.#trace.weights.data.subarray(i * tk, (i + 1) * tk), v: this.#trace.v.data, dV: this.#trace.v.cols, query: labels.queries[i] });
    });
    box.append(el("label", { class: "mix-pick" }, el("span", { text: T("mixing.pick") }), pick), table);
    mixing.render();
    return box;
  }

  async #drawPipeline({ r, place, sel }) {
    const dpr = Math.min(globalThis.devicePixelRatio || 1, 3);
    const size = 40;
    const v = await this.#client.view(r.id, sel, { thumbs: { size: Math.round(size * dpr) }, colormap: this.#settings.colormap });
    if (r !== this.#result) return;
    const canvases = v.thumbs.slice(sel.layer * place.heads, (sel.layer + 1) * place.heads).map((bitmap) => {
      const c = el("canvas", { width: bitmap.width, height: bitmap.height });
      c.style.width = `${bitmap.width / dpr}px`;
      c.style.height = `${bitmap.height / dpr}px`;
      c.getContext("bitmaprenderer").transferFromImageBitmap(bitmap);
      return c;
    });
    v.thumbs.slice(0, sel.layer * place.heads).concat(v.thumbs.slice((sel.layer + 1) * place.heads)).forEach((b) => b.close());
    const dK = this.#model.info.places.find((p) => p.place === sel.place).dK;
    const container = el("div");
    drawPipeline(container, { n: place.tq, m: place.tk, dModel: this.#model.info.dModel, heads: place.heads, dK, scale: place.scale }, this.#lang, canvases);
    this.#parts.stage.replaceChildren(container);
    this.#shown = null;
    this.#parts.legend.hidden = true;
    this.#parts.readout.hidden = true;
  }

  /** BertViz's two columns: every head of the layer as coloured lines; tap a token to focus it. */
  async #drawLines({ r, place, sel, tokens, labels, width }) {
    const { T } = this;
    const weights = await this.#client.layer(r.id, sel);
    if (r !== this.#result) return;
    const { tq, tk, heads } = place;
    const shownHeads = new Set(this.#reader.heads ?? Array.from({ length: heads }, (_, h) => h));
    const canvas = el("canvas", { class: "lines", tabindex: "0" });
    const fontPx = width < 520 ? 12 : 13;
    const font = `${fontPx}px ${FONT}`;
    const probe = canvas.getContext("2d");
    probe.font = font;
    const widest = Math.max(...labels.queries.map((l) => probe.measureText(l).width), ...labels.keys.map((l) => probe.measureText(l).width));
    const layout = layoutLines({ tq, tk, width: Math.min(width, 640), labelWidth: Math.min(widest + 14, width * 0.3), rowHeight: fontPx + 8 });
    const { ink, faded } = this.#colors();
    const dark = this.#isDark();
    let focus = this.#reader.focus && this.#reader.focus.index < (this.#reader.focus.side === "query" ? tq : tk) ? this.#reader.focus : null;
    const paint = () => {
      const { ctx } = sizeCanvas(canvas, layout.width, layout.height);
      drawLines(ctx, layout, { weights, heads: [...shownHeads], queries: labels.queries, keys: labels.keys, focus, font, ink, faded, queryValid: tokens.queryValid, keyValid: tokens.keyValid, dark });
      const best = strongest(weights, [...shownHeads], tq, tk, focus);
      canvas.dataset.strongest = JSON.stringify(best);
      canvas.setAttribute("aria-label", T("linesLabel", { layer: sel.layer + 1, tq, tk }));
      if (focus && best.weight >= 0) {
        const side = focus.side === "query" ? labels.queries[focus.index] : labels.keys[focus.index];
        this.#parts.readout.textContent = T("linesReadout", { token: side, query: labels.queries[best.query], key: labels.keys[best.key], head: best.head + 1, weight: formatWeight(best.weight) });
      } else {
        this.#parts.readout.textContent = T("linesHint");
      }
    };
    const at = (e) => {
      const box = canvas.getBoundingClientRect();
      return tokenAt(layout, e.clientX - box.left, e.clientY - box.top);
    };
    const setFocus = (f) => {
      focus = f;
      this.#reader.focus = f;
      paint();
    };
    canvas.addEventListener("pointermove", (e) => e.pointerType === "mouse" && setFocus(at(e)));
    canvas.addEventListener("pointerdown", (e) => e.pointerType !== "mouse" && setFocus(at(e)));
    canvas.addEventListener("keydown", (e) => {
      const n = focus?.side === "key" ? tk : tq;
      const moves = { ArrowDown: 1, ArrowUp: -1 };
      if (moves[e.key]) {
        e.preventDefault();
        setFocus({ side: focus?.side ?? "query", index: Math.min(n - 1, Math.max(0, (focus?.index ?? -1) + moves[e.key])) });
      } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
        e.preventDefault();
        setFocus({ side: e.key === "ArrowLeft" ? "query" : "key", index: Math.min((e.key === "ArrowLeft" ? tq : tk) - 1, focus?.index ?? 0) });
      } else if (e.key === "Escape") setFocus(null);
    });
    const chips = el("div", { class: "lines-heads", role: "group", "aria-label": T("heads") });
    for (let h = 0; h < heads; h++) {
      const on = shownHeads.has(h);
      const chip = el("button", { type: "button", "aria-pressed": String(on), text: `${T("head")} ${h + 1}` });
      if (on) chip.style.background = headColor(h, 1, dark);
      chip.addEventListener("click", () => {
        if (shownHeads.has(h) && shownHeads.size > 1) shownHeads.delete(h);
        else shownHeads.add(h);
        this.#reader.heads = [...shownHeads];
        chip.setAttribute("aria-pressed", String(shownHeads.has(h)));
        chip.style.background = shownHeads.has(h) ? headColor(h, 1, dark) : "";
        paint();
      });
      chips.append(chip);
    }
    this.#parts.stage.replaceChildren(chips, canvas);
    paint();
    this.#shown = { ...sel, tq, tk, tokens, labels, lines: { weights, heads: shownHeads }, canvas };
    this.#parts.legend.replaceChildren();
  }

  #legend(max) {
    const canvas = el("canvas");
    const { ctx, dpr } = sizeCanvas(canvas, 200, 30);
    drawLegend(ctx, { x: 4, y: 2, width: 190, height: 10, max, dpr, lut: lutFor(this.#settings.colormap), ink: this.#colors().ink, fontPx: 11 });
    this.#parts.legend.replaceChildren(canvas, el("span", { text: this.T("legendMasked") + ": ▨" }));
  }

  /** The values as a table for screen readers (up to 32 × 32 cells). */
  #table() {
    const s = this.#shown;
    if (!s?.weights) return;
    const { T } = this;
    const rows = Math.min(s.tq, 32);
    const cols = Math.min(s.tk, 32);
    const head = el("tr", {}, el("th", { scope: "col", text: `${T("query")} \\ ${T("key")}` }), ...s.labels.keys.slice(0, cols).map((k) => el("th", { scope: "col", text: k })));
    const body = s.labels.queries.slice(0, rows).map((q, i) =>
      el("tr", {}, el("th", { scope: "row", text: q }), ...Array.from({ length: cols }, (_, j) => el("td", { text: s.allowed[i * s.tk + j] ? formatWeight(s.weights[i * s.tk + j]) : T("masked") }))),
    );
    const caption = T("tableCaption", { sentence: `${T("sentence")} 1`, place: T(`place.${s.place}`), layer: s.layer + 1, head: s.head + 1 });
    this.#parts.table.replaceChildren(el("table", {}, el("caption", { text: caption }), el("thead", {}, head), el("tbody", {}, ...body)));
  }

  #readout(hit) {
    const out = this.#parts.readout;
    const s = this.#shown;
    if (!s?.weights || !hit) {
      out.textContent = this.T("readout");
      delete out.dataset.weight;
      return;
    }
    const { text, weight } = readoutText(hit, s, this.#trace, this.T);
    out.textContent = text;
    if (weight !== undefined) out.dataset.weight = String(weight);
  }

  // ---- saving -------------------------------------------------------------------------------

  /** The figure as a PNG Blob (the heatmap or the lines as drawn). */
  async toPNG() {
    const canvas = this.#shown?.canvas;
    if (!canvas) throw new Error("nothing is drawn yet");
    return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  }

  /** The shown head as an SVG document. */
  toSVG() {
    const s = this.#shown;
    if (!s?.weights) throw new Error("the SVG is of a heatmap: show one first");
    const { T } = this;
    return heatmapSvg({ title: this.#parts.title.textContent, weights: s.weights, tq: s.tq, tk: s.tk, queries: s.labels.queries, keys: s.labels.keys, allowed: s.allowed, queryValid: s.tokens.queryValid, max: s.max, maskedLabel: T("masked") });
  }

  /** The run's weights as the command line writes them (JSON text). */
  toJSON() {
    if (!this.#result) throw new Error("nothing is computed yet");
    return this.#client.exportRun(this.#result.id, "json");
  }

  /** Offers the figure ("png", "svg") or the weights ("json") as a file to save. */
  async save(format) {
    try {
      const blob =
        format === "png" ? await this.toPNG() : format === "svg" ? new Blob([this.toSVG()], { type: "image/svg+xml" }) : new Blob([await this.toJSON()], { type: "application/json" });
      const a = el("a", { href: URL.createObjectURL(blob), download: `headmap-${this.#sel.place}-l${this.#sel.layer + 1}-h${this.#sel.head + 1}.${format}` });
      this.#root.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (e) {
      this.#fail(e);
    }
  }
}

/**
 * Defines <attention-heatmap>, its worker, wasm and models found in the folder `assets` (the
 * entry, headmap.js, passes its own folder, bundled or not).
 */
export function defineAttentionHeatmap(assets) {
  ASSETS = new URL(assets);
  WORKER = new URL("js/worker.js", ASSETS);
  if (!customElements.get("attention-heatmap")) customElements.define("attention-heatmap", AttentionHeatmap);
}
