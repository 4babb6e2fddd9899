// What a head writes, across the layers: for one head, its share of each layer's write into
// the residual stream at every position (layers down, tokens across), and for a tapped cell
// every head's share there, largest first. The shares are the core's (`Run.writes`: the
// proximity of each head's write to the layer's, Ferrando and Voita 2024). Used by the
// explorer's "what a head does" panel and the widget's `view="flow"`. Text is drawn on canvas
// or set as textContent, never as HTML.

import { addStrings } from "../i18n.js";
import { colorOf, cssColorOf, luminance } from "../render/colormap.js";
import { VIEW_WORDS } from "../strings/views.js";
import { el, sizeCanvas } from "./dom.js";
import { FONT } from "./heatmap-view.js";

addStrings(VIEW_WORDS); // the words come with the view

/** At most this many characters of a token label under its column. */
const LABEL_CHARS = 8;

/**
 * Gathers every layer's shares from the worker: `call("writes", …)` per layer, each
 * { norms [H, Tq], shares [H, Tq] }; returns Float32Array [L, H, Tq].
 */
export async function flowShares(call, { run, place, row, layers, heads, tq }) {
  const all = new Float32Array(layers * heads * tq);
  for (let layer = 0; layer < layers; layer++) {
    const { shares } = await call("writes", { run, sel: { place, row, layer, head: 0 } });
    all.set(shares, layer * heads * tq);
  }
  return all;
}

export class FlowView {
  /** `container` receives the map and the breakdown; `T` words them. */
  constructor(container, { T }) {
    this.T = T;
    this.canvas = el("canvas", { class: "flow", tabindex: "0" });
    this.breakdown = el("p", { class: "flow-breakdown", "aria-live": "polite" });
    container.replaceChildren(el("div", { class: "flow-scroll" }, this.canvas), this.breakdown);
    this.picked = null; // { layer, t }
    this.canvas.addEventListener("click", (e) => {
      const hit = this.hitAt(e);
      if (hit) this.pick(hit);
    });
    this.canvas.addEventListener("keydown", (e) => this.key(e));
  }

  /**
   * `data`: { shares (Float32Array [L, H, Tq]), layers, heads, tq, head (the head drawn),
   * labels (the query tokens), valid (real queries), width, lut, ink }.
   */
  draw(data) {
    this.shown = data;
    const { layers, heads, tq, head, labels, valid, width, lut } = data;
    if (this.picked && (this.picked.layer >= layers || this.picked.t >= tq)) this.picked = null;
    const gutter = 34;
    const bottom = 64; // the token labels, written downwards
    const cell = Math.max(14, Math.min(40, Math.floor((width - gutter) / tq)));
    const rowHeight = Math.max(16, Math.min(28, cell));
    const w = gutter + cell * tq;
    const h = rowHeight * layers + bottom;
    const { ctx } = sizeCanvas(this.canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    ctx.font = `11px ${FONT}`;
    ctx.fillStyle = data.ink ?? "#444";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let layer = 0; layer < layers; layer++) ctx.fillText(String(layer + 1), gutter / 2, (layer + 0.5) * rowHeight);
    for (let layer = 0; layer < layers; layer++) {
      for (let t = 0; t < tq; t++) {
        const x = gutter + t * cell;
        const y = layer * rowHeight;
        if (valid && !valid[t]) {
          ctx.fillStyle = "rgba(127, 127, 127, 0.15)"; // PAD: nothing is written there that matters
          ctx.fillRect(x + 1, y + 1, cell - 2, rowHeight - 2);
          continue;
        }
        const v = this.share(layer, head, t);
        ctx.fillStyle = cssColorOf(v, 1, lut);
        ctx.fillRect(x + 1, y + 1, cell - 2, rowHeight - 2);
        if (cell >= 30 && rowHeight >= 18) {
          ctx.fillStyle = luminance(colorOf(v, 1, lut)) > 0.3 ? "#111" : "#fff";
          ctx.fillText(String(Math.round(100 * v)), x + cell / 2, y + rowHeight / 2);
        }
      }
    }
    // the token labels, each under its column, turned to read downwards
    ctx.fillStyle = data.ink ?? "#444";
    ctx.textAlign = "right";
    for (let t = 0; t < tq; t++) {
      const label = [...String(labels[t] ?? "")];
      const text = label.length > LABEL_CHARS ? `${label.slice(0, LABEL_CHARS - 1).join("")}…` : label.join("");
      ctx.save();
      ctx.translate(gutter + (t + 0.5) * cell, layers * rowHeight + 4);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(text, 0, 0);
      ctx.restore();
    }
    if (this.picked) {
      ctx.strokeStyle = "#e4572e";
      ctx.lineWidth = 2;
      ctx.strokeRect(gutter + this.picked.t * cell + 1, this.picked.layer * rowHeight + 1, cell - 2, rowHeight - 2);
    }
    this.geometry = { gutter, cell, rowHeight, layers, tq };
    const T = this.T;
    this.canvas.setAttribute("aria-label", T("flow.label", { head: head + 1, layers, tokens: tq }));
    this.say();
  }

  share(layer, head, t) {
    const { heads, tq, shares } = this.shown;
    return shares[(layer * heads + head) * tq + t];
  }

  /** The cell under a pointer event, or null. */
  hitAt(e) {
    const g = this.geometry;
    if (!g) return null;
    const box = this.canvas.getBoundingClientRect();
    const t = Math.floor((e.clientX - box.left - g.gutter) / g.cell);
    const layer = Math.floor((e.clientY - box.top) / g.rowHeight);
    return t >= 0 && t < g.tq && layer >= 0 && layer < g.layers ? { layer, t } : null;
  }

  pick(at) {
    this.picked = at;
    this.draw(this.shown);
  }

  key(e) {
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const move = moves[e.key];
    if (!move || !this.shown) return;
    e.preventDefault();
    const at = this.picked ?? { layer: 0, t: 0 };
    const { layers, tq } = this.shown;
    this.pick({ layer: Math.min(layers - 1, Math.max(0, at.layer + move[0])), t: Math.min(tq - 1, Math.max(0, at.t + move[1])) });
  }

  /** Every head's share at the picked cell, largest first, as text. */
  say() {
    const T = this.T;
    if (!this.picked) {
      this.breakdown.textContent = T("flow.hint");
      return;
    }
    const { layer, t } = this.picked;
    const { heads, labels } = this.shown;
    const parts = Array.from({ length: heads }, (_, h) => ({ h, v: this.share(layer, h, t) }))
      .sort((a, b) => b.v - a.v)
      .filter((x, i) => i < 5 && x.v > 0)
      .map(({ h, v }) => `${T("head")} ${h + 1}: ${Math.round(100 * v)}%`);
    const where = T("flow.at", { layer: layer + 1, token: labels[t] ?? "", position: t + 1 });
    this.breakdown.textContent = `${where} ${parts.length ? parts.join(" · ") : T("flow.nothing")}`;
  }
}
