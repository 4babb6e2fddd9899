// <attention-heatmap>: live attention figures inside a blog post, from one script tag.
//
//   <script type="module" src="/assets/headmap/headmap.js"></script>
//   <attention-heatmap text="동물이 길을 건너지 않았다. 그것은 너무 피곤했다." mask="causal"
//                      layer="0" head="3"></attention-heatmap>
//
// Attributes (each mirrored by a property; changing one re-renders): see attributes.js; `src`
// or the `data` property draw weights computed elsewhere (file-source.js). Events: `load`
// once a model's first figure is drawn, `render` after every figure, `error` (detail: {
// message, code, details?, attribute? }) instead of throwing. Every widget of a page shares
// one worker, one wasm instance and one model cache, and computes once scrolled into view.
// The element keeps its life cycle, the update loop and the frame; the attributes and the
// reader's choices are attributes.js, the language it follows page-lang.js, what the frame says
// frame.js, the controls controls.js, the figure (views, legend, table, read-out, saving) figure.js.

import { AttentionClient } from "../client.js";
import { chunkFailed, coded } from "../errors.js";
import { loadLanguage, tf } from "../i18n.js";
import { predictsFromRun } from "../settings.js";
import { adoptSizes, reserveHeight } from "../views/sizes.js";
import { ATTRIBUTES, attributesOf, authorChanged, DEFAULTS, parseAttributes, readerChose, selectionOf, sourceOf, widgetRequest, withReader } from "./attributes.js";
import { buildControls } from "./controls.js";
import { WidgetFigure } from "./figure.js";
import { buildFrame, colorsOf, frameWords, isDark, notebookData, reservedHeight, visibility, widgetSheet } from "./frame.js";
import { follow, pageLang, unfollow } from "./page-lang.js";
import { Problems } from "./problems.js";
import { reflectAttributes } from "./reflect.js";

