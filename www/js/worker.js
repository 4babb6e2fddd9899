// Runs the attention core and paints heatmaps off the main thread, so typing, tapping and
// scrolling never wait for it. One worker serves a whole page: the explorer, or every widget
// of a blog post.
//
// What it answers, and with which arguments, is protocol.js's table of operations: a message
// { id, op, args } names one, its arguments in the table's order (client.js puts them so), and
// core.js's function of that name answers it, or the worker's own (OWN, below).

import * as core from "./core.js";
import { coded } from "./errors.js";
import { lutFor } from "./render/colormap.js";
import { paintHeatmap } from "./render/heatmap.js";

function buffersOf(value, out = []) {
  if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (typeof ImageBitmap !== "undefined" && value instanceof ImageBitmap) out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => buffersOf(v, out));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => buffersOf(v, out));
  return out;
}

/**
 * The files of a model source: { from: "url", base } (a folder served with the page),
 * { from: "hub", id, hub? } (the Hugging Face Hub, or a same-origin mirror of its layout) or
 * { from: "files", files } (picked by the reader). Anything else is refused.
 */
/** Finding and fetching files is for real models: a page of toy widgets never loads it. */
const modelFiles = () => import("./model-files.js");
/** Training is for the explorer's panel: no widget loads it. */
const training = () => import("./training.js");
/** The explorer's longer jobs (jobs.js): a page of toy widgets never loads them. */
const jobs = () => import("./jobs.js");

async function filesOf(source, id) {
  const { HUB, fetchModelFiles, hubUrl, pickFiles, validModelId } = await modelFiles();
  const onProgress = (progress) => self.postMessage({ id, progress });
  if (source.from === "files") return pickFiles(source.files);
  if (source.from === "kept") return pickFiles(await (await training()).keptFiles(source.id));
  if (source.from === "url") {
    // a folder an author names (a widget's model attribute) or the page serves; the explorer
    // lets no link name one
    const base = new URL(source.base, self.location.href);
    if (base.protocol !== "https:" && base.protocol !== "http:") throw coded(`not a model folder: ${base.href}`, "bad_source", {});
    // a timeline's checkpoint stands in for the folder's weights; no other file may
    const { isCheckpointFile } = await import("./settings.js");
    if (source.weights !== undefined && !isCheckpointFile(source.weights)) throw coded(`not a checkpoint: ${source.weights}`, "bad_source", {});
    const named = (f) => (f === "model.safetensors" && source.weights ? source.weights : f);
    return fetchModelFiles((f) => new URL(named(f), base).href, { onProgress, from: "folder" });
  }
  if (source.from === "hub") {
    if (!validModelId(source.id)) throw coded(`\`${source.id}\` is not a model id`, "bad_model_id", { id: source.id });
    const hub = source.hub ? new URL(source.hub, self.location.href) : new URL(HUB);
    if (hub.href.replace(/\/$/, "") !== HUB && hub.origin !== self.location.origin) {
      throw coded(`models are fetched from ${HUB} only, not from ${hub.host}`, "foreign_host", { host: hub.host });
    }
    const cache = self.caches ? await self.caches.open("headmap-models") : null;
    return fetchModelFiles((f) => hubUrl(hub.href, source.id, f), { cache, onProgress });
  }
  throw coded(`unknown model source ${source.from}`, "bad_source", {});
}

const suggested = new Map(); // model key → heads its headmap.json suggests

async function load(key, source, { id }) {
  if (source.from === "toy") return core.loadToy(key, { preset: source.preset, seed: source.seed, layers: source.layers });
  if (!core.hasModel(key)) {
    const { suggestions: extra, ...files } = await filesOf(source, id);
    await core.loadFiles(key, files);
    suggested.set(key, (await modelFiles()).suggestions(extra));
  }
  const info = await core.loadFiles(key, null);
  return {
    ...info,
    suggestions: suggested.get(key) ?? [],
    wasmBytes: await core.wasmBytes(),
    compute: await core.computeInfo(),
  };
}

/** An RGBA bitmap of `width` x `height` device pixels painted by `paint(pixels)`. */
function bitmap(width, height, paint) {
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(width, height);
  paint(image.data);
  ctx.putImageData(image, 0, 0);
  return canvas.transferToImageBitmap();
}

/**
 * One head painted at `cell` device pixels per cell into `width` x `height`: cell by cell from
 * `cells` ({ weights, allowed }) when cells are at least a pixel, else max-pooled one value per
 * pixel — by the core, or here for values of the page's own (`pooledHere`).
 */
