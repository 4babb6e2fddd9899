// The widget's styles, adopted by each element's shadow root as a constructable stylesheet:
// no <style> element and no style attribute, so a strict Content-Security-Policy allows them,
// and the host page's styles stay out. Authors theme the widget with these custom properties:
//
//   --headmap-bg, --headmap-fg, --headmap-muted, --headmap-line, --headmap-accent,
//   --headmap-warn, --headmap-font, --headmap-radius, --headmap-max-width

export const STYLES = `
:host {
  --hm-bg: var(--headmap-bg, #ffffff);
  --hm-fg: var(--headmap-fg, #1d2230);
  --hm-muted: var(--headmap-muted, #5b6475);
  --hm-line: var(--headmap-line, #d9dde5);
  --hm-accent: var(--headmap-accent, #2a6f97);
  --hm-warn: var(--headmap-warn, #b3261e);
  --hm-soft: color-mix(in srgb, var(--hm-accent) 10%, var(--hm-bg));
  display: block;
  box-sizing: border-box;
  max-width: var(--headmap-max-width, 100%);
  margin: 1rem 0;
  background: var(--hm-bg);
  border: 1px solid var(--hm-line);
  border-radius: var(--headmap-radius, 8px);
  contain: content;
}
/* A page's styles can reach the host element, and inherited ones (colour, font, spacing) would
   flow in from it: the frame sets every inherited property it relies on itself. */
.frame:lang(ko) { word-break: keep-all; }
.frame {
  color: var(--hm-fg);
  background: var(--hm-bg);
  border-radius: var(--headmap-radius, 8px);
  padding: 0.6rem;
  font: 15px/1.45 var(--headmap-font, system-ui, "Noto Sans CJK KR", "Noto Sans KR", sans-serif);
  font-style: normal;
  font-weight: 400;
  letter-spacing: normal;
  word-spacing: normal;
  text-align: left;
  text-indent: 0;
  text-transform: none;
  text-shadow: none;
  white-space: normal;
  line-height: 1.45;
  direction: ltr;
  visibility: visible;
  overflow-wrap: anywhere;
}
:host([hidden]) { display: none; }
:host([theme="dark"]) {
  --hm-bg: var(--headmap-bg, #15181f);
  --hm-fg: var(--headmap-fg, #e6e9ef);
  --hm-muted: var(--headmap-muted, #9aa3b5);
  --hm-line: var(--headmap-line, #343a46);
  --hm-accent: var(--headmap-accent, #6cb4e4);
  --hm-warn: var(--headmap-warn, #ff8a80);
}
@media (prefers-color-scheme: dark) {
  :host([theme="auto"]) {
    --hm-bg: var(--headmap-bg, #15181f);
    --hm-fg: var(--headmap-fg, #e6e9ef);
    --hm-muted: var(--headmap-muted, #9aa3b5);
    --hm-line: var(--headmap-line, #343a46);
    --hm-accent: var(--headmap-accent, #6cb4e4);
    --hm-warn: var(--headmap-warn, #ff8a80);
  }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
.title { margin: 0 0 0.35rem; font-size: 0.85rem; color: var(--hm-muted); }
.controls { display: flex; flex-wrap: wrap; gap: 0.4rem 0.7rem; align-items: center; margin-bottom: 0.5rem; font-size: 0.85rem; }
.controls label { display: inline-flex; gap: 0.3rem; align-items: center; }
.controls textarea { font: inherit; width: 100%; min-height: 2.6em; resize: vertical; padding: 0.3rem; color: var(--hm-fg); background: var(--hm-bg); border: 1px solid var(--hm-line); border-radius: 6px; }
.controls .sentence { flex: 1 1 100%; }
select, button, input, textarea { font: inherit; font-size: 0.85rem; color: var(--hm-fg); background: var(--hm-bg); border: 1px solid var(--hm-line); border-radius: 6px; padding: 0.2rem 0.45rem; max-width: 100%; }
button { cursor: pointer; background: var(--hm-soft); }
button:focus-visible, select:focus-visible, input:focus-visible, textarea:focus-visible, canvas:focus-visible { outline: 3px solid #e4572e; outline-offset: 1px; }
.note { margin: 0 0 0.4rem; padding: 0.3rem 0.55rem; border-radius: 6px; font-size: 0.82rem; background: var(--hm-soft); border: 1px solid var(--hm-line); }
.error { margin: 0 0 0.4rem; padding: 0.45rem 0.6rem; border-radius: 6px; font-size: 0.88rem; color: var(--hm-warn); border: 1px solid var(--hm-warn); white-space: pre-line; overflow-wrap: anywhere; }
.error::before { content: "⚠ "; }
.stage { position: relative; width: max-content; max-width: 100%; }
.stage canvas { display: block; }
.overlay { position: absolute; left: 0; top: 0; pointer-events: none; }
.heatmap { touch-action: pan-x pan-y; }
.readout { margin: 0.35rem 0 0; min-height: 2.6em; font-size: 0.82rem; font-variant-numeric: tabular-nums; }
.legend { display: flex; flex-wrap: wrap; gap: 0.3rem 0.8rem; align-items: center; font-size: 0.78rem; color: var(--hm-muted); }
.rows { display: inline-flex; flex-wrap: wrap; gap: 0.25rem; }
.rows button[aria-pressed="true"] { background: var(--hm-accent); color: var(--hm-bg); border-color: var(--hm-accent); }
.save { display: flex; flex-wrap: wrap; gap: 0.3rem; margin-top: 0.4rem; }
.grid-scroll { overflow-x: auto; max-width: 100%; }
.grid { display: grid; justify-content: start; grid-template-columns: max-content repeat(var(--heads, 4), max-content); gap: 3px; align-items: center; }
.grid-row-label, .grid-col-label, .grid-corner { font-size: 0.72rem; color: var(--hm-muted); text-align: center; }
.thumb { padding: 2px; border: 2px solid transparent; border-radius: 4px; background: none; line-height: 0; }
.thumb canvas { display: block; image-rendering: pixelated; }
.thumb.selected { border-color: var(--hm-accent); }
.thumb.off { position: relative; }
.thumb.off canvas { opacity: 0.35; }
.thumb.off::after { content: ""; position: absolute; inset: 2px; pointer-events: none; background: linear-gradient(to top right, transparent calc(50% - 1.5px), #b3261e calc(50% - 1.5px), #b3261e calc(50% + 1.5px), transparent calc(50% + 1.5px)); }
.steps { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: flex-start; }
.step { margin: 0; display: flex; flex-direction: column; gap: 0.2rem; font-size: 0.75rem; max-width: 160px; }
.step canvas { border: 1px solid var(--hm-line); image-rendering: pixelated; }
.step-note { flex-basis: 100%; margin: 0; font-size: 0.8rem; color: var(--hm-muted); }
.table-scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.82rem; }
th, td { padding: 2px 7px; border-bottom: 1px solid var(--hm-line); text-align: left; white-space: nowrap; }
caption { text-align: left; color: var(--hm-muted); font-size: 0.8rem; }
.mixing input { width: 4.5rem; }
/* vectors wrap inside their cells: the table fits a phone instead of scrolling sideways */
.mixing td.num { white-space: normal; overflow-wrap: anywhere; min-width: 5.5em; }
.mixing th, .mixing td { padding: 2px 4px; }
.mixing .total { font-weight: 700; }
.warn, .mixing-warning.warn { color: var(--hm-warn); }
.mixing-warning { margin: 0.3rem 0 0; font-size: 0.8rem; }
.mix-pick { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; margin-bottom: 0.4rem; font-size: 0.85rem; }
.pipeline { display: flex; flex-direction: column; align-items: stretch; gap: 0.15rem; font-size: 0.82rem; }
.pipeline .pipe-box { width: auto; display: flex; flex-direction: column; gap: 0.1rem; padding: 0.35rem 0.5rem; border: 1px solid var(--hm-line); border-radius: 6px; background: var(--hm-soft); }
.pipeline code { font-size: 0.8rem; white-space: normal; }
.pipeline .shape { color: var(--hm-muted); font-variant-numeric: tabular-nums; }
.pipeline .arrow { text-align: center; color: var(--hm-muted); line-height: 1; }
.pipeline .heads { display: flex; flex-wrap: wrap; gap: 0.3rem; margin-top: 0.2rem; }
.pipeline .head-box { display: flex; flex-direction: column; align-items: center; gap: 0.1rem; font-size: 0.72rem; }
.pipeline .head-box canvas { border: 1px solid var(--hm-line); image-rendering: pixelated; }
.pipeline .cost { margin: 0.4rem 0 0; color: var(--hm-muted); }
.qk-matrix { display: flex; flex-wrap: wrap; gap: 6px; margin: 0.3rem 0; }
.qk-cell { position: relative; padding: 0; border: 2px solid var(--hm-line); border-radius: 4px; background: #fff; cursor: pointer; line-height: 0; }
.qk-cell[aria-pressed="true"] { border-color: var(--hm-accent, #e4572e); }
.qk-cell span { position: absolute; top: 2px; left: 3px; font-size: 0.68rem; line-height: 1; color: #333; }
.qk-bar { display: flex; flex-wrap: wrap; gap: 0.4rem 0.8rem; align-items: center; margin: 0.3rem 0; font-size: 0.82rem; }
.qk-bar label { display: flex; align-items: center; gap: 0.3rem; max-width: 100%; }
.qk-search { width: 7rem; }
.qk-plot { display: block; outline: 1px solid var(--hm-line); outline-offset: -1px; touch-action: manipulation; cursor: crosshair; }
.qk-plot:focus-visible { outline: 3px solid #2a6f97; outline-offset: 1px; }
.qk-legend { display: block; margin: 0.3rem 0; }
.qk-readout + button { margin-bottom: 0.5rem; }
.qk-readout { margin: 0.3rem 0; font-size: 0.82rem; overflow-wrap: anywhere; }
.qk-stats { font-size: 0.78rem; color: var(--hm-muted); }
.small-label { font-size: 0.78rem; color: var(--hm-muted); }
.atlas-scroll { overflow-x: auto; max-width: 100%; }
.atlas { display: block; cursor: pointer; }
.atlas-scale { margin: 0.3rem 0 0; font-size: 0.78rem; color: var(--hm-muted); }
.atlas-top { display: flex; flex-wrap: wrap; gap: 0.3rem; list-style: none; padding: 0; margin: 0.4rem 0; }
.atlas-details { margin-bottom: 0.4rem; font-size: 0.8rem; }
.heatmap-wrap { position: relative; width: max-content; max-width: 100%; }
.lines { touch-action: pan-y; }
.lines-heads { display: flex; flex-wrap: wrap; gap: 0.25rem; margin-bottom: 0.3rem; }
.lines-heads button[aria-pressed="true"] { color: #fff; border-color: transparent; }
/* on a phone the read-out of a tapped cell stays on screen while the figure is */
@media (max-width: 600px) {
  .readout.live { position: sticky; bottom: 0; z-index: 2; padding: 0.3rem 0.4rem; background: var(--hm-bg); border-top: 1px solid var(--hm-line); }
}
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;
