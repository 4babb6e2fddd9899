// The widget's frame and what it says around the figure: title, controls, status, errors,
// notes, the view's stage, read-out, legend, save buttons and the table for screen readers.

import { FOLDERS, offNames } from "../settings.js";
import { el } from "../views/dom.js";
import { headNotes } from "../views/head-grid.js";
import { figureNotes } from "../views/notes.js";
import { STYLES } from "./styles.js";

let sheet = null;

/** The widget's one stylesheet, shared by every widget's shadow root. */
export function widgetSheet() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
  }
  return sheet;
}

/** Widgets compute once they are near the screen; one observer serves them all. */
export const visibility = new IntersectionObserver(
  (entries) => {
    for (const entry of entries) if (entry.isIntersecting) entry.target.onVisible();
  },
  { rootMargin: "200px" },
);

/**
 * A notebook's figure (`<div class="headmap-figure">`, js/inline/main.js) draws its own data,
 * never a model: the data script beside the element, `null` while the page's parser has not
 * reached it (the figure's script sets it then), `undefined` for any other widget.
 */
export function notebookData(element) {
  if (!element.parentElement?.classList.contains("headmap-figure")) return undefined;
  return element.parentElement.querySelector('script[type="application/vnd.headmap+safetensors"]');
}

/** What each view draws of the chosen layer and head, where not both: its title names only
 * those and its controls offer only their menus (a grid or rollout spans every head, the flow
 * every layer, predictions and the lens every layer's output). */
const VIEW_READS = { lines: ["layer"], pipeline: ["layer"], grid: ["layer"], rollout: ["layer"], flow: ["head"], predict: [], lens: [] };
export const viewReads = (view) => VIEW_READS[view] ?? ["layer", "head"];

/**
 * What the frame says of a drawing at `sel`: its title, the notes above the figure, and the
 * element's label, which names the text (`texts`, the run's, or a file's own tokens).
 */
export function frameWords({ T, info, place, sel, tokens, settings, texts }) {
  const architecture = info.architecture === "toy" ? T("arch.toy") : info.architecture === "unknown" ? null : info.architecture; // a file may not say
  // a checkpoint of the training timeline says which step it is
  const step = settings.step === null ? null : T("trainingStep", { step: settings.step.toLocaleString("en") });
  const title = figureTitle(T, sel, [architecture, step].filter(Boolean).join(" · ") || null, settings.view);
  const notes = frameNotes({ T, info, place, sel, tokens, architecture: architecture ?? info.architecture, settings });
  const text = info.fromFile ? tokens.queries.filter((_, i) => tokens.queryValid[i]).map((t) => t.label).join(" ") : texts[sel.row] ?? "";
  const label = T("widgetLabel", { place: T(`place.${sel.place}`), layer: sel.layer + 1, head: sel.head + 1, text: text.slice(0, 120) });
  return { title, notes, label };
}

/** What the title says: the place, the layer and head the view draws, and the model; what a view of the whole model shows. */
function figureTitle(T, sel, architecture, view) {
  if (view === "predict" || view === "lens" || view === "generate") return [T(`title.${view}`), architecture].filter(Boolean).join(" · ");
  const reads = viewReads(view);
  const layer = reads.includes("layer") ? [`${T("layer")} ${sel.layer + 1}`] : [];
  const head = reads.includes("head") ? [`${T("head")} ${sel.head + 1}`] : [];
  return [T(`place.${sel.place}`), ...layer, ...head, architecture].filter(Boolean).join(" · ");
}

/** The frame's parts for `settings`, saving offered in `formats`; `save(format)` on a tap. */
export function buildFrame({ T, settings: s, formats, save }) {
  const parts = {};
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
  // only the formats this view can be saved as
  if (s.controls.includes("save")) {
    for (const format of formats) parts.save.append(el("button", { type: "button", text: T(`export.${format}`), "data-export": format, onclick: () => save(format) }));
  } else parts.save.hidden = true;
  parts.frame = el("div", { class: "frame", part: "frame" }, parts.title, parts.controls, parts.status, parts.error, parts.note, parts.stage, parts.readout, parts.legend, parts.save, parts.table);
  return parts;
}

/**
 * The notes above the figure: a what-if, no scaling, decoder rows, how much of the text the
 * model read, shared heads and local layers. `place` is the run's, `info` the model's.
 */
function frameNotes({ T, info, place, sel, tokens, architecture, settings }) {
  const modelPlace = info.places.find((p) => p.place === sel.place);
  // a model served with the page, by its name and what it reads (a file names its own model);
  // the two trained here cover Korean and English, so their unknown tokens are unlearnt words
  const served = info.fromFile ? undefined : FOLDERS[settings.model.from];
  const here = served && settings.model.from !== "minilm";
  const said = figureNotes({ T, info, place, tokens, model: served?.name ?? architecture, reads: served ? `reads.${settings.model.from}` : null, script: !here });
  // view="generate" labels each row by the token it wrote, not by the one it read
  const decoder = settings.view === "generate" ? null : said.decoder;
  const notes = [said.whatIf, said.scale, decoder, said.coverage].filter(Boolean);
  if (settings.off) notes.unshift(T("offNote", { heads: offNames(settings.off, info, T), spec: `ablate="${settings.off}"` }));
  if (settings.norm && !info.fromFile) notes.push(T("normNote"));
  // shared key/value heads and local layers: said where they shape what is drawn
  const allHeads = ["lines", "pipeline", "grid", "atlas"].includes(settings.view);
  if (allHeads || settings.view === "steps" || modelPlace.windows?.[sel.layer]) notes.push(...headNotes(modelPlace, T));
  return notes;
}

/** The room a view takes before it is drawn, for a widget `width` pixels wide. */
export function reservedHeight(view, width) {
  const side = Math.min(width, 640);
  const heights = { heatmap: side + 150, grid: side + 320, atlas: side + 420, rollout: side + 120, qk: 2 * side + 420, steps: side + 520, mixing: side + 330, pipeline: 720, lines: 480, predict: 360, lens: 320 };
  return heights[view] ?? 400;
}

/** Whether `frame` is dark (theme="dark", or "auto" in a dark system theme). */
export function isDark(frame) {
  const bg = getComputedStyle(frame).backgroundColor.match(/\d+/g)?.map(Number) ?? [255, 255, 255];
  return 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2] < 128;
}

/** The ink and faded colours of widget `host`, from its theme. */
export function colorsOf(host) {
  const style = getComputedStyle(host);
  return { ink: style.getPropertyValue("--hm-fg").trim() || "#1d2230", faded: style.getPropertyValue("--hm-muted").trim() || "#8a8a8a" };
}
