// Peak wasm memory of a Llama-style model at 2048 tokens (issue 10): the real-model package in
// Node, fed the same random bf16 model `benches/memory.rs` measures natively, run on 2048 tokens
// and then viewed as the explorer views it (every head max-pooled for the grid, one head at
// full size, the maxima). Wasm memory only grows, so its size after each step is the peak so
// far. Figures, not assertions.
//
// Run after scripts/build/all:  node scripts/bench/wasm-memory.mjs [tiny|smollm|both]   (both: ~2 minutes)
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { SHAPES, modelFiles } from "./llama-shape.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const pkg = await import(`${ROOT}www/pkg-hf/headmap.js`);
const wasm = pkg.initSync({ module: await readFile(`${ROOT}www/pkg-hf/headmap_bg.wasm`) });
const MB = (bytes) => (bytes / 2 ** 20).toFixed(1).padStart(8);

async function measure(shape) {
  const tokenizer = await readFile(`${ROOT}tests/fixtures/hf/llama/tokenizer.json`);
  const at = { start: wasm.memory.buffer.byteLength };
  let files = modelFiles(shape);
  const model = pkg.Model.fromFiles(files.config, files.weights, new Uint8Array(tokenizer));
  files = null;
  at.model = wasm.memory.buffer.byteLength;
  // a text the fixture's tokenizer splits into at most 2048 tokens: its words repeat, so the
  // tokens of 100 of them say how many fit
  const textOf = (words) => Array.from({ length: words }, (_, k) => ["the", "animal", "road", "tired", "it"][k % 5]).join(" ");
  const probe = model.run({ texts: [textOf(100)] });
  const perWord = probe.info().places[0].tq / 100;
  probe.free();
  const words = Math.floor(2040 / perWord) - 5;
  const text = textOf(words);
  const started = performance.now();
  const run = model.run({ texts: [text] });
  const forwardS = (performance.now() - started) / 1000;
  const place = run.info().places[0];
  at.run = wasm.memory.buffer.byteLength;
  const viewStart = performance.now();
  for (let layer = 0; layer < place.layers; layer++) {
    for (let head = 0; head < place.heads; head++) run.pooled(place.place, 0, layer, head, 96, 96);
  }
  run.view(place.place, 0, place.layers - 1, 0);
  const viewS = (performance.now() - viewStart) / 1000;
  at.view = wasm.memory.buffer.byteLength;
  const every = shape.layers * shape.heads * place.tq * place.tk * 4;
  console.log(`${shape.name}: ${shape.layers} layers × ${shape.heads} heads (${shape.kvHeads} KV), hidden ${shape.hidden}, ${place.tq} tokens`);
  console.log(`  wasm memory after loading the model   ${MB(at.model)} MB  (from ${MB(at.start).trim()})`);
  console.log(`  … after the forward                   ${MB(at.run)} MB  (${forwardS.toFixed(1)} s)`);
  console.log(`  … after viewing every head            ${MB(at.view)} MB  (every head pooled for the grid, one at full size, the maxima: ${viewS.toFixed(1)} s)`);
  console.log(`  every weight kept would be            ${MB(every)} MB`);
  run.free();
  model.free();
}

const which = process.argv[2] ?? "both";
for (const key of which === "both" ? ["tiny", "smollm"] : [which]) {
  if (!SHAPES[key]) throw new Error(`unknown shape ${key}: tiny, smollm or both`);
  await measure(SHAPES[key]);
}
