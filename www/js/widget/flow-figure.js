// The widget's view="flow": what the chosen head writes across the layers — its share of each
// layer's write at every token — with every head's share at a tapped cell. Loaded on first use.

import { lutFor } from "../render/colormap.js";
import { el } from "../views/dom.js";
import { FlowView, flowShares } from "../views/flow.js";

/** The views' own rules, adopted by a widget's shadow root when it first draws one. */
const CSS = `
.flow-scroll { overflow-x: auto; max-width: 100%; }
.flow { display: block; }
.flow:focus-visible { outline: 3px solid var(--hm-accent, #2a6f97); outline-offset: 2px; }
.flow-breakdown { margin: 0.4rem 0 0; font-size: 0.85rem; }
`;
let sheet = null;

function adopt(root) {
  if (typeof CSSStyleSheet !== "function" || !root.adoptedStyleSheets) return;
  if (!sheet) (sheet = new CSSStyleSheet()).replaceSync(CSS);
  if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

/** Draws the flow of head `sel.head` of the run's place and row in the frame's stage. */
export async function flowFigure(figure, { r, place, sel, tokens, labels, width }) {
  const { T, settings, parts, client } = figure.host;
  adopt(parts.stage.getRootNode());
  const shares = await flowShares((op, args) => client.call(op, args), { run: r.id, place: sel.place, row: sel.row, layers: place.layers, heads: place.heads, tq: place.tq });
  if (r !== figure.run) return;
  parts.legend.replaceChildren();
  parts.readout.hidden = true;
  parts.table.replaceChildren();
  const box = el("div", { class: "flow-box" });
  const title = el("p", { class: "flow-title", text: T("flow.title", { head: sel.head + 1 }) });
  new FlowView(box, { T }).draw({ shares, layers: place.layers, heads: place.heads, tq: place.tq, head: sel.head, labels: labels.queries, valid: tokens.queryValid, width, lut: lutFor(settings.colormap), ink: figure.host.colors().ink });
  parts.stage.replaceChildren(title, box);
  figure.shown = { ...sel, flow: { layers: place.layers, heads: place.heads, tokens: labels.queries, shares: Array.from(shares) } };
}
