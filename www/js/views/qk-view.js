// Queries and keys in one picture (AttentionViz): every token's query and key of a head over a
// corpus, as the core placed them (src/qk: joint embedding, then principal components). Every
// head of the layer small (the matrix view), one head large; points coloured by query/key, by
// position or by kind of token, sized by length if asked; the pointer, a tap or the arrow keys
// read a point's token in its sentence; "Open" (or Enter) asks the host for that sentence's
// heatmap. Used by the explorer's panel and the widget's `view="qk"`; the drawing itself is
// qk-plot.js.

import { coded } from "../errors.js";
import { addStrings } from "../i18n.js";
import { QK } from "../strings/qk.js";
import { el, sizeCanvas } from "./dom.js";
import { COLOURINGS, drawLegend, paintPoints } from "./qk-plot.js";

addStrings(QK); // the words come with the view

/** What a search compares: the token's label without its piece marks, in lower case. */
const bareOf = (label) => label.replace(/^##|^▁|^Ġ/, "").trim().toLowerCase();

/**
 * The points of a corpus in the order of a picture's coordinates (queries, then keys):
 * [{ side, sentence, index, position, token, count }] (`index` in the sentence's list of that
 * side, `count` the list's length).
 */
export function pointsOf(corpus) {
  const points = [];
  for (const side of ["query", "key"]) {
    corpus.sentences.forEach((s, sentence) => {
      const tokens = side === "query" ? s.queries : s.keys;
      const positions = side === "query" ? s.queryPositions : s.keyPositions;
      tokens.forEach((token, index) => points.push({ side, sentence, index, position: positions[index], token, count: tokens.length }));
    });
  }
  return points;
}

/** The lines of a corpus: trimmed, the empty ones left out. */
export const linesOf = (text) => text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);

const examples = new Map(); // URL → lines

/** The example sentences in `lang` ("ko", else English) under the folder `base`, fetched once. */
export async function exampleSentences(base, lang) {
  const name = `sentences.${lang === "ko" ? "ko" : "en"}.txt`;
  const url = new URL(`data/${name}`, base);
  if (!examples.has(url.href)) {
    const response = await fetch(url);
    if (!response.ok) throw coded(`${name}: ${response.status}`, "fetch_status", { file: name, url: url.href, status: response.status, variant: "page" });
    examples.set(url.href, linesOf(await response.text()));
  }
  return examples.get(url.href);
}

/** r as the view writes it, or a dash where it has none. */
export const formatR = (r) => (r === null || r === undefined || !Number.isFinite(r) ? "–" : r.toFixed(2));

export class QkView {
  /**
   * `onOpen({ sentence, side, position, layer, head })` opens a point's sentence; `onHead(head)`
   * hears a head chosen in the matrix; `T` words the labels.
   */
  constructor(container, { T, onOpen, onHead = null, tsne = null, placed = new Map(), choices = {} }) {
    this.T = T;
    this.onOpen = onOpen;
    this.onHead = onHead;
    this.fitTsne = tsne; // (head, onProgress) → Promise<Float32Array>, the host's worker call
    this.projection = el("select", {});
    this.projectionLabel = el("span", {});
    this.placed = placed; // head → its t-SNE coordinates
    this.choices = choices; // the reader's projection, colouring, sizing and search, kept by a host that draws again
    this.colour = el("select", {});
    this.sized = el("input", { type: "checkbox" });
    this.search = el("input", { type: "search", class: "qk-search", spellcheck: "false" });
    this.colourLabel = el("span", {});
    this.sizedLabel = el("span", {});
    this.searchLabel = el("span", {});
    const bar = el("div", { class: "row qk-bar" }, el("label", {}, this.projectionLabel, " ", this.projection), el("label", {}, this.colourLabel, " ", this.colour), el("label", { class: "check" }, this.sized, " ", this.sizedLabel), el("label", {}, this.searchLabel, " ", this.search));
    this.matrixNote = el("p", { class: "small-label" });
    this.matrix = el("div", { class: "qk-matrix", role: "group" });
    this.canvas = el("canvas", { class: "qk-plot", tabindex: "0", role: "img" });
    this.legend = el("canvas", { class: "qk-legend", "aria-hidden": "true" });
    this.found = el("p", { class: "small-label", role: "status" });
    this.placing = el("p", { class: "small-label", role: "status" });
    this.stats = el("p", { class: "small-label qk-stats" });
    this.readout = el("p", { class: "readout qk-readout", "aria-live": "polite" });
    this.open = el("button", { type: "button", class: "small-button", hidden: true });
    container.replaceChildren(this.matrixNote, this.matrix, bar, this.found, this.placing, el("div", { class: "qk-plot-wrap" }, this.canvas), this.legend, this.readout, this.open, this.stats);
    this.shown = null;
    this.selected = null; // index of the point read out
    this.screen = null; // each point's place on the canvas, CSS pixels
    const keep = () => Object.assign(this.choices, { projection: this.projection.value, colour: this.colour.value, sized: this.sized.checked, search: this.search.value });
    this.colour.addEventListener("change", () => (keep(), this.redraw()));
    this.projection.addEventListener("change", () => (keep(), this.place()));
    this.sized.addEventListener("change", () => (keep(), this.redraw(false)));
    this.search.addEventListener("input", () => (keep(), this.redraw(false)));
    this.open.addEventListener("click", () => this.openSelected());
    const hit = (e) => {
      if (!this.screen) return null;
      const r = this.canvas.getBoundingClientRect();
      return this.nearest(e.clientX - r.left, e.clientY - r.top);
    };
    this.canvas.addEventListener("pointermove", (e) => {
      if (e.pointerType === "mouse") this.select(hit(e), false);
    });
    this.canvas.addEventListener("pointerdown", (e) => this.select(hit(e)));
    this.canvas.addEventListener("keydown", (e) => this.key(e));
    this.applyLanguage();
    this.sized.checked = Boolean(choices.sized);
    this.search.value = choices.search ?? "";
  }

