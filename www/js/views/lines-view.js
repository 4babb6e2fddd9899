// BertViz's two columns: every head of a layer as coloured lines from queries to keys, a chip
// per head to show or hide it, and a token under the pointer, a finger or the arrow keys in
// focus. Takes plain data (weights [H, Tq, Tk] and labels); the host says what to do with the
// read-out and keeps the reader's choices between drawings.

import { addStrings } from "../i18n.js";
import { drawLines, headColor, layoutLines, strongest, tokenAt } from "../render/lines.js";
import { formatWeight } from "../render/heatmap.js";
import { VIEW_WORDS } from "../strings/views.js";
import { el, sizeCanvas } from "./dom.js";
import { FONT } from "./heatmap-view.js";
import { pressedColor } from "./sizes.js";

addStrings(VIEW_WORDS); // the words come with the view

/**
 * Draws into `stage`. `data`: { weights [H, Tq, Tk], heads, tq, tk, labels: { queries, keys },
 * tokens: { queryValid, keyValid }, layer }; `look`: { width, ink, faded, dark }; `kept`: the
 * reader's { heads, focus } from before, or {}; `T` words; `onReadout(text)`; `onChange(kept)`
 * when the reader shows other heads or focuses a token. Returns the canvas.
 */
export function drawLinesView(stage, data, look, kept, { T, onReadout, onChange }) {
  const { weights, heads, tq, tk, labels, tokens } = data;
  const shownHeads = new Set(kept.heads?.filter((h) => h < heads) ?? Array.from({ length: heads }, (_, h) => h));
  if (!shownHeads.size) shownHeads.add(0);
  const canvas = el("canvas", { class: "lines", tabindex: "0" });
  const fontPx = look.width < 520 ? 12 : 13;
  const font = `${fontPx}px ${FONT}`;
  const probe = canvas.getContext("2d");
  probe.font = font;
  const widest = Math.max(...labels.queries.map((l) => probe.measureText(l).width), ...labels.keys.map((l) => probe.measureText(l).width));
  const layout = layoutLines({ tq, tk, width: Math.min(look.width, 640), labelWidth: Math.min(widest + 14, look.width * 0.3), rowHeight: fontPx + 8 });
  let focus = kept.focus && kept.focus.index < (kept.focus.side === "query" ? tq : tk) ? kept.focus : null;
  const paint = () => {
    const { ctx } = sizeCanvas(canvas, layout.width, layout.height);
    drawLines(ctx, layout, { weights, heads: [...shownHeads], queries: labels.queries, keys: labels.keys, focus, font, ink: look.ink, faded: look.faded, queryValid: tokens.queryValid, keyValid: tokens.keyValid, dark: look.dark });
    const best = strongest(weights, [...shownHeads], tq, tk, focus);
    canvas.dataset.strongest = JSON.stringify(best);
    canvas.setAttribute("aria-label", T("linesLabel", { layer: data.layer + 1, tq, tk }));
    if (focus && best.weight >= 0) {
      const side = focus.side === "query" ? labels.queries[focus.index] : labels.keys[focus.index];
      onReadout(T("linesReadout", { token: side, query: labels.queries[best.query], key: labels.keys[best.key], head: best.head + 1, weight: formatWeight(best.weight) }));
    } else {
      onReadout(T("linesHint"));
    }
  };
  const changed = () => onChange({ heads: [...shownHeads], focus });
  const at = (e) => {
    const box = canvas.getBoundingClientRect();
    return tokenAt(layout, e.clientX - box.left, e.clientY - box.top);
  };
  const setFocus = (f) => {
    focus = f;
    changed();
    paint();
  };
  canvas.addEventListener("pointermove", (e) => e.pointerType === "mouse" && setFocus(at(e)));
  canvas.addEventListener("pointerdown", (e) => e.pointerType !== "mouse" && setFocus(at(e)));
  canvas.addEventListener("keydown", (e) => {
    const n = focus?.side === "key" ? tk : tq;
    const moves = { ArrowDown: 1, ArrowUp: -1 };
    if (moves[e.key]) {
      e.preventDefault();
      setFocus({ side: focus?.side ?? "query", index: Math.min(n - 1, Math.max(0, (focus?.index ?? -1) + moves[e.key])) });
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault();
      setFocus({ side: e.key === "ArrowLeft" ? "query" : "key", index: Math.min((e.key === "ArrowLeft" ? tq : tk) - 1, focus?.index ?? 0) });
    } else if (e.key === "Escape") setFocus(null);
  });
  // a chip in its head's colour while the head is shown
  const chips = el("div", { class: "lines-heads", role: "group", "aria-label": T("heads") });
  for (let h = 0; h < heads; h++) {
    const chip = el("button", { type: "button", "aria-pressed": String(shownHeads.has(h)), text: `${T("head")} ${h + 1}` });
    pressedColor(chip, headColor(h, 1, look.dark));
    chip.addEventListener("click", () => {
      if (shownHeads.has(h) && shownHeads.size > 1) shownHeads.delete(h);
      else shownHeads.add(h);
      chip.setAttribute("aria-pressed", String(shownHeads.has(h)));
      changed();
      paint();
    });
    chips.append(chip);
  }
  stage.replaceChildren(chips, canvas);
  paint();
  return canvas;
}
