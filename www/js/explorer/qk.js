// The explorer's query–key panel: a corpus (the example sentences, lines typed or a .txt file),
// run sentence by sentence in the worker with a progress bar and a stop button, then every head
// of a layer in AttentionViz's joint embedding (views/qk-view.js). A failed or stopped corpus
// leaves the picture before it as it was. A point opens its sentence in the main view, the
// head chosen and the token's row lit. The file button also opens a picture of a whole corpus
// computed elsewhere (headmap.corpus.qk_picture, qk-file.js): drawn as it is, its sentences
// opened in the model on show.

import { coded } from "../errors.js";
import { readQkPicture } from "../qk-file.js";
import { exampleSentences, linesOf, QkView } from "../views/qk-view.js";

/** The most bytes a corpus file may have: far more than 4,000 tokens of text. */
const MAX_FILE_BYTES = 1 << 20;

/** `bytes` of file `name` as text, or a `not_text` refusal (NUL bytes, not UTF-8). */
export function textOf(bytes, name) {
  const refuse = () => coded(`${name} is not a text file: choose UTF-8 text (.txt)`, "not_text", { file: name });
  if (bytes.includes(0)) throw refuse();
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw refuse();
  }
}

export class QueryKeys {
  /** `onOpen(line, { place, layer, head, position, side })` shows a sentence's head with its token lit. */
  constructor(app, { onOpen }) {
    this.app = app;
    const $ = app.$;
    this.view = new QkView($("qk"), {
      T: (k, v) => app.T(k, v),
      onOpen: (p) => this.open(p),
      onHead: (head) => {
        this.view.setHead(head);
        this.remember();
      },
      tsne: (head, onProgress) => app.client.call("queryKeysTsne", { corpus: this.corpusId, head }, { onProgress }),
    });
    this.corpusId = null;
    this.onOpen = onOpen;
    this.lines = null; // the lines of the picture shown
    this.abort = null;
  }

  bind() {
    const $ = this.app.$;
    $("qk-source").addEventListener("change", () => {
      $("qk-text").hidden = $("qk-source").value !== "text";
    });
    $("qk-draw").addEventListener("click", () => this.draw());
    $("qk-cancel").addEventListener("click", () => this.abort?.abort());
    $("qk-file").addEventListener("change", async () => {
      const file = $("qk-file").files[0];
      if (!file) return;
      try {
        if (/\.json$/i.test(file.name) || file.type === "application/json") {
          this.showFile(readQkPicture(new Uint8Array(await file.arrayBuffer()), file.name));
          return;
        }
        if (file.size > MAX_FILE_BYTES) throw coded(`${file.name} is too large for a corpus: at most ${MAX_FILE_BYTES >> 20} MB is read`, "file_too_large", { file: file.name, megabytes: MAX_FILE_BYTES >> 20 });
        const text = textOf(new Uint8Array(await file.arrayBuffer()), file.name);
        $("qk-text").value = linesOf(text).join("\n");
        $("qk-source").value = "text";
        $("qk-text").hidden = false;
        this.say(null);
      } catch (e) {
        this.say(e);
      } finally {
        $("qk-file").value = "";
      }
    });
  }

  applyLanguage() {
    this.view.applyLanguage();
    this.app.$("qk-limits").textContent = this.app.T("qk.limits", { sentences: 200, tokens: "4,000" });
    if (this.error) this.say(this.error);
  }

  /** The layers of the model on show, in the panel's menu. */
  afterModelChange() {
    this.abort?.abort();
    if (this.view.shown) this.app.set({ qk: "" }); // a link's picture waits for its model's first run
    this.view.clear();
    this.app.$("qk").hidden = true; // its menus and search stay away until there is a picture
    this.lines = null;
    this.say(null);
  }

  /** Keeps the layer menu to the place on show; a link's picture is drawn after the first run. */
  refresh(layers) {
    const select = this.app.$("qk-layer");
    if (select.options.length !== layers) {
      const chosen = Math.min(Number(select.value) || 0, layers - 1);
      select.replaceChildren(...Array.from({ length: layers }, (_, l) => new Option(`${l + 1}`, String(l))));
      select.value = String(chosen);
    }
    if (this.linked === undefined) {
      const [layer, head] = (this.app.state.qk || "").split(",").map(Number);
      this.linked = this.app.state.qk ? { layer: Math.min(layer, layers - 1), head } : null;
      if (this.linked) {
        select.value = String(this.linked.layer);
        this.draw();
      }
    }
  }

  /** The link names the picture of the example sentences shown (own lines cannot be shared). */
  remember() {
    const { app } = this;
    const shown = this.view.shown;
    app.set({ qk: shown && this.source === "examples" ? `${shown.layer},${shown.head}` : "" });
  }

