// Every layer x head as a small heatmap. A roving tabindex makes the grid one tab stop;
// arrow keys move between heads, Enter or a click opens one in the main view.

import { drawHeatmap } from "../render/heatmap.js";
import { el, sizeCanvas } from "./dom.js";

const THUMB = 72;

export class HeadGrid {
  constructor(container, { onSelect, label }) {
    this.container = container;
    this.onSelect = onSelect;
    this.label = label; // (layer, head) => accessible name
    this.buttons = [];
    this.shape = { layers: 0, heads: 0 };
    container.addEventListener("keydown", (e) => this.key(e));
  }

  /**
   * weights[layer]: Float32Array [H, Tq, Tk]; maxima[layer]: Float32Array [H], each head's
   * largest weight; range "one" draws every head on 0–1 instead.
   */
  draw({ weights, maxima, heads, tq, tk, allowed, queryValid, selected, range }) {
    const layers = weights.length;
    this.shape = { layers, heads };
    this.container.replaceChildren();
    this.container.style.setProperty("--heads", heads);
    this.buttons = [];
    // as large as the panel allows, up to THUMB, so 12 heads still fit in a row
    const room = (this.container.clientWidth || 800) - 40;
    const thumb = Math.max(24, Math.min(THUMB, Math.floor(room / heads) - 12));
    const cell = thumb / Math.max(tq, tk);
    for (let layer = 0; layer < layers; layer++) {
      this.container.append(el("span", { class: "grid-row-label", text: `L${layer + 1}` }));
      for (let head = 0; head < heads; head++) {
        const canvas = el("canvas");
        const isSelected = layer === selected.layer && head === selected.head;
        const button = el(
          "button",
          {
            type: "button",
            class: isSelected ? "thumb selected" : "thumb",
            "aria-pressed": String(isSelected),
            "aria-label": this.label(layer, head),
            tabindex: isSelected ? "0" : "-1",
            "data-layer": layer,
            "data-head": head,
            onclick: () => this.onSelect(layer, head),
          },
          canvas,
        );
        this.container.append(button);
        this.buttons.push(button);
        const { ctx, dpr } = sizeCanvas(canvas, Math.max(1, cell * tk), Math.max(1, cell * tq));
        const size = tq * tk;
        const w = weights[layer].subarray(head * size, (head + 1) * size);
        const m = range === "one" ? 1 : maxima[layer][head] || 1;
        drawHeatmap(ctx, w, tq, tk, { cell, dpr, allowed, queryValid, max: m, grid: false });
      }
    }
    const header = el("span", { class: "grid-corner" });
    this.container.prepend(header, ...Array.from({ length: heads }, (_, h) => el("span", { class: "grid-col-label", text: `H${h + 1}` })));
  }

  /** Moves the selection without redrawing the thumbnails. */
  select(layer, head) {
    for (const b of this.buttons) {
      const on = Number(b.dataset.layer) === layer && Number(b.dataset.head) === head;
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", String(on));
      b.tabIndex = on ? 0 : -1;
    }
  }

  focusSelected() {
    this.buttons.find((b) => b.tabIndex === 0)?.focus();
  }

  key(e) {
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const move = moves[e.key];
    const current = e.target.closest?.("button.thumb");
    if (!move || !current) return;
    e.preventDefault();
    const { layers, heads } = this.shape;
    const layer = Math.min(layers - 1, Math.max(0, Number(current.dataset.layer) + move[0]));
    const head = Math.min(heads - 1, Math.max(0, Number(current.dataset.head) + move[1]));
    this.onSelect(layer, head, { focus: true });
  }
}