  applyLanguage() {
    const { T } = this;
    const chosen = this.colour.value || this.choices.colour || "role";
    this.colour.replaceChildren(...COLOURINGS.map((c) => el("option", { value: c, text: T(`qk.colour.${c}`) })));
    this.colour.value = chosen;
    const projected = this.projection.value || this.choices.projection || "pca";
    this.projection.replaceChildren(...["pca", "tsne"].map((p) => el("option", { value: p, text: T(`qk.projection.${p}`) })));
    this.projection.value = projected;
    this.projectionLabel.textContent = T("qk.projection");
    this.colourLabel.textContent = T("qk.colour");
    this.sizedLabel.textContent = T("qk.sizeByNorm");
    this.searchLabel.textContent = T("qk.search");
    this.open.textContent = T("qk.open");
    this.matrixNote.textContent = T("qk.matrix");
    this.matrix.setAttribute("aria-label", T("qk.matrix"));
    if (this.shown) this.redraw();
  }

  clear() {
    this.shown = null;
    this.placed.clear();
    this.placing.textContent = "";
    this.selected = null;
    this.screen = null;
    this.matrix.replaceChildren();
    for (const node of [this.found, this.stats, this.readout]) node.textContent = "";
    this.open.hidden = true;
    sizeCanvas(this.canvas, 1, 1);
    sizeCanvas(this.legend, 1, 1);
  }

  /**
   * Shows `corpus` (the core's queryKeys result) of `layer` at head `head`, `width` CSS pixels
   * wide. `head` may change later with `setHead`.
   */
  show(corpus, { layer, head = 0, width }) {
    if (this.shown && this.shown.corpus !== corpus) this.placed.clear();
    this.placing.textContent = "";
    // a picture from a file has its points, not the vectors t-SNE would place, nor a model to open a sentence in
    this.projection.disabled = Boolean(corpus.fromFile);
    if (corpus.fromFile) this.projection.value = "pca";
    this.shown = { corpus, layer, head: Math.min(head, corpus.heads - 1), width, points: pointsOf(corpus) };
    this.selected = null;
    this.redraw();
    this.place();
  }

  setHead(head) {
    if (!this.shown) return;
    this.shown.head = head;
    this.selected = null;
    this.redraw();
    this.place();
  }

  /** With t-SNE chosen, fits the head drawn large (once per head), saying how far it is. */
  async place() {
    const { shown } = this;
    if (!shown || this.projection.value !== "tsne" || !this.fitTsne) return this.redraw(false);
    const { head, corpus } = shown;
    if (!this.placed.has(head)) {
      this.placing.textContent = this.T("qk.tsneStarting");
      try {
        const coords = await this.fitTsne(head, ({ done, total }) => (this.placing.textContent = this.T("qk.tsneProgress", { done, total })));
        if (this.shown?.corpus !== corpus) return;
        this.placed.set(head, coords);
        this.placing.textContent = "";
      } catch (e) {
        this.placing.textContent = this.T("qk.tsneFailed", { message: e.message });
        return;
      }
    }
    if (this.shown.head === head) this.redraw(false);
  }

  /** Every head of the layer, `small` CSS pixels a side, the one drawn large pressed. */
  drawMatrix(small) {
    const { corpus, head, points, layer } = this.shown;
    const focused = this.matrix.contains(this.matrix.getRootNode().activeElement);
    this.matrix.replaceChildren(
      ...corpus.pictures.map((p, h) => {
        const canvas = el("canvas", { "aria-hidden": "true" });
        paintPoints(canvas, p, points, small, { dot: 1, colour: this.colour.value });
        const label = this.T("qk.headButton", { layer: layer + 1, head: h + 1, after: formatR(p.correlation[1]) });
        return el("button", { type: "button", class: "qk-cell", "aria-pressed": String(h === head), "aria-label": label, title: label, onclick: () => (this.onHead ? this.onHead(h) : this.setHead(h)) }, canvas, el("span", { text: `${h + 1}` }));
      }),
    );
    if (focused) this.matrix.children[head]?.focus(); // a keyboard stays on the head it chose
  }

