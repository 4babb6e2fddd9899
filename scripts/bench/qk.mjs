// What the query–key view costs (issue 19), as figures, not assertions (the machine is shared):
//   1. in wasm (Node): MiniLM's corpus of about 4,000 tokens (160 lines of two example
//      sentences) — whole runs, the view's runs through layer 3, then the joint embedding, PCA
//      and correlations of all 12 heads of that layer, as ratios to the runs; t-SNE of one head
//      of about 4,000 points (80 lines);
//   2. in headless Chromium: the explorer drawing that corpus and a t-SNE, with the longest
//      gap between two animation frames on the main thread meanwhile (the goal: under 50 ms).
// Min / median / max over repetitions. Run after scripts/build/all and scripts/setup:
//   node scripts/bench/qk.mjs [repetitions]
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { launchChromium } from "../browser.mjs";
import { EXPLORER, serve } from "../serve.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const reps = Number(process.argv[2] ?? 3);
const stats = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return `median ${s[s.length >> 1].toFixed(0)} ms (min ${s[0].toFixed(0)}, max ${s.at(-1).toFixed(0)})`;
};

const sentences = (await readFile(`${ROOT}www/data/sentences.en.txt`, "utf8")).split("\n").filter(Boolean);
const lines = Array.from({ length: 160 }, (_, i) => `${sentences[i % 40]} ${sentences[(i * 7 + 3) % 40]}`);

// 1. wasm in Node
const pkg = await import(`${ROOT}www/pkg-hf/headmap.js`);
pkg.initSync({ module: await readFile(`${ROOT}www/pkg-hf/headmap_bg.wasm`) });
const dir = `${ROOT}models/all-MiniLM-L6-v2/`;
const bytes = async (name) => new Uint8Array(await readFile(dir + name));
const model = pkg.Model.fromFiles(await bytes("config.json"), await bytes("model.safetensors"), await bytes("tokenizer.json"));
const layer = 2;
const [runs, whole, pictures, tsnes] = [[], [], [], []];
let tokens = 0;
for (let r = 0; r < reps; r++) {
  const t = performance.now();
  for (const line of lines) model.run({ texts: [line], place: "encoder_self" }).free();
  whole.push(performance.now() - t);
  const corpus = new pkg.QkCorpus();
  const t0 = performance.now();
  for (const line of lines) {
    const run = model.run({ texts: [line], place: "encoder_self", throughLayer: layer });
    corpus.add(run, "encoder_self", 0, layer);
    run.free();
  }
  const t1 = performance.now();
  const all = Array.from({ length: corpus.heads() }, (_, h) => corpus.picture(h));
  pictures.push(performance.now() - t1);
  runs.push(t1 - t0);
  tokens = all[0].queries;
  corpus.free();
}
console.log(`MiniLM, ${lines.length} lines, ${tokens} tokens, layer ${layer + 1} (wasm in Node, ${reps} repetitions)`);
const mid = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`  whole runs, one line each          ${stats(whole)}`);
console.log(`  runs through layer ${layer + 1} (the view's)   ${stats(runs)}   ×${(mid(runs) / mid(whole)).toFixed(2)} of the whole runs`);
console.log(`  PCA + correlations of all 12 heads ${stats(pictures)}   ×${(pictures.sort((a, b) => a - b)[reps >> 1] / runs.sort((a, b) => a - b)[reps >> 1]).toFixed(3)} of the runs`);
{
  const corpus = new pkg.QkCorpus();
  for (const line of lines.slice(0, 80)) {
    const run = model.run({ texts: [line], place: "encoder_self", throughLayer: layer });
    corpus.add(run, "encoder_self", 0, layer);
    run.free();
  }
  const points = corpus.picture(0).queries + corpus.picture(0).keys;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    corpus.tsne(0);
    tsnes.push(performance.now() - t0);
  }
  console.log(`  t-SNE of one head, ${points} points  ${stats(tsnes)}`);
  corpus.free();
}
model.free();

// 2. the explorer in Chromium: the longest gap between two frames while it draws
const server = await serve(EXPLORER.root, 0, { mounts: EXPLORER.mounts });
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(`http://127.0.0.1:${server.address().port}/?model=minilm&lang=en`);
  await page.waitForFunction(() => globalThis.__headmap?.renders >= 1, null, { timeout: 120000 });
  const watch = () =>
    page.evaluate(() => {
      const w = (globalThis.__frames = { last: performance.now(), gaps: [], on: true });
      const tick = (t) => {
        w.gaps.push(t - w.last);
        w.last = t;
        if (w.on) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
  const gaps = () => page.evaluate(() => ((globalThis.__frames.on = false), globalThis.__frames.gaps));
  const drawGaps = [];
  const tsneGaps = [];
  for (let r = 0; r < reps; r++) {
    await page.selectOption("#qk-source", "text");
    await page.fill("#qk-text", lines.join("\n"));
    await page.selectOption("#qk-layer", String(layer));
    await watch();
    const t0 = Date.now();
    await page.click("#qk-draw");
    await page.waitForFunction(() => /\d+ tokens/.test(document.getElementById("qk-status").textContent), null, { timeout: 300000 });
    const g = await gaps();
    drawGaps.push(Math.max(...g));
    console.log(`  explorer: ${lines.length} lines drawn in ${Date.now() - t0} ms, longest frame gap ${Math.max(...g).toFixed(0)} ms, ${g.filter((x) => x > 50).length} gaps over 50 ms of ${g.length}`);
    await watch();
    await page.selectOption("#qk .qk-bar select >> nth=0", "tsne");
    await page.waitForFunction(() => /t-SNE \(perplexity/.test(document.querySelector("#qk .qk-stats").textContent), null, { timeout: 300000 });
    const t = await gaps();
    tsneGaps.push(Math.max(...t));
    await page.selectOption("#qk .qk-bar select >> nth=0", "pca");
  }
  console.log(`Explorer in Chromium: longest frame gap while drawing ${stats(drawGaps)}, while t-SNE runs ${stats(tsneGaps)}`);
} finally {
  await browser.close();
  server.close();
}
