// headmap's own wasm matrix kernel (src/gemm/wasm.rs) against matrixmultiply's (ndarray's dot) on the
// linear maps of all-MiniLM-L6-v2 at 16, 128 and 512 tokens, in headless Chromium: the plain
// simd128 build and the relaxed-SIMD one, each kernel timed in turn on the same matrices.
// Prints GFLOP/s at the median, min–max ms and ours ÷ matrixmultiply; never asserts a time.
// Run by scripts/bench/gemm, which builds target/bench-gemm/{simd128,relaxed}/ first.
import { launchChromium } from "../browser.mjs";
import { serve } from "../serve.mjs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../target/bench-gemm/", import.meta.url));
const RUNS = Number(process.env.GEMM_RUNS ?? 30);
const SHAPES = [
  ["Tx384.384x384 (Q K V O)", 384, 384],
  ["Tx384.384x1536 (up)", 384, 1536],
  ["Tx1536.1536x384 (down)", 1536, 384],
];

/** In the page: every shape of `build` timed, both kernels alternating. */
async function measure({ build, runs, shapes }) {
  const pkg = await import(`/${build}/headmap.js`);
  await pkg.default();
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return { min: s[0], median: s[s.length >> 1], max: s.at(-1) };
  };
  const out = [];
  for (const t of [16, 128, 512]) {
    for (const [name, k, n] of shapes) {
      const b = new pkg.GemmBench(t, k, n);
      const diff = b.maxDifference();
      const times = { ours: [], matrixmultiply: [] };
      for (let i = 0; i < 3; i++) (b.ours(), b.matrixmultiply());
      const reps = Math.max(1, Math.round(1e8 / (2 * t * k * n)));
      for (let r = 0; r < runs; r++) {
        for (const which of ["ours", "matrixmultiply"]) {
          const t0 = performance.now();
          for (let i = 0; i < reps; i++) b[which]();
          times[which].push((performance.now() - t0) / reps);
        }
      }
      out.push({ t, name, flops: 2 * t * k * n, diff, ours: stats(times.ours), mm: stats(times.matrixmultiply) });
      b.free();
    }
  }
  return out;
}

const server = await serve(ROOT, 0, { headers: { "content-security-policy": "script-src 'self' 'unsafe-eval' 'wasm-unsafe-eval'" } });
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/index.html`);
  console.log(`wasm GEMM in Chromium ${browser.version()}, ${RUNS} runs each after 3 warm-ups: median ms (min–max), GFLOP/s at the median`);
  for (const build of (process.env.GEMM_BUILDS ?? "simd128 relaxed").split(/\s+/).filter(Boolean)) {
    const rows = await page.evaluate(measure, { build, runs: RUNS, shapes: SHAPES });
    console.log(`${build} build`);
    const gf = (r, ms) => (r.flops / ms / 1e6).toFixed(1);
    const f = (s) => `${s.median.toFixed(3)} (${s.min.toFixed(3)}–${s.max.toFixed(3)})`;
    for (const r of rows) {
      console.log(
        `${String(r.t).padStart(4)} tok ${r.name.padEnd(24)} ours ${f(r.ours).padEnd(24)} ${gf(r, r.ours.median).padStart(5)} GF/s` +
          `  matrixmultiply ${f(r.mm).padEnd(24)} ${gf(r, r.mm.median).padStart(5)} GF/s` +
          `  ours ÷ mm ${(r.ours.median / r.mm.median).toFixed(2)} (minima ${(r.ours.min / r.mm.min).toFixed(2)})  max |Δ| ${r.diff.toExponential(1)}`,
      );
    }
  }
} finally {
  await browser.close();
  server.close();
}
