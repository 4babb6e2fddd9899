// The words both hosts read their settings in — the explorer from its link (state.js), the
// widget from its attributes (widget/attributes.js) — so a value means the same in both: the
// models, places, masks, scores and fusions, the ranges of numbers, and what a choice runs
// (`sourceOf`, `requestFor`). Pure functions, no DOM: tests/js/settings.test.mjs feeds the same
// values to both parsers.

import { FUSIONS, SCORES } from "./find-names.js";
import { MASKS, MAX_TEXT_CHARS, PLACES, masksFor } from "./places.js";

export { FUSIONS, MASKS, MAX_TEXT_CHARS, PLACES, SCORES, masksFor };

export const LANGS = ["en", "ko"];

/** The toy's presets, and how many layers each has unless told. */
export const TOY_PRESETS = { small: 2, base: 6 };

/**
 * The models served with the page (in models/<name>/), by the word a link or an attribute
 * gives: the name the reader sees, the languages they read (their examples follow them),
 * whether the widget's folder has them too and whether they ship a training timeline
 * (models/<name>/timeline/: checkpoints a `step` opens).
 */
export const FOLDERS = {
  trained: { name: "headmap-tiny-ko-en", languages: ["ko"], widget: true, timeline: true },
  induction: { name: "headmap-tiny-induction", languages: ["ko", "en"], widget: true, timeline: true },
  minilm: { name: "all-MiniLM-L6-v2" },
};

/** The whole numbers a link or an attribute may give, [lowest, highest]. */
export const RANGES = { layer: [0, 63], head: [0, 127], seed: [0, 2 ** 31 - 1], layers: [1, 12], row: [0, 7], "max-new-tokens": [1, 200], step: [0, 10_000_000] };

/** The place each mask belongs to: a mask named without a place shows there. */
export const PLACE_OF_MASK = { padding: "encoder_self", none: "encoder_self", causal: "decoder_self", cross: "cross" };

/** `value` if `list` has it, else undefined. */
export const oneOf = (list, value) => (list.includes(value) ? value : undefined);

/** A whole number in `RANGES[name]`, written plainly ("3", not "03", "3.0" or "+3"); else undefined. */
export function intOf(name, value) {
  const [lo, hi] = RANGES[name];
  const n = Number.parseInt(value, 10);
  return String(n) === String(value).trim() && n >= lo && n <= hi ? n : undefined;
}

/** A number typed in a form, brought into `RANGES[name]` (`fallback` when it is none). */
export function clampTo(name, value, fallback) {
  const [lo, hi] = RANGES[name];
  return Math.min(hi, Math.max(lo, Math.round(Number(value) || fallback)));
}

/** A switch: off for false, 0, off and no (in any case), on for anything else. */
export const flagOf = (value) => !["false", "0", "off", "no"].includes(value.trim().toLowerCase());

/** One head as a spec writes it: `L.H` from 0, optionally after a place ("cross:0.3"). */
const HEAD_ITEM = new RegExp(`^(?:(${PLACES.join("|")}):)?(\\d{1,3})\\.(\\d{1,3})$`);

/** The most items a typed heads-off spec keeps, and the most characters of one. */
const MAX_OFF_ITEMS = 64;
const MAX_OFF_ITEM_CHARS = 24;

/** The items of a heads-off spec as written: spaces dropped, empty ones left out. */
const offItems = (value) =>
  String(value ?? "")
    .split(",")
    .map((item) => item.replace(/\s+/g, ""))
    .filter(Boolean);

/**
 * Heads off as a reader types them, in the field or a link: every item kept as typed, even one
 * that is no head ("1.3,abc"), so a link opens with the field as it was left (`offSplit` says
 * which are not heads). Bounded: at most MAX_OFF_ITEMS items of MAX_OFF_ITEM_CHARS characters
 * (whole characters: a cut never splits one).
 */
export function offTyped(value) {
  const cut = (item) => Array.from(item).slice(0, MAX_OFF_ITEM_CHARS).join("");
  return offItems(value).slice(0, MAX_OFF_ITEMS).map(cut).join(",");
}

/**
 * The heads a spec turns off, as a link or an attribute writes them — `L.H` from 0,
 * comma-separated, each optionally after a place ("1.0,cross:0.3") — with every other item
 * left out (`offLeftOut` names them). Whether the model has them is the core's to say.
 */
