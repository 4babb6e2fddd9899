// How real models are computed on this page, and why: the threaded build (../pkg-hf-threads/)
// on a pool of workers sharing its memory where the page is cross-origin isolated and has two
// cores or more; the single-threaded one anywhere else, or if the threads do not start. It runs
// inside the worker beside core.js, which alone imports the wasm packages and hands this the
// threaded one's loading.

// Threads past eight leave most of a small model's heads to wait; one thread is the other build.
const MAX_THREADS = 8;
// Workers that have not started by then (a policy that forbids them) are given up on.
const POOL_TIMEOUT_MS = 15_000;
/** How the forward runs here: { build: "threads" | "single", threads, why? }. */
let compute = { build: "single", threads: 1, why: "not_isolated" };

/**
 * The threaded package, from `load()` (core.js's import of it), with its pool started; null
 * where it cannot run, and the single-threaded build does the work.
 */
export async function threaded(load) {
  const cores = Math.min(MAX_THREADS, globalThis.navigator?.hardwareConcurrency || 1);
  if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== "function") return null;
  if (cores < 2) {
    compute = { build: "single", threads: 1, why: "one_core" };
    return null;
  }
  try {
    const pkg = await load();
    // a build without threads in its place (a notebook's inline one): the single-threaded path
    if (typeof pkg.initThreadPool !== "function") return null;
    const wasm = await pkg.default();
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the threads did not start")), POOL_TIMEOUT_MS);
    });
    await Promise.race([pkg.initThreadPool(cores), late]).finally(() => clearTimeout(timer));
    // a panic on a pool thread is said on this channel: the page ends the worker (client.js)
    const panics = `headmap-threads-${globalThis.crypto?.randomUUID?.() ?? Math.random().toString(36).slice(2)}`;
    pkg.reportThreadPanics(panics);
    compute = { build: "threads", threads: pkg.threadCount(), panics };
    return { pkg, memory: wasm.memory ?? wasm.__wbindgen_export_0 };
  } catch {
    // said on the page (computeInfo), not thrown: the single-threaded build does the work
    compute = { build: "single", threads: 1, why: "threads_failed" };
    return null;
  }
}

/** How real models are computed on this page, once `loading` (their package's, if begun) is done. */
export async function computeInfo(loading) {
  if (loading) await loading;
  return compute;
}
