// The driver of scripts/bench/peers (run that, not this): the page in headless Chromium, then
// the native runs, then one table. Figures, never assertions: the machine is shared, so every
// figure is a median with its min–max from one run, and comparisons are ratios.
//
// Environment: PEERS_RUNS (20), PEERS_WARMUP (3), PEERS_LENGTHS (16,128,512), PYTHON (python3),
// PEERS_BENCH_BIN (headmap's native bench, from `cargo bench --bench peers --no-run`),
// PEERS_SKIP=browser|native|profile (comma-separated) to leave a part out; PEERS_BASELINE, a
// folder with another build's pkg-hf/ and pkg-hf-threads/, runs it beside ours ("baseline wasm"):
// copy them from target/bench-peers-pkg/pkg-hf and $PEERS_THREADS_PKG before building the
// change, so that both are the same SIMD build (relaxed unless PEERS_SIMD=simd128). PEERS_IDLE=ms
// leaves the page idle that long before each forward in the browser, as a reader's pauses do:
// every engine's threads are asleep when its forward starts (natively nothing changes).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { resolve } from "node:path";
import { launchChromium } from "../browser.mjs";
import { serve } from "../serve.mjs";
import { profileSummary } from "./peer-harness/profile.mjs";
import { printTables } from "./peer-harness/table.mjs";

const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const OUT = repo("target/bench-peers");
mkdirSync(OUT, { recursive: true });
const env = process.env;
const runs = Number(env.PEERS_RUNS ?? 20);
const warmup = Number(env.PEERS_WARMUP ?? 3);
const lengths = (env.PEERS_LENGTHS ?? "16,128,512").split(",").map(Number);
const skip = new Set((env.PEERS_SKIP ?? "").split(",").filter(Boolean));
const say = (s) => process.stderr.write(`[bench-peers] ${s}\n`);

// transformers.js brings its own onnxruntime-web; its .wasm must match its JS
const tjsOrt = existsSync(repo("scripts/bench/peer-harness/node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist"))
  ? "scripts/bench/peer-harness/node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist"
  : "scripts/bench/peer-harness/node_modules/onnxruntime-web/dist";
const MOUNTS = {
  "/pkg-hf/": repo("target/bench-peers-pkg/pkg-hf"), // www/pkg-hf's code, names kept (scripts/bench/peers)
  "/pkg-hf-threads/": repo(env.PEERS_THREADS_PKG ?? "www/pkg-hf-threads-relaxed"), // the threaded build as Chromium loads it
  ...(env.PEERS_BASELINE && {
    "/baseline/pkg-hf/": resolve(env.PEERS_BASELINE, "pkg-hf"),
    "/baseline/pkg-hf-threads/": resolve(env.PEERS_BASELINE, "pkg-hf-threads"),
  }),
  "/model/": repo("models/all-MiniLM-L6-v2"),
  "/tjs-models/minilm/": repo("bench-pkg/minilm-onnx"),
  "/ort/": repo("scripts/bench/peer-harness/node_modules/onnxruntime-web/dist"),
  "/tjs-ort/": repo(tjsOrt),
  "/tjs/": repo("scripts/bench/peer-harness/node_modules/@huggingface/transformers/dist"),
  "/gemm/": repo("target/peers-gemm/wasm32-unknown-unknown/release"),
  "/gemm-relaxed/": repo("target/peers-gemm-relaxed/wasm32-unknown-unknown/release"),
};
// cross-origin isolated, so onnxruntime-web may use threads (SharedArrayBuffer)
const HEADERS = {
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
  "cross-origin-resource-policy": "same-origin",
};

