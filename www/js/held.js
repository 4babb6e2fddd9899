// The worker's models and runs, by the handles the page holds: kept here, apart from the wasm
// packages, so that core.js (which imports them) and jobs.js (the explorer's longer jobs,
// loaded later) share them, and a lazily loaded chunk never imports a package.

import { coded } from "./errors.js";

export const MAX_MODELS = 4;
const MAX_RUNS = 24;
export const models = new Map(); // key → { model, pkg }, least recently used first
// A run holds its model (in wasm, shared): evicting a model frees only the page's handle, and
// its runs still trace and export; the model's memory goes with its last run.
export const runs = new Map(); // id → { run, key, pkg, info, tokens }, least recently used first
// Handles count on from the time the worker started, a thousand a millisecond: a worker started
// after one that stopped (client.js) never hands out a handle the page still holds from that one.
// Modulo 10⁶ s, so that handles stay below 2³⁰, V8's small integers; two workers' ranges meet
// only if the later one makes as many runs as milliseconds passed, times a thousand, or 10⁹.
export const firstHandle = (Date.now() % 1e6) * 1000 + 1;
let nextRun = firstHandle;

/** The value under `key`, made the most recently used of `map`. */
export function touch(map, key) {
  const value = map.get(key);
  map.delete(key);
  map.set(key, value);
  return value;
}

/** Frees the least recently used values of `map` until it holds `max`. */
export function evict(map, max) {
  while (map.size > max) {
    const [key, value] = map.entries().next().value;
    map.delete(key);
    (value.run ?? value.model ?? value).free();
  }
}

/**
 * Whether a model is loaded under `key` (so its files need not be fetched). A model the map let
 * go while a run of it lives is taken back from that run: the same model, not a second copy.
 */
export function hasModel(key) {
  if (models.has(key)) return true;
  const held = [...runs.values()].find((r) => r.key === key);
  const model = held?.run.model(); // none behind weights read from a file
  if (!model) return false;
  models.set(key, { model, pkg: held.pkg });
  evict(models, MAX_MODELS);
  return models.has(key);
}

/** The model under `key`, or a clear error: a file's weights have none, or the worker let it go. */
export function modelAt(key) {
  if (key.startsWith("file:")) throw coded("this needs the model that computed the weights: a file of attention holds weights and tokens only", "needs_model");
  if (!hasModel(key)) throw coded("the model is not loaded", "model_not_loaded");
  return touch(models, key);
}

/** Run `id`, or `run_freed` when the worker let it go. */
export function runAt(id) {
  if (!runs.has(id)) throw coded("that run has been freed", "run_freed");
  return touch(runs, id);
}

/** Keeps run `r` of model `key` (made by `pkg`) under a new id, with its info and every row's tokens. */
export function keep(r, key, pkg) {
  const id = nextRun++;
  let info;
  const tokens = {};
  try {
    info = r.info();
    for (const p of info.places) tokens[p.place] = Array.from({ length: p.batch }, (_, row) => r.tokens(p.place, row));
  } catch (e) {
    r.free(); // and with it the run's hold on its model
    throw e;
  }
  runs.set(id, { run: r, key: key ?? `file:${id}`, pkg, info, tokens });
  evict(runs, MAX_RUNS);
  return { id, info, tokens };
}

/** The model or run of `entry` when it can find heads' roles (`method`); the toy cannot. */
export function finder(entry, method, key = entry.key) {
  const target = entry.run ?? entry.model;
  if (key.startsWith("toy:") || typeof target[method] !== "function") {
    throw coded("the toy model is untrained: its heads have no roles to find; choose the trained model or a real one", "untrained_heads");
  }
  return target;
}
