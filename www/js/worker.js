// Runs the attention core off the main thread, so typing never freezes the page.
// Messages in: { id, op, ... } with op "start" | "compute" | "loadModel" | "pooled" |
// "generate" | "trace" | "weightedSum"; out: { id, ok, result | error }, and { id, progress } while a model loads.
// Typed arrays leave by transfer, not by copy.

import { compute, computeModel, generate, loadModel, pooled, start, trace, weightedSum } from "./core.js";
import { fetchModelFiles, hubUrl, pickFiles } from "./model-files.js";

function buffersOf(value, out = []) {
  if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (Array.isArray(value)) value.forEach((v) => buffersOf(v, out));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => buffersOf(v, out));
  return out;
}

/** The bytes of a model from `source`: { from: "url", base } | { from: "hub", hub, id } | { from: "files", files }. */
async function filesOf(source, id) {
  const onProgress = (progress) => self.postMessage({ id, progress });
  if (source.from === "files") return pickFiles(source.files);
  if (source.from === "url") return fetchModelFiles((f) => new URL(f, source.base).href, { onProgress });
  if (source.from === "hub") {
    const cache = self.caches ? await self.caches.open("headmap-models") : null;
    return fetchModelFiles((f) => hubUrl(source.hub, source.id, f), { cache, onProgress });
  }
  throw new Error(`unknown model source ${source.from}`);
}

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  try {
    let result;
    if (op === "start") result = await start();
    else if (op === "compute" && data.settings.model === "toy") result = await compute(data.settings, data.request);
    else if (op === "compute") result = computeModel(data.request, data.kind);
    else if (op === "loadModel") result = await loadModel(await filesOf(data.source, id));
    else if (op === "pooled") result = pooled(data.row, data.layer, data.head, data.height, data.width, data.kind);
    else if (op === "generate") result = generate(data.text, data.maxNewTokens);
    else if (op === "trace") result = trace(data.row, data.layer, data.head, data.kind);
    else if (op === "weightedSum") result = await weightedSum(data.weights, data.v, data.dV);
    else throw new Error(`unknown operation ${op}`);
    self.postMessage({ id, ok: true, result }, [...new Set(buffersOf(result))]);
  } catch (e) {
    self.postMessage({ id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
};
