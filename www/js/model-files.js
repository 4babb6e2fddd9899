// Finding a real model's files: on a server laid out like the Hugging Face Hub
// ({hub}/{id}/resolve/main/{file}), in a folder served with the page, or among files the
// user picked. No wasm here: the worker hands the bytes to core.js. Errors carry a `code`
// and `details` so the page can word them in the reader's language.

import { coded } from "./errors.js";

/** The one host models are fetched from (a same-origin mirror of its layout aside). */
export const HUB = "https://huggingface.co";

/** The files a model needs, by the names Hugging Face repositories use. */
export const MODEL_FILES = {
  config: "config.json",
  weights: "model.safetensors",
  /** a sharded checkpoint's map of tensor → shard, in place of `weights` */
  index: "model.safetensors.index.json",
  tokenizer: "tokenizer.json",
  sourceSpm: "source.spm",
  vocab: "vocab.json",
  /** headmap's own, optional: heads worth opening first (see `suggestions`). */
  suggestions: "headmap.json",
};

/**
 * The most weight bytes a model may have here: wasm memory ends at 4 GiB, and the weights are
 * there twice while they load (the file's bytes, then the f32 tensors made from them, twice
 * the size for f16/bf16). About 500 M parameters stored as f16 or bf16.
 */
export const MAX_WEIGHT_BYTES = 1024 * 2 ** 20;
/** The most bytes of any other file (a config, a tokenizer: the largest real ones are ~35 MB). */
export const MAX_FILE_BYTES = 128 * 2 ** 20;

// Marks, in the cache, an optional file the repository turned out not to have.
const MISSING = "x-headmap-missing";

/** The Hub's public URL of `file` in repository `id`. */
export function hubUrl(hub, id, file) {
  return `${hub.replace(/\/+$/, "")}/${id.split("/").map(encodeURIComponent).join("/")}/resolve/main/${file}`;
}

/** A Hub model id as the Hub accepts it: "name" or "owner/name", letters, digits, - _ . */
export function validModelId(id) {
  return /^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)?$/.test(id) && !id.includes("..");
}

/**
 * Picks the model files out of files the user chose (`named`: path → bytes). A folder as it
 * comes from the Hub holds more than the model (`1_Pooling/config.json`, `onnx/`, …): the model
 * is the folder of the shallowest `config.json`, and every file is taken from there.
 */
export function pickFiles(named) {
  const paths = Object.keys(named).map((path) => ({ path, parts: path.split("/").filter(Boolean) }));
  const configs = paths.filter((p) => p.parts.at(-1) === MODEL_FILES.config).sort((a, b) => a.parts.length - b.parts.length || (a.path < b.path ? -1 : 1));
  const dir = configs.length ? configs[0].parts.slice(0, -1).join("/") : null;
  const inDir = (p) => (dir === null ? p.parts.length >= 1 : p.parts.slice(0, -1).join("/") === dir);
  const files = {};
  const find = (name) => paths.filter((p) => p.parts.at(-1) === name && inDir(p)).sort((a, b) => a.parts.length - b.parts.length)[0];
  for (const [key, name] of Object.entries(MODEL_FILES)) {
    const found = find(name);
    if (found) files[key] = named[found.path];
  }
  if (!files.weights && files.index) {
    const shards = [];
    const missing = [];
    for (const name of shardNames(files.index)) {
      const found = find(name);
      if (found) shards.push({ name, bytes: named[found.path] });
      else missing.push(name);
    }
    if (missing.length) throw coded(`the chosen files: missing ${missing.join(", ")}`, "files_missing", { files: missing });
    files.shards = shards;
  }
  return checkFiles(files, "the chosen files");
}

/**
 * The shard files a `model.safetensors.index.json` names, each once. A name is a plain file
 * name in the model's folder: one that reaches elsewhere (`../x`, `a/b`, a URL) is refused,
 * since the index comes from anywhere and its names become URLs.
 */
