// How real models are computed on this page, and why: the threaded build (../pkg-hf-threads/)
// on a pool of workers sharing its memory where the page is cross-origin isolated and has two
// cores or more; the single-threaded one anywhere else, or if the threads do not start. Each
// in its relaxed-SIMD twin (-relaxed) where the browser validates relaxed SIMD and the host
// serves that build, else the plain simd128 one. It runs inside the worker beside core.js,
// which alone imports the wasm packages and hands this their loading.

// Threads past eight leave most of a small model's heads to wait; one thread is the other build.
const MAX_THREADS = 8;
// Workers that have not started by then (a policy that forbids them) are given up on.
const POOL_TIMEOUT_MS = 15_000;
/** How the forward runs here: { build: "threads" | "single", threads, why?, package }. */
let compute = { build: "single", threads: 1, why: "not_isolated" };
/** The folder of the package that computes (pkg-hf, pkg-hf-threads-relaxed, …). */
let folder = "pkg-hf";

// f32x4.relaxed_madd of three zero vectors, returned: a module only a browser with relaxed
// SIMD accepts (Chrome 114+; Firefox and Safari do not have it yet)
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, // "\0asm", version 1
  1, 5, 1, 96, 0, 1, 123, // types: () → v128
  3, 2, 1, 0, // one function of that type
  10, 28, 1, 26, 0, // code: one body of 26 bytes, no locals
  ...[0, 1, 2].flatMap(() => [67, 0, 0, 0, 0, 253, 19]), // f32.const 0, f32x4.splat, three times
  253, 133, 2, // f32x4.relaxed_madd
  11, // end
]);

/** Whether this browser has relaxed SIMD. */
export function relaxedSimd() {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

/**
 * The first of `[folder, import]` pairs whose package loads and starts here (its wasm fetched
 * and compiled): the relaxed twin first where the browser has relaxed SIMD, and the plain one
 * if the twin is not there (a host that copied only pkg-hf/) or does not compile.
 */
export async function started(relaxed, plain) {
  if (relaxedSimd()) {
    try {
      return await start(relaxed);
    } catch {
      // said by the package's name (computeInfo), not thrown: the plain build does the work
    }
  }
  return start(plain);
}

async function start([name, load]) {
  const pkg = await load();
  const wasm = await pkg.default();
  // the notebook's inline bundle stands in for every package and says so
  return { pkg, wasm, name: pkg.INLINE ? "inline" : name };
}

/** Records that `name`'s package computes here. */
export function computing(name) {
  folder = name;
}

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
    const { pkg, wasm, name } = await load();
    // a build without threads in its place (a notebook's inline one): the single-threaded path
    if (typeof pkg.initThreadPool !== "function") return null;
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the threads did not start")), POOL_TIMEOUT_MS);
    });
    // a pool thread that stops says so on this channel, and the page ends the worker (client.js):
    // a panic through Rust's hook, any trap (an abort, as running out of memory is) through the
    // threads' own script (scripts/build/rayon-workers.mjs), which reads the name here
    const panics = `headmap-threads-${globalThis.crypto?.randomUUID?.() ?? Math.random().toString(36).slice(2)}`;
    globalThis.headmapPanics = panics;
    await Promise.race([pkg.initThreadPool(cores), late]).finally(() => clearTimeout(timer));
    pkg.reportThreadPanics(panics);
    compute = { build: "threads", threads: pkg.threadCount(), panics };
    computing(name);
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
  return { ...compute, package: folder };
}

/**
 * The tests' deliberate panic in `pkg`: on a pool thread (`where` "thread", or "abort" for an
 * abort there, as running out of memory is; false in a build without threads), else on the
 * worker's own thread.
 */
export function panic(pkg, where) {
  if (where !== "thread" && where !== "abort") pkg.panicHere();
  if (!pkg.panicOnAThread) return false;
  pkg.panicOnAThread(where === "abort");
  return true;
}