export const offOf = (value) => offTyped(value).split(",").filter((item) => HEAD_ITEM.test(item)).join(",");

/** The items of `value` that `offOf` leaves out: not written as heads, or past the MAX_OFF_ITEMS-th. */
export const offLeftOut = (value) => offItems(value).filter((item, i) => i >= MAX_OFF_ITEMS || !HEAD_ITEM.test(item));

/** The place a head named without one is at: the decoder's self-attention if the model has one, else the encoder's (as the core reads a spec). */
export const defaultHeadPlace = (info) => (info.places.some((p) => p.place === "decoder_self") ? "decoder_self" : "encoder_self");

/**
 * The heads `spec` turns off on a model described by `info`, as a Set of "place:L.H" (a head
 * at the default place when written without one; numbers as numbers, so 01.0 is 1.0, as the
 * core reads it), and the items that are no head, as typed, each once.
 */
function offParse(spec, info) {
  const heads = new Set();
  const malformed = new Set();
  for (const item of offTyped(spec).split(",").filter(Boolean)) {
    const found = HEAD_ITEM.exec(item);
    if (found) heads.add(`${found[1] ?? defaultHeadPlace(info)}:${Number(found[2])}.${Number(found[3])}`);
    else malformed.add(item);
  }
  return { heads, malformed: [...malformed] };
}

/** The heads `spec` turns off on a model described by `info`, as a Set of "place:L.H". */
export const offHeads = (spec, info) => offParse(spec, info).heads;

/**
 * The heads of `spec` the model described by `info` has, those it has not (a place it lacks, a
 * layer or head past its count), each as "place:L.H", and the items that are no head at all
 * (not `L.H`, or after a place no model has), as typed.
 */
export function offSplit(spec, info) {
  const { heads, malformed } = offParse(spec, info);
  const [has, lacks] = [[], []];
  for (const key of heads) {
    const [place, at] = key.split(":");
    const [layer, head] = at.split(".").map(Number);
    const p = info.places.find((x) => x.place === place);
    // a place whose counts are not known takes any head (the core checks it)
    (p && !(layer >= p.layers) && !(head >= p.heads) ? has : lacks).push(key);
  }
  return { has, lacks, malformed };
}

/**
 * Whether a model described by `info` turns heads off: not the untrained toy, whose build has no
 * ablation, nor weights read from an attention file, which no model computes again.
 */
export const turnsHeadsOff = (info) => info.trained !== false && !info.fromFile;

/** `spec` with only the heads the model described by `info` has: what a run turns off. */
export const offKept = (spec, info) => specOf(offSplit(spec, info).has, info);

/** Heads ("place:L.H") as a spec, a head at the default place written without one, as a reader types it. */
export function specOf(keys, info) {
  const fallback = `${defaultHeadPlace(info)}:`;
  return keys.map((k) => (k.startsWith(fallback) ? k.slice(fallback.length) : k)).join(",");
}

/**
 * The heads of `place` that `spec` turns off, as a Set of "L.H": none on a model that turns no
 * head off (turnsHeadsOff), so no view marks one there.
 */
export function offAt(spec, place, info) {
  if (!turnsHeadsOff(info)) return new Set();
  const prefix = `${place}:`;
  return new Set([...offHeads(spec, info)].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length)));
}

/**
 * The heads `spec` turns off in a reader's words, counted from 1 as the grid counts them
 * ("layer 2, head 4"), the place named where it is not the default one.
 */
export function offNames(spec, info, T) {
  return [...offHeads(spec, info)]
    .map((key) => {
      const [place, at] = key.split(":");
      const [layer, head] = at.split(".").map(Number);
      const name = T("gridLabel", { layer: layer + 1, head: head + 1 });
      return place === defaultHeadPlace(info) ? name : `${T(`place.${place}`)}: ${name}`;
    })
    .join("; ");
}

