// The widget's view="qk": every head's queries and keys of a corpus — the author's `texts`, else
// the example sentences in the widget's language — at the chosen layer, computed once per model,
// place, layer and corpus and kept on the figure; a point opens its sentence in the heatmap
// below, its row lit. With src=, a picture file of a whole corpus (qkFileFigure). Loaded on
// first use with the view it draws.

import { coded } from "../errors.js";
import { readQkPicture } from "../qk-file.js";
import { el } from "../views/dom.js";
import { exampleSentences, QkView } from "../views/qk-view.js";
import { nameOf } from "./file-source.js";

/** Draws the picture of `figure`'s host at `sel` in `width` pixels; returns its box. */
export async function qkFigure(figure, sel, width) {
  const { host } = figure;
  const mine = (figure.qkDrawing = (figure.qkDrawing ?? 0) + 1); // a newer drawing wins
  const { T, client, settings, lang, parts } = host;
  // the trained translation model reads Korean only; the others get the page's language
  const lines = settings.corpus ?? (await exampleSentences(host.assets(), settings.model?.from === "trained" ? "ko" : lang));
  const key = JSON.stringify([host.modelKey(), sel.place, sel.layer, lines]);
  if (figure.qk?.key !== key) {
    const note = el("p", { class: "small-label", role: "status" });
    parts.stage.replaceChildren(note);
    const onProgress = ({ done, total }) => (note.textContent = T("qk.progress", { done, total }));
    const corpus = await client.call("queryKeys", { key: host.modelKey(), corpus: { lines, place: sel.place, layer: sel.layer } }, { onProgress });
    if (figure.qkDrawing !== mine) return null;
    figure.qk = { key, lines, corpus, placed: new Map() };
  }
  const { qk } = figure;
  const box = el("div", { class: "qk-box" });
  const view = new QkView(box, {
    T,
    onOpen: (p) => {
      figure.lit = { axis: p.side === "key" ? "key" : "query", index: p.position };
      // a sentence of the author's batch opens as its own row; another replaces the first, with
      // the target the corpus ran (the line's, else the line itself)
      const [text, target] = qk.lines[p.sentence].split("\t");
      const row = settings.texts.indexOf(text);
      host.openSentence(row >= 0 ? { row } : { text, row: 0, target: target?.trim() ? target : text }, { layer: p.layer, head: p.head });
    },
    onHead: (head) => host.onSelect(sel.layer, head),
    tsne: (head, onProgress) => client.call("queryKeysTsne", { corpus: qk.corpus.id, head }, { onProgress }),
    placed: qk.placed, // t-SNE fits outlive a drawing
    choices: (figure.qkChoices ??= {}), // and so do the reader's choices
  });
  view.show(qk.corpus, { layer: sel.layer, head: sel.head, width });
  figure.qkView = view;
  return box;
}

/**
 * view="qk" with src=: a picture of a corpus computed elsewhere (headmap.corpus.qk_picture),
 * fetched once per URL and checked (qk-file.js), drawn without a model. Its points read out
 * their tokens; with no model behind it there is no sentence to open. Returns the picture.
 */
export async function qkFileFigure(figure, { src, width, status, cached }) {
  const { host } = figure;
  const { T, parts } = host;
  let picture = cached?.src === src ? cached.picture : null;
  if (!picture) {
    const name = nameOf(src, "src");
    status(T("loading", { model: name }));
    let response;
    try {
      response = await fetch(src);
    } catch (e) {
      throw coded(`${name} could not be fetched: ${e.message}`, "fetch_failed", { file: name, url: src, variant: "file" });
    }
    if (!response.ok) throw coded(`${name}: ${response.status}`, "fetch_status", { file: name, url: src, status: response.status, variant: "file" });
    picture = readQkPicture(new Uint8Array(await response.arrayBuffer()), name);
    status("");
  }
  const box = el("div", { class: "qk-box" });
  const view = new QkView(box, {
    T,
    onOpen: null, // no model: a point reads its token out, and that is all
    onHead: (head) => {
      host.reader.head = head;
      view.setHead(head);
    },
    choices: (figure.qkChoices ??= {}),
  });
  const head = Math.min(host.reader.head ?? host.settings.head ?? picture.head, picture.heads - 1);
  const note = el("p", { class: "small-label" });
  note.textContent = T("qk.fileCount", { drawn: picture.sentences.length, texts: picture.corpus.texts.toLocaleString("en"), tokens: picture.corpus.queries.toLocaleString("en"), model: picture.modelType || "?" });
  parts.stage.replaceChildren(note, box);
  // no run: no controls, note, legend or read-out; the title names the file's layer and model
  parts.controls.replaceChildren();
  for (const part of [parts.controls, parts.note, parts.legend, parts.readout]) part.hidden = true;
  parts.title.textContent = T("qk.fileTitle", { layer: picture.layer + 1, model: picture.modelType || "?" });
  view.show(picture, { layer: picture.layer, head, width });
  figure.qkView = view;
  figure.shown = { picture };
  return { src, picture };
}
