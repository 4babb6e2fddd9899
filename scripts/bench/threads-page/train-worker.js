// Training the page's default model (2 layers, d_model 32, 4 heads, batch 32 of 33 tokens) in
// the threaded build on a pool of `threads` (scripts/bench/train.mjs): the ms of 100 steps, each
// repetition after a warm-up.
const params = new URL(self.location.href).searchParams;
const threads = Number(params.get("threads"));
const reps = Number(params.get("reps"));
const STEPS = 100;
try {
  const pkg = await import("/pkg-hf-threads/headmap.js");
  await pkg.default();
  await pkg.initThreadPool(threads);
  const trainer = new pkg.Trainer({ seed: 0 });
  const ms = [];
  for (let r = 0; r <= reps; r++) {
    const t0 = performance.now();
    trainer.steps(STEPS);
    if (r > 0) ms.push(performance.now() - t0); // the first is a warm-up
  }
  self.postMessage({ threads: pkg.threadCount(), steps: STEPS, ms });
} catch (e) {
  self.postMessage({ error: String(e?.stack ?? e) });
}
