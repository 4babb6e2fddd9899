// What an author writes on <attention-heatmap>, read into settings: pure functions, no DOM,
// so they are tested in Node. A value that cannot be read falls back to its default and is
// reported (the element fires an `error` event for it; it never throws).

import { coded } from "../errors.js";
import { FOLDERS, FUSIONS, LANGS, MASKS, PLACES, RANGES, SCORES, TOY_PRESETS, flagOf, intOf, offLeftOut, offOf, requestFor, sourceOf as sourceFor, textsOf } from "../settings.js";

export { MASKS, PLACES };
export const VIEWS = ["heatmap", "grid", "steps", "mixing", "pipeline", "lines", "atlas", "rollout", "qk", "predict", "lens", "flow", "generate"];
/** When view="generate" writes: as it comes into view, or when the reader taps its button. */
export const STARTS = ["visible", "tap"];

export const CONTROLS = ["sentence", "mask", "layer", "head", "scale", "save"];
export const THEMES = ["light", "dark", "auto"];
export const COLORMAP_NAMES = ["viridis", "magma", "blues"];

/** Every attribute the element reads, kebab-case as authors write them. */
export const ATTRIBUTES = ["text", "text2", "texts", "target", "mask", "place", "model", "layer", "head", "scale", "lang", "controls", "view", "colormap", "theme", "seed", "score", "fusion", "src", "ablate", "norm", "prompt", "max-new-tokens", "temperature", "start", "step"];

export const DEFAULTS = Object.freeze({
  texts: ["동물이 길을 건너지 않았다. 그것은 너무 피곤했다."],
  corpus: null, // view="qk"'s sentences: the author's `texts` (up to 200), else the example sentences
  target: null, // null: the model writes its own, or the toy reads the text again
  mask: null, // null: the place's own mask
  place: null, // null: the place the mask belongs to, else the model's first
  model: { from: "trained" },
  layer: null, // null: the model's suggestion, else 0
  head: null, // a number, "all" (the grid), or null: the suggestion, else 0
  scale: true,
  lang: null, // null: the page's language
  controls: ["layer", "head"],
  view: "heatmap",
  colormap: "viridis",
  theme: "light",
  seed: 1,
  score: "previous_token", // what view="atlas" colours the heads by
  fusion: "mean", // how view="rollout" fuses a layer's heads
  src: null, // a file of weights computed elsewhere (JSON or safetensors): drawn instead of a run
  off: "", // `ablate`: heads turned off in every view ("1.0,1.3"), every later layer computed without them
  norm: false, // heatmaps coloured by what each key adds, α_ij · ‖v_j W_O‖ (value-weighted)
  prompt: null, // view="generate"'s prompt: null, the text
  maxNewTokens: 20, // view="generate": at most this many tokens
  temperature: null, // view="generate": null writes greedily; above 0 samples (with `seed`)
  start: "visible", // view="generate" writes when it comes into view, or "tap" on its button
  step: null, // a checkpoint of a trained model's training timeline (models/<name>/timeline/); null: as trained
});

/** A list written as a JSON array, or one item per line. */
function list(value) {
  const text = value.trim();
  if (text.startsWith("[")) {
    const parsed = JSON.parse(text);
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === "string")) throw new Error("not a list of strings");
    return parsed;
  }
  return text.split("\n").map((s) => s.trim()).filter(Boolean);
}

/**
 * Reads `attrs` (name → string, as `getAttribute` gives them; missing names are absent) into
 * settings. `base` resolves a model folder's URL. Returns { settings, problems }, problems being
 * [{ attribute, value, expected }] for every value that fell back to its default.
 */
