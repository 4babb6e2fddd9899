// Runs the attention core off the main thread, so typing never freezes the page.
// Messages in: { id, op: "start" | "compute" | "trace" | "weightedSum", ... }; out: { id, ok, result | error }.
// Typed arrays leave by transfer, not by copy.

import { compute, start, trace, weightedSum } from "./core.js";

function buffersOf(value, out = []) {
  if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (Array.isArray(value)) value.forEach((v) => buffersOf(v, out));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => buffersOf(v, out));
  return out;
}

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  try {
    let result;
    if (op === "start") result = await start();
    else if (op === "compute") result = await compute(data.settings, data.request);
    else if (op === "trace") result = trace(data.row, data.layer, data.head);
    else if (op === "weightedSum") result = await weightedSum(data.weights, data.v, data.dV);
    else throw new Error(`unknown operation ${op}`);
    self.postMessage({ id, ok: true, result }, [...new Set(buffersOf(result))]);
  } catch (e) {
    self.postMessage({ id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
};
