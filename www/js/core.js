// The one module that imports the wasm packages. It runs inside the worker (worker.js) and
// keeps every model and run as a handle (held.js), so the weights have one owner: wasm memory
// here. The worker asks for exactly what a view draws; the explorer's longer jobs (jobs.js)
// load later, on the same models and runs.
//
// The toy model needs only the small package (../pkg/); the first real model loads the
// larger one (../pkg-hf/), which has the toy too. A model lives in the package that made it.
// On a cross-origin isolated page the larger one is the threaded build (../pkg-hf-threads/):
// the same API on a pool of workers sharing its memory, as onnxruntime-web does; anywhere
// else, or if its threads do not start, the single-threaded one (compute.js decides, and keeps
// what the page says of it). Each has a twin built with relaxed SIMD (-relaxed: fused
// multiply–add) for browsers that have it.

import initToy, * as toyPkg from "../pkg/headmap.js";
import { coded } from "./errors.js";
import { MAX_MODELS, evict, finder, hasModel, keep, modelAt, models, runAt, runs, touch } from "./held.js";

export { hasModel };

let toyReady = null;
let hfReady = null;

/** How real models are computed here (compute.js): loaded with their package, so never by a page of toy widgets. */
const computing = () => import("./compute.js");

/** The package with real-model support, loaded once, with its memory (for the peak). */
function hf() {
  hfReady ??= computing().then((compute) =>
    compute
      .threaded(() =>
        compute.started(
          ["pkg-hf-threads-relaxed", () => import("../pkg-hf-threads-relaxed/headmap.js")],
          ["pkg-hf-threads", () => import("../pkg-hf-threads/headmap.js")],
        ),
      )
      .then((loaded) => loaded ?? single(compute)),
  );
  return hfReady;
}

async function single(compute) {
  const { pkg, wasm, name } = await compute.started(
    ["pkg-hf-relaxed", () => import("../pkg-hf-relaxed/headmap.js")],
    ["pkg-hf", () => import("../pkg-hf/headmap.js")],
  );
  compute.computing(name);
  return { pkg, memory: wasm.memory };
}

/** The tests' deliberate panic (compute.js's `panic`), in the real-model package. */
export async function panic(where) {
  return (await computing()).panic((await hf()).pkg, where);
}

/** How real models are computed on this page, once their package has loaded. */
export async function computeInfo() {
  return (await computing()).computeInfo(hfReady);
}

async function toy() {
  toyReady ??= initToy().then(() => toyPkg);
  return toyReady;
}

/** Loads the toy package; returns the seeds' example sentences. */
export async function start() {
  const pkg = await toy();
  return { examples: pkg.examples() };
}

/**
 * The model under `key`, made by `make(pkg)` once. `real` models need the larger package; the
 * toy uses whichever package is already there.
 */
async function modelFor(key, real, make) {
  if (hasModel(key)) return touch(models, key);
  const pkg = real || hfReady ? (await hf()).pkg : await toy();
  const entry = { model: make(pkg), pkg };
  models.set(key, entry);
  evict(models, MAX_MODELS);
  return entry;
}

/** The toy Transformer of `settings` ({ preset, seed, layers }); returns its info. */
export async function loadToy(key, settings) {
  const { model } = await modelFor(key, false, (pkg) => pkg.Model.toy(settings));
  return model.info();
}

/**
 * A real model from its files ({ config, weights, tokenizer?, sourceSpm?, vocab? }, or for a
 * sharded checkpoint `index` and `shards` [{ name, bytes }] in place of `weights`).
 */
export async function loadFiles(key, files) {
  const { model } = await modelFor(key, true, (pkg) =>
    pkg.Model.fromFiles(files.config, files.weights ?? new Uint8Array(), files.tokenizer, files.sourceSpm, files.vocab, files.shards, files.index),
  );
  return model.info();
}

/** The real-model package (the trainer's too), loaded once. */
export async function realPackage() {
  return (await hf()).pkg;
}

/** Model `model`, made by `pkg` outside this module (a trainer's), under `key`: the one before under it goes. */
export function adopt(key, model, pkg) {
  forget(key);
  models.set(key, { model, pkg });
  evict(models, MAX_MODELS);
}

/** Lets the model under `key` go (its runs keep it while they live). */
export function forget(key) {
  models.get(key)?.model.free();
  models.delete(key);
}

/** Bytes of the real-model package's memory: it only grows, so this is its peak. */
export async function wasmBytes() {
  return hfReady ? (await hf()).memory.buffer.byteLength : 0;
}

/**
 * Runs `request` ({ texts, targets?, place?, mask?, scale?, ablate?, ablation?, output?, thumbs? }) on the model under `key`. Returns
 * { id, info, tokens }: tokens[place][row] are the row's tokens and validity on both sides.
 */