export function parseAttributes(attrs, base) {
  const s = { ...DEFAULTS };
  const problems = [];
  const bad = (attribute, expected) => problems.push({ attribute, value: attrs[attribute], expected });
  const has = (name) => typeof attrs[name] === "string";

  if (has("texts")) {
    try {
      const texts = list(attrs.texts);
      if (texts.length) [s.texts, s.corpus] = [texts.slice(0, 8), texts]; // a corpus past 200 is refused by name
      else bad("texts", "a JSON array of sentences, or one sentence per line");
    } catch {
      bad("texts", "a JSON array of sentences, or one sentence per line");
    }
  } else if (has("text")) {
    s.texts = textsOf(attrs.text, attrs.text2);
  }
  if (has("target")) s.target = attrs.target;
  if (has("mask")) {
    if (MASKS.includes(attrs.mask)) s.mask = attrs.mask;
    else bad("mask", MASKS.join(" | "));
  }
  if (has("place")) {
    if (PLACES.includes(attrs.place)) s.place = attrs.place;
    else bad("place", PLACES.join(" | "));
  }
  if (has("src") && attrs.src.trim()) {
    try {
      const url = new URL(attrs.src.trim(), base);
      if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("not http");
      s.src = url.href;
    } catch {
      bad("src", "the URL of an attention file (.json or .safetensors)");
    }
  }
  if (has("model")) {
    const model = attrs.model.trim();
    if (FOLDERS[model]?.widget) s.model = { from: model };
    else if (model === "toy" || Object.hasOwn(TOY_PRESETS, model)) s.model = { from: "toy", preset: model === "toy" ? "small" : model };
    else {
      try {
        const url = new URL(model.endsWith("/") ? model : `${model}/`, base);
        if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("not http");
        s.model = { from: "url", base: url.href };
      } catch {
        bad("model", "trained | induction | small | base | the URL of a folder of Hugging Face files");
      }
    }
  }
  if (has("layer")) {
    const n = intOf("layer", attrs.layer);
    if (n === undefined) bad("layer", "a layer number from 0");
    else s.layer = n;
  }
  if (has("head")) {
    if (attrs.head === "all") s.head = "all";
    else {
      const n = intOf("head", attrs.head);
      if (n === undefined) bad("head", "a head number from 0, or all");
      else s.head = n;
    }
  }
  if (has("scale")) s.scale = flagOf(attrs.scale);
  if (has("norm")) s.norm = flagOf(attrs.norm);
  if (has("lang")) {
    if (LANGS.includes(attrs.lang)) s.lang = attrs.lang;
    else bad("lang", "ko | en");
  }
  if (has("controls")) {
    const names = attrs.controls.split(/[\s,]+/).filter(Boolean);
    const unknown = names.filter((n) => !CONTROLS.includes(n) && n !== "none");
    if (unknown.length) bad("controls", CONTROLS.join(" "));
    s.controls = names.filter((n) => CONTROLS.includes(n));
  }
  if (has("view")) {
    if (VIEWS.includes(attrs.view)) s.view = attrs.view;
    else bad("view", VIEWS.join(" | "));
  }
  if (has("colormap")) {
    if (COLORMAP_NAMES.includes(attrs.colormap)) s.colormap = attrs.colormap;
    else bad("colormap", COLORMAP_NAMES.join(" | "));
  }
  if (has("theme")) {
    if (THEMES.includes(attrs.theme)) s.theme = attrs.theme;
    else bad("theme", THEMES.join(" | "));
  }
  if (has("seed")) {
    const n = intOf("seed", attrs.seed);
    if (n === undefined) bad("seed", "a whole number from 0");
    else s.seed = n;
  }
  if (has("score")) {
    if (SCORES.includes(attrs.score)) s.score = attrs.score;
    else bad("score", SCORES.join(" | "));
  }
  if (has("fusion")) {
    if (FUSIONS.includes(attrs.fusion)) s.fusion = attrs.fusion;
    else bad("fusion", FUSIONS.join(" | "));
  }
  if (has("ablate")) {
    // the heads written as heads are turned off; the items left out are named, not the whole value
    s.off = offOf(attrs.ablate);
    const left = offLeftOut(attrs.ablate);
    if (left.length) problems.push({ attribute: "ablate", value: left.join(","), expected: "heads as layer.head from 0, comma-separated (1.0,1.3), at most 64", key: "offLeftOut", values: { items: left.join(", ") } });
  }
  if (has("prompt")) {
    if (attrs.prompt.trim()) [s.prompt, s.texts] = [attrs.prompt, textsOf(attrs.prompt)];
    else bad("prompt", "the text the model continues (a translation model: the sentence to translate)");
  }
  if (has("max-new-tokens")) {
    const n = intOf("max-new-tokens", attrs["max-new-tokens"]);
    if (n === undefined) bad("max-new-tokens", `a whole number from 1 to ${RANGES["max-new-tokens"][1]}`);
    else s.maxNewTokens = n;
  }
  if (has("temperature")) {
    const t = Number(attrs.temperature);
    if (attrs.temperature.trim() === "" || !Number.isFinite(t) || t <= 0) bad("temperature", "a number above 0 (leave it out to write the most likely token)");
    else s.temperature = t;
  }
  if (has("start")) {
    if (STARTS.includes(attrs.start)) s.start = attrs.start;
    else bad("start", STARTS.join(" | "));
  }
  if (has("step")) {
    const n = intOf("step", attrs.step);
    if (n === undefined || !FOLDERS[s.model.from]?.timeline) bad("step", "a checkpoint's step of the trained models' timelines (model=\"trained\" or \"induction\"), a whole number");
    else s.step = n;
  }
  if (s.head === "all" && s.view === "heatmap") s.view = "grid";
  return { settings: s, problems };
}

