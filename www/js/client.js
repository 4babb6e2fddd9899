// The page's side of the worker. One worker per page: the explorer and every widget share it
// (one wasm instance, one model cache). Each AttentionClient keeps its own newest run, so a
// slower older request never overwrites a newer one.
//
// The worker keeps a few models and runs and lets the least recently used go. A client
// remembers where each model came from and what each of its runs asked, so a model or run
// the worker let go is loaded or computed again, transparently: a page with more figures than
// the worker keeps never sees `model_not_loaded` or `run_freed`. (Files a reader picked were
// handed to the worker, not kept: those say to pick them again.) What may be asked, and which
// operations need a model or a run, is protocol.js's table: `call(op, args)` sends any of them.

import { coded, revive } from "./errors.js";
import { OPERATIONS } from "./protocol.js";

const connections = new Map(); // worker URL → Connection
let pickedFiles = 0;
let policy = null;

/**
 * The worker's URL as the page may load it. Where Trusted Types are enforced a script URL must
 * come from a policy: headmap's ("headmap") passes only the worker URLs it made itself. A page
 * whose CSP lists its trusted-types policies must list `headmap`.
 */
function scriptUrl(url) {
  const tt = globalThis.trustedTypes;
  if (!tt?.createPolicy) return url;
  try {
    policy ??= tt.createPolicy("headmap", {
      createScriptURL: (u) => {
        if (!connections.has(u)) throw new TypeError(`headmap loads only its own worker, not ${u}`);
        return u;
      },
    });
  } catch {
    throw coded("the page's Content-Security-Policy does not allow the Trusted Types policy `headmap`: add it to the trusted-types directive", "trusted_types");
  }
  return policy.createScriptURL(String(url));
}

class Connection {
  constructor(url) {
    this.url = url;
    this.pending = new Map();
    this.nextId = 1;
    this.sources = new Map(); // model key → its source, to load it again
    this.start();
  }

  /** Starts the worker: at first, and at the first request after one stopped (`stop`). */
  start() {
    // a notebook figure's worker is one classic script from a blob: (js/inline/main.js), which a
    // page opened from disk could not start as a module
    this.worker = new Worker(scriptUrl(this.url), this.url.startsWith("blob:") ? {} : { type: "module" });
    this.worker.onmessage = ({ data }) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      if (data.progress) {
        p.onProgress?.(data.progress);
        return;
      }
      if (data.stopped) return this.stop(revive(data.error));
      this.pending.delete(data.id);
      if (data.ok) p.resolve(data.result);
      else p.reject(revive(data.error));
    };
    this.worker.onerror = (e) => this.fail(coded(`the attention worker failed: ${e.message || "it could not load"}`, "worker_failed"));
  }

  /** Refuses every request waiting with `error`. */
  refuse(error) {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    this.threads?.close();
    this.threads = null;
  }

  fail(error) {
    this.refuse(error);
    // a dead worker answers nothing: later calls fail at once, and a client made later
    // (a widget scrolled into view) starts a new one
    this.failed = error;
    if (connections.get(this.url) === this) connections.delete(this.url);
  }

  /**
   * Ends the worker after its core stopped (`error`): a trap left its memory half written, or a
   * pool thread it waits for is gone. The requests waiting are refused with `error`; the next
   * one starts another worker, which the clients load their models into again as they ask.
   */
  stop(error) {
    this.worker.terminate();
    this.refuse(error);
    this.stopped = true;
  }

  /**
   * Listens where the threaded build's pool threads say they panicked (`channel`): the worker
   * waiting for such a thread would wait for ever, so it is ended (`stop`).
   */
  watchThreads(channel) {
    if (this.threads || !channel || typeof BroadcastChannel !== "function") return;
    this.threads = new BroadcastChannel(channel);
    this.threads.onmessage = ({ data }) => this.stop(coded(`a thread of the computation stopped: ${data}; it starts afresh at the next request`, "thread_stopped", { reason: String(data) }));
  }

  /** `signal` (an AbortSignal) asks the worker to stop a long job; it then rejects `cancelled`. */
  send(op, payload = {}, { onProgress = null, signal = null } = {}) {
    if (this.failed) return Promise.reject(this.failed);
    if (this.stopped) {
      this.stopped = false;
      this.start();
    }
    if (signal?.aborted) return Promise.reject(coded("stopped", "cancelled"));
    if (!Object.hasOwn(OPERATIONS, op)) return Promise.reject(coded(`unknown operation ${op}`, "bad_operation", {}));
    // the arguments in the order the worker's function takes them
    const { args: names, transfer } = OPERATIONS[op];
    const args = names.split(" ").filter(Boolean).map((name) => payload[name]);
    const id = this.nextId++;
    signal?.addEventListener("abort", () => this.worker.postMessage({ id: this.nextId++, op: "cancel", target: id }), { once: true });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, op, args }, transfer?.(payload) ?? []);
    });
  }
}

