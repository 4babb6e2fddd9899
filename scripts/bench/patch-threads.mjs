// Patching all 144 heads of GPT-2-small's shape at 20 tokens in headless Chromium, in the
// threaded build on 1 and on 2 threads (the heads of a layer run side by side), as figures:
// min / median / max of repetitions after a warm-up, and 2 threads ÷ 1. The build is the
// relaxed-SIMD twin, which the page loads in a Chromium that has it; PATCH_PKG=www/pkg-hf-threads
// times the plain one.
// Run after scripts/build/all:  node scripts/bench/patch-threads.mjs [repetitions]
import { fileURLToPath } from "node:url";

import { launchChromium } from "../browser.mjs";
import { serve } from "../serve.mjs";

const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const reps = Number(process.argv[2] ?? 3);
const server = await serve(repo("scripts/bench/threads-page"), 0, {
  mounts: { "/pkg-hf-threads/": repo(process.env.PATCH_PKG ?? "www/pkg-hf-threads-relaxed"), "/bench/": repo("scripts/bench"), "/fixture/": repo("tests/fixtures/hf/llama") },
});
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => globalThis.ready);
  const results = await page.evaluate((n) => globalThis.measure([1, 2], n), reps);
  const stats = (ms) => [...ms].sort((a, b) => a - b);
  const med = {};
  for (const { threads, ms } of results) {
    const s = stats(ms);
    med[threads] = s[s.length >> 1];
    console.log(`patching 144 heads, GPT-2-small's shape, 20 tokens, ${threads} thread${threads > 1 ? "s" : ""}: ${(med[threads] / 1000).toFixed(1)} s (min ${(s[0] / 1000).toFixed(1)}, max ${(s.at(-1) / 1000).toFixed(1)}; ${browser.version()})`);
  }
  console.log(`  2 threads ÷ 1 thread: ${(med[2] / med[1]).toFixed(2)} (${process.env.PATCH_PKG ?? "www/pkg-hf-threads-relaxed"})`);
} finally {
  await browser.close();
  server.close();
}
