// Patching all 144 heads of GPT-2-small's shape at 20 tokens in headless Chromium, in the
// threaded build on 1 and on 2 threads (the heads of a layer run side by side), as figures:
// min / median / max of repetitions after a warm-up, and 2 threads ÷ 1. The build is the
// relaxed-SIMD twin, which the page loads in a Chromium that has it; PATCH_PKG=www/pkg-hf-threads
// times the plain one.
// Run after scripts/build/all:  node scripts/bench/patch-threads.mjs [repetitions]
import { onThreads } from "./threads.mjs";

const reps = Number(process.argv[2] ?? 3);
const pkg = process.env.PATCH_PKG ?? "www/pkg-hf-threads-relaxed";
const { results, version } = await onThreads({ pkg, script: "worker.js", reps });
const stats = (ms) => [...ms].sort((a, b) => a - b);
const med = {};
for (const { threads, ms } of results) {
  const s = stats(ms);
  med[threads] = s[s.length >> 1];
  console.log(`patching 144 heads, GPT-2-small's shape, 20 tokens, ${threads} thread${threads > 1 ? "s" : ""}: ${(med[threads] / 1000).toFixed(1)} s (min ${(s[0] / 1000).toFixed(1)}, max ${(s.at(-1) / 1000).toFixed(1)}; ${version})`);
}
console.log(`  2 threads ÷ 1 thread: ${(med[2] / med[1]).toFixed(2)} (${pkg})`);