/**
 * The key a model source is cached under in the worker. Sources: { from: "toy", preset, seed,
 * layers }, { from: "url", base }, { from: "hub", id, hub? }, { from: "kept", id }, { from: "files", files }.
 */
export function sourceKey(source) {
  if (source.from === "toy") return `toy:${source.preset}:${source.seed}:${source.layers}`;
  if (source.from === "url") return `url:${new URL(source.base, location.href).href}${source.weights ? `:${source.weights}` : ""}`;
  if (source.from === "hub") return `hub:${source.hub ?? ""}:${source.id}`;
  if (source.from === "kept") return `kept:${source.id}`;
  return `files:${++pickedFiles}`;
}

export class AttentionClient {
  /** `workerUrl`: where worker.js is; widgets pass the URL next to their own script. */
  constructor(workerUrl = new URL("./worker.js", import.meta.url)) {
    const href = String(workerUrl);
    if (!connections.has(href)) {
      connections.set(href, null); // the policy checks the URL is one of ours
      try {
        connections.set(href, new Connection(href));
      } catch (e) {
        connections.delete(href); // the next client tries again, and meets the same clear error
        throw e;
      }
    }
    this.connection = connections.get(href);
    this.latest = 0;
    this.current = null; // the newest run's handle
    this.asked = new Map(); // run handle → the { op, args } that made it, to compute it again
    this.moved = new Map(); // run handle → the handle of the same run computed again
  }

  /**
   * Operation `op` of protocol.js with `args` ({ name: value }); `options`: { onProgress,
   * signal }. A model or run the worker let go is loaded or computed again and the operation
   * asked once more; a run (`newest`) is this client's newest, or null if a newer one came.
   */
  call(op, args = {}, options = {}) {
    return OPERATIONS[op]?.newest ? this.newest(() => this.#ask(op, args, options), { op, args }) : this.#ask(op, args, options);
  }

  /** `op`, asked once more after loading its model or computing its run again if the worker let it go. */
  #ask(op, args, options = {}) {
    const needs = OPERATIONS[op]?.needs;
    if (needs === "run") return this.onRun(op, args, options);
    if (needs === "model") return this.withModel(args.key, () => this.connection.send(op, args, options));
    return this.connection.send(op, args, options);
  }

  /** Loads the model of `source` (see sourceKey); resolves to { key, info }. */
  async load(source, onProgress) {
    const key = sourceKey(source);
    const info = await this.call("load", { key, source }, { onProgress });
    this.connection.watchThreads(info.compute?.panics);
    if (source.from !== "files") this.connection.sources.set(key, source);
    return { key, info };
  }

  /** `work()`, and once more after loading model `key` again if the worker had let it go. */
  async withModel(key, work) {
    try {
      return await work();
    } catch (e) {
      if (e.code !== "model_not_loaded") throw e;
      const source = this.connection.sources.get(key);
      if (!source) throw coded("the model's files were picked by the reader and are gone: pick them again", "files_gone");
      const info = await this.connection.send("load", { key, source });
      this.connection.watchThreads(info.compute?.panics);
      return work();
    }
  }

  /** `op` on run `args.run`, computing the run again (as it was asked) if the worker let it go. */
  async onRun(op, args, options) {
    const { run } = args;
    const at = () => this.moved.get(run) ?? run;
    try {
      return await this.connection.send(op, { ...args, run: at() }, options);
    } catch (e) {
      const asked = this.asked.get(run);
      if (e.code !== "run_freed" || !asked) throw e;
      const again = await this.#ask(asked.op, asked.args);
      if (!this.asked.has(run)) {
        // freed while it was computed again (a newer run came, or the figure went)
        this.connection.send("free", { run: again.id }).catch(() => {});
        throw coded("that run has been freed", "run_freed");
      }
      if (this.moved.has(run)) this.connection.send("free", { run: this.moved.get(run) }).catch(() => {});
      this.moved.set(run, again.id);
      return this.connection.send(op, { ...args, run: again.id }, options);
    }
  }

  /** `make()`'s run as this client's newest (`asked` makes it again), or null if a newer one came. */
  async newest(make, asked) {
    const mine = ++this.latest;
    let result;
    try {
      result = await make();
    } catch (e) {
      if (mine !== this.latest) return null; // a newer request superseded this one
      throw e;
    }
    if (mine !== this.latest) {
      this.free(result.id);
      return null;
    }
    if (this.current !== null) this.free(this.current);
    this.current = result.id;
    this.asked.set(result.id, asked);
    return result;
  }

  /** Lets run `run` go, in the worker and here (how to make it again). */
  free(run) {
    for (const id of new Set([run, this.moved.get(run) ?? run])) this.connection.send("free", { run: id }).catch(() => {});
    this.asked.delete(run);
    this.moved.delete(run);
  }
}
