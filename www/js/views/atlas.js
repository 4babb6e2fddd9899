// The atlas: one number per head — a score of what it does, or the weight it moves between
// chosen tokens — as a layers × heads map, the top heads listed with their values, and every
// number as a table. A tap, Enter or a listed head opens that head. Used by the explorer's
// "find heads" panel and the widget's `view="atlas"`.

import { colorOf, cssColorOf, luminance } from "../render/colormap.js";
import { addStrings } from "../i18n.js";
import { FIND } from "../strings/find.js";
import { el, sizeCanvas } from "./dom.js";
import { FONT } from "./heatmap-view.js";

addStrings(FIND); // the words come with the view

import { POSITIONAL } from "../find-names.js";

export { POSITIONAL, SCORES } from "../find-names.js";

/**
 * The score drawn for `score` at `place`: cross-attention has no positions of its own to
 * compare, and shows its share on the first token instead.
 */
export function scoreAt(place, score) {
  return place === "cross" && POSITIONAL.has(score) ? "first_token" : score;
}

/** What a score's numbers are: shares (0–1), or tokens (`distance`). */
export function unitOf(score) {
  return score === "distance" ? "tokens" : "share";
}

/** The `count` heads with the largest values, largest first: [{ layer, head, value }]. */
export function topHeads(values, layers, heads, count = 5) {
  const all = [];
  for (let layer = 0; layer < layers; layer++) for (let head = 0; head < heads; head++) all.push({ layer, head, value: values[layer * heads + head] });
  return all.sort((a, b) => b.value - a.value || a.layer - b.layer || a.head - b.head).slice(0, count);
}

/** A value as the atlas writes it: shares with two decimals, distances in tokens with one. */
export function formatValue(value, unit = "share") {
  if (!Number.isFinite(value)) return "–";
  return unit === "tokens" ? value.toFixed(1) : value.toFixed(2);
}

export class AtlasView {
  /**
   * `container` receives the map, the list and the table; `onSelect(layer, head)` opens a head;
   * `T` words the labels.
   */
  constructor(container, { onSelect, T }) {
    this.onSelect = onSelect;
    this.T = T;
    this.canvas = el("canvas", { class: "atlas", tabindex: "0" });
    this.list = el("ol", { class: "atlas-top" });
    this.scale = el("p", { class: "atlas-scale" });
    this.said = el("p", { class: "visually-hidden", "aria-live": "polite" }); // the keyboard cursor's head
    this.table = el("table", { class: "atlas-table" });
    this.details = el("details", { class: "atlas-details" }, el("summary", { text: T("atlas.table") }), el("div", { class: "table-scroll" }, this.table));
    container.replaceChildren(el("div", { class: "atlas-scroll" }, this.canvas), this.said, this.scale, this.list, this.details);
    this.shown = null;
    this.cursor = null;
    this.canvas.addEventListener("click", (e) => {
      const hit = this.hitAt(e);
      if (hit) this.onSelect(hit.layer, hit.head);
    });
    this.canvas.addEventListener("keydown", (e) => this.key(e));
  }