async function browserPart() {
  const server = await serve(repo("scripts/bench/peer-harness"), 0, { mounts: MOUNTS, headers: HEADERS });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.on("console", (m) => m.text().startsWith("[peers]") && say(`chromium: ${m.text().slice(8)}`));
    page.on("pageerror", (e) => say(`page error: ${e.message}`));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => globalThis.benchReady, null, { timeout: 60000 });
    const results = await page.evaluate((o) => globalThis.bench.run(o), { lengths, runs, warmup, baseline: Boolean(env.PEERS_BASELINE), idle: Number(env.PEERS_IDLE ?? 0) });
    results.chromium = browser.version();
    writeFileSync(`${OUT}/browser.json`, JSON.stringify(results, null, 1));
    writeFileSync(`${OUT}/ids.json`, JSON.stringify(results.ids));
    if (!skip.has("profile")) results.profile = await profileWasm(page);
    return results;
  } finally {
    await browser.close();
    server.close();
  }
}

/** DevTools' sampling profiler (CDP) on headmap's forward, run on the page's main thread. */
async function profileWasm(page) {
  await page.evaluate(() => globalThis.bench.prepareProfile());
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 }); // µs
  const out = {};
  for (const [n, count] of [[16, 40], [128, 10], [512, 3]]) {
    await cdp.send("Profiler.start");
    const ms = await page.evaluate(([n, count]) => globalThis.bench.profile(n, count), [n, count]);
    const { profile } = await cdp.send("Profiler.stop");
    writeFileSync(`${OUT}/wasm-${n}.cpuprofile`, JSON.stringify(profile));
    out[n] = { ms, ...profileSummary(profile) };
  }
  await cdp.detach();
  return out;
}

function nativePart() {
  const bin = env.PEERS_BENCH_BIN;
  if (!bin) throw new Error("PEERS_BENCH_BIN is not set: run scripts/bench/peers");
  const python = env.PYTHON ?? "python3";
  const native = spawnSync(python, [
    repo("scripts/bench/peer-harness/native.py"), "--headmap", bin, "--ids", `${OUT}/ids.json`,
    "--onnx", repo("bench-pkg/minilm-onnx/onnx/model.onnx"), "--model", repo("models/all-MiniLM-L6-v2"),
    "--runs", String(runs), "--warmup", String(warmup), "--out", `${OUT}/native.json`,
    "--gemm", repo("target/peers-gemm/release/headmap-peers-gemm"),
    "--gemm-avx512", repo("target/peers-gemm-avx512/release/headmap-peers-gemm"),
  ], { stdio: ["ignore", "inherit", "pipe"], encoding: "utf8" });
  for (const line of native.stderr.split("\n")) if (line.startsWith("[native]")) say(line);
  if (native.status !== 0) throw new Error(`native.py failed:\n${native.stderr.slice(-3000)}`);
  // each shape alone with the kernel headmap's own build runs natively (AVX-512 where the CPU has it)
  const gemm = spawnSync(repo("target/peers-gemm-avx512/release/headmap-peers-gemm"), [String(runs)], { encoding: "utf8" });
  if (gemm.status !== 0) throw new Error(`the native GEMM failed: ${gemm.stderr}`);
  const rows = gemm.stdout.trim().split("\n").map((l) => JSON.parse(l));
  writeFileSync(`${OUT}/gemm-native.json`, JSON.stringify(rows, null, 1));
  return { ...JSON.parse(readFileSync(`${OUT}/native.json`, "utf8")), gemm: rows, gemmKernel: "AVX-512 kernel where the CPU has it" };
}

const config = JSON.parse(readFileSync(repo("models/all-MiniLM-L6-v2/config.json"), "utf8"));
const browser = skip.has("browser") ? JSON.parse(readFileSync(`${OUT}/browser.json`, "utf8")) : await browserPart();
let native = null;
if (!skip.has("native")) {
  try {
    native = nativePart();
  } catch (e) {
    say(`the native part failed, the browser's figures follow alone: ${e.message}`);
  }
}
writeFileSync(`${OUT}/all.json`, JSON.stringify({ browser, native }, null, 1));
printTables({ browser, native, config, runs, warmup });
say(`raw figures and the .cpuprofile files are in ${OUT}/`);
