// The widget's view="generate": the model writes from the text (`prompt`), token by token over
// its KV cache, when the widget comes into view (or on a tap, with start="tap"); each token
// appears with its probability, and one row per token shows where the chosen head looked when it
// wrote it — in an encoder–decoder's cross-attention, the source word it was translating. Loaded
// on first use.

import { lutFor } from "../render/colormap.js";
import { el } from "../views/dom.js";
import { GrowingView, endedText, stoppedText, writtenStrip } from "../views/generation.js";

/** The views' own rules, adopted by a widget's shadow root when it first draws one. */
const CSS = `
.flow-scroll, .table-scroll { overflow-x: auto; max-width: 100%; }
.gen-growing { display: block; }
.predict-strip { display: flex; gap: 4px; padding: 2px 0 6px; width: max-content; }
.predict-cell { display: flex; flex-direction: column; align-items: center; gap: 1px; min-width: 2.6rem; padding: 0.25rem 0.35rem; font: inherit; color: inherit; border: 1px solid var(--hm-line, #d9dde5); border-radius: 6px; background: transparent; cursor: pointer; }
.predict-cell[aria-pressed="true"] { border-color: var(--hm-accent, #2a6f97); box-shadow: inset 0 0 0 1px var(--hm-accent, #2a6f97); }
.predict-top { font-weight: 600; max-width: 7rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.predict-p { font-size: 0.75rem; color: var(--hm-muted, #5b6475); }
.gen-text { margin: 0.3rem 0; }
.gen-bar { display: flex; gap: 0.5rem; align-items: center; margin: 0.2rem 0 0.4rem; }
.gen-bar button { font: inherit; padding: 0.3rem 0.8rem; min-height: 2.2rem; border: 1px solid var(--hm-line, #d9dde5); border-radius: 6px; background: transparent; color: inherit; cursor: pointer; }
`;
let sheet = null;

/** Floats of every head's rows a widget keeps of what it wrote, so that another layer or head
 * redraws without writing again; past it, only the shown head's rows (a choice writes again). */
const KEEP_FLOATS = 4 << 20;

function adopt(root) {
  if (typeof CSSStyleSheet !== "function" || !root.adoptedStyleSheets) return;
  if (!sheet) (sheet = new CSSStyleSheet()).replaceSync(CSS);
  if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

/** Writes from the run's text and draws each token as it comes, in the frame's stage. */
export async function generateFigure(figure, { r, sel, width }) {
  const { T, settings, parts, client, modelInfo } = figure.host;
  adopt(parts.stage.getRootNode());
  parts.legend.replaceChildren();
  parts.readout.hidden = true;
  parts.table.replaceChildren();
  const info = modelInfo;
  // an encoder–decoder's rows are cross-attention's unless the author chose the decoder's own
  const cross = info.encoderDecoder && sel.place !== "decoder_self";
  const watched = info.places.find((p) => p.place === (cross ? "cross" : "decoder_self")) ?? info.places.at(-1);
  const layer = Math.min(sel.layer, watched.layers - 1);
  const head = Math.min(sel.head, watched.heads - 1);
  const status = el("p", { class: "gen-text", role: "status" });
  const strip = el("div", { class: "table-scroll" });
  const box = el("div");
  const view = new GrowingView(box);
  const start = el("button", { type: "button", text: T("gen.run") });
  const stop = el("button", { type: "button", text: T("gen.stop"), hidden: true });
  const bar = el("div", { class: "gen-bar" }, start, stop);
  parts.stage.replaceChildren(bar, status, strip, box);
  const prompt = settings.prompt ?? r.request.texts[0];
  const request = { prompt, maxNewTokens: settings.maxNewTokens, ...(settings.temperature ? { temperature: settings.temperature, seed: settings.seed } : {}), ...(settings.off ? { ablate: settings.off } : {}) };
  // what this figure wrote last, every head's rows kept: a new layer or head only redraws it
  const key = JSON.stringify([figure.host.modelKey(), request, cross]);
  const kept = figure.written?.key === key ? figure.written : null;
  const rowOf = (all) => {
    const keys = all.length / (watched.layers * watched.heads);
    const at = (layer * watched.heads + head) * keys;
    return all.slice(at, at + keys);
  };
  const steps = [];
  let labels = [];
  let chosen = null;
  const draw = () => {
    const pick = (i) => ((chosen = chosen === i ? null : i), draw());
    strip.replaceChildren(writtenStrip(steps, { chosen, onPick: pick }));
    const rows = steps.map((s) => s.row);
    const label = T(cross ? "gen.widgetCross" : "gen.widget", { layer: layer + 1, head: head + 1 });
    view.draw({ rows: chosen === null ? rows : rows.slice(0, chosen + 1), written: steps.map((s) => s.token), labels, width, lut: lutFor(settings.colormap), ink: figure.host.colors().ink, label });
  };
  const write = async () => {
    start.hidden = true;
    stop.hidden = false;
    steps.length = 0;
    status.textContent = T("gen.writing");
    figure.written = null;
    const signal = new AbortController();
    stop.onclick = () => signal.abort();
    const every = [];
    let floats = 0;
    const onProgress = (step) => {
      if (r !== figure.run) return signal.abort();
      const all = cross ? step.cross : step.rows; // [L, H, keys]
      labels = cross ? step.source : step.read;
      floats += all.length;
      every.push(floats <= KEEP_FLOATS ? all : null);
      steps.push({ ...step.token, row: rowOf(all) });
      draw();
    };
    try {
      const done = await client.call("write", { key: figure.host.modelKey(), request, watch: null }, { signal: signal.signal, onProgress });
      client.call("free", { run: done.id }).catch(() => {});
      if (r !== figure.run) return;
      status.textContent = endedText(T, done.generation, info.maxTokens);
      figure.shown = { ...sel, layer, head, generation: done.generation };
      if (every.every(Boolean)) figure.written = { key, steps: steps.map((s, i) => ({ ...s, all: every[i] })), labels, generation: done.generation };
    } catch (e) {
      if (e.code !== "cancelled") throw e;
      status.textContent = stoppedText(T, steps.map((s) => s.token));
    } finally {
      stop.hidden = true;
      start.hidden = false;
      start.textContent = T("gen.again");
    }
  };
  start.addEventListener("click", () => write().catch((e) => figure.host.onError(e)));
  if (kept) {
    // another layer or head of what was written: drawn from the rows kept
    for (const { all, ...token } of kept.steps) steps.push({ ...token, row: rowOf(all) });
    labels = kept.labels;
    status.textContent = endedText(T, kept.generation, info.maxTokens);
    start.textContent = T("gen.again");
    figure.shown = { ...sel, layer, head, generation: kept.generation };
    return draw();
  }
  figure.shown = { ...sel, layer, head, generation: null };
  if (settings.start === "tap") {
    status.textContent = T("gen.tap");
    return;
  }
  await write();
}