/** Heads ("place:L.H", maybe not `L.H` at all) in a reader's words, each place named where the model has more than one or lacks it. */
export function headNames(keys, info, T) {
  return keys
    .map((key) => {
      const [place, at] = key.split(":");
      const [layer, head] = at.split(".").map(Number);
      const name = Number.isInteger(layer) && Number.isInteger(head) ? T("gridLabel", { layer: layer + 1, head: head + 1 }) : `“${at}”`;
      // the place is said where the model has several, or where it is not the model's one
      return info.places.length === 1 && info.places[0].place === place ? name : `${T(`place.${place}`)}: ${name}`;
    })
    .join("; ");
}

/**
 * `spec` with head `head` of layer `layer` at `place` turned off, or back on if it was off;
 * a head at the default place is written without one, as a reader types it.
 */
export function toggleOff(spec, { place, layer, head }, info) {
  const heads = offHeads(spec, info);
  const key = `${place}:${layer}.${head}`;
  if (!heads.delete(key)) heads.add(key);
  return specOf([...heads], info);
}

/** The texts of a batch: the first, and the second unless it is blank. */
export const textsOf = (text, text2) => [text, ...(text2?.trim() ? [text2] : [])];

/**
 * The source the worker loads for `model`: "toy" (`toy`: { preset, seed, layers? }), the name of
 * a folder in FOLDERS (found from `base`, the page's or the widget's folder; `step`, a checkpoint
 * of its timeline in place of its weights), or a source as it is ({ from: "url", base } |
 * { from: "hub", id, hub? } | { from: "files", files }).
 */
export function sourceOf(model, base, toy, step = null) {
  if (model === "toy") return { from: "toy", preset: toy.preset, seed: toy.seed, layers: toy.layers ?? TOY_PRESETS[toy.preset] };
  if (Object.hasOwn(FOLDERS, model)) {
    const folder = { from: "url", base: new URL(`models/${FOLDERS[model].name}/`, base).href };
    return step !== null && FOLDERS[model].timeline ? { ...folder, weights: checkpointFile(step) } : folder;
  }
  return model;
}

/** A training timeline's checkpoint at `step`, in its model's folder. */
export const checkpointFile = (step) => `timeline/step-${step}.safetensors`;

/** Whether `weights` names a checkpoint file as checkpointFile writes it: the only other weights a folder source may name. */
export const isCheckpointFile = (weights) => /^timeline\/step-\d{1,8}\.safetensors$/.test(weights);

/**
 * The place `choice` ({ place, mask }) shows on a model described by `info`: the place named if
 * the model has it, else the one the mask belongs to if it has that, else its first.
 */
export function placeOf({ place, mask }, info) {
  const has = (p) => info.places.some((x) => x.place === p);
  return has(place) ? place : has(PLACE_OF_MASK[mask]) ? PLACE_OF_MASK[mask] : info.places[0].place;
}

/**
 * What the model described by `info` runs for `choice` ({ texts, target, place, mask, scale,
 * off, offMean }) — `off` the heads turned off, by their mean output with `offMean`:
 * the texts as a padded batch at an encoder (or a decoder-only model), or the first with its
 * target at an encoder–decoder's decoder places (no target: the caller finds one). A mask the
 * place cannot run with is left out.
 */
export function requestFor({ texts, target = null, place, mask, scale, off = "", offMean = false }, info) {
  const resolved = placeOf({ place, mask }, info);
  const decoderSide = info.encoderDecoder && resolved !== "encoder_self";
  const request = { texts: decoderSide ? texts.slice(0, 1) : texts, place: resolved, scale };
  if (off) Object.assign(request, { ablate: off }, offMean ? { ablation: "mean" } : {});
  const takes = info.places.find((p) => p.place === resolved).masks ?? masksFor(resolved);
  if (mask && takes.includes(mask)) request.mask = mask;
  if (decoderSide && target !== null) request.targets = [target];
  return request;
}

/**
 * Whether the predictions under a run of `request` can be read from that run — asked to keep its
 * output (`output: true`) — instead of running the model a second time: the model's own mask and
 * scaling, the place predictions are made at (an encoder–decoder's decoder, on its target), and
 * no head's mean taken over more texts than the one predicted at.
 */
export function predictsFromRun(request, info) {
  if (info.fromFile || request.mask || request.scale === false) return false;
  if (info.encoderDecoder && (request.place === "encoder_self" || !request.targets)) return false;
  return request.texts.length === 1 || request.ablation !== "mean";
}