  /** Draws the large plot, and the matrix too unless `matrix` is false (a hover). */
  redraw(matrix = true) {
    if (!this.shown) return;
    const { corpus, head, width, points } = this.shown;
    const { T } = this;
    const pic = corpus.pictures[head];
    // the matrix: every head small, 4 a row on a phone, up to one per 100 px elsewhere (each
    // button adds 2 px of border a side and 6 px of gap)
    const columns = width < 520 ? 4 : Math.min(corpus.heads, Math.max(4, Math.floor(width / 100)));
    const small = Math.min(120, Math.floor((width - 6 * (columns - 1)) / columns) - 4);
    if (matrix) this.drawMatrix(small);
    const size = Math.max(200, Math.min(width, 560));
    const word = bareOf(this.search.value);
    const matches = word ? points.map((p, i) => (bareOf(p.token.label) === word ? i : -1)).filter((i) => i >= 0) : [];
    const tsne = this.projection.value === "tsne" ? this.placed.get(head) : null;
    const drawn = tsne ? { ...pic, coords: tsne } : pic;
    this.screen = paintPoints(this.canvas, drawn, points, size, { dot: size < 400 ? 2 : 2.5, colour: this.colour.value, matches, selected: this.selected, sized: this.sized.checked });
    this.found.textContent = word ? (matches.length ? T("qk.matches", { count: matches.length, token: this.search.value.trim() }) : T("qk.noMatch", { token: this.search.value.trim() })) : "";
    drawLegend(this.legend, size, this.colour.value, T);
    this.canvas.setAttribute("aria-label", T("qk.plotLabel", { layer: this.shown.layer + 1, head: head + 1, queries: pic.queries, keys: pic.keys, sentences: corpus.sentences.length }));
    const pct = (x) => `${Math.round(x * 100)}%`;
    const axes = tsne ? T("qk.tsneAxes") : T("qk.explained", { x: pct(pic.explained[0] ?? 0), y: pct(pic.explained[1] ?? 0) });
    this.stats.textContent = `${T("qk.correlation", { before: formatR(pic.correlation[0]), after: formatR(pic.correlation[1]) })} ${axes}`;
    this.say();
  }

  /** The point nearest (x, y) CSS pixels within 14 px, or null. */
  nearest(x, y) {
    let best = null;
    let bestD = 14 * 14;
    for (let i = 0; i < this.screen.length / 2; i++) {
      const d = (this.screen[2 * i] - x) ** 2 + (this.screen[2 * i + 1] - y) ** 2;
      if (d < bestD) [best, bestD] = [i, d];
    }
    return best;
  }

  select(index, keep = true) {
    if (!this.shown || (index === null && !keep)) return;
    this.selected = index;
    this.redraw(false);
  }

  /** Reads the selected point out: its token, marked in its sentence. */
  say() {
    const { T } = this;
    const p = this.selected === null ? null : this.shown.points[this.selected];
    this.open.hidden = !p || !this.onOpen;
    if (!p) {
      this.readout.textContent = T(this.onOpen ? "qk.tapHint" : "qk.tapHintRead");
      return;
    }
    const s = this.shown.corpus.sentences[p.sentence];
    const tokens = p.side === "query" ? s.queries : s.keys;
    const context = tokens.map((t, i) => (i === p.index ? `【${t.label}】` : t.label)).join(" ");
    this.readout.textContent = T("qk.point", { role: T(`qk.${p.side}`), token: p.token.label, position: p.position + 1, sentence: p.sentence + 1, context });
  }

  openSelected() {
    if (!this.shown || this.selected === null) return;
    const p = this.shown.points[this.selected];
    this.onOpen?.({ sentence: p.sentence, side: p.side, position: p.position, layer: this.shown.layer, head: this.shown.head });
  }

  key(e) {
    if (!this.shown) return;
    const { points } = this.shown;
    const at = this.selected ?? -1;
    let next = null;
    if (e.key === "ArrowRight") next = Math.min(points.length - 1, at + 1);
    else if (e.key === "ArrowLeft") next = Math.max(0, at - 1);
    else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      const from = points[Math.max(0, at)];
      const want = from.sentence + (e.key === "ArrowDown" ? 1 : -1);
      const found = points.findIndex((p) => p.side === from.side && p.sentence === want);
      next = found >= 0 ? found : Math.max(0, at);
    } else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = points.length - 1;
    else if (e.key === "Enter" && this.selected !== null) {
      e.preventDefault();
      this.openSelected();
      return;
    } else if (e.key === "Escape") next = null;
    else return;
    e.preventDefault();
    this.select(next);
  }
}