export function run(key, request) {
  const entry = modelAt(key);
  // the toy-only build turns no head off: its random heads have nothing to find that way
  if (request.ablate && typeof entry.model.predict !== "function") {
    throw coded("the toy model is untrained: its heads have no roles to find; choose the trained model or a real one", "untrained_heads");
  }
  const t0 = performance.now();
  const r = entry.model.run(request);
  const ms = performance.now() - t0;
  return { ...keep(r, key, entry.pkg), ms };
}

/**
 * Weights computed elsewhere — headmap's JSON or a safetensors file of attention (see
 * docs/attention.schema.json) — checked by the core and kept as a run with no model behind it.
 * Returns what `run` returns and the `model` info the views read: the file's places, no model
 * to trace, type into or mask differently.
 */
export async function openFile(name, bytes) {
  const { pkg } = await hf();
  const { id, info, tokens } = keep(pkg.Run.fromFile(name, bytes), null, pkg);
  const places = info.places.map((p) => ({ place: p.place, mask: p.mask, masks: [p.mask], layers: p.layers, heads: p.heads, dK: null }));
  const model = { architecture: info.modelType, trained: true, fromFile: true, name, places, encoderDecoder: places.length > 1, canGenerate: false, maxTokens: null };
  return { id, info, tokens, model, key: `file:${id}` };
}

export function free(id) {
  const entry = runs.get(id);
  if (!entry) return;
  runs.delete(id);
  entry.run.free();
}

/**
 * The pieces of one head a view draws, in one call: its weights [Tq, Tk], mask [Tq, Tk], row
 * entropies and the most each row could have [Tq], and every head's largest weight [L, H].
 */
export function head(id, { place, row, layer, head: h }) {
  return runAt(id).run.view(place, row, layer, h); // a clear error for a place or index that is not there
}

/** The shape of `place` in a run, and which queries of `row` are real (not PAD). */
export function shape(id, place, rowIndex) {
  const { run: r, info, tokens } = runAt(id);
  const p = info.places.find((x) => x.place === place);
  const row = tokens[place]?.[rowIndex];
  if (!p || !row) r.tokens(place, rowIndex); // throws the core's error, naming what there is
  return { tq: p.tq, tk: p.tk, layers: p.layers, heads: p.heads, queryValid: row.queryValid };
}

/** One head max-pooled by the core to `height` x `width` (-1 where every cell is masked). */
export function pooled(id, { place, row, layer, head: h }, height, width) {
  return runAt(id).run.pooled(place, row, layer, h, height, width);
}

/**
 * Every head of one layer, [H, Tq, Tk]: what a view of a whole layer needs, without copying
 * the row's other layers out (a long text in a big model would not fit).
 */
export function layer(id, { place, row, layer: l }) {
  return runAt(id).run.layer(place, row, l);
}

/** Which cells of one layer the mask lets through: Uint8Array [Tq, Tk]. */
export function allowed(id, { place, row, layer: l }) {
  return runAt(id).run.allowed(place, row, l);
}

/**
 * What every head of one layer writes (`sel.head` unused): { norms [H, Tq], shares [H, Tq] },
 * the heads the run turned off writing nothing.
 */
export function writes(id, { place, row, layer: l }) {
  return runAt(id).run.writes(place, row, l);
}

/** ‖v_j W_O^h‖ of every head and key of one layer, [H, Tk]: the value-weighted view's factor. */
export function valueNorms(id, { place, row, layer: l }) {
  return runAt(id).run.valueNorms(place, row, l);
}

/** Every step of one head: { xQ, q, k, v, scores, scaled, masked, weights, output, … }. */
export function trace(id, { place, row, layer, head: h }) {
  return runAt(id).run.trace(place, row, layer, h);
}

/**
 * Heads are found in trained models, by the real-model package: the toy's heads are untrained,
 * so there is nothing to find, and its package leaves the code out (a blog's toy widget stays
 * small).
 */
/** Every score of every head of one row: { layers, heads, scores: { name: Float32Array [L·H] } }. */
export function scores(id, { place, row }, options = {}) {
  return finder(runAt(id), "scores").scores(place, row, options);
}

/** The mean weight each head moves from the `queries` positions to the `keys` positions: [L·H]. */
export function mass(id, { place, row }, queries, keys) {
  return finder(runAt(id), "mass").mass(place, row, Uint32Array.from(queries), Uint32Array.from(keys));
}

/** Attention rollout after every layer: Float32Array [L·T·T]. */
export function rollout(id, { place, row }, fusion = "mean") {
  return finder(runAt(id), "rollout").rollout(place, row, fusion);
}

/** The run as the command line writes it: "json" or "csv" text. */
export function exportRun(id, format) {
  const { run: r } = runAt(id);
  return format === "csv" ? r.csv() : JSON.stringify(r.json());
}

/** Σ_j weights[j] · v[j] for v of shape [weights.length, dV], computed by the core. */
export async function weightedSum(weights, v, dV) {
  const pkg = await toy();
  return pkg.weightedSum(new Float32Array(weights), new Float32Array(v), dV);
}