function paintHead(id, sel, { width, height, cell }, { max, queryValid, tq, tk, lut, cells, pooledHere = false }) {
  if (cell >= 1) {
    const { weights, allowed } = cells();
    return bitmap(width, height, (px) => paintHeatmap(px, width, height, weights, tq, tk, cell, { allowed, queryValid, max, lut }));
  }
  let pixels;
  if (pooledHere) {
    const { weights, allowed } = cells();
    pixels = maxPool(weights, allowed, tq, tk, height, width);
  } else {
    pixels = core.pooled(id, sel, height, width);
  }
  const rowValid = Array.from({ length: height }, (_, y) => queryValid[Math.floor((y * tq) / height)]);
  return bitmap(width, height, (px) => paintHeatmap(px, width, height, pixels, height, width, 1, { queryValid: rowValid, max, grid: false, lut }));
}

/** [tq, tk] values max-pooled into [height, width] pixels, -1 where every cell is masked: the core's `max_pool` (src/stats.rs). */
function maxPool(values, allowed, tq, tk, height, width) {
  const pixels = new Float32Array(height * width).fill(-1);
  for (let i = 0; i < tq; i++) {
    const row = Math.min(height - 1, Math.floor((i * height) / tq)) * width;
    for (let j = 0; j < tk; j++) {
      const x = row + Math.min(width - 1, Math.floor((j * width) / tk));
      const v = values[i * tk + j];
      if (allowed[i * tk + j] && v > pixels[x]) pixels[x] = v;
    }
  }
  return pixels;
}

/**
 * A head's weights [tq, tk] times ‖v_j W_O^h‖ column by column (`norms` [tk]): what key j adds
 * to query i through the head (value-weighted attention, Kobayashi et al. 2020), and its largest value.
 */
function valueWeighted(weights, norms, tq, tk) {
  const out = new Float32Array(tq * tk);
  let max = 0;
  for (let i = 0; i < tq; i++) {
    for (let j = 0; j < tk; j++) {
      const v = weights[i * tk + j] * norms[j];
      out[i * tk + j] = v;
      if (v > max) max = v;
    }
  }
  return { values: out, max };
}

/**
 * What a view of one head draws: its numbers, and on request the main plot's image and every
 * head of the row as a thumbnail. `range` "one" colours 0–1, else 0 – each head's largest;
 * `colormap` names the colours (viridis, magma, blues); `norm` draws and gives each weight times
 * ‖v_j W_O^h‖ (value-weighted), coloured 0 – each head's largest.
 */
function view(id, sel, plot = null, thumbs = null, range = "max", colormap = "viridis", norm = false) {
  const { tq, tk, queryValid, layers, heads } = core.shape(id, sel.place, sel.row);
  const head = core.head(id, sel);
  if (norm) {
    const norms = core.valueNorms(id, sel).subarray(sel.head * tk, (sel.head + 1) * tk);
    const { values, max } = valueWeighted(head.weights, norms, tq, tk);
    head.weights = values;
    head.maxima = new Float32Array(head.maxima); // the weights' maxima: this head's is the product's
    head.maxima[sel.layer * heads + sel.head] = max;
    head.norm = true;
  }
  const maxOf = (layer, h) => (range === "one" && !norm ? 1 : head.maxima[layer * heads + h] || 1);
  const lut = lutFor(colormap);
  const out = { head };
  if (plot) out.image = paintHead(id, sel, plot, { max: maxOf(sel.layer, sel.head), queryValid, tq, tk, lut, cells: () => head, pooledHere: norm });
  if (thumbs) {
    const cell = thumbs.size / Math.max(tq, tk);
    const size = { width: Math.max(1, Math.round(cell * tk)), height: Math.max(1, Math.round(cell * tq)), cell };
    out.thumbs = [];
    for (let layer = 0; layer < layers; layer++) {
      // a layer's heads in one copy, and its mask once, only where cells are painted one by one
      let all = null;
      const layerCells = () => (all ??= { weights: core.layer(id, { ...sel, layer }), allowed: core.allowed(id, { ...sel, layer }), norms: norm ? core.valueNorms(id, { ...sel, layer }) : null });
      for (let h = 0; h < heads; h++) {
        let cells = () => ({ weights: layerCells().weights.subarray(h * tq * tk, (h + 1) * tq * tk), allowed: layerCells().allowed });
        let max = maxOf(layer, h);
        if (norm) {
          const { weights, allowed, norms } = layerCells();
          const product = valueWeighted(weights.subarray(h * tq * tk, (h + 1) * tq * tk), norms.subarray(h * tk, (h + 1) * tk), tq, tk);
          max = product.max || 1;
          cells = () => ({ weights: product.values, allowed });
        }
        out.thumbs.push(paintHead(id, { ...sel, layer, head: h }, size, { max, queryValid, tq, tk, lut, cells, pooledHere: norm }));
      }
    }
  }
  return out;
}

