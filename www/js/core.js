// The one module that imports the wasm package. It runs inside the worker (worker.js) and
// turns wasm results into plain objects of typed arrays that can be transferred.

import init, { Session, examples, limits, weightedSum as wasmWeightedSum } from "../pkg/headmap.js";

let ready = null;
let session = null;
let sessionKey = "";
let lastRun = null;

/** Loads the wasm module once; returns what the page needs before the first run. */
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

/**
 * Runs `request` ({ texts, targets?, mask, scale }) on the toy model of `settings`
 * ({ preset, layers, seed }). Returns { meta, config, weights, entropies, allowed, ms } where
 * weights[row][layer] is a Float32Array [H, Tq, Tk], entropies[row][layer] a Float32Array
 * [H, Tq] of row entropies in bits, and allowed[row] a Uint8Array [Tq, Tk].
 */
export async function compute(settings, request) {
  await start();
  const s = sessionFor(settings);
  const t0 = performance.now();
  const run = s.run(request);
  lastRun?.free();
  lastRun = run;
  const meta = run.meta();
  const weights = [];
  const entropies = [];
  const allowed = [];
  for (let row = 0; row < meta.batch; row++) {
    weights.push(Array.from({ length: meta.layers }, (_, layer) => run.weights(row, layer)));
    entropies.push(Array.from({ length: meta.layers }, (_, layer) => run.entropies(row, layer)));
    allowed.push(run.allowed(row));
  }
  return { meta, config: s.config(), weights, entropies, allowed, ms: performance.now() - t0 };
}

/** Every step of one head of the last run: { xQ, q, k, v, scores, scaled, masked, weights, output, … }. */
export function trace(row, layer, head) {
  if (!session || !lastRun) throw new Error("nothing has been computed yet");
  return session.trace(lastRun, row, layer, head);
}

/** Σ_j weights[j] · v[j] for v of shape [weights.length, dV], computed by the core. */
export async function weightedSum(weights, v, dV) {
  await start();
  return wasmWeightedSum(new Float32Array(weights), new Float32Array(v), dV);
}
