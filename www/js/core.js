// The one module that imports the wasm packages. It runs inside the worker (worker.js) and
// turns wasm results into plain objects of typed arrays that can be transferred.
// The toy model comes from the small package (../pkg/); a real model loads the larger one
// (../pkg-hf/) on first use.

import init, { Session, examples, limits, weightedSum as wasmWeightedSum } from "../pkg/headmap.js";

let ready = null;
let session = null;
let sessionKey = "";
let lastRun = null;

let hf = null; // the real-model package, once loaded
let hfMemory = null; // its WebAssembly.Memory: its size only grows, so it is also the peak
let model = null; // { session: ModelSession, info, run: ModelRun | null }

/** Loads the toy wasm module once; returns what the page needs before the first run. */
export async function start() {
  ready ??= init();
  await ready;
  return { examples: examples(), limits: limits() };
}

function sessionFor(settings) {
  const key = JSON.stringify(settings);
  if (key !== sessionKey) {
    lastRun?.free();
    lastRun = null;
    session?.free();
    session = null;
    session = new Session(settings);
    sessionKey = key;
  }
  return session;
}

// The largest weight of each head, found here in the worker so a redraw need not scan them.
function headMaxima(w, heads) {
  const size = w.length / heads;
  const out = new Float32Array(heads);
  for (let h = 0; h < heads; h++) {
    let m = 0;
    for (let k = h * size, end = k + size; k < end; k++) if (w[k] > m) m = w[k];
    out[h] = m;
  }
  return out;
}

function collect(meta, weightsOf, entropiesOf, allowedOf) {
  const weights = [];
  const entropies = [];
  const maxima = [];
  const allowed = [];
  for (let row = 0; row < meta.batch; row++) {
    weights.push(Array.from({ length: meta.layers }, (_, layer) => weightsOf(row, layer)));
    entropies.push(Array.from({ length: meta.layers }, (_, layer) => entropiesOf(row, layer)));
    maxima.push(weights[row].map((w) => headMaxima(w, meta.heads)));
    allowed.push(allowedOf(row));
  }
  return { weights, entropies, maxima, allowed };
}

/**
 * Runs `request` on the toy model of `settings` ({ preset, layers, seed }): request is
 * { texts, targets?, mask, scale }. Returns { meta, config, weights, entropies, allowed, ms }
 * where weights[row][layer] is a Float32Array [H, Tq, Tk], entropies[row][layer] a
 * Float32Array [H, Tq] of row entropies in bits, and allowed[row] a Uint8Array [Tq, Tk].
 */
export async function compute(settings, request) {
  await start();
  const s = sessionFor(settings);
  const t0 = performance.now();
  const run = s.run(request);
  lastRun?.free();
  lastRun = run;
  const meta = run.meta();
  const arrays = collect(meta, (r, l) => run.weights(r, l), (r, l) => run.entropies(r, l), (r) => run.allowed(r));
  return { meta, config: s.config(), ...arrays, ms: performance.now() - t0 };
}

/**
 * Loads a real model from its files ({ config, weights, tokenizer?, sourceSpm?, vocab? },
 * each a Uint8Array). Returns its info: { modelType, kinds, encoderDecoder, maxTokens }.
 */
export async function loadModel(files) {
  if (!hf) {
    hf = await import("../pkg-hf/headmap.js");
    hfMemory = (await hf.default()).memory;
  }
  model?.run?.free();
  model?.session.free();
  model = null;
  const session = new hf.ModelSession(files.config, files.weights, files.tokenizer, files.sourceSpm, files.vocab);
  model = { session, info: session.info(), run: null };
  return { ...model.info, wasmBytes: hfMemory.buffer.byteLength };
}

/** Runs the loaded real model; `kind` picks the place shown ("padding", "causal", "cross"). */
export function computeModel(request, kind) {
  if (!model) throw new Error("no model is loaded");
  const t0 = performance.now();
  const run = model.session.run(request);
  model.run?.free();
  model.run = run;
  const meta = run.meta(kind);
  const arrays = collect(meta, (r, l) => run.weights(kind, r, l), (r, l) => run.entropies(kind, r, l), (r) => run.allowed(kind, r));
  const h = meta.heads;
  return { meta, config: { ...model.info, heads: h }, ...arrays, ms: performance.now() - t0, wasmBytes: hfMemory.buffer.byteLength };
}

/** One head of the last run max-pooled to [height, width] pixels (-1 where all is masked). */
export function pooled(row, layer, head, height, width, kind) {
  if (kind && model?.run) return model.run.pooled(kind, row, layer, head, height, width);
  if (!lastRun) throw new Error("nothing has been computed yet");
  return lastRun.pooled(row, layer, head, height, width);
}

/** The loaded encoder–decoder model's greedy output for `text`. */
export function generate(text, maxNewTokens) {
  if (!model) throw new Error("no model is loaded");
  return model.session.generate(text, maxNewTokens);
}

/** Every step of one head of the last run: { xQ, q, k, v, scores, scaled, masked, weights, output, … }. */
export function trace(row, layer, head, kind) {
  if (kind && model?.run) return model.session.trace(model.run, kind, row, layer, head);
  if (!session || !lastRun) throw new Error("nothing has been computed yet");
  return session.trace(lastRun, row, layer, head);
}

/** Σ_j weights[j] · v[j] for v of shape [weights.length, dV], computed by the core. */
export async function weightedSum(weights, v, dV) {
  await start();
  return wasmWeightedSum(new Float32Array(weights), new Float32Array(v), dV);
}