const cancelled = new Set(); // ids of queryKeys, patch and write requests asked to stop

/** Lets messages in (a cancel) between two sentences of a long job. */
const breathe = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * The operations the worker answers itself (it paints, fetches files or says how far a long job
 * is); every other one is core.js's function of its name. Each takes the message's arguments,
 * then `{ id }`.
 */
const OWN = {
  load,
  view,
  async openFile(name, file) {
    // decoding files is for pages that open them: a page of model widgets never loads it
    const { fileBytes } = await import("./file-bytes.js");
    return core.openFile(name, await fileBytes(name, file));
  },
  async queryKeys(key, corpus, { id }) {
    const progress = (done) => self.postMessage({ id, progress: { done, total: corpus.lines.length } });
    const stopped = async () => (await breathe(), cancelled.has(id));
    try {
      return await (await jobs()).queryKeys(key, corpus, progress, stopped);
    } finally {
      cancelled.delete(id);
    }
  },
  async patch(key, request, { id }) {
    const progress = (done, total) => self.postMessage({ id, progress: { done, total } });
    const stopped = async () => (await breathe(), cancelled.has(id));
    try {
      return await (await jobs()).patch(key, request, progress, stopped);
    } finally {
      cancelled.delete(id);
    }
  },
  async write(key, request, watch, { id }) {
    // each token leaves as it is written, its rows and the cache handed over
    const progress = (step) => self.postMessage({ id, progress: step }, [...new Set(buffersOf(step))]);
    const stopped = async () => (await breathe(), cancelled.has(id));
    try {
      return await (await jobs()).write(key, request, watch, progress, stopped);
    } finally {
      cancelled.delete(id);
    }
  },
  async train(session, settings, until, thumb, from, { id }) {
    const [{ train, trainedModel }, pkg] = await Promise.all([training(), core.realPackage()]);
    // every head on the probe, painted 0–1 as the model is at each scored step
    const progress = async (out) => {
      if (out.scores) {
        const key = `trainer:${session}`;
        core.adopt(key, trainedModel(session), pkg);
        const r = core.run(key, { texts: [out.scores.probe] });
        try {
          out.thumbs = view(r.id, { place: r.info.places[0].place, row: 0, layer: 0, head: 0 }, null, { size: thumb }, "one").thumbs;
        } finally {
          core.free(r.id);
        }
      }
      self.postMessage({ id, progress: out }, [...new Set(buffersOf(out))]);
    };
    const stopped = async () => (await breathe(), cancelled.has(id));
    try {
      return await train(pkg, session, settings, until, from, progress, stopped);
    } finally {
      cancelled.delete(id);
    }
  },
  keep: async (session) => (await training()).keep(session),
  async endTraining(session) {
    (await training()).endTraining(session);
    core.forget(`trainer:${session}`);
  },
  queryKeysTsne: async (corpus, head, { id }) => (await jobs()).queryKeysTsne(corpus, head, (done, total) => self.postMessage({ id, progress: { done, total } })),
};

/**
 * The trap that stopped the core, if one did (out of memory, or a panic: wasm's `unreachable`).
 * The call it cut short left the core's memory half done, so no later call may use it: each is
 * answered with this error, which also tells the page to end this worker and start another.
 */
let stopped = null;

/**
 * Whether `e` leaves the core's memory untrusted: a trap; the stack overflowing inside a call
 * (V8's RangeError, Firefox's InternalError); or wasm-bindgen finding a Rust value still
 * borrowed by a call a trap cut short, as `free()` in a `finally` does after one.
 */
const broken = (e) => e instanceof WebAssembly.RuntimeError || /call stack|recursion|borrowed|recursive use/.test(e?.message);

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  if (op === "cancel") {
    cancelled.add(data.target);
    return;
  }
  try {
    if (stopped) throw stopped;
    const answer = Object.hasOwn(OWN, op) ? OWN[op] : (core[op] ?? (await jobs())[op]);
    if (typeof answer !== "function") throw coded(`unknown operation ${op}`, "bad_operation", {});
    const result = await answer(...data.args, { id });
    self.postMessage({ id, ok: true, result }, [...new Set(buffersOf(result))]);
  } catch (caught) {
    if (broken(caught)) stopped = coded(`the computation stopped (${caught.message}; out of memory?): it starts afresh at the next request`, "computation_stopped", { reason: caught.message });
    const e = stopped ?? caught;
    const error = e instanceof Error ? { message: e.message, code: e.code, details: e.details } : { message: String(e) };
    self.postMessage({ id, ok: false, error, stopped: !!stopped });
  }
};
