// Patching every head of GPT-2-small's shape at 20 tokens in the threaded build on a pool of
// `threads` (scripts/bench/patch-threads.mjs): the ms of each repetition.
import { gpt2Files, textOf } from "/bench/llama-shape.mjs";

const params = new URL(self.location.href).searchParams;
const threads = Number(params.get("threads"));
const reps = Number(params.get("reps"));
try {
  const pkg = await import("/pkg-hf-threads/headmap.js");
  await pkg.default();
  await pkg.initThreadPool(threads);
  const tokenizer = new Uint8Array(await (await fetch("/fixture/tokenizer.json")).arrayBuffer());
  const g = gpt2Files({ hidden: 768, layers: 12, heads: 12, vocab: 50257 });
  const model = pkg.Model.fromFiles(g.config, g.weights, tokenizer);
  const clean = textOf(model, 20);
  const request = { clean, corrupt: clean.replace("동물이", "그것은"), answer: "길", wrong: "그" };
  const ms = [];
  for (let r = 0; r <= reps; r++) {
    const t0 = performance.now();
    const patcher = model.patcher(request);
    while (patcher.step(12));
    patcher.free();
    if (r > 0) ms.push(performance.now() - t0); // the first is a warm-up
  }
  self.postMessage({ threads: pkg.threadCount(), ms });
} catch (e) {
  self.postMessage({ error: String(e?.stack ?? e) });
}
