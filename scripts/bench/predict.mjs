// What "what a head does" costs in wasm, one thread (issue 30), as ratios in the same process:
// predictions (the output head over every position, softmax, top 5) against a plain run of
// SmolLM-135M's shape (random weights, vocabulary 49,152) at 128 tokens; the logit lens of one
// position through all 30 layers; and patching every head of GPT-2-small's shape (a GPT-2 of 12
// layers × 12 heads, d_model 768, vocabulary 50,257, random weights) at 20 tokens, each layer's
// heads timed apart: a patched run begins at its layer from the corrupted run's residual
// stream. Min / median / max of repeated runs; figures, not assertions.
//
// Run after scripts/build/all:  node scripts/bench/predict.mjs [repetitions]
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { SHAPES, gpt2Files, modelFiles, textOf } from "./llama-shape.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const pkg = await import(`${ROOT}www/pkg-hf/headmap.js`);
pkg.initSync({ module: await readFile(`${ROOT}www/pkg-hf/headmap_bg.wasm`) });
const reps = Number(process.argv[2] ?? 5);

/** `work()` `n` times after one warm-up: { min, median, max } in ms. */
function time(work, n = reps) {
  work();
  const ms = [];
  for (let r = 0; r < n; r++) {
    const t0 = performance.now();
    work();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { min: ms[0], median: ms[ms.length >> 1], max: ms.at(-1) };
}
const fmt = ({ min, median, max }) => `${median.toFixed(0)} ms (min ${min.toFixed(0)}, max ${max.toFixed(0)})`;

const tokenizer = new Uint8Array(await readFile(`${ROOT}tests/fixtures/hf/llama/tokenizer.json`));

// 1. SmolLM-135M's shape at 128 tokens
const files = modelFiles(SHAPES.smollm);
const smollm = pkg.Model.fromFiles(files.config, files.weights, tokenizer);
const text = textOf(smollm, 128);
const run = smollm.run({ texts: [text] });
const tokens = run.info().places[0].tq;
run.free();
// the run a view draws stops at the last layer's weights; the explorer's run keeps its output
// (`output: true`: the last layer whole) and reads the predictions under it from that output
const runTime = time(() => smollm.run({ texts: [text] }).free());
const withPredictions = time(() => {
  const r = smollm.run({ texts: [text], output: true });
  r.predictions(0, 10);
  r.free();
});
const predictTime = time(() => smollm.predict({ texts: [text], topK: 5 }));
const lensTime = time(() => smollm.predict({ texts: [text], topK: 5, lens: tokens - 1 }));
console.log(`SmolLM-135M's shape, ${tokens} tokens, 30 layers, vocabulary 49,152 (wasm, one thread, ${reps} runs after a warm-up)`);
console.log(`  run (every weight a view draws)       ${fmt(runTime)}`);
console.log(`  the run and its predictions (top 10)  ${fmt(withPredictions)}   ×${(withPredictions.median / runTime.median).toFixed(3)} of the run`);
console.log(`  predict alone (a run of its own)      ${fmt(predictTime)}   ×${(predictTime.median / runTime.median).toFixed(3)} of the run`);
console.log(`  + the lens of the last position       ${fmt(lensTime)}   the lens alone ≈ ${(lensTime.median - predictTime.median).toFixed(0)} ms`);
smollm.free();

// 2. patching every head of a GPT-2-small shape at 20 tokens
const g = gpt2Files({ hidden: 768, layers: 12, heads: 12, vocab: 50257 });
const small = pkg.Model.fromFiles(g.config, g.weights, tokenizer);
const clean = textOf(small, 20);
const corrupt = clean.replace("동물이", "그것은");
const request = { clean, corrupt, answer: "길", wrong: "그" };
const layerMs = Array(12).fill(0);
const patchTime = time(() => {
  const patcher = small.patcher(request);
  for (let l = 0; l < 12; l++) {
    const t0 = performance.now();
    patcher.step(12);
    layerMs[l] = performance.now() - t0;
  }
  patcher.free();
}, Math.min(reps, 3));
const plain = time(() => small.predict({ texts: [corrupt], topK: 1 }), Math.min(reps, 3));
console.log(`GPT-2-small's shape, 20 tokens, 144 heads`);
console.log(`  patching every head                   ${fmt(patchTime)}   ×${(patchTime.median / plain.median).toFixed(1)} of one forward (${fmt(plain)})`);
console.log(`  each layer's 12 heads (last repetition) ${layerMs.map((ms) => ms.toFixed(0)).join(" ")} ms`);
small.free();
