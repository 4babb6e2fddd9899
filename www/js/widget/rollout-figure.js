// The widget's view="rollout": attention rollout after the chosen layer (the last unless a layer
// is chosen). Loaded on first use with the view it draws.

import { el } from "../views/dom.js";
import { RolloutView } from "../views/rollout-view.js";

/** Draws `rolled` (the run's rollout) at `sel` in the frame's stage. */
export async function rolloutFigure(figure, { place, sel, labels, tokens, width }, rolled) {
  const { T, settings, parts } = figure.host;
  const { layer } = sel;
  const box = el("div");
  const view = new RolloutView(box, { T });
  parts.stage.replaceChildren(box);
  const { ink, faded } = figure.host.colors();
  await view.draw({ rollout: rolled, layer, t: place.tq, queries: labels.queries, keys: labels.keys, queryValid: tokens.queryValid, keyValid: tokens.keyValid, width, colormap: settings.colormap, ink, faded });
  figure.shown = { ...sel, layer, rollout: true, canvas: view.heatmap.canvas };
  parts.legend.replaceChildren();
  parts.readout.hidden = true;
  parts.table.replaceChildren();
}
