// The one module that imports the wasm packages. It runs inside the worker (worker.js) and
// keeps every model and run as a handle, so the weights have one owner: wasm memory here.
// The worker asks for exactly what a view draws.
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

/**
 * The tests' deliberate panic: on a pool thread (`where` "thread"; false in a build without
 * threads), else on the worker's own thread.
 */
export async function panic(where) {
  const { pkg } = await hf();
  if (where !== "thread") pkg.panicHere();
  if (!pkg.panicOnAThread) return false;
  pkg.panicOnAThread();
  return true;
}

/** How real models are computed on this page, once their package has loaded. */
export async function computeInfo() {
  return (await computing()).computeInfo(hfReady);
}

async function toy() {
  toyReady ??= initToy().then(() => toyPkg);
  return toyReady;
}

const MAX_MODELS = 4;
const MAX_RUNS = 24;
const models = new Map(); // key → { model, pkg }, least recently used first
// A run holds its model (in wasm, shared): evicting a model frees only the page's handle, and
// its runs still trace and export; the model's memory goes with its last run.
const runs = new Map(); // id → { run, key, pkg, info, tokens }, least recently used first
// Handles count on from the time the worker started, a thousand a millisecond: a worker started
// after one that stopped (client.js) never hands out a handle the page still holds from that one.
const firstHandle = Date.now() * 1000;
let nextRun = firstHandle;

function touch(map, key) {
  const value = map.get(key);
  map.delete(key);
  map.set(key, value);
  return value;
}

function evict(map, max) {
  while (map.size > max) {
    const [key, value] = map.entries().next().value;
    map.delete(key);
    (value.run ?? value.model ?? value).free();
  }
}