  async exampleLines() {
    // a model whose languages are not known (MiniLM, a Hub id) gets the English ones
    const languages = this.app.model?.languages ?? ["en"];
    const out = [];
    for (const lang of ["en", "ko"].filter((l) => languages.includes(l))) {
      out.push(...(await exampleSentences(new URL("../../", import.meta.url), lang)));
    }
    return out;
  }

  /** Shows the view, hidden until there is a picture; the width to draw one at. */
  reveal() {
    this.app.$("qk").hidden = false;
    return this.app.$("qk").clientWidth || 320;
  }

  say(error) {
    const $ = this.app.$;
    this.error = error;
    $("qk-error").hidden = !error;
    $("qk-error").textContent = error ? this.app.errorText(error) : "";
  }

  async draw() {
    const { app } = this;
    const $ = app.$;
    if (!app.model || !app.result) return;
    this.abort?.abort();
    const abort = (this.abort = new AbortController());
    const progress = $("qk-progress");
    this.say(null);
    $("qk-status").textContent = "";
    const source = $("qk-source").value;
    try {
      const lines = source === "text" ? linesOf($("qk-text").value) : await this.exampleLines();
      if (abort.signal.aborted || !app.result) throw coded("stopped", "cancelled");
      const place = app.state.place ?? app.result.info.places[0].place;
      const layer = Number($("qk-layer").value) || 0;
      progress.max = Math.max(1, lines.length);
      progress.value = 0;
      progress.hidden = false;
      $("qk-cancel").hidden = false;
      const onProgress = ({ done, total }) => {
        progress.value = done;
        $("qk-status").textContent = app.T("qk.progress", { done, total });
      };
      const corpus = await app.client.call("queryKeys", { key: app.model.key, corpus: { lines, place, layer } }, { onProgress, signal: abort.signal });
      if (abort !== this.abort) return app.client.call("freeQueryKeys", { corpus: corpus.id }).catch(() => {});
      if (this.corpusId !== null) app.client.call("freeQueryKeys", { corpus: this.corpusId }).catch(() => {});
      this.corpusId = corpus.id;
      this.lines = lines;
      this.place = place;
      this.source = source;
      const width = this.reveal();
      const head = this.linked ? this.linked.head : app.state.head;
      this.linked = null;
      this.view.show(corpus, { layer, head: Math.min(head ?? 0, corpus.heads - 1), width });
      this.remember();
      const tokens = corpus.pictures[0]?.queries ?? 0;
      $("qk-status").textContent = app.T("qk.count", { sentences: lines.length, tokens });
    } catch (e) {
      if (abort !== this.abort) return;
      this.linked = null;
      // the menus name the picture that stays, except that the reader's own lines stay in view
      // when they were refused, to be mended
      const mend = source === "text" && e.code !== "cancelled";
      if (this.view.shown) $("qk-layer").value = String(this.view.shown.layer);
      if (this.source && !mend) $("qk-source").value = this.source;
      $("qk-text").hidden = $("qk-source").value !== "text";
      if (e.code === "cancelled") $("qk-status").textContent = app.T("qk.stopped");
      else {
        $("qk-status").textContent = "";
        this.say(e);
      }
    } finally {
      if (abort === this.abort) {
        progress.hidden = true;
        $("qk-cancel").hidden = true;
        this.abort = null;
      }
    }
  }

  /** A picture of a corpus from its file: drawn as it is, in place of the one shown. */
  showFile(picture) {
    const { app } = this;
    const $ = app.$;
    this.abort?.abort();
    if (this.corpusId !== null) app.client.call("freeQueryKeys", { corpus: this.corpusId }).catch(() => {});
    this.corpusId = null;
    this.lines = picture.lines;
    this.place = picture.place || (app.state.place ?? app.result?.info.places[0].place);
    this.source = "file";
    this.linked = null;
    this.say(null);
    // the layer menu names the picture's layer when the model on show has it
    if ([...$("qk-layer").options].some((o) => o.value === String(picture.layer))) $("qk-layer").value = String(picture.layer);
    const width = this.reveal();
    this.view.show(picture, { layer: picture.layer, head: Math.min(app.state.head ?? picture.head, picture.heads - 1), width });
    this.remember();
    const count = (n) => n.toLocaleString(app.lang === "ko" ? "ko" : "en");
    $("qk-status").textContent = app.T("qk.fileCount", { drawn: count(picture.sentences.length), texts: count(picture.corpus.texts), tokens: count(picture.corpus.queries), model: picture.modelType || "?" });
  }

  open({ sentence, position, layer, head, side }) {
    if (!this.lines) return;
    this.onOpen(this.lines[sentence], { place: this.place, layer, head, position, side });
  }
}
