// The widget's view="atlas": every head coloured by the author's score (`score`); a tap opens
// a head below it. Loaded on first use with the view it draws.

import { lutFor } from "../render/colormap.js";
import { offAt } from "../settings.js";
import { AtlasView, scoreAt, unitOf } from "../views/atlas.js";
import { el } from "../views/dom.js";

/** The atlas of `found` (the run's scores) at `sel` (`place` its shape) in `width` pixels; returns its box. */
export function atlasFigure(figure, sel, place, width, found) {
  const { host } = figure;
  const { T, settings } = host;
  const score = scoreAt(sel.place, settings.score);
  const box = el("div", { class: "atlas-box" });
  new AtlasView(box, { T, onSelect: (layer, head) => host.onSelect(layer, head) }).draw({
    values: found.scores[score],
    layers: place.layers,
    heads: place.heads,
    name: T(`score.${score}`),
    unit: unitOf(score),
    selected: { layer: sel.layer, head: sel.head },
    width,
    lut: lutFor(settings.colormap),
    ink: host.colors().ink,
    off: offAt(settings.off, sel.place, host.modelInfo),
  });
  return box;
}