/** The widget's folder (where headmap.js is): its worker, wasm and models are found from here. */
let ASSETS = null;
let WORKER = null;

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
  #reader = {}; // what the reader changed with the controls: text, place, mask, layer, head, scale, row
  #targets = new Map(); // text → the model's own target
  #figure = null;
  #loaded = new Set(); // model keys whose `load` event has fired
  #problems;
  #drawFailed = false;
  #parts = null;
  #ownLabel = false; // whether aria-label is ours (an author's own stays)
  #resize = null;
  #width = 0;
  #data = undefined; // weights computed elsewhere, set from script (see file-source.js)
  #dataVersion = 0;
  #opened = null; // the file's run, every place of it
  #picture = null; // view="qk" src=: the query–key picture file shown, { src, picture }

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: "open" });
    this.#root.adoptedStyleSheets = [widgetSheet()];
    adoptSizes(this.#root);
    this.#problems = new Problems({ box: () => this.#parts?.error, T: this.T, lang: () => this.#lang, emit: (detail) => this.dispatchEvent(new CustomEvent("error", { detail })) });
    // the figure reads the element's state as it is at each drawing
    this.#figure = new WidgetFigure(() => ({
      client: this.#client,
      parts: this.#parts,
      settings: this.#settings,
      modelInfo: this.#model?.info,
      lang: this.#lang,
      reader: this.#reader,
      T: this.T,
      onError: (e) => this.#fail(e),
      clearError: () => this.#problems.clearError(),
      sel: this.#sel,
      colors: () => colorsOf(this),
      dark: () => isDark(this.#parts?.frame ?? this),
      onSelect: (layer, head) => this.#choose("select", { layer, head }),
      modelKey: () => this.#model?.key, assets: () => ASSETS,
      openSentence: (where, sel) => { Object.assign(this.#reader, { text: undefined, target: undefined, ...where, ...sel }); this.#refresh(); }, // a query–key point
    }));
  }

  connectedCallback() {
    if (!this.hasAttribute("role")) this.setAttribute("role", "figure");
    if (!this.#result) reserveHeight(this, reservedHeight(this.getAttribute("view") ?? (this.getAttribute("head") === "all" ? "grid" : "heatmap"), Math.min(this.clientWidth || 600, 900)));
    this.#resize = new ResizeObserver(() => {
      const width = Math.round(this.clientWidth);
      if (this.#visible && width !== this.#width && (this.#result || this.#picture)) {
        this.#width = width;
        this.#draw();
      }
    });
    this.#resize.observe(this);
    follow(this, () => !this.#settings.lang && pageLang(this) !== this.#lang && this.#refresh()); // redrawn if its language changed
    visibility.observe(this);
    if (this.#visible) this.#refresh(); // moved in the page: drawn again
  }

  disconnectedCallback() {
    unfollow(this);
    visibility.unobserve(this);
    this.#resize?.disconnect();
    if (this.#result) this.#client?.free(this.#result.id);
    this.#result = null;
    this.#model = null;
  }

  attributeChangedCallback(name, old, value) {
    if (old === value) return;
    authorChanged(this.#reader, name);
    this.#refresh();
  }

  /** Called by the shared observer when the widget first nears the screen. */
  onVisible() {
    if (this.#visible) return;
    this.#visible = true;
    visibility.unobserve(this);
    this.#refresh();
  }

  /** What is drawn now: { model, run, place, row, layer, head }, or null before the first figure. */
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

  T = (key, values) => tf(this.#lang, key, values);

  /** The figure's width: the element's as last measured, less the frame's padding; 160 px at least. */
  #figureWidth() {
    return Math.max(160, this.#width - 22);
  }

  async #update() {
    const { settings, problems } = parseAttributes(attributesOf(this), document.baseURI);
    this.#settings = settings;
    this.#lang = settings.lang ?? pageLang(this);
    // the worker starts (and loads the core) while the page's words arrive; a failure of
    // either is said below, where the frame can show it
    const words = loadLanguage(this.#lang).then(() => null, (e) => e);
    if (!this.#client) this.#startWorker();
    const unspoken = await words;
    this.#build();
    // the error box is rebuilt on every update: the attributes' problems as they are now, then
    // what went wrong in this run, if anything
    this.#problems.reset(problems);
    try {
      if (unspoken) throw chunkFailed(unspoken);
      this.#client ??= new AttentionClient(WORKER);
      if (this.#settings.view === "qk" && this.#settings.src && this.#data === undefined) return await this.#problems.words().then(() => this.#showPicture());
      this.#picture = null;
      const inline = this.#data === undefined && !this.#settings.src ? notebookData(this) : undefined;
      if (inline === null) return; // a notebook figure whose data the parser has not reached yet
      if (inline) this.#data = inline;
      if (this.#data !== undefined || this.#settings.src) await this.#openFile();
      else {
        // a step or heads off are fitted to the model (model-settings.js, loaded for them alone)
        const fit = this.#settings.step !== null || this.#settings.off ? await import("./model-settings.js").catch((e) => Promise.reject(chunkFailed(e))) : null;
        const problem = (p) => this.#problems.add(p);
        if (fit) this.#settings = await fit.withCheckpoint(this.#settings, ASSETS, problem);
        await this.#ensureModel();
        if (fit) this.#settings = fit.withModelHeads(this.#settings, this.#model.info, problem);
        await this.#run();
      }
      await this.#problems.words(); // a figure comes with what it says of the author's attributes
      await this.#draw();
    } catch (e) {
      this.#fail(e); // the last figure stays, with its own title, above the error
    } finally {
      this.#problems.announce();
    }
  }

  async #ensureModel() {
    const source = sourceOf(this.#settings.model, this.#settings.seed, ASSETS, this.#settings.step);
    const sourceKey = JSON.stringify(source);
    if (this.#model?.sourceKey === sourceKey) return;
    this.#status(this.T("loading", { model: source.from === "toy" ? this.T("model.toy") : decodeURIComponent(source.base.split("/").filter(Boolean).pop()) }));
    const { key, info } = await this.#client.load(source);
    this.#model = { key, info, sourceKey };
    this.#status("");
  }

  #startWorker() {
    try {
      (this.#client = new AttentionClient(WORKER)).call("start").catch(() => {});
    } catch {} // said where the frame can show it: #update makes the client again
  }

  async #run() {
    const model = this.#model;
    const info = model.info;
    const settings = withReader(this.#settings, this.#reader);
    const request = await widgetRequest(settings, info, {
      problem: (p) => this.#problems.add(p),
      target: async (text) => {
        if (!this.#targets.has(text)) this.#targets.set(text, await this.#client.call("generate", { key: model.key, text }));
        return this.#targets.get(text);
      },
    });
    // view="predict" reads its predictions from this run (the whole last layer kept), not a second
    if (this.#settings.view === "predict" && predictsFromRun(request, info)) request.output = true;
    const result = await this.#client.call("run", { key: model.key, request });
    if (!result) return; // a newer run of this widget superseded this one
    if (!this.isConnected) return this.#client.free(result.id); // the figure left the page meanwhile
    this.#result = { ...result, request }; // view="predict" and "lens" ask for the same texts
    const clamped = (name, value, count) => this.#problems.clamped(name, value, count);
    this.#sel = selectionOf({ settings, reader: this.#reader, info, place: result.info.places[0], clamped });
  }

  /** Weights computed elsewhere: the `data` property or `src`, opened once, then drawn like a run. */
  async #openFile() {
    // loaded on first use, like the views: a blog's model widgets never need it
    const { openFile } = await import("./file-source.js").catch((e) => Promise.reject(chunkFailed(e)));
    const got = await openFile({
      client: this.#client, settings: this.#settings, reader: this.#reader, data: this.#data, version: this.#dataVersion, model: this.#model, opened: this.#opened,
      status: (name) => this.#status(name === null ? "" : this.T("loading", { model: name })),
      clamped: (name, value, count) => this.#problems.clamped(name, value, count),
    });
    if (!got) return; // a newer file or run superseded it
    if (!this.isConnected) return this.#client.free(got.opened.id);
    [this.#model, this.#opened, this.#result, this.#sel] = [got.model, got.opened, got.result, got.sel];
  }

  /** Weights computed elsewhere, drawn in place of a model's run (file-source.js); `null`: the model again. */
  get data() {
    return this.#data;
  }

  set data(value) {
    if ((value ?? undefined) === this.#data) return; // a notebook's figure finds its data before its script sets it
    this.#data = value ?? undefined;
    this.#dataVersion++;
    this.#reader = {};
    this.#refresh();
  }

  /** A reader's choice from the controls or the grid: a new run, or only a new drawing. */
  #choose(what, value) {
    return readerChose(this.#reader, this.#sel, what, value) === "draw" ? this.#draw() : this.#refresh();
  }

  // ---- the shadow DOM -----------------------------------------------------------------------

  /** The frame, built again when the language, the view or the controls change. */
  #build() {
    const s = this.#settings;
    const shape = `${this.#lang}|${s.view}|${s.controls.join(",")}`;
    if (this.#parts?.shape === shape) return;
    this.#parts = { shape, ...buildFrame({ T: this.T, settings: s, formats: this.#figure.formats(), save: (format) => this.save(format) }) };
    this.#root.replaceChildren(this.#parts.frame);
  }

  #status(text) {
    if (!this.#parts) return;
    this.#parts.status.textContent = text;
    this.#parts.status.hidden = !text;
  }

  /** Shows an error below the attributes' problems and fires the `error` event; never throws. */
  #fail(e) {
    this.#problems.fail(e);
    this.#status("");
    if (!this.#result) reserveHeight(this, null); // no figure to keep room for: the error alone
  }

  // ---- drawing ------------------------------------------------------------------------------

  /** view="qk" with src=: a query–key picture of a corpus, from its file, without a model. */
  async #showPicture() {
    const [{ qkFileFigure }, { refuseOff }] = await Promise.all([import("./qk-figure.js"), import("./file-source.js")]).catch((e) => Promise.reject(chunkFailed(e)));
    refuseOff(this.#settings); // a picture from a file, like weights from one, has no head to turn off
    this.#result = null; // what a run drew before goes
    this.#width = Math.round(this.clientWidth);
    const cached = this.#picture;
    this.#picture = null;
    this.#picture = await qkFileFigure(this.#figure, { src: this.#settings.src, width: this.#figureWidth(), status: (text) => this.#status(text), cached });
    const { picture } = this.#picture;
    this.#sel = { place: picture.place, layer: picture.layer, head: this.#reader.head ?? picture.head, row: 0 };
    this.#rendered(this.#parts.title.textContent);
  }

  /** After a drawing: the element's label names it (an author's own stays), and `render` fires. */
  #rendered(label) {
    if (!this.hasAttribute("aria-label") || this.#ownLabel) {
      this.#ownLabel = true;
      this.setAttribute("aria-label", label);
    }
    reserveHeight(this, null);
    this.dispatchEvent(new CustomEvent("render", { detail: this.figure }));
  }

  async #draw() {
    if (this.#picture && this.#parts) {
      try {
        return await this.#showPicture();
      } catch (e) {
        return this.#fail(e);
      }
    }
    if (!this.#result || !this.#parts) return;
    const { T } = this;
    const r = this.#result;
    const place = r.info.places[0];
    const sel = { ...this.#sel };
    this.#width = Math.round(this.clientWidth);
    const read = withReader(this.#settings, this.#reader); // the author's settings with the reader's choices
    this.#parts.controls.replaceChildren(...buildControls({ T, settings: read, info: this.#model.info, place, sel }, (what, value) => this.#choose(what, value)));
    this.#parts.controls.hidden = !this.#parts.controls.children.length;
    const { title, notes, label } = frameWords({ T, info: this.#model.info, place, sel, tokens: r.tokens[sel.place][sel.row], settings: this.#settings, texts: read.texts });
    this.#parts.note.textContent = notes.join(" ");
    this.#parts.note.hidden = !notes.length;
    try {
      if (!(await this.#figure.draw(r, sel, this.#figureWidth()))) return; // a newer run took over
    } catch (e) {
      this.#fail(e);
      this.#figure.clear();
      this.#drawFailed = true;
      return;
    }
    // the title and the label name what is drawn, once it is
    this.#parts.title.textContent = title;
    if (this.#drawFailed) {
      // an earlier drawing's error goes once a drawing succeeds (a resize or a reader's choice
      // redraws without a new run); a run's error stays until the next run
      this.#drawFailed = false;
      this.#problems.clearError();
    }
    this.#rendered(label);
    if (!this.#loaded.has(this.#model.key)) {
      this.#loaded.add(this.#model.key);
      this.dispatchEvent(new CustomEvent("load", { detail: this.figure }));
    }
  }

  // ---- saving -------------------------------------------------------------------------------

  /** The figure as a PNG Blob (the heatmap or the lines as drawn). */
  toPNG() {
    return this.#figure.toPNG();
  }

  /** The shown head as an SVG document. */
  toSVG() {
    return this.#figure.toSVG(this.#parts.title.textContent);
  }

  /** The run's weights as the command line writes them (JSON text). */
  toJSON() {
    if (!this.#result) throw coded("nothing is computed yet", "nothing_drawn");
    return this.#figure.toJSON();
  }

  /** Offers the figure ("png", "svg") or the weights ("json") as a file to save. */
  save(format) {
    // before the first drawing there is no frame yet: the figure says "nothing is drawn yet"
    return this.#figure.save(format, this.#parts?.title.textContent ?? "", this.#root);
  }
}

reflectAttributes(AttentionHeatmap, ATTRIBUTES);

/**
 * Defines <attention-heatmap>, its worker, wasm and models found in the folder `assets` (the
 * entry, headmap.js, passes its own folder, bundled or not), or its worker at `worker`.
 */
export function defineAttentionHeatmap(assets, worker = new URL("js/worker.js", assets)) {
  ASSETS = new URL(assets);
  WORKER = worker; // a notebook's figure brings its worker inline (js/inline/main.js)
  if (!customElements.get("attention-heatmap")) customElements.define("attention-heatmap", AttentionHeatmap);
}
