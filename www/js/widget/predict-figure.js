// The widget's view="predict" (what the model predicts at every position, tap one for its top
// 10; with `ablate`, what each position predicted with every head struck through under it) and
// view="lens" (the logit lens: per layer, each position's top token). Loaded on first use.

import { el } from "../views/dom.js";
import { lensRows, predictionDetail, predictionStrip } from "../views/predictions.js";

/** The views' own rules, adopted by a widget's shadow root when it first draws one: the bundle every page loads carries none of them. */
const CSS = `
.table-scroll { overflow-x: auto; max-width: 100%; }
.predict-strip { display: flex; gap: 4px; padding: 2px 0 6px; width: max-content; }
.predict-cell { display: flex; flex-direction: column; align-items: center; gap: 1px; min-width: 3rem; padding: 0.3rem 0.4rem; font: inherit; color: inherit; border: 1px solid var(--hm-line, #d9dde5); border-radius: 6px; background: transparent; cursor: pointer; }
.predict-cell[aria-pressed="true"] { border-color: var(--hm-accent, #2a6f97); box-shadow: inset 0 0 0 1px var(--hm-accent, #2a6f97); }
.predict-cell.masked { background: rgba(240, 180, 40, 0.15); }
.predict-token, .predict-p, .predict-was { font-size: 0.75rem; }
.predict-token, .predict-p { color: var(--hm-muted, #5b6475); }
.predict-token, .predict-top { max-width: 7rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.predict-top { font-weight: 600; }
.predict-was { color: #b3261e; }
.predict-at { margin: 0.4rem 0 0.3rem; font-weight: 500; }
.predict-lists { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; }
.predict-list ol { margin: 0; padding-left: 1.6rem; }
.predict-list li { display: grid; grid-template-columns: minmax(4rem, auto) 6rem 3rem; gap: 0.4rem; align-items: center; font-size: 0.85rem; }
.predict-list .small-label { margin: 0; font-size: 0.8rem; color: var(--hm-muted, #5b6475); }
.bar-track { display: block; height: 0.55rem; background: rgba(127, 127, 127, 0.15); border-radius: 3px; }
.bar { display: block; height: 100%; width: calc(max(var(--p, 0), 0.02) * 100%); background: var(--hm-accent, #2a6f97); border-radius: 3px; }
.predict-list .p { text-align: right; font-variant-numeric: tabular-nums; }
.lens-table { border-collapse: collapse; font-size: 0.8rem; }
.lens-table th, .lens-table td { padding: 0.2rem 0.35rem; border: 1px solid var(--hm-line, #d9dde5); white-space: nowrap; font-weight: 400; }
.lens-table td { background: rgba(42, 111, 151, calc(0.06 + 0.8 * var(--p, 0))); }
.lens-table td.strong { color: #fff; }
`;
let sheet = null;

/** Adopts the views' rules into the shadow root `root`, once. */
function adopt(root) {
  if (typeof CSSStyleSheet !== "function" || !root.adoptedStyleSheets) return;
  if (!sheet) (sheet = new CSSStyleSheet()).replaceSync(CSS);
  if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

/** Draws view `view` ("predict" or "lens") of the run's text in the frame's stage. */
export async function predictFigure(figure, view, { r, sel }) {
  const { T, settings, parts, client } = figure.host;
  adopt(parts.stage.getRootNode());
  const base = { texts: r.request.texts.slice(0, 1), ...(r.request.targets ? { targets: r.request.targets.slice(0, 1) } : {}) };
  const off = settings.off ? { ablate: settings.off } : {};
  const call = (extra) => client.call("predict", { key: figure.host.modelKey(), request: { ...base, ...extra } });
  parts.legend.replaceChildren();
  parts.readout.hidden = true;
  parts.table.replaceChildren();
  if (view === "lens") {
    const doc = await call({ topK: 1, lens: true, ...off });
    if (r !== figure.run) return;
    const table = el("table", { class: "lens-table" }, ...lensRows(doc, (layer) => T("lens.layer", { layer })));
    parts.stage.replaceChildren(el("div", { class: "table-scroll" }, table));
    figure.shown = { ...sel, predictions: doc };
    return;
  }
  // with the heads off as the run has them: from the run itself when it kept its output
  const ofRun = r.request.output ? client.call("runPredictions", { run: r.id, row: 0, topK: 10 }) : call({ topK: 10, ...off });
  const [after, before] = await Promise.all([ofRun, settings.off ? call({ topK: 10 }) : null]);
  if (r !== figure.run) return;
  const detail = el("div", { "aria-live": "polite" });
  let chosen = null;
  const draw = () => {
    const strip = predictionStrip({ after, before, chosen, onPick: (t) => ((chosen = chosen === t ? null : t), draw()) });
    const title = chosen === null ? "" : T("predict.at", { position: chosen, token: after.rows[0].tokens[chosen] });
    detail.replaceChildren(...(chosen === null ? [] : [predictionDetail({ after, before, t: chosen, title, titles: [T("predict.before"), T("predict.after")] })]));
    parts.stage.replaceChildren(el("div", { class: "table-scroll" }, strip), detail);
  };
  draw();
  figure.shown = { ...sel, predictions: after };
}
