// What the Chromium benches of the threaded build share (patch-threads.mjs, generate-threads.mjs,
// train.mjs): threads-page/ served with a wasm package as /pkg-hf-threads/, the benches' modules
// as /bench/ and the Llama fixture's tokenizer as /fixture/, opened in headless Chromium, and one
// of its workers run once per thread count.
import { fileURLToPath } from "node:url";

import { launchChromium } from "../browser.mjs";
import { serve } from "../serve.mjs";

const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

/**
 * Runs threads-page/`script` in a worker of the threaded build `pkg` (a folder from the repository's
 * root) on each of `threads`, `reps` repetitions after a warm-up. Returns what each worker posted,
 * in order, and Chromium's version.
 */
export async function onThreads({ pkg, script, reps, threads = [1, 2] }) {
  const server = await serve(repo("scripts/bench/threads-page"), 0, {
    mounts: { "/pkg-hf-threads/": repo(pkg), "/bench/": repo("scripts/bench"), "/fixture/": repo("tests/fixtures/hf/llama") },
  });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
    page.on("crash", () => console.error("the page crashed (out of memory?)"));
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => globalThis.ready);
    const results = await page.evaluate(({ threads, reps, script }) => globalThis.measure(threads, reps, script), { threads, reps, script });
    return { results, version: browser.version() };
  } finally {
    await browser.close();
    server.close();
  }
}
