// Training in the worker: the trainers of the page's "heads that form" panel, one per session
// (a reset starts another), a few dozen steps between two messages so the page redraws and a
// pause lands between them; and the models kept from them, whose files stay in the worker (and
// in the browser's cache, so a link to one opens in another tab of this site). It imports no
// core: the worker hands it the wasm package, so the widget's bundle keeps one copy of the core
// (and its path to the package) in the worker alone.

import { coded } from "./errors.js";

/** Every head is scored this often, as `headmap train` scores it (training.json's scores). */
export const SCORE_EVERY = 50;
/** Steps between two messages: a few dozen, a fraction of a second. */
const CHUNK = 25;
/** Kept models the cache holds; the oldest goes. */
const MAX_KEPT = 8;
const KEPT_CACHE = "headmap-kept";

const trainers = new Map(); // session → Trainer
const kept = new Map(); // id → { "config.json": bytes, … }

/**
 * Trains session `session` up to step `until`, making its trainer from `settings` (the wasm
 * Trainer's, of package `pkg`) the first time: the first time means `from` 0, the steps the
 * page has drawn, and a session this worker does not have from step `from` on is lost (the
 * worker before it stopped). `progress({ step, reports, ms, scores? })` after every chunk —
 * `scores` (every head's, on the probe) at step 0 and every SCORE_EVERY steps — and `stopped()`
 * is asked between two chunks. Answers { step }. A diverging loss rejects `diverged` and the
 * trainer keeps the weights before it.
 */
export async function train(pkg, session, settings, until, from, progress, stopped) {
  let trainer = trainers.get(session);
  if (!trainer && from > 0) throw coded(`the model trained to step ${from} was lost when the computation started afresh: train it again`, "training_lost", { step: from });
  if (!trainer) {
    trainer = new pkg.Trainer(settings);
    trainers.set(session, trainer);
    await progress({ step: 0, reports: [], ms: 0, scores: trainer.scores() });
  }
  let step = trainer.step;
  // a reset (endTraining) between two chunks ends the loop: its trainer is gone
  while (step < until && trainers.get(session) === trainer) {
    const count = Math.min(CHUNK, until - step, SCORE_EVERY - (step % SCORE_EVERY));
    const started = performance.now();
    const reports = trainer.steps(count);
    const ms = performance.now() - started;
    step = trainer.step;
    const scores = step % SCORE_EVERY === 0 ? trainer.scores() : null;
    await progress({ step, reports, ms, ...(scores && { scores }) });
    if (await stopped()) break;
  }
  return { step };
}

/** The model session `session` has now (a wasm Model). */
export function trainedModel(session) {
  return trainerOf(session).model();
}

/** Lets session `session`'s trainer go. */
export function endTraining(session) {
  trainers.get(session)?.free();
  trainers.delete(session);
}

function trainerOf(session) {
  const trainer = trainers.get(session);
  if (!trainer) throw coded("nothing is being trained: start training first", "not_training");
  return trainer;
}

/**
 * Keeps session `session`'s model as it is now: its files (a GPT-2 folder) under a new id, in
 * the worker and in the browser's cache. Answers { id, step, files }.
 */
export async function keep(session) {
  const trainer = trainerOf(session);
  const files = trainer.files();
  const id = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, "0")).join("");
  kept.set(id, files);
  await cacheKept(id, files).catch(() => {}); // a page without a cache keeps them while it is open
  const copies = Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, bytes.slice()]));
  return { id, step: trainer.step, files: copies };
}

const keptUrl = (id, name) => new URL(`kept/${id}/${name}`, self.location.href).href;

async function cacheKept(id, files) {
  if (!self.caches) return;
  const cache = await self.caches.open(KEPT_CACHE);
  for (const [name, bytes] of Object.entries(files)) await cache.put(keptUrl(id, name), new Response(bytes));
  // the oldest kept models go: a cache lists its requests in the order they were put
  const ids = [...new Set((await cache.keys()).map((r) => r.url.split("/").at(-2)))];
  for (const old of ids.slice(0, Math.max(0, ids.length - MAX_KEPT))) {
    for (const request of await cache.keys()) if (request.url.split("/").at(-2) === old) await cache.delete(request);
  }
}

/** The files of kept model `id` by name, from the worker or the cache; `kept_gone` if neither has them. */
export async function keptFiles(id) {
  if (!/^[0-9a-f]{8}$/.test(id)) throw coded(`\`${id}\` is not a kept model`, "kept_gone", { id });
  if (kept.has(id)) return kept.get(id);
  const cache = self.caches ? await self.caches.open(KEPT_CACHE) : null;
  const files = {};
  for (const name of ["config.json", "model.safetensors", "tokenizer.json"]) {
    const response = await cache?.match(keptUrl(id, name));
    if (!response) throw coded("the model trained on the page is no longer kept by this browser: train it again", "kept_gone", { id });
    files[name] = new Uint8Array(await response.arrayBuffer());
  }
  kept.set(id, files);
  return files;
}
