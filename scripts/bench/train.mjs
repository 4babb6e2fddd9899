// Training the page's default model (issue 32) in headless Chromium on 1 and 2 threads (the
// threaded build, relaxed-SIMD twin as the page loads it in a Chromium that has it) against
// PyTorch eager on one thread on the same model and batches of the same shape
// (scripts/bench/train_torch.py), in steps per second: min / median / max of repetitions of 100
// steps after a warm-up, and the ratios. Figures, not assertions.
//
// Run after scripts/build/all:  node scripts/bench/train.mjs [repetitions]
// PYTHON names a Python with torch and transformers (default python3).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

import { onThreads } from "./threads.mjs";

const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const reps = Number(process.argv[2] ?? 5);
const pkgDir = process.env.TRAIN_PKG ?? "www/pkg-hf-threads-relaxed";

/** Steps a second of each repetition: { min, median, max }. */
function rates(steps, ms) {
  const r = ms.map((m) => (steps / m) * 1000).sort((a, b) => a - b);
  return { min: r[0], median: r[r.length >> 1], max: r.at(-1) };
}
const show = ({ min, median, max }) => `${median.toFixed(0)} steps/s (min ${min.toFixed(0)}, max ${max.toFixed(0)})`;

let torch;
try {
  const out = execFileSync(process.env.PYTHON ?? "python3", [repo("scripts/bench/train_torch.py"), String(reps)], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  torch = JSON.parse(out.trim().split("\n").at(-1));
} catch (e) {
  console.error(`PyTorch's baseline did not run (set PYTHON to a Python with torch and transformers): ${String(e.stderr ?? e.message).trim().split("\n").at(-1)}`);
  process.exit(1);
}
const { results, version } = await onThreads({ pkg: pkgDir, script: "train-worker.js", reps });
const base = rates(torch.steps, torch.ms);
console.log(`training the page's default model (${torch.parameters.toLocaleString("en")} parameters, batch 32 × 33 tokens), ${reps} repetitions of 100 steps:`);
console.log(`  PyTorch ${torch.torch} eager, 1 thread: ${show(base)}`);
const median = {};
for (const { threads, steps, ms } of results) {
  const r = rates(steps, ms);
  median[threads] = r.median;
  console.log(`  headmap in ${version}, ${threads} thread${threads > 1 ? "s" : ""}: ${show(r)}; ${(r.median / base.median).toFixed(2)}× PyTorch's steps/s`);
}
console.log(`  2 threads ÷ 1 thread: ${(median[2] / median[1]).toFixed(2)}× the steps/s (${pkgDir})`);