  /**
   * `data`: { values (Float32Array [L·H]), layers, heads, name (what the values are), unit
   * ("share" 0–1, or "tokens"), selected ({ layer, head } or null), width, lut, ink, off (a Set
   * of "L.H": heads turned off, crossed out) }.
   */
  draw(data) {
    this.shown = data;
    const { values, layers, heads, name, unit = "share", width, selected } = data;
    // a cursor from a larger model's map is off this one
    if (this.cursor && (this.cursor.layer >= layers || this.cursor.head >= heads)) this.cursor = null;
    // the brightest colour is the map's largest value: a score whose heads all stay small
    // still shows which is largest (the numbers, the list and the table say how large)
    let max = 1e-6;
    for (const v of values) if (v > max) max = v;
    const gutter = 34;
    const cell = Math.max(18, Math.min(46, Math.floor((width - gutter) / heads)));
    const top = 18;
    const w = gutter + cell * heads;
    const h = top + cell * layers;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillStyle = data.ink ?? "#444";
    for (let head = 0; head < heads; head++) if (cell >= 22 || head % 2 === 0) ctx.fillText(String(head + 1), gutter + (head + 0.5) * cell, top / 2);
    for (let layer = 0; layer < layers; layer++) ctx.fillText(String(layer + 1), gutter / 2, top + (layer + 0.5) * cell);
    const lut = data.lut;
    const off = data.off ?? new Set();
    for (let layer = 0; layer < layers; layer++) {
      for (let head = 0; head < heads; head++) {
        const v = values[layer * heads + head];
        const x = gutter + head * cell;
        const y = top + layer * cell;
        const fill = cssColorOf(Math.max(0, v), max, lut);
        ctx.fillStyle = fill;
        ctx.fillRect(x + 1, y + 1, cell - 2, cell - 2);
        // a head turned off: crossed out, its value still shown over the cross on the cell's
        // own colour (a head off still has its pattern)
        const crossed = off.has(`${layer}.${head}`);
        if (crossed) {
          ctx.strokeStyle = data.ink ?? "#444";
          ctx.lineWidth = 2;
          ctx.beginPath();
          ctx.moveTo(x + 3, y + 3);
          ctx.lineTo(x + cell - 3, y + cell - 3);
          ctx.moveTo(x + cell - 3, y + 3);
          ctx.lineTo(x + 3, y + cell - 3);
          ctx.stroke();
        }
        if (cell >= 34) {
          const text = formatValue(v, unit);
          if (crossed) {
            ctx.fillStyle = fill;
            const wide = ctx.measureText(text).width + 4;
            ctx.fillRect(x + (cell - wide) / 2, y + cell / 2 - 7, wide, 14);
          }
          ctx.fillStyle = luminance(colorOf(Math.max(0, v), max, lut)) > 0.3 ? "#111" : "#fff";
          ctx.fillText(text, x + cell / 2, y + cell / 2);
        }
      }
    }
    for (const [at, color] of [[selected, "#e4572e"], [this.cursor, "#1d6fd8"]]) {
      if (!at) continue;
      ctx.strokeStyle = color;
      ctx.lineWidth = 2;
      ctx.strokeRect(gutter + at.head * cell + 1, top + at.layer * cell + 1, cell - 2, cell - 2);
    }
    this.geometry = { gutter, top, cell, layers, heads };
    this.scale.textContent = this.T("atlas.scale", { max: formatValue(max, unit) });
    const best = topHeads(values, layers, heads, 5);
    const T = this.T;
    this.canvas.setAttribute("aria-label", T("atlas.label", { name, layers, heads, layer: best[0].layer + 1, head: best[0].head + 1, value: formatValue(best[0].value, unit) }));
    this.list.replaceChildren(
      ...best.map(({ layer, head, value }) =>
        el("li", {}, el("button", { type: "button", class: "small-button", "data-layer": layer, "data-head": head, text: `${T("gridLabel", { layer: layer + 1, head: head + 1 })} · ${formatValue(value, unit)}`, onclick: () => this.onSelect(layer, head) })),
      ),
    );
    this.drawTable(data);
  }

  drawTable({ values, layers, heads, name, unit = "share" }) {
    const T = this.T;
    const caption = el("caption", { text: name });
    const head = el("tr", {}, el("th", { scope: "col", text: T("gridCorner") }), ...Array.from({ length: heads }, (_, h) => el("th", { scope: "col", text: String(h + 1) })));
    const rows = Array.from({ length: layers }, (_, l) => el("tr", {}, el("th", { scope: "row", text: String(l + 1) }), ...Array.from({ length: heads }, (_, h) => el("td", { text: formatValue(values[l * heads + h], unit) }))));
    this.table.replaceChildren(caption, el("thead", {}, head), el("tbody", {}, ...rows));
  }

  hitAt(e) {
    if (!this.geometry) return null;
    const r = this.canvas.getBoundingClientRect();
    const { gutter, top, cell, layers, heads } = this.geometry;
    const head = Math.floor((e.clientX - r.left - gutter) / cell);
    const layer = Math.floor((e.clientY - r.top - top) / cell);
    return layer >= 0 && layer < layers && head >= 0 && head < heads ? { layer, head } : null;
  }

  /** Arrow keys move a cursor over the heads; Enter or Space opens the head under it. */
  key(e) {
    if (!this.shown) return;
    const { layers, heads } = this.shown;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const c = this.cursor ?? this.shown.selected ?? { layer: 0, head: 0 };
    if (moves[e.key]) {
      e.preventDefault();
      this.cursor = { layer: Math.min(layers - 1, Math.max(0, c.layer + moves[e.key][0])), head: Math.min(heads - 1, Math.max(0, c.head + moves[e.key][1])) };
      this.draw(this.shown);
      const v = this.shown.values[this.cursor.layer * heads + this.cursor.head];
      this.canvas.title = `${this.T("gridLabel", { layer: this.cursor.layer + 1, head: this.cursor.head + 1 })} · ${formatValue(v, this.shown.unit)}`;
      this.said.textContent = this.canvas.title;
    } else if ((e.key === "Enter" || e.key === " ") && this.cursor) {
      e.preventDefault();
      this.onSelect(this.cursor.layer, this.cursor.head);
    }
  }
}