export function shardNames(indexBytes) {
  let doc;
  try {
    doc = JSON.parse(new TextDecoder().decode(indexBytes));
  } catch (e) {
    throw coded(`${MODEL_FILES.index}: not JSON (${e.message})`, "bad_index", { file: MODEL_FILES.index });
  }
  const map = doc && typeof doc === "object" ? doc.weight_map : null;
  if (!map || typeof map !== "object" || Array.isArray(map)) {
    throw coded(`${MODEL_FILES.index}: no weight_map`, "bad_index", { file: MODEL_FILES.index });
  }
  const names = [...new Set(Object.values(map))];
  const bad = names.find((n) => typeof n !== "string" || !/^[\w][\w.-]*\.safetensors$/.test(n) || n.includes(".."));
  if (bad !== undefined) throw coded(`${MODEL_FILES.index}: \`${String(bad).slice(0, 80)}\` is not a shard file name`, "bad_index", { file: MODEL_FILES.index });
  if (!names.length) throw coded(`${MODEL_FILES.index}: names no shards`, "bad_index", { file: MODEL_FILES.index });
  return names;
}

/**
 * Which of the files a reader chose ([{ path, size }]) are worth reading: the model files by
 * name and any safetensors shard; a Hub checkout's ONNX, PyTorch and TensorFlow copies are
 * left unread. Refuses, before anything is read, weights or a file too big for the tab.
 */
export function filesToRead(entries) {
  const names = new Set(Object.values(MODEL_FILES));
  const base = (path) => path.split("/").at(-1);
  const wanted = entries.filter((e) => names.has(base(e.path)) || base(e.path).endsWith(".safetensors"));
  const weights = wanted.filter((e) => base(e.path).endsWith(".safetensors")).reduce((n, e) => n + e.size, 0);
  if (weights > MAX_WEIGHT_BYTES) throw tooLarge(MODEL_FILES.weights, weights, MAX_WEIGHT_BYTES);
  const big = wanted.find((e) => !base(e.path).endsWith(".safetensors") && e.size > MAX_FILE_BYTES);
  if (big) throw tooLarge(base(big.path), big.size, MAX_FILE_BYTES);
  return wanted.map((e) => e.path);
}

/**
 * The heads a model's `headmap.json` suggests opening first, checked and trimmed to
 * `[{ name, place, layer, head }]`; anything malformed is left out. A model file is data
 * from anywhere: nothing in it is trusted beyond these plain values.
 */
export function suggestions(bytes) {
  if (!bytes) return [];
  let doc;
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return [];
  }
  const out = [];
  for (const [name, s] of Object.entries(doc && typeof doc === "object" ? doc : {})) {
    if (!s || typeof s !== "object") continue;
    const { place, layer, head } = s;
    if (["encoder_self", "decoder_self", "cross"].includes(place) && Number.isInteger(layer) && Number.isInteger(head) && layer >= 0 && head >= 0) {
      out.push({ name: String(name).slice(0, 40), place, layer, head });
    }
  }
  return out;
}

/** The error for `bytes` of `file` over `max`: a clear refusal before the tab runs out of memory. */
export function tooLarge(file, bytes, max) {
  const mb = (n) => Math.ceil(n / 2 ** 20);
  return coded(`${file}: ${mb(bytes)} MB, more than the ${mb(max)} MB a browser tab can hold here`, "model_too_large", { file, megabytes: mb(bytes), max: mb(max) });
}

/** Fails with a message naming what is missing. */
export function checkFiles(files, where) {
  const missing = files.config ? [] : [MODEL_FILES.config];
  if (!files.weights && !(files.index && files.shards?.length)) missing.push(MODEL_FILES.weights);
  // a Marian model reads source.spm and vocab.json instead: said apart, so each language words it
  const tokenizer = !files.tokenizer && !(files.sourceSpm && files.vocab);
  if (tokenizer) missing.push(MODEL_FILES.tokenizer);
  const or = tokenizer ? ` (or ${MODEL_FILES.sourceSpm} + ${MODEL_FILES.vocab})` : "";
  if (missing.length) throw coded(`${where}: missing ${missing.join(", ")}${or}`, "files_missing", { files: missing, ...(tokenizer && { variant: "tokenizer" }) });
  return files;
}

