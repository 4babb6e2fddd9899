// Every layer x head as a small heatmap. The worker paints the thumbnails; they arrive as
// bitmaps and are handed to their canvases without drawing on the main thread. A roving
// tabindex makes the grid one tab stop; arrow keys move between heads, Enter or a tap opens
// one in the main view.

import { el } from "./dom.js";
import { cssNumber, cssSize } from "./sizes.js";

/** The key/value head query head `head` reads, or null when every head has its own. */
export function kvHeadOf(place, head) {
  if (!place || !(place.kvHeads < place.heads)) return null;
  return Math.floor(head / (place.heads / place.kvHeads));
}

/**
 * What a model's place says about its heads beyond the pictures, in `T`'s words: which query
 * heads share a key/value head, which layers see only nearby tokens. `place` is the model's
 * description of it ({ heads, kvHeads, windows }).
 */
export function headNotes(place, T) {
  const notes = [];
  if (!place) return notes;
  if (place.kvHeads < place.heads) notes.push(T("heads.grouped", { heads: place.heads, kv: place.kvHeads, per: place.heads / place.kvHeads }));
  const windowed = (place.windows ?? []).map((w, layer) => [w, layer]).filter(([w]) => w !== null);
  if (windowed.length) {
    const sizes = [...new Set(windowed.map(([w]) => w))];
    notes.push(T("heads.windows", { layers: windowed.map(([, l]) => l + 1).join(", "), window: sizes.join(" / ") }));
  }
  return notes;
}

/** The thumbnail size in CSS pixels for `heads` columns in `width` pixels of room. */
export function thumbSize(width, heads, largest = 72) {
  // each thumbnail has 4 px of padding and border on both sides and a 4 px gap; the layer
  // numbers take about 60 px
  return Math.max(16, Math.min(largest, Math.floor((width - 60) / heads) - 12));
}

export class HeadGrid {
  /** `label(layer, head)` names a thumbnail; `corner` heads the grid (layers down, heads across). */
  constructor(container, { onSelect, label, corner = () => "" }) {
    this.container = container;
    this.onSelect = onSelect;
    this.label = label;
    this.corner = corner;
    this.buttons = [];
    this.shape = { layers: 0, heads: 0 };
    container.addEventListener("keydown", (e) => this.key(e));
  }

  /**
   * `thumbs[layer * heads + head]`: an ImageBitmap painted at the device's pixel ratio `dpr`.
   */
  draw({ thumbs, layers, heads, selected, dpr }) {
    this.shape = { layers, heads };
    this.container.replaceChildren();
    cssNumber(this.container, "heads", heads);
    this.buttons = [];
    const cells = [el("span", { class: "grid-corner", text: this.corner() })];
    for (let h = 0; h < heads; h++) cells.push(el("span", { class: "grid-col-label", text: String(h + 1) }));
    for (let layer = 0; layer < layers; layer++) {
      cells.push(el("span", { class: "grid-row-label", text: String(layer + 1) }));
      for (let head = 0; head < heads; head++) {
        const bitmap = thumbs[layer * heads + head];
        const canvas = el("canvas", { width: bitmap.width, height: bitmap.height });
        cssSize(canvas, bitmap.width / dpr, bitmap.height / dpr);
        canvas.getContext("bitmaprenderer").transferFromImageBitmap(bitmap);
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
        cells.push(button);
        this.buttons.push(button);
      }
    }
    this.container.append(...cells);
  }

  /** Marks the heads in `off` (a Set of "L.H") as turned off, `mark` added to their names. */
  markOff(off, mark) {
    for (const b of this.buttons) {
      const { layer, head } = b.dataset;
      const isOff = off.has(`${layer}.${head}`);
      b.classList.toggle("off", isOff);
      const label = this.label(Number(layer), Number(head));
      b.setAttribute("aria-label", isOff ? `${label} · ${mark}` : label);
    }
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
