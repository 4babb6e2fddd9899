// SmolLM-135M's shape (random weights) at about 2,033 tokens in the threaded build on a pool of
// `threads` (scripts/bench/large-page.mjs), as the explorer shows it: the forward, then every
// head of every layer max-pooled to a thumbnail, one head's numbers (`view`) and its plot; the
// seconds of each and the wasm memory after each, for each repetition.
import { SHAPES, modelFiles } from "/bench/llama-shape.mjs";

const params = new URL(self.location.href).searchParams;
const threads = Number(params.get("threads"));
const reps = Number(params.get("reps"));
const thumb = Number(params.get("thumb") ?? 72);
const plot = Number(params.get("plot") ?? 600);
const ahead = params.get("ahead") !== "0"; // 0: the thumbnails computed again from each layer
try {
  const pkg = await import("/pkg-hf-threads/headmap.js");
  const wasm = await pkg.default();
  await pkg.initThreadPool(threads);
  const tokenizer = new Uint8Array(await (await fetch("/fixture/tokenizer.json")).arrayBuffer());
  let files = modelFiles(SHAPES.smollm);
  const model = pkg.Model.fromFiles(files.config, files.weights, tokenizer);
  files = null;
  // as scripts/bench/wasm-memory.mjs: words that repeat, so 100 of them say how many fit in 2,048
  const textOf = (words) => Array.from({ length: words }, (_, k) => ["the", "animal", "road", "tired", "it"][k % 5]).join(" ");
  const probe = model.run({ texts: [textOf(100)], throughLayer: 0 });
  const perWord = probe.info().places[0].tq / 100;
  probe.free();
  const text = textOf(Math.floor(2040 / perWord) - 5);
  const MB = () => wasm.memory.buffer.byteLength / 2 ** 20;
  const rows = [];
  for (let r = 0; r <= reps; r++) {
    const t0 = performance.now();
    // as the explorer asks: every head pooled to the grid's thumbnails as the layers run
    const run = model.run({ texts: [text], ...(ahead ? { thumbs: thumb } : {}) });
    const t1 = performance.now();
    const afterRun = MB();
    const place = run.info().places[0];
    const cell = thumb / Math.max(place.tq, place.tk);
    const [w, h] = [Math.max(1, Math.round(cell * place.tk)), Math.max(1, Math.round(cell * place.tq))];
    for (let layer = 0; layer < place.layers; layer++) {
      for (let head = 0; head < place.heads; head++) run.pooled(place.place, 0, layer, head, h, w);
    }
    const t2 = performance.now();
    const last = place.layers - 1;
    run.view(place.place, 0, last, 0);
    run.pooled(place.place, 0, last, 0, plot, plot);
    const t3 = performance.now();
    run.free();
    if (r > 0) rows.push({ tokens: place.tq, forward: (t1 - t0) / 1000, thumbs: (t2 - t1) / 1000, head: (t3 - t2) / 1000, afterRun, afterView: MB() });
  }
  model.free();
  self.postMessage({ threads: pkg.threadCount(), rows });
} catch (e) {
  self.postMessage({ error: String(e?.stack ?? e) });
}
