// The explorer's state, and its round trip through a link so a view can be shared.
//
// Settings go in the query string. The texts go there too while the link stays short; a long
// text goes into the fragment (#z=…), deflated, which the browser never sends to a server, so
// no server refuses the link (HTTP 431). Text too long even for that stays out of the link,
// and `encodeState` says so.

import { validModelId } from "./model-files.js";
import { FOLDERS, FUSIONS, LANGS, MASKS, MAX_TEXT_CHARS, PLACES, PLACE_OF_MASK, SCORES, TOY_PRESETS, flagOf, intOf, masksFor, offKept, offTyped, oneOf, requestFor as requestOf, textsOf, turnsHeadsOff } from "./settings.js";

export { MASKS, MAX_TEXT_CHARS, PLACES };
/** The models a link may name: the toy, the built-in folders, a file, or a Hub id as `hub:owner/name`. */
export const MODELS = ["toy", ...Object.keys(FOLDERS), "file"];

export const DEFAULTS = Object.freeze({
  model: "trained",
  /** A same-origin mirror of the Hub's layout (a path on this site); "" is the Hub itself. */
  hub: "",
  text: "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.",
  text2: "민수가 영희에게 책을 주었다.",
  target: "The animal did not cross the street. The animal was too tired.",
  place: null, // null: the model's first place
  mask: null, // null: the mask the place was trained with
  scale: true,
  preset: "small",
  layers: 2,
  seed: 1,
  layer: null, // null: the head the model suggests for the place, else 0
  head: null,
  row: 0,
  range: "max",
  norm: false, // colour by what each key adds, α_ij · ‖v_j W_O‖ (value-weighted), not by the weights
  find: "previous_token", // the score the heads are coloured by, or "mass"
  from: "", // token positions chosen as queries for the mass ("3,4")
  to: "", // and as keys
  fusion: "mean", // how rollout fuses a layer's heads
  qk: "", // the query–key picture of the example sentences drawn: "layer,head" (from 0)
  off: "", // heads turned off: "1.0,1.3", each optionally after a place ("cross:0.2")
  offMean: false, // turned off by their mean output, not zeros
  step: null, // a checkpoint of the model's training timeline; null: the model as trained
  lang: null, // null: follow the browser
});

const TEXTS = ["text", "text2", "target"];
/** The most bytes a link's fragment may unpack to: three texts at the limit as JSON (a control character takes 6 bytes). */
const MAX_INFLATED = 3 * 6 * MAX_TEXT_CHARS + 1024;
/** Longer queries go to the fragment: servers refuse request lines of a few kilobytes. */
const MAX_QUERY = 1500;
/** Longer fragments are not shared at all. */
const MAX_FRAGMENT = 400_000;

/** A same-origin path such as `/hub-mirror`, or "" (the Hub). Hosts in links are refused. */
export function validHub(hub) {
  return hub === "" || (/^\/[\w\-./]*$/.test(hub) && !hub.startsWith("//") && !hub.includes(".."));
}

/**
 * Whether `model` may come from a link: a built-in model, a Hub id that passes `validModelId`,
 * or a model trained on the page and kept (`kept:` and its 8 hex digits).
 */
export function validModel(model) {
  return MODELS.includes(model) || (model.startsWith("hub:") && validModelId(model.slice(4))) || /^kept:[0-9a-f]{8}$/.test(model);
}

/**
 * State from a query string and fragment; anything missing or invalid falls back to its default.
 * A fragment whose texts cannot be read (damaged, or unpacking past the limit) sets
 * `linkProblem`, so the page can say why it shows its own example instead.
 */
