// Generation's tokens per second in headless Chromium, in the threaded build on 1 and on 2
// threads (issue 31): SmolLM-135M's and GPT-2-small's shapes (random weights), one step over the
// KV cache at contexts of about 64 and 512 tokens, min / median / max step of repetitions after a
// warm-up, and 2 threads ÷ 1. The build is the relaxed-SIMD twin the page loads in a Chromium
// that has it; GENERATE_PKG=www/pkg-hf-threads times the plain one.
// Run after scripts/build/all:  node scripts/bench/generate-threads.mjs [repetitions]
import { onThreads } from "./threads.mjs";

const reps = Number(process.argv[2] ?? 3);
const build = process.env.GENERATE_PKG ?? "www/pkg-hf-threads-relaxed";
const { results, version } = await onThreads({ pkg: build, script: "generate-worker.js", reps });
console.log(`generation over the KV cache, ${build}, ${version}, ${reps} repetitions of 8 steps after a warm-up`);
const median = {};
for (const { threads, rows } of results) {
  for (const { shape, keys, steps } of rows) {
    const s = [...steps].sort((a, b) => a - b);
    const m = s[s.length >> 1];
    median[`${shape} ${keys}`] = { ...median[`${shape} ${keys}`], [threads]: m };
    console.log(`  ${shape}, context ${keys}, ${threads} thread${threads > 1 ? "s" : ""}: a step ${m.toFixed(1)} ms (min ${s[0].toFixed(1)}, max ${s.at(-1).toFixed(1)}): ${(1000 / m).toFixed(1)} tokens/s`);
  }
}
for (const [name, t] of Object.entries(median)) console.log(`  ${name}: 2 threads ÷ 1 thread ${(t[2] / t[1]).toFixed(2)}`);
