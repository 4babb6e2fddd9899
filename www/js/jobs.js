// The explorer's longer jobs, in the worker beside core.js: the induction probe, a corpus's
// queries and keys, predictions, activation patching and writing text. A page of toy widgets
// never loads this module (worker.js imports it at the first of them); its models and runs are
// the ones core.js keeps (held.js).

import { coded } from "./errors.js";
import { evict, finder, firstHandle, keep, modelAt, runAt, touch } from "./held.js";

/**
 * The induction probe on model `key` ({ place?, length?, seed? }): a run of its own, kept like
 * any other, and { place, causal, length, second, ids, layers, heads, induction [L·H] }.
 */
export function probe(key, { place, length, seed } = {}) {
  const entry = modelAt(key);
  const p = finder(entry, "probe", key).probe(place ?? undefined, length ?? undefined, seed ?? undefined);
  const { run: r, ...found } = p;
  return { ...keep(r, key, entry.pkg), probe: found };
}

// A corpus's vectors stay while a page may ask for a t-SNE of one of its heads: the newest four.
const MAX_CORPORA = 4;
const corpora = new Map(); // id → QkCorpus
let nextCorpus = firstHandle;

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
    return { ...keep(r, key, entry.pkg), generation, msFull };
  } finally {
    writer.free();
  }
}

/** The loaded encoder–decoder model's greedy output for `text`. */
export function generate(key, text, maxNewTokens = 64) {
  return modelAt(key).model.generate(text, maxNewTokens);
}
