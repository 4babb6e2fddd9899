// The page's side of the worker: promises for requests, and only the newest compute counts.

export class AttentionClient {
  constructor(url = new URL("./worker.js", import.meta.url)) {
    this.worker = new Worker(url, { type: "module" });
    this.pending = new Map();
    this.nextId = 1;
    this.latestCompute = 0;
    this.worker.onmessage = ({ data }) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      if (data.progress) {
        p.onProgress?.(data.progress);
        return;
      }
      this.pending.delete(data.id);
      if (data.ok) p.resolve(data.result);
      else p.reject(new Error(data.error));
    };
    this.worker.onerror = (e) => {
      const error = new Error(`the attention worker failed: ${e.message || "could not load"}`);
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
    };
  }

  call(op, payload = {}, { onProgress = null, transfer = [] } = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, op, ...payload }, transfer);
    });
  }

  start() {
    return this.call("start");
  }

  /**
   * Resolves to the result, or to `null` when a newer compute was asked for meanwhile.
   * settings: { model: "toy", preset, layers, seed } or { model: "hf" } with `kind` the place.
   */
  async compute(settings, request, kind) {
    const mine = this.nextId;
    this.latestCompute = mine;
    try {
      const result = await this.call("compute", { settings, request, kind });
      return mine === this.latestCompute ? result : null;
    } catch (e) {
      if (mine !== this.latestCompute) return null; // a newer request superseded this one
      throw e;
    }
  }

  /** Loads a real model; `source` as worker.js describes; progress as { file, loaded, total }. */
  loadModel(source, onProgress) {
    const transfer = source.from === "files" ? Object.values(source.files).map((b) => b.buffer) : [];
    return this.call("loadModel", { source }, { onProgress, transfer });
  }

  /** One head of the newest run max-pooled to `height` x `width` pixels, computed in wasm. */
  pooled(row, layer, head, height, width, kind) {
    return this.call("pooled", { row, layer, head, height, width, kind });
  }

  /** The loaded encoder–decoder model's greedy output for `text`. */
  generate(text, maxNewTokens = 64) {
    return this.call("generate", { text, maxNewTokens });
  }

  trace(row, layer, head, kind) {
    return this.call("trace", { row, layer, head, kind });
  }

  weightedSum(weights, v, dV) {
    return this.call("weightedSum", { weights, v, dV });
  }
}
