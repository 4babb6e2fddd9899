// The widget's view="lines": BertViz's two columns, every head of the layer as coloured lines;
// tap a token to focus it. Loaded on first use with the view it draws.

import { drawLinesView } from "../views/lines-view.js";

/** Draws `weights` (every head of the layer at `sel`) as lines in the frame's stage. */
export function linesFigure(figure, { place, sel, tokens, labels, width }, weights) {
  const { host } = figure;
  const { T, parts, reader } = host;
  const { tq, tk, heads } = place;
  const look = { width, ...host.colors(), dark: host.dark() };
  const canvas = drawLinesView(parts.stage, { weights, heads, tq, tk, labels, tokens, layer: sel.layer }, look, reader.lines ?? {}, {
    T,
    onReadout: (text) => {
      parts.readout.textContent = text;
    },
    onChange: (kept) => {
      reader.lines = kept;
    },
  });
  figure.shown = { ...sel, tq, tk, tokens, labels, lines: true, canvas };
  parts.legend.replaceChildren();
  parts.table.replaceChildren();
}
