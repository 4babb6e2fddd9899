// Runs the attention core and paints heatmaps off the main thread, so typing, tapping and
// scrolling never wait for it. One worker serves a whole page: the explorer, or every widget
// of a blog post.
//
// Messages in: { id, op, ... }; out: { id, ok, result | error: { message, code, details } },
// and { id, progress } while a model's files download. Typed arrays and bitmaps leave by
// transfer, not by copy.
//
//   start                                → { examples }
//   load { key, source }                 → model info (source: see modelSource below)
//   run { key, request }                 → { id, info, tokens, ms }
//   openFile { name, file: { bytes } | { base64, encoding } } → { id, info, tokens, model, key }:
//     weights computed elsewhere (docs/attention.schema.json), a run with no model
//   view { run, sel, plot?, thumbs?, range, colormap } → { head, image?, thumbs? }
//   layer { run, sel } (every head, [H, Tq, Tk]) · trace { run, sel } · export { run, format } · free { run }
//   generate { key, text, maxNewTokens } · weightedSum { weights, v, dV }
//   panicOnAThread → true (the threaded build panics on a pool thread: its test) or false
//   queryKeys { key, corpus: { lines, place, layer } } → the joint embedding of every head
//     (progress: sentences done; kept under its id) · cancel { target } stops a queryKeys between
//     two sentences · queryKeysTsne { corpus, head } (progress: steps) · freeQueryKeys { corpus }
// `sel` is { place, row, layer, head }.

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

async function filesOf(source, id) {
  const { HUB, fetchModelFiles, hubUrl, pickFiles, validModelId } = await modelFiles();
  const onProgress = (progress) => self.postMessage({ id, progress });
  if (source.from === "files") return pickFiles(source.files);
  if (source.from === "url") {
    // a folder an author names (a widget's model attribute) or the page serves; the explorer
    // lets no link name one
    const base = new URL(source.base, self.location.href);
    if (base.protocol !== "https:" && base.protocol !== "http:") throw coded(`not a model folder: ${base.href}`, "bad_source", {});
    return fetchModelFiles((f) => new URL(f, base).href, { onProgress });
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

async function load(id, key, source) {
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
 * `cells` ({ weights, allowed }) when cells are at least a pixel, else from the core's
 * max-pooling, one value per pixel.
 */
function paintHead(id, sel, { width, height, cell }, { max, queryValid, tq, tk, lut, cells }) {
  if (cell >= 1) {
    const { weights, allowed } = cells();
    return bitmap(width, height, (px) => paintHeatmap(px, width, height, weights, tq, tk, cell, { allowed, queryValid, max, lut }));
  }
  const pixels = core.pooled(id, sel, height, width);
  const rowValid = Array.from({ length: height }, (_, y) => queryValid[Math.floor((y * tq) / height)]);
  return bitmap(width, height, (px) => paintHeatmap(px, width, height, pixels, height, width, 1, { queryValid: rowValid, max, grid: false, lut }));
}

/**
 * What a view of one head draws: its numbers, and on request the main plot's image and every
 * head of the row as a thumbnail. `range` "one" colours 0–1, else 0 – each head's largest;
 * `colormap` names the colours (viridis, magma, blues).
 */
function view(id, sel, plot, thumbs, range, colormap) {
  const { tq, tk, queryValid, layers, heads } = core.shape(id, sel.place, sel.row);
  const head = core.head(id, sel);
  const maxOf = (layer, h) => (range === "one" ? 1 : head.maxima[layer * heads + h] || 1);
  const lut = lutFor(colormap);
  const out = { head };
  if (plot) out.image = paintHead(id, sel, plot, { max: maxOf(sel.layer, sel.head), queryValid, tq, tk, lut, cells: () => head });
  if (thumbs) {
    const cell = thumbs.size / Math.max(tq, tk);
    const size = { width: Math.max(1, Math.round(cell * tk)), height: Math.max(1, Math.round(cell * tq)), cell };
    out.thumbs = [];
    for (let layer = 0; layer < layers; layer++) {
      // a layer's heads in one copy, and its mask once, only where cells are painted one by one
      let all = null;
      const cells = (h) => () => {
        all ??= { weights: core.layer(id, { ...sel, layer }), allowed: core.allowed(id, { ...sel, layer }) };
        return { weights: all.weights.subarray(h * tq * tk, (h + 1) * tq * tk), allowed: all.allowed };
      };
      for (let h = 0; h < heads; h++) {
        out.thumbs.push(paintHead(id, { ...sel, layer, head: h }, size, { max: maxOf(layer, h), queryValid, tq, tk, lut, cells: cells(h) }));
      }
    }
  }
  return out;
}

const cancelled = new Set(); // ids of queryKeys requests asked to stop

/** Lets messages in (a cancel) between two sentences of a long job. */
const breathe = () => new Promise((resolve) => setTimeout(resolve, 0));

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  if (op === "cancel") {
    cancelled.add(data.target);
    return;
  }
  try {
    let result;
    if (op === "start") result = await core.start();
    else if (op === "panicOnAThread") result = await core.panicOnAThread();
    else if (op === "load") result = await load(id, data.key, data.source);
    else if (op === "run") result = core.run(data.key, data.request);
    else if (op === "openFile") {
      // decoding files is for pages that open them: a page of model widgets never loads it
      const { fileBytes } = await import("./file-bytes.js");
      result = await core.openFile(data.name, await fileBytes(data.name, data.file));
    }
    else if (op === "view") result = view(data.run, data.sel, data.plot, data.thumbs, data.range, data.colormap);
    else if (op === "layer") result = core.layer(data.run, data.sel);
    else if (op === "trace") result = core.trace(data.run, data.sel);
    else if (op === "export") result = core.exportRun(data.run, data.format);
    else if (op === "free") result = core.free(data.run);
    else if (op === "scores") result = core.scores(data.run, data.sel, data.options);
    else if (op === "mass") result = core.mass(data.run, data.sel, data.queries, data.keys);
    else if (op === "rollout") result = core.rollout(data.run, data.sel, data.fusion);
    else if (op === "probe") result = core.probe(data.key, data.options);
    else if (op === "queryKeys") {
      const progress = (done) => self.postMessage({ id, progress: { done, total: data.corpus.lines.length } });
      const stopped = async () => (await breathe(), cancelled.has(id));
      try {
        result = await core.queryKeys(data.key, data.corpus, progress, stopped);
      } finally {
        cancelled.delete(id);
      }
    } else if (op === "queryKeysTsne") {
      result = core.queryKeysTsne(data.corpus, data.head, (done, total) => self.postMessage({ id, progress: { done, total } }));
    } else if (op === "freeQueryKeys") result = core.freeQueryKeys(data.corpus);
    else if (op === "generate") result = core.generate(data.key, data.text, data.maxNewTokens);
    else if (op === "weightedSum") result = await core.weightedSum(data.weights, data.v, data.dV);
    else throw coded(`unknown operation ${op}`, "bad_operation", {});
    self.postMessage({ id, ok: true, result }, [...new Set(buffersOf(result))]);
  } catch (e) {
    const error = e instanceof Error ? { message: e.message, code: e.code, details: e.details } : { message: String(e) };
    self.postMessage({ id, ok: false, error });
  }
};
