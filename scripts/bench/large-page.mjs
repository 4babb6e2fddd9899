// A large model in headless Chromium (issue 34): SmolLM-135M's shape (random weights) at about
// 2,033 tokens in the threaded build on 1 and 2 threads, as the explorer shows it — the forward,
// every head of every layer pooled to a thumbnail, one head's numbers and plot — min / median /
// max seconds of each over repetitions, 2 threads ÷ 1, and the wasm memory after each step
// (wasm memory only grows: its size is the peak so far). Figures, not assertions.
// Run after scripts/build/all:  node scripts/bench/large-page.mjs [repetitions]
// LARGE_PKG=www/pkg-hf-threads times the plain build instead of the relaxed-SIMD twin.
// LARGE_AHEAD=0 runs without `thumbs`, so that every thumbnail computes its layer again (the
// explorer asks a run to pool them as its layers run).
import { onThreads } from "./threads.mjs";

const reps = Number(process.argv[2] ?? 2);
const build = process.env.LARGE_PKG ?? "www/pkg-hf-threads-relaxed";
const ahead = process.env.LARGE_AHEAD !== "0";
const { results, version } = await onThreads({ pkg: build, script: `large-worker.js?ahead=${ahead ? 1 : 0}`, reps });
console.log(`SmolLM-135M's shape, ${build}, ${version}, ${reps} repetitions, thumbnails ${ahead ? "pooled as the layers run" : "from each layer computed again"}`);
const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[s.length >> 1], max: s.at(-1) };
};
const total = {};
for (const { threads, rows } of results) {
  const line = (name, key) => {
    const { min, median, max } = stat(rows.map(key));
    console.log(`  ${name.padEnd(34)} ${median.toFixed(2)} s (min ${min.toFixed(2)}, max ${max.toFixed(2)})`);
    return median;
  };
  console.log(`${threads} thread${threads > 1 ? "s" : ""}, ${rows[0].tokens} tokens:`);
  line("forward", (r) => r.forward);
  line("every head as a thumbnail", (r) => r.thumbs);
  line("one head's numbers and plot", (r) => r.head);
  total[threads] = line("a reader waits", (r) => r.forward + r.thumbs + r.head);
  console.log(`  wasm memory after the forward ${Math.max(...rows.map((r) => r.afterRun)).toFixed(0)} MB, after the view ${Math.max(...rows.map((r) => r.afterView)).toFixed(0)} MB`);
}
if (total[1] && total[2]) console.log(`2 threads ÷ 1 thread: ${(total[2] / total[1]).toFixed(2)}`);
