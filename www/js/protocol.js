// What the page may ask of the worker, each operation named once: its arguments, in the order
// the worker's function takes them, what it answers, what the page hands over rather than
// copies, and what the client does when the worker let the model or run go. client.js sends
// any of them with `call(op, args)`; worker.js answers each with core.js's function of the same
// name, or its own where it paints or reports progress.
//
// Messages in: { id, op, args: [values in the order below] }; out: { id, ok, result | error:
// { message, code, details } }, and { id, progress } while a long job goes on. Typed arrays and bitmaps in a result leave by
// transfer, not by copy. `sel` is { place, row, layer, head }; `run` a run's id; `key` a
// model's (client.js's sourceKey).

/**
 * @typedef {object} Operation
 * @property {string} args the names of its arguments, in the order the worker's function takes
 *   them (one left out takes that function's default)
 * @property {"model" | "run"} [needs] what the client loads or computes again, and retries, when
 *   the worker answers `model_not_loaded` (the model under `args.key`) or `run_freed` (run `args.run`)
 * @property {boolean} [newest] the answer is a run, the client's newest: it frees the one before,
 *   resolves to null when a newer one was asked meanwhile, and remembers how to make it again
 * @property {(args: object) => Transferable[]} [transfer] buffers of the arguments handed over
 */

/** @type {Record<string, Operation>} each entry's comment says what it answers */
export const OPERATIONS = {
  /** → { examples }: the seeds' example sentences, once the core has loaded */
  start: { args: "" },
  /** → model info. `source`: { from: "toy", preset, seed, layers } | { from: "url", base } | { from: "hub", id, hub? } | { from: "files", files } (handed over) | { from: "kept", id } (a model trained on the page) */
  load: { args: "key source", transfer: ({ source }) => (source.from === "files" ? Object.values(source.files).map((b) => b.buffer) : []) },
  /** → { id, info, tokens, ms }. `request`: { texts, targets?, place?, mask?, scale?, ablate?, ablation?, output?, thumbs? } (`thumbs`: the grid's thumbnails' longer side in device pixels, pooled as a long run's layers run) */
  run: { args: "key request", needs: "model", newest: true },
  /** → { id, info, tokens, model, key }: weights computed elsewhere (docs/attention.schema.json), a run with no model. `file`: { bytes } | { url } | { base64, encoding } */
  openFile: { args: "name file", newest: true },
  /** → { head, image?, thumbs? }: one head's numbers, and on request the plot's bitmap (`plot`: { width, height, cell }) and every head's thumbnail (`thumbs`: { size }); `range` "one" colours 0–1, else "max" 0 – each head's largest; `colormap` viridis, magma or blues; `norm` true: every weight α_ij times ‖v_j W_O^h‖, what key j adds (value-weighted) */
  view: { args: "run sel plot thumbs range colormap norm", needs: "run" },
  /** → { norms [H, Tq], shares [H, Tq] }: what every head of one layer writes, ‖z_h W_O^h‖ and its share of the layer's write (`sel.head` unused) */
  writes: { args: "run sel", needs: "run" },
  /** → Float32Array [H, Tq, Tk]: every head of one layer (`sel.head` unused) */
  layer: { args: "run sel", needs: "run" },
  /** → every step of one head: { xQ, q, k, v, scores, scaled, masked, weights, output, … } */
  trace: { args: "run sel", needs: "run" },
  /** → { layers, heads, scores: { name: Float32Array [L·H] } }: every score of every head of one row */
  scores: { args: "run sel options", needs: "run" },
  /** → Float32Array [L·H]: the mean weight each head moves from the `queries` positions to the `keys` positions */
  mass: { args: "run sel queries keys", needs: "run" },
  /** → Float32Array [L·T·T]: attention rollout after every layer, a layer's heads fused by `fusion` */
  rollout: { args: "run sel fusion", needs: "run" },
  /** → "json" or "csv" text: the run as the command line writes it */
  exportRun: { args: "run format", needs: "run" },
  /** → nothing: the worker lets run `run` go (client.free also forgets how to make it again) */
  free: { args: "run" },
  /** → { id, info, tokens, probe }: the induction probe, a run of its own the caller frees. `options`: { place?, length?, seed? } */
  probe: { args: "key options", needs: "model" },
  /** → { id, heads, pictures, sentences }: every head's queries and keys of `corpus` ({ lines, place, layer }) in one joint embedding per head; progress per sentence; a signal stops it */
  queryKeys: { args: "key corpus", needs: "model" },
  /** → Float32Array [(Nq+Nk)·2]: t-SNE of head `head` of corpus `corpus` (a queryKeys id); progress per step */
  queryKeysTsne: { args: "corpus head" },
  /** → nothing: corpus `corpus`'s vectors go */
  freeQueryKeys: { args: "corpus" },
  /** → the predictions document (`headmap predict`'s): the top k at every position, the lens on request, heads off. `request`: { texts, targets?, topK?, lens?, ablate?, ablation? } */
  predict: { args: "key request", needs: "model" },
  /** → the same document for batch row `row` of run `run`, read from the output the run kept (a run asked with `output: true`), `topK` each: no second run of the model */
  runPredictions: { args: "run row topK", needs: "run" },
  /** → the patching document (`headmap patch`'s): every head's share of the clean logit difference; progress per layer; a signal stops it. `request`: { clean, corrupt, target?, answer, wrong, position?, place? } */
  patch: { args: "key request", needs: "model" },
  /** → { id, info, tokens, generation }: text the model writes token by token over its KV cache, the whole text's run (a run of its own the caller frees) and the document `headmap generate` writes; progress per token: { token, rows, cross, kept, cacheBytes, ms }; a signal stops it, keeping what was written. `request`: { prompt, maxNewTokens?, temperature?, topK?, topP?, seed?, ablate?, ablation? }; `watch`: { layer, head } whose cache each token reports */
  write: { args: "key request watch", needs: "model" },
  /** → text: an encoder–decoder's greedy output for `text`, up to `maxNewTokens` (64) */
  generate: { args: "key text maxNewTokens", needs: "model" },
  /** → { step }: session `session`'s model trained up to step `until`, its trainer made from `settings` (the wasm Trainer's) the first time; progress every few dozen steps: { step, reports: [{ step, loss, copyAccuracy }], ms, scores?, thumbs? } — every head's scores on the probe and its heatmap (`thumb` device pixels, coloured 0–1) at step 0 and every 50 steps; a signal pauses it between two chunks (the trainer stays). `from`: the steps the page has drawn; a session the worker no longer has (it started afresh) with `from` above 0 rejects `training_lost` */
  train: { args: "session settings until thumb from" },
  /** → { id, step, files }: session `session`'s model now, kept as a folder (config.json, model.safetensors, tokenizer.json) that `load` opens as { from: "kept", id } */
  keep: { args: "session" },
  /** → nothing: session `session`'s trainer goes */
  endTraining: { args: "session" },
  /** → Float32Array [dV]: Σ_j weights[j] · v[j] for v of shape [weights.length, dV] */
  weightedSum: { args: "weights v dV" },
  /** The tests' deliberate panic. `where` "thread" (or "abort", as running out of memory aborts): → true (the threaded build panics on a pool thread) or false; else it panics on the worker's own thread */
  panic: { args: "where" },
};
// `cancel { target }`, sent by the client when a call's signal aborts, is no operation of its
// own: it stops a queryKeys between two sentences, a patch between two layers' heads (which
// then reject `cancelled`).