/**
 * Downloads a model's files from `urlOf(file)`. `onProgress({ file, loaded, total })` reports
 * each file's bytes; `cache` (a Cache from the Cache API) keeps them for the next visit. `from`
 * ("hub" or "folder") says where a failed fetch should be looked into (its errors' `variant`).
 */
export async function fetchModelFiles(urlOf, { fetchImpl = fetch, cache = null, onProgress = () => {}, from = "hub" } = {}) {
  // every weight file shares one allowance; any other file has its own
  let weightBytes = MAX_WEIGHT_BYTES;
  const get = async (file, required, isWeights = false) => {
    const url = urlOf(file);
    let response = cache ? await cache.match(url) : undefined;
    if (response?.headers.get(MISSING)) return null; // a file the repository does not have
    if (!response) {
      try {
        response = await fetchImpl(url);
      } catch (e) {
        throw coded(`${file}: cannot be fetched from ${url} (${e.message})`, "fetch_failed", { file, url, variant: from });
      }
      if (response.status === 404 && !required) {
        if (cache) await cache.put(url, new Response("", { headers: { [MISSING]: "1" } }));
        return null;
      }
      if (!response.ok) throw coded(`${file}: ${url} answered ${response.status}`, "fetch_status", { file, url, status: response.status, variant: from });
    }
    const max = isWeights ? weightBytes : MAX_FILE_BYTES;
    const bytes = await readWithProgress(response, (loaded, total) => onProgress({ file, loaded, total }), max, (n) => tooLarge(file, isWeights ? MAX_WEIGHT_BYTES - weightBytes + n : n, isWeights ? MAX_WEIGHT_BYTES : MAX_FILE_BYTES));
    if (isWeights) weightBytes -= bytes.length;
    if (cache) await cache.put(url, new Response(bytes, { headers: { "content-type": "application/octet-stream" } }));
    return bytes;
  };
  const files = { config: await get(MODEL_FILES.config, true) };
  files.tokenizer = await get(MODEL_FILES.tokenizer, false);
  if (!files.tokenizer) {
    files.sourceSpm = await get(MODEL_FILES.sourceSpm, false);
    files.vocab = await get(MODEL_FILES.vocab, false);
  }
  files.suggestions = await get(MODEL_FILES.suggestions, false);
  files.weights = await get(MODEL_FILES.weights, false, true);
  if (!files.weights) {
    // a checkpoint too big for one file comes as shards and an index naming them
    files.index = await get(MODEL_FILES.index, false);
    if (!files.index) throw coded("model.safetensors: not found (headmap reads safetensors weights, not pytorch_model.bin)", "no_safetensors", {});
    const names = shardNames(files.index);
    // the index says how big the shards are together: a model too big is refused before any
    // shard is fetched (a wrong total is caught while they download)
    const declared = Number(JSON.parse(new TextDecoder().decode(files.index)).metadata?.total_size);
    if (declared > MAX_WEIGHT_BYTES) throw tooLarge(MODEL_FILES.index, declared, MAX_WEIGHT_BYTES);
    files.shards = [];
    for (const name of names) files.shards.push({ name, bytes: await get(name, true, true) });
  }
  for (const k of Object.keys(files)) if (!files[k]) delete files[k];
  return checkFiles(files, "the model");
}

/** The body of `response`, refused with `refuse(bytes)` as soon as it passes `max` bytes. */
async function readWithProgress(response, onProgress, max, refuse) {
  const total = Number(response.headers.get("content-length")) || 0;
  if (total > max) {
    response.body?.cancel().catch(() => {});
    throw refuse(total);
  }
  if (!response.body?.getReader) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > max) throw refuse(bytes.length);
    onProgress(bytes.length, total || bytes.length);
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    if (loaded > max) {
      reader.cancel().catch(() => {});
      throw refuse(loaded); // a server that gave no length, or the wrong one
    }
    onProgress(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}