/** Loads the toy package; returns the seeds' example sentences. */
export async function start() {
  const pkg = await toy();
  return { examples: pkg.examples() };
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

function modelAt(key) {
  if (key.startsWith("file:")) throw coded("this needs the model that computed the weights: a file of attention holds weights and tokens only", "needs_model");
  if (!hasModel(key)) throw coded("the model is not loaded", "model_not_loaded");
  return touch(models, key);
}

function runAt(id) {
  if (!runs.has(id)) throw coded("that run has been freed", "run_freed");
  return touch(runs, id);
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

/** Keeps run `r` of model `key` (made by `pkg`) under a new id, with its info and every row's tokens. */
function keep(r, key, pkg) {
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
function finder(entry, method, key = entry.key) {
  const target = entry.run ?? entry.model;
  if (key.startsWith("toy:") || typeof target[method] !== "function") {
    throw coded("the toy model is untrained: its heads have no roles to find; choose the trained model or a real one", "untrained_heads");
  }
  return target;
}

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

/**
 * The induction probe on model `key` ({ place?, length?, seed? }): a run of its own, kept like
 * any other, and { place, causal, length, second, ids, layers, heads, induction [L·H] }.
 */
export function probe(key, { place, length, seed } = {}) {
  const entry = modelAt(key);
  const p = finder(entry, "probe", key).probe(place ?? undefined, length ?? undefined, seed ?? undefined);
  const { run: r, ...found } = p;
  const id = nextRun++;
  const info = r.info();
  const tokens = {};
  for (const pl of info.places) tokens[pl.place] = [r.tokens(pl.place, 0)];
  runs.set(id, { run: r, key, pkg: entry.pkg, info, tokens });
  evict(runs, MAX_RUNS);
  return { id, info, tokens, probe: found };
}

/**
 * Queries and keys of every head of `layer` at `place` over `lines` (one sentence each; a
 * tab splits an encoder–decoder's source from its target), in one joint embedding per head
 * (src/qk): { heads, sentences: [{ queries: [token], keys: [token], queryPositions,
 * keyPositions }], pictures: [{ queries, keys, coords, norms, explained, correlation, scale }] }.
 * Each sentence runs alone (no padding); `progress(done)` after each, and `stopped()` is asked
 * between them. The vectors live only in here: what leaves is two numbers per token.
 */
export async function queryKeys(key, { lines, place, layer }, progress, stopped) {
  const entry = modelAt(key);
  const Corpus = entry.pkg.QkCorpus;
  if (key.startsWith("toy:") || typeof Corpus !== "function") {
    throw coded("the toy model is untrained: its heads have no roles to find; choose the trained model or a real one", "untrained_heads");
  }
  const { sentences: maxSentences } = Corpus.limits();
  if (!lines.length) throw coded("the corpus has no sentence: give at least one line of text", "empty_corpus");
  if (lines.length > maxSentences) {
    throw coded(`the corpus has ${lines.length} sentences: at most ${maxSentences} are drawn at once`, "too_many_sentences", { sentences: lines.length, max: maxSentences });
  }
  const corpus = new Corpus();
  const sentences = [];
  let kept = false;
  try {
    for (const [i, line] of lines.entries()) {
      if (await stopped()) throw coded("stopped", "cancelled");
      const [text, target] = line.split("\t");
      // the layer drawn is the last one computed
      const request = { texts: [text], place, throughLayer: layer, ...(target?.trim() ? { targets: [target] } : {}) };
      const r = entry.model.run(request);
      try {
        const tokens = r.tokens(place, 0);
        corpus.add(r, place, 0, layer);
        sentences.push(tokens);
      } finally {
        r.free();
      }
      progress(i + 1);
    }
    const where = corpus.sentences();
    const pictures = Array.from({ length: corpus.heads() }, (_, h) => corpus.picture(h));
    const label = (t) => ({ label: t.label, kind: t.kind, text: t.text });
    const id = nextCorpus++;
    corpora.set(id, corpus);
    evict(corpora, MAX_CORPORA);
    kept = true;
    return {
      id,
      heads: corpus.heads(),
      pictures,
      sentences: where.map((w, i) => ({
        queryPositions: w.queryPositions,
        keyPositions: w.keyPositions,
        queries: w.queryPositions.map((p) => label(sentences[i].queries[p])),
        keys: w.keyPositions.map((p) => label(sentences[i].keys[p])),
      })),
    };
  } finally {
    if (!kept) corpus.free();
  }
}

// A corpus's vectors stay while a page may ask for a t-SNE of one of its heads: the newest four.
const MAX_CORPORA = 4;
const corpora = new Map(); // id → QkCorpus
let nextCorpus = firstHandle;

/** t-SNE of head `head` of corpus `id`: Float32Array [(Nq+Nk)·2]; `progress(step, steps)`. */
export function queryKeysTsne(id, head, progress) {
  if (!corpora.has(id)) throw coded("that corpus has been let go: draw it again", "run_freed");
  return touch(corpora, id).tsne(head, progress);
}

/** Lets corpus `id`'s vectors go. */
export function freeQueryKeys(id) {
  corpora.get(id)?.free();
  corpora.delete(id);
}

/** The toy-only build's answer to anything that needs an output head. */
const toyHasNoHead = () =>
  coded("toy has no output head: the toy model is untrained and predicts nothing; choose a trained model", "no_output_head", { architecture: "toy", missing: "an output head" });

/**
 * What the model predicts at every position (the document `headmap predict` writes):
 * `request` { texts, targets?, topK?, lens?, ablate?, ablation? }. The toy has no head.
 */
export function predict(key, request) {
  const { model } = modelAt(key);
  if (typeof model.predict !== "function") {
    throw toyHasNoHead();
  }
  return model.predict(request);
}

/**
 * What the model predicts at every position of batch row `row` of run `id`, from the output the
 * run kept (it was asked with `output: true`): `predict`'s document for that row, without a
 * second run. The toy has no head.
 */
export function runPredictions(id, row, topK = 5) {
  const { run: r } = runAt(id);
  if (typeof r.predictions !== "function") {
    throw toyHasNoHead();
  }
  return r.predictions(row, topK);
}

/**
 * Activation patching of every head (the document `headmap patch` writes): `request` { clean,
 * corrupt, target?, answer, wrong, position?, place? }; `progress(done, total)` after each
 * layer's worth of heads, and `stopped()` asked between them (a stop rejects `cancelled`).
 */
export async function patch(key, request, progress, stopped) {
  const { model } = modelAt(key);
  if (typeof model.patcher !== "function") {
    throw toyHasNoHead();
  }
  const patcher = model.patcher(request);
  try {
    const total = patcher.total();
    const heads = Math.max(1, total / Math.max(1, patcher.result().map.length));
    while (patcher.step(heads)) {
      progress(patcher.done(), total);
      if (await stopped()) throw coded("stopped", "cancelled");
    }
    progress(total, total);
    return patcher.result();
  } finally {
    patcher.free();
  }
}

/**
 * Text the model writes, token by token over its KV cache: `request` { prompt, maxNewTokens?,
 * temperature?, topK?, topP?, seed?, ablate?, ablation? }, `watch` { layer, head }: the cache
 * kept for that head is reported with each token. `progress(token)` after each with { token:
 * { id, token, p, index, keys }, rows (Float32Array [L, H, keys], what the position that wrote
 * it read), cross (the same over the source, in an encoder–decoder), kept { keys, values, dK },
 * read (the tokens the decoder has read), source (an encoder–decoder's prompt), cacheBytes, ms
 * (this step's time) }; `stopped()` is asked between two tokens, and a stop keeps
 * what was written. Answers { id, info, tokens, generation, msFull }: the whole text's run, a run
 * of its own the caller frees, the document `headmap generate` writes, and the time that run
 * took (the whole text at once, as each step would without the cache).
 */
export async function write(key, request, watch, progress, stopped) {
  const entry = modelAt(key);
  const { model } = entry;
  if (typeof model.writer !== "function") {
    throw coded("toy cannot write text of its own: the toy model is untrained; choose a trained model", "cannot_generate", { architecture: "toy" });
  }
  const writer = model.writer(request);
  try {
    const encoderDecoder = model.info().places.some((p) => p.place === "cross");
    while (!writer.done) {
      const started = performance.now();
      const token = writer.step();
      const ms = performance.now() - started;
      if (!token) break;
      // handed over: the page that draws them holds the only copy
      const { decoder: rows, cross } = writer.take(token.index);
      const kept = watch ? writer.kept(watch.layer, watch.head) : null;
      progress({ token, rows, cross: encoderDecoder ? cross : null, kept, read: writer.read(), source: encoderDecoder ? writer.prompt() : null, cacheBytes: writer.cacheBytes(), ms });
      if (await stopped()) break;
    }
    const generation = writer.result();
    // the whole text at once: what each step would cost again without the cache
    const started = performance.now();
    const r = writer.run();
    const msFull = performance.now() - started;
    const id = nextRun++;
    const info = r.info();
    const tokens = {};
    for (const pl of info.places) tokens[pl.place] = [r.tokens(pl.place, 0)];
    runs.set(id, { run: r, key, pkg: entry.pkg, info, tokens });
    evict(runs, MAX_RUNS);
    return { id, info, tokens, generation, msFull };
  } finally {
    writer.free();
  }
}

/** The loaded encoder–decoder model's greedy output for `text`. */
export function generate(key, text, maxNewTokens = 64) {
  return modelAt(key).model.generate(text, maxNewTokens);
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
