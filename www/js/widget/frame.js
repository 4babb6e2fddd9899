// The widget's frame and what it says around the figure: title, controls, status, errors,
// notes, the view's stage, read-out, legend, save buttons and the table for screen readers.

import { el } from "../views/dom.js";
import { headNotes } from "../views/head-grid.js";
import { figureNotes } from "../views/notes.js";

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
export function frameNotes({ T, info, place, sel, tokens, architecture, settings }) {
  const modelPlace = info.places.find((p) => p.place === sel.place);
  const trained = settings.model.from === "trained";
  const said = figureNotes({ T, info, place, tokens, model: trained ? "headmap-tiny-ko-en" : architecture, reads: trained ? "reads.trained" : null, script: !trained });
  const notes = [said.whatIf, said.scale, said.decoder, said.coverage].filter(Boolean);
  // shared key/value heads and local layers: said where they shape what is drawn
  const allHeads = ["lines", "pipeline", "grid", "atlas"].includes(settings.view);
  if (allHeads || settings.view === "steps" || modelPlace.windows?.[sel.layer]) notes.push(...headNotes(modelPlace, T));
  return notes;
}

/** The room a view takes before it is drawn, for a widget `width` pixels wide. */
export function reservedHeight(view, width) {
  const side = Math.min(width, 640);
  const heights = { heatmap: side + 150, grid: side + 320, atlas: side + 420, rollout: side + 120, qk: 2 * side + 420, steps: side + 520, mixing: side + 330, pipeline: 720, lines: 480 };
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