export async function decodeState(search, hash = "") {
  const p = new URLSearchParams(search);
  const s = { ...DEFAULTS };
  const model = p.get("model") ?? "";
  if (validModel(model)) s.model = model;
  // a model the link names that no one could type either: refused as a typed one is, and said
  else if (model) s.refusedModel = model.slice(0, 200);
  if (validHub(p.get("hub") ?? "")) s.hub = p.get("hub") ?? "";
  for (const key of TEXTS) if (p.has(key)) s[key] = p.get(key);
  const z = new URLSearchParams(hash.replace(/^#/, "")).get("z");
  if (z) {
    try {
      const texts = JSON.parse(await inflate(z));
      for (const key of TEXTS) if (typeof texts[key] === "string") s[key] = texts[key];
    } catch {
      s.linkProblem = true; // the texts keep their defaults
    }
  }
  // every setting below reads as the widget's attribute of the same name does (settings.js)
  const read = (key, parse) => (p.has(key) ? parse(p.get(key)) : undefined);
  s.place = read("place", (v) => oneOf(PLACES, v)) ?? s.place;
  s.mask = read("mask", (v) => oneOf(MASKS, v)) ?? s.mask;
  // links from before places existed named only a mask: its place is the one it belongs to
  if (!s.place && s.mask) s.place = PLACE_OF_MASK[s.mask];
  // a mask the place cannot run with (cross-attention with a causal mask) gives way to the place's own
  if (s.place && s.mask && !masksFor(s.place).includes(s.mask)) s.mask = null;
  s.scale = read("scale", flagOf) ?? s.scale;
  s.preset = read("preset", (v) => (Object.hasOwn(TOY_PRESETS, v) ? v : undefined)) ?? s.preset;
  for (const key of ["layers", "seed", "layer", "head", "row", "step"]) s[key] = read(key, (v) => intOf(key, v)) ?? s[key];
  s.range = read("range", (v) => oneOf(["max", "one"], v)) ?? s.range;
  s.norm = read("norm", flagOf) ?? s.norm;
  s.find = read("find", (v) => oneOf([...SCORES, "mass"], v)) ?? s.find;
  for (const key of ["from", "to"]) if (/^\d{1,4}(,\d{1,4}){0,63}$/.test(p.get(key) ?? "")) s[key] = p.get(key);
  s.fusion = read("fusion", (v) => oneOf(FUSIONS, v)) ?? s.fusion;
  if (/^\d{1,2},\d{1,3}$/.test(p.get("qk") ?? "")) s.qk = p.get("qk");
  s.off = read("off", offTyped) ?? s.off;
  s.offMean = read("offMean", flagOf) ?? s.offMean;
  s.lang = read("lang", (v) => oneOf(LANGS, v)) ?? s.lang;
  return s;
}

/**
 * The link of `state`, leaving out what equals the default: `{ search, hash, dropped }`, with
 * `dropped` true when the texts were too long to put in a link at all.
 */
export async function encodeState(state) {
  const p = new URLSearchParams();
  for (const [key, fallback] of Object.entries(DEFAULTS)) {
    const value = state[key];
    if (key === "model" && value === "local") continue; // files on a disk cannot be shared
    if (value === undefined || value === null || value === fallback) continue;
    p.set(key, typeof value === "boolean" ? (value ? "1" : "0") : String(value));
  }
  const query = (params) => (params.toString() ? `?${params}` : "");
  if (query(p).length <= MAX_QUERY) return { search: query(p), hash: "", dropped: false };
  const texts = {};
  for (const key of TEXTS) {
    if (p.has(key)) texts[key] = p.get(key);
    p.delete(key);
  }
  const z = await deflate(JSON.stringify(texts));
  if (z.length > MAX_FRAGMENT) return { search: query(p), hash: "", dropped: true };
  return { search: query(p), hash: `#z=${z}`, dropped: false };
}

/** `text` deflated and written in base64url. */
export async function deflate(text) {
  const stream = new Blob([new TextEncoder().encode(text)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * The inverse of `deflate`; fails on damaged input, and once the output passes `maxBytes`
 * (a few kilobytes of link can unpack to gigabytes).
 */
export async function inflate(z, maxBytes = MAX_INFLATED) {
  const binary = atob(z.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel();
      throw new RangeError(`the link's texts unpack to more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(out);
}

/**
 * What the model runs for `state` (settings.js's `requestFor` of its texts): a padded batch of
 * the texts at an encoder (or a decoder-only model), or one source with its target at an
 * encoder–decoder's decoder places. The link names a mask only as a what-if: the place's own
 * goes unsaid.
 */
export function requestFor(state, info) {
  // heads the model lacks (a link made for another) are left on, and the page says so; the
  // untrained toy turns none off (its build has no ablation), as the page says too
  const off = state.off && turnsHeadsOff(info) && offKept(state.off, info);
  const request = requestOf({ ...state, off, texts: textsOf(state.text, state.text2) }, info);
  if (request.mask === info.places.find((p) => p.place === request.place).mask) delete request.mask;
  return request;
}
