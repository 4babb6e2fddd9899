// The explorer's state, and its round trip through the URL so a view can be shared.

export const MASKS = ["padding", "causal", "cross", "none"];
export const PRESETS = ["small", "base"];
export const LANGS = ["en", "ko"];

export const HUB = "https://huggingface.co";

export const DEFAULTS = Object.freeze({
  model: "toy", // "toy" | "minilm" | "hub:<owner/name>"
  hub: HUB,
  text: "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.",
  text2: "민수가 영희에게 책을 주었다.",
  target: "The animal didn't cross the street because it was too tired.",
  mask: "padding",
  scale: true,
  preset: "small",
  layers: 2,
  seed: 1,
  layer: 0,
  head: 0,
  row: 1, // the padded sentence of the default batch, so the mask shows at once
  range: "max",
  lang: null, // null: follow the browser
});

const intIn = (value, lo, hi, fallback) => {
  const n = Number.parseInt(value, 10);
  return Number.isInteger(n) && n >= lo && n <= hi ? n : fallback;
};

/** State from a query string; anything missing or invalid falls back to its default. */
export function decodeState(search) {
  const p = new URLSearchParams(search);
  const s = { ...DEFAULTS };
  const model = p.get("model") ?? "";
  if (model === "minilm" || /^hub:[\w./-]+$/.test(model)) s.model = model;
  if (/^https?:\/\/[^\s]+$/.test(p.get("hub") ?? "")) s.hub = p.get("hub");
  if (p.has("text")) s.text = p.get("text");
  if (p.has("text2")) s.text2 = p.get("text2");
  if (p.has("target")) s.target = p.get("target");
  if (MASKS.includes(p.get("mask"))) s.mask = p.get("mask");
  if (p.has("scale")) s.scale = p.get("scale") !== "0";
  if (PRESETS.includes(p.get("preset"))) s.preset = p.get("preset");
  s.layers = intIn(p.get("layers"), 1, 12, s.layers);
  s.seed = intIn(p.get("seed"), 0, 2 ** 31 - 1, s.seed);
  s.layer = intIn(p.get("layer"), 0, 11, s.layer);
  s.head = intIn(p.get("head"), 0, 63, s.head);
  s.row = intIn(p.get("row"), 0, 1, s.row);
  if (["max", "one"].includes(p.get("range"))) s.range = p.get("range");
  if (LANGS.includes(p.get("lang"))) s.lang = p.get("lang");
  return s;
}

/** The query string of `state`, leaving out what equals the default. */
export function encodeState(state) {
  const p = new URLSearchParams();
  for (const [key, fallback] of Object.entries(DEFAULTS)) {
    const value = state[key];
    if (key === "model" && value === "local") continue; // files on a disk cannot be shared
    if (value === undefined || value === null || value === fallback) continue;
    p.set(key, typeof value === "boolean" ? (value ? "1" : "0") : String(value));
  }
  const q = p.toString();
  return q ? `?${q}` : "";
}

/** What a real model runs for `state`: a padded batch, or a source and a target. */
export function modelRequestFor(state, info) {
  if (info.encoderDecoder) return { texts: [state.text], targets: [state.target] };
  return { texts: [state.text, ...(state.text2.trim() ? [state.text2] : [])] };
}

/** What the worker runs on the toy model for `state`: the batch, the decoder side and the mask. */
export function requestFor(state) {
  const a = state.text;
  const b = state.text2.trim() ? [state.text2] : [];
  if (state.mask === "cross") return { texts: [a], targets: [state.target], mask: "cross", scale: state.scale };
  return { texts: [a, ...b], mask: state.mask, scale: state.scale };
}
