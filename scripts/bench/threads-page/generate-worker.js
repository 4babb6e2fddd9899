// Generation over the KV cache in the threaded build on a pool of `threads`
// (scripts/bench/generate-threads.mjs): for SmolLM-135M's and GPT-2-small's shapes and
// contexts of about 64 and 512 tokens, the ms of each step after the prompt's own.
import { SHAPES, modelFiles, textOf } from "/bench/llama-shape.mjs";

const params = new URL(self.location.href).searchParams;
const threads = Number(params.get("threads"));
const reps = Number(params.get("reps"));
const GPT2 = { name: "GPT-2-small's shape", hidden: 768, layers: 12, heads: 12, kvHeads: 12, intermediate: 3072, vocab: 50257 };
try {
  const pkg = await import("/pkg-hf-threads/headmap.js");
  await pkg.default();
  await pkg.initThreadPool(threads);
  const tokenizer = new Uint8Array(await (await fetch("/fixture/tokenizer.json")).arrayBuffer());
  const rows = [];
  for (const shape of [SHAPES.smollm, GPT2]) {
    const files = modelFiles(shape);
    const model = pkg.Model.fromFiles(files.config, files.weights, tokenizer);
    for (const context of [64, 512]) {
      const prompt = textOf(model, context);
      const steps = [];
      let keys = 0;
      for (let r = 0; r <= reps; r++) {
        const writer = model.writer({ prompt, maxNewTokens: 9 });
        writer.step(); // the prompt's own step fills the cache
        for (let s = 0; s < 8 && !writer.done; s++) {
          const t0 = performance.now();
          const token = writer.step();
          if (r > 0) steps.push(performance.now() - t0); // the first repetition warms up
          if (token) keys = token.keys;
        }
        writer.free();
      }
      rows.push({ shape: shape.name, keys, steps });
    }
    model.free();
  }
  self.postMessage({ threads: pkg.threadCount(), rows });
} catch (e) {
  self.postMessage({ error: String(e?.stack ?? e) });
}
