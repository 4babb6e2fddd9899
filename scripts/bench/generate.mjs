// What generation costs in wasm, one thread (issue 31), as ratios in the same process: on
// SmolLM-135M's shape (random weights, 30 layers, vocabulary 49,152) and GPT-2-small's, one
// step over the KV cache at a context of 64 and of 512 tokens against a full forward over the
// same 64 or 512 tokens (what each step would cost without a cache), tokens per second, and for
// 512 tokens written the bytes of their attention rows and what wasm memory grew by. Min / median / max of repeated runs;
// figures, not assertions.
//
// Run after scripts/build/all:  node scripts/bench/generate.mjs [repetitions]
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { SHAPES, modelFiles, textOf } from "./llama-shape.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const pkg = await import(`${ROOT}www/pkg-hf/headmap.js`);
const wasm = pkg.initSync({ module: await readFile(`${ROOT}www/pkg-hf/headmap_bg.wasm`) });
const reps = Number(process.argv[2] ?? 5);

const stats = (ms) => {
  ms.sort((a, b) => a - b);
  return { min: ms[0], median: ms[ms.length >> 1], max: ms.at(-1) };
};
const fmt = ({ min, median, max }, digits = 1) => `${median.toFixed(digits)} ms (min ${min.toFixed(digits)}, max ${max.toFixed(digits)})`;

const tokenizer = new Uint8Array(await readFile(`${ROOT}tests/fixtures/hf/llama/tokenizer.json`));

const GPT2 = { name: "GPT-2-small's shape", hidden: 768, layers: 12, heads: 12, kvHeads: 12, intermediate: 3072, vocab: 50257 };
for (const shape of [SHAPES.smollm, GPT2]) {
  const files = modelFiles(shape);
  const model = pkg.Model.fromFiles(files.config, files.weights, tokenizer);
  console.log(`${shape.name}: ${shape.layers} layers × ${shape.heads} heads, vocabulary ${shape.vocab.toLocaleString("en")} (wasm, one thread, ${reps} runs)`);
  for (const context of [64, 512]) {
    const prompt = textOf(model, context);
    // a full forward over the prompt through the output head: what a step costs without a cache
    const full = [];
    model.predict({ texts: [prompt], topK: 1 });
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      model.predict({ texts: [prompt], topK: 1 });
      full.push(performance.now() - t0);
    }
    // steps over the cache after the prompt: each runs one token against ~`context` keys
    const steps = [];
    let tokens = 0;
    for (let r = 0; r < Math.max(1, Math.ceil(reps / 2)); r++) {
      const writer = model.writer({ prompt, maxNewTokens: 9 });
      writer.step(); // the prompt's own step fills the cache
      for (let s = 0; s < 8 && !writer.done; s++) {
        const t0 = performance.now();
        const token = writer.step();
        steps.push(performance.now() - t0);
        if (token) tokens = token.keys;
      }
      writer.free();
    }
    const f = stats(full);
    const s = stats(steps);
    console.log(`  context ${tokens} tokens: one step ${fmt(s)}, a full forward ${fmt(f, 0)}: a step is ${(s.median / f.median).toFixed(3)} of it; ${(1000 / s.median).toFixed(1)} tokens/s`);
  }
  if (shape === SHAPES.smollm) {
    // 512 tokens written after a prompt of at most 8 tokens, each token's rows handed over as a page takes
    // them: what JS holds then (Σ keys · L · H · 4 bytes), and what wasm memory grew by
    const before = wasm.memory.buffer.byteLength;
    const writer = model.writer({ prompt: textOf(model, 8), maxNewTokens: 512 });
    let held = 0;
    let written = 0;
    const t0 = performance.now();
    while (!writer.done) {
      const token = writer.step();
      if (!token) break;
      const { decoder } = writer.take(token.index);
      held += decoder.byteLength;
      written++;
    }
    const seconds = (performance.now() - t0) / 1000;
    const cache = writer.cacheBytes();
    writer.free();
    const grew = wasm.memory.buffer.byteLength - before;
    console.log(`  ${written} tokens written in ${seconds.toFixed(1)} s: their attention rows ${(held / 2 ** 20).toFixed(0)} MB, held once, by JS (rows, not squares); wasm memory grew ${(grew / 2 ** 20).toFixed(0)} MB; the KV cache holds ${(cache / 2 ** 20).toFixed(0)} MB`);
  }
  model.free();
}
