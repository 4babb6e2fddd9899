// The time to the phase change in the explorer (issue 32): the default live run — a 2-layer
// attention-only GPT-2, d_model 32, 4 heads — trained in headless Chromium from seeds 0, 1, 2
// (or those given), each in a fresh page at 1280 px, until the page finds the change by the
// command line's rule (copy accuracy ≥ 0.6 and a head's induction score ≥ 0.5). Prints the step
// and the seconds the page reports, and the steps a second at that point. Figures, not
// assertions: the machine's load moves them.
//
// Run after scripts/build/all:  node scripts/bench/train-page.mjs [seed ...]
import { openExplorer, openHarness } from "../../tests/browser/harness.mjs";

const seeds = process.argv.slice(2).map(Number);
const h = await openHarness();
try {
  for (const seed of seeds.length ? seeds : [0, 1, 2]) {
    const page = await openExplorer(h, "?model=induction&lang=en", { locale: "en-US", width: 1280, height: 900 });
    await page.locator("#train-panel").scrollIntoViewIfNeeded();
    await page.fill("#train-seed", String(seed));
    await page.fill("#train-steps", "3000");
    await page.locator("#train-start").click();
    const found = await page.waitForFunction(() => globalThis.__headmap.training?.phase, null, { timeout: 300_000, polling: 100 });
    const phase = await found.jsonValue();
    const { rate } = await page.evaluate(() => globalThis.__headmap.training);
    console.log(`seed ${seed}: phase change at step ${phase.step}, ${phase.seconds.toFixed(1)} s in; ${Math.round(rate)} steps/s`);
    await page.close();
  }
} finally {
  await h.close();
}
