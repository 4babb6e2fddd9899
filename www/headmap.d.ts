// Types for <attention-heatmap>, headmap's embeddable widget (see headmap.js and README.md).

export type Place = "encoder_self" | "decoder_self" | "cross";
export type MaskKind = "none" | "padding" | "causal" | "cross";
export type View = "heatmap" | "grid" | "steps" | "mixing" | "pipeline" | "lines" | "atlas" | "rollout" | "qk";
export type Control = "sentence" | "mask" | "layer" | "head" | "scale" | "save";

/** What the widget draws now; the detail of its `load` and `render` events. */
export interface Figure {
  /** `fromFile`: weights computed elsewhere (`src`, `data`); then `dK`, `maxTokens` and `dModel` are unknown. */
  model: { architecture: string; trained: boolean; fromFile?: boolean; places: { place: Place; mask: MaskKind; layers: number; heads: number; dK: number | null }[]; maxTokens: number | null; dModel?: number };
  run: { places: { place: Place; mask: MaskKind; whatIf: boolean; scale: boolean; batch: number; layers: number; heads: number; tq: number; tk: number }[] };
  place: Place;
  row: number;
  layer: number;
  head: number;
}

/**
 * The detail of the `error` event: the message, a stable code, and for a bad attribute (code
 * "attribute") its name, the value written and what it may be; the widget then uses its default.
 */
export interface HeadmapError {
  message: string;
  code: string;
  /** The values the message is made of (a file's problem: `{ file, problem: { problem, … } }`). */
  details?: Record<string, unknown>;
  attribute?: string;
  value?: string;
  expected?: string;
}

export class AttentionHeatmap extends HTMLElement {
  /** The sentence (the encoder's input, or a decoder-only model's). */
  text: string | null;
  /** A second sentence, padded to the same length as the first. */
  text2: string | null;
  /** Several sentences (a padded batch); the attribute is a JSON array or one per line. */
  texts: string[] | null;
  /** The decoder's input of an encoder–decoder model; default: the model's own output. */
  target: string | null;
  mask: MaskKind | null;
  place: Place | null;
  /** "trained" (default), a toy preset ("small", "base"), or the URL of a folder of Hugging Face files. */
  model: string | null;
  /** A file of attention computed elsewhere (JSON or safetensors, docs/attention.schema.json), drawn instead of a model's run. */
  src: string | null;
  /**
   * The same from script: a file's bytes, a JSON document or its text, or a notebook figure's
   * `<script type="application/vnd.headmap+safetensors">`; `null` goes back to the model.
   */
  data: ArrayBuffer | ArrayBufferView | object | string | HTMLScriptElement | null;
  layer: number | null;
  /** A head from 0, or "all" for the layer × head grid. */
  head: number | "all" | null;
  scale: boolean;
  lang: "ko" | "en" | null;
  controls: Control[] | null;
  view: View | null;
  colormap: "viridis" | "magma" | "blues" | null;
  theme: "light" | "dark" | "auto" | null;
  seed: number | null;
  /** A checkpoint of the trained models' training timeline (models/<name>/timeline/timeline.json lists them); null: the model as trained. */
  step: number | null;
  /** What is drawn now, or null before the first figure. */
  readonly figure: Figure | null;
  /** The figure as a PNG. */
  toPNG(): Promise<Blob>;
  /** The shown head as an SVG document. */
  toSVG(): string;
  /** The run's weights as the command line writes them (JSON text). */
  toJSON(): Promise<string>;
  /**
   * Offers the figure or the weights as a file to save: heatmap, grid, steps and mixing as
   * PNG, SVG or JSON; lines as PNG or JSON; pipeline as JSON. Another format is refused with an
   * `error` event (code `cannot_save`).
   */
  save(format: "png" | "svg" | "json"): Promise<void>;
  addEventListener(type: "load" | "render", listener: (event: CustomEvent<Figure>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: "error", listener: (event: CustomEvent<HeadmapError>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

declare global {
  interface HTMLElementTagNameMap {
    "attention-heatmap": AttentionHeatmap;
  }
}
