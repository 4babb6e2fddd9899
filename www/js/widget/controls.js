// The controls an author turns on with `controls="sentence mask layer head scale save"`: each
// one a plain form element in the reader's language. Choosing something calls `choose(what,
// value)`; the element decides whether that means a new run or only a new drawing.

import { el } from "../views/dom.js";
import { viewReads } from "./frame.js";

/**
 * The controls for `settings` (the author's with the reader's choices over them), on a model
 * described by `info` whose run shows `place` ({ place, mask, batch, layers, heads }) at `sel`.
 */
export function buildControls({ T, settings: s, info, place, sel }, choose) {
  const items = [];
  // weights from a file: no model to type into, mask differently or scale
  if (s.controls.includes("sentence") && !info.fromFile) {
    const area = el("textarea", { "aria-label": T("textDecoderOnly"), spellcheck: "false", rows: "2" });
    area.value = s.texts[0];
    let timer = 0;
    area.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => choose("text", area.value), 200);
    });
    items.push(el("label", { class: "sentence" }, area));
  }
  if (s.controls.includes("mask")) {
    const places = el("select", { "aria-label": T("place") });
    for (const p of info.places) places.append(el("option", { value: p.place, text: T(`place.${p.place}`) }));
    places.value = place.place;
    places.addEventListener("change", () => choose("place", places.value));
    const modelPlace = info.places.find((p) => p.place === place.place);
    const trained = modelPlace.mask;
    const masks = el("select", { "aria-label": T("mask") });
    // the masks the model says this place takes, its own first
    for (const m of modelPlace.masks) {
      const tag = m === trained ? T(info.trained ? "trainedWith" : "asInPaper") : T(info.trained ? "whatIf" : "forComparison");
      masks.append(el("option", { value: m, text: `${T(`mask.${m}`)} (${tag})` }));
    }
    masks.value = place.mask;
    masks.addEventListener("change", () => choose("mask", masks.value === trained ? null : masks.value));
    if (info.places.length > 1) items.push(places);
    if (!info.fromFile) items.push(masks);
  }
  const select = (name, count, value) => {
    const menu = el("select", { "aria-label": T(name) });
    for (let k = 0; k < count; k++) menu.append(el("option", { value: k, text: `${T(name)} ${k + 1}` }));
    menu.value = String(value);
    menu.addEventListener("change", () => choose(name, Number(menu.value)));
    return menu;
  };
  // a padded batch: the reader switches rows, to see the PAD of the shorter one
  if (place.batch > 1) {
    const rows = el("span", { class: "rows", role: "group", "aria-label": T("rowsLabel") });
    for (let b = 0; b < place.batch; b++) {
      const tab = el("button", { type: "button", "aria-pressed": String(b === sel.row), text: `${T("sentence")} ${b + 1}`, title: s.texts[b] ?? "" });
      tab.addEventListener("click", () => choose("row", b));
      rows.append(tab);
    }
    items.push(rows);
  }
  const reads = viewReads(s.view); // a menu that would change nothing is not shown
  if (s.controls.includes("layer") && reads.includes("layer") && place.layers > 1) items.push(select("layer", place.layers, sel.layer));
  if (s.controls.includes("head") && reads.includes("head")) items.push(select("head", place.heads, sel.head));
  if (s.controls.includes("scale") && !info.fromFile) {
    const box = el("input", { type: "checkbox", checked: s.scale });
    box.addEventListener("change", () => choose("scale", box.checked));
    items.push(el("label", {}, box, T("scale")));
  }
  return items;
}
