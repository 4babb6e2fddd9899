// The explorer's speed in headless Chromium, as figures (not assertions: the machine is
// shared). Run after scripts/build/all:  node scripts/bench/page.mjs
//   - navigation to first heatmap (median of 5 loads)
//   - worker compute and main-heatmap redraw at 16, 128, 512 and 2048 tokens (median of 5)
//   - all-MiniLM-L6-v2: load (fetch + parse), forward with every layer's weights at 16, 128
//     and 512 tokens, and the wasm memory at its largest
//   - generate and watch: the trained translator writing the seed sentence's English and the
//     induction model continuing a repeat, tokens per second as the panel draws them
//   - for every case, the longest gap between two animation frames on the main thread while
//     the page computed and drew (a frozen page shows as a long gap; the goal is < 100 ms)
import { launchChromium } from "../browser.mjs";
import { EXPLORER, serve } from "../serve.mjs";

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const max = (xs) => Math.max(...xs);

/** Counts the main thread's frames from now: `gap()` then gives the longest pause since. */
function watchFrames(page) {
  return page.evaluate(() => {
    const w = (globalThis.__frames = { last: performance.now(), gap: 0, on: true });
    const tick = (t) => {
      w.gap = Math.max(w.gap, t - w.last);
      w.last = t;
      if (w.on) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}
const frameGap = (page) =>
  page.evaluate(async () => {
    await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
    globalThis.__frames.on = false;
    return globalThis.__frames.gap;
  });
const SIZES = (process.env.HEADMAP_BENCH_SIZES ?? "16,128,512,2048").split(",").map(Number);

const server = await serve(EXPLORER.root, 0, { mounts: EXPLORER.mounts });
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  for (const [query, name] of [["?model=toy&seed=", "the toy"], ["?seed=", "the default (trained) model"]]) {
    const firsts = [];
    for (let k = 0; k < 5; k++) {
      await page.goto(`${base}${query}${k + 1}`);
      await page.waitForFunction(() => globalThis.__headmap?.ready, null, { timeout: 60000 });
      firsts.push(await page.evaluate(() => performance.getEntriesByName("headmap:first-heatmap")[0].startTime));
    }
    console.log(`first heatmap after navigation, ${name}: ${median(firsts).toFixed(0)} ms (median of 5; min ${Math.min(...firsts).toFixed(0)}, max ${max(firsts).toFixed(0)})`);
  }

  await page.goto(`${base}?model=toy&text2=`);
  await page.waitForFunction(() => globalThis.__headmap?.ready);
  console.log("tokens   compute ms   redraw ms   longest frame gap ms, new text / new head (small preset, 2 layers x 4 heads, padding mask)");
  for (const n of SIZES) {
    const computes = [];
    const redraws = [];
    const gaps = [];
    const redrawGaps = [];
    for (let r = 0; r < 5; r++) {
      const renders = await page.evaluate(() => globalThis.__headmap.renders);
      const text = Array.from({ length: n }, (_, i) => `w${(i * 7 + r) % 997}`).join(" ");
      await watchFrames(page);
      await page.locator("#text").fill(text);
      await page.waitForFunction((k) => globalThis.__headmap.renders > k, renders, { timeout: 120000 });
      gaps.push(await frameGap(page));
      computes.push(await page.evaluate(() => globalThis.__headmap.timings.computeMs));
      // A redraw alone: another head, same numbers.
      const before = await page.evaluate(() => globalThis.__headmap.renders);
      await watchFrames(page);
      await page.locator("#head").selectOption(String((r + 1) % 4));
      await page.waitForFunction((k) => globalThis.__headmap.renders > k, before);
      redrawGaps.push(await frameGap(page));
      redraws.push(await page.evaluate(() => globalThis.__headmap.timings.drawMs));
    }
    console.log(`${String(n).padStart(6)}${median(computes).toFixed(1).padStart(13)}${median(redraws).toFixed(1).padStart(12)}${`${max(gaps).toFixed(0)} / ${max(redrawGaps).toFixed(0)}`.padStart(20)}`);
  }

  const loads = [];
  for (let k = 0; k < 3; k++) {
    await page.goto(`${base}?model=minilm&text2=`);
    await page.waitForFunction(() => globalThis.__headmap?.timings.modelLoadMs && globalThis.__headmap.meta?.heads === 12, null, { timeout: 120000 });
    loads.push(await page.evaluate(() => globalThis.__headmap.timings.modelLoadMs));
  }
  console.log(`all-MiniLM-L6-v2 in Chromium: load ${median(loads).toFixed(0)} ms (median of 3: fetch from 127.0.0.1, wasm module, weights)`);
  for (const n of [16, 128, 512]) {
    const times = [];
    const gaps = [];
    for (let r = 0; r < 5; r++) {
      const renders = await page.evaluate(() => globalThis.__headmap.renders);
      // [CLS] the the … [SEP] is exactly n tokens; r varies the text so each run recomputes
      await watchFrames(page);
      await page.locator("#text").fill(`${"the ".repeat(n - 3)}${["a", "an", "of", "to", "in"][r]}`);
      await page.waitForFunction((k) => globalThis.__headmap.renders > k, renders, { timeout: 120000 });
      gaps.push(await frameGap(page));
      times.push(await page.evaluate(() => globalThis.__headmap.timings.computeMs));
    }
    const tokens = await page.evaluate(() => globalThis.__headmap.meta.tq);
    console.log(`  forward ${String(tokens).padStart(4)} tokens: ${median(times).toFixed(1).padStart(8)} ms (median of 5, every layer's weights kept), longest frame gap ${max(gaps).toFixed(0)} ms`);
  }
  const bytes = await page.evaluate(() => globalThis.__headmap.timings.wasmBytes);
  console.log(`  wasm memory at its largest: ${(bytes / 1048576).toFixed(0)} MiB`);

  // generate and watch: the panel writes token by token while the page draws each one
  const SEED = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.";
  const REPEAT = "고양이 공원 노래 꽃 강 가방 고양이 공원";
  for (const [model, prompt, most] of [["trained", SEED, 40], ["induction", REPEAT, 24]]) {
    const spans = [];
    const gaps = [];
    let written = 0;
    for (let r = 0; r < 3; r++) {
      await page.goto(`${base}?model=${model}&text=${encodeURIComponent(prompt)}`);
      await page.waitForFunction(() => globalThis.__headmap?.ready && !document.getElementById("gen-run").disabled, null, { timeout: 60000 });
      await page.fill("#gen-prompt", prompt);
      await page.fill("#gen-max", String(most));
      await page.evaluate(() => (globalThis.__headmap.generation = null));
      await watchFrames(page);
      const t0 = Date.now();
      await page.locator("#gen-run").click();
      await page.waitForFunction(() => globalThis.__headmap.generation, null, { timeout: 120000 });
      spans.push(Date.now() - t0);
      gaps.push(await frameGap(page));
      written = await page.evaluate(() => globalThis.__headmap.generation.generated.length);
    }
    const rate = (written / median(spans)) * 1000;
    console.log(`generate, ${model} model: ${written} tokens in ${median(spans)} ms (median of 3) = ${rate.toFixed(1)} tokens/s drawn as they come, longest frame gap ${max(gaps).toFixed(0)} ms`);
  }
} finally {
  await browser.close();
  server.close();
}