/** The model source the worker loads for `model` settings; `assets` is the widget's folder; `step` a checkpoint of its timeline. */
export function sourceOf(model, seed, assets, step = null) {
  return model.from === "toy" ? sourceFor("toy", assets, { preset: model.preset, seed }) : sourceFor(model.from === "url" ? model : model.from, assets, null, step);
}

/**
 * The request for `settings` on a model described by `info` (settings.js's `requestFor`): the
 * texts as a padded batch, or at an encoder–decoder's decoder places one text with its target
 * (`target`: the author's, or the model's own). The place is the author's, else the one the
 * mask belongs to, else the model's first.
 */
export function requestOf(settings, info, target = settings.target) {
  return requestFor({ ...settings, target: target ?? null }, info);
}

/** The widget attributes set on `element`, by name. */
export function attributesOf(element) {
  return Object.fromEntries(ATTRIBUTES.filter((name) => element.hasAttribute(name)).map((name) => [name, element.getAttribute(name)]));
}

/** Forgets what the reader chose for what attribute `name` sets: an author's change wins. */
export function authorChanged(reader, name) {
  if (name === "text" || name === "texts" || name === "text2") {
    delete reader.text;
    delete reader.row;
  } else if (name in reader) delete reader[name];
  if (name === "mask" || name === "place") {
    delete reader.mask;
    delete reader.place;
  }
}

/**
 * Keeps a reader's choice from the controls or the grid in `reader` (and in `sel`, what is
 * drawn): "draw" when drawing again is enough (a row, layer or head), "run" when the run must
 * be made again (a text, place, mask or scale).
 */
export function readerChose(reader, sel, what, value) {
  if (["select", "layer", "head", "row"].includes(what)) {
    const change = what === "select" ? value : { [what]: value }; // a head of the grid: both
    Object.assign(reader, change);
    Object.assign(sel, change);
    return "draw";
  }
  if (what === "place") {
    reader.place = value;
    reader.mask = null;
  } else if (what === "mask") {
    reader.place = sel.place;
    reader.mask = value;
  } else reader[what] = value; // text, scale
  return "run";
}

/** `settings` with the reader's choices from the controls (`reader`) over the author's. */
export function withReader(settings, reader) {
  return {
    ...settings,
    texts: reader.text !== undefined ? [reader.text, ...settings.texts.slice(1)] : settings.texts,
    place: reader.place !== undefined ? reader.place : settings.place,
    mask: reader.mask !== undefined ? reader.mask : settings.mask,
    scale: reader.scale ?? settings.scale,
    target: reader.target !== undefined ? reader.target : settings.target,
  };
}

/**
 * The row, layer and head drawn of a run's `place` ({ place, batch, layers, heads }): the
 * reader's, else the author's, else the model's suggestion, else the first. An author's layer
 * or head the model does not have is drawn at its last one, and `clamped(name, value, count)`
 * is told, so the widget can say so.
 */
export function selectionOf({ settings, reader, info, place, clamped }) {
  const suggestion = info.suggestions?.find((x) => x.place === place.place);
  const author = (name) => (typeof settings[name] === "number" ? settings[name] : null);
  // rollout shows what the layers made of the sentence: after the last one, unless one is chosen
  const fallback = (name, count) => (name === "layer" && settings.view === "rollout" ? count - 1 : suggestion?.[name] ?? 0);
  const pick = (name, count) => {
    if (author(name) !== null && reader[name] === undefined && author(name) >= count) clamped(name, author(name), count);
    return Math.min(reader[name] ?? author(name) ?? fallback(name, count), count - 1);
  };
  return { place: place.place, row: Math.min(reader.row ?? 0, place.batch - 1), layer: pick("layer", place.layers), head: pick("head", place.heads) };
}

/**
 * The request for `settings` on a model described by `info`: an empty text is refused, an
 * author's mask the place does not take is drawn with the place's own and said through
 * `problem`, and at an encoder–decoder's decoder `target(text)` gives the model's own target
 * when the author gave none.
 */
export async function widgetRequest(settings, info, { problem, target }) {
  if (!settings.texts[0]?.trim()) throw coded("the text is empty: type a sentence to see its attention", "empty_text");
  const request = requestOf(settings, info);
  const modelPlace = info.places.find((p) => p.place === request.place);
  if (settings.mask && request.mask === undefined && settings.mask !== modelPlace?.mask) {
    problem({ attribute: "mask", value: settings.mask, expected: modelPlace.masks.join(" | ") });
  }
  if (request.targets === undefined && info.encoderDecoder && request.place !== "encoder_self" && info.canGenerate) {
    return requestOf(settings, info, await target(request.texts[0]));
  }
  return request;
}
