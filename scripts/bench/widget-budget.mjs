// The widget's budgets, measured, not asserted (issue 8): the toy widget's download (JS + wasm,
// gzipped), the time from the script arriving to the first figure, and ten widgets on one page
// to all drawn — in headless Chromium on a local server, min / median / max of fresh loads.
// Run after scripts/build/all:  node scripts/bench/widget-budget.mjs [loads]
import { readFile, readdir } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "../browser.mjs";
import { serve } from "../serve.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DIST = join(ROOT, "dist", "headmap");
const loads = Number(process.argv[2] ?? 7);

// 1. what a page with a toy widget downloads
const files = [];
for (const entry of await readdir(DIST, { withFileTypes: true, recursive: true })) {
  if (!entry.isFile()) continue;
  const path = join(entry.parentPath ?? entry.path, entry.name);
  files.push({ path: relative(DIST, path), bytes: await readFile(path) });
}
// the entry with the chunks it imports (dist.mjs lists them), the worker, the toy wasm, and the
// words of the page's language; the views beyond heatmap and grid load on first use, the error
// words at the first error
const eager = JSON.parse(files.find((f) => f.path === "js/chunks/eager.json").bytes.toString());
const gz = (list) => list.reduce((n, f) => n + gzipSync(f.bytes, { level: 9 }).length, 0);
for (const lang of ["ko", "en"]) {
  const toyFiles = files.filter((f) => [...eager, "pkg/headmap.js", "pkg/headmap_bg.wasm"].includes(f.path) || new RegExp(`^js/chunks/${lang}-\\w+\\.js$`).test(f.path));
  console.log(`toy widget download, ${lang} page: ${(gz(toyFiles) / 1024).toFixed(1)} KiB gzipped (budget 150) — ${toyFiles.map((f) => f.path).join(", ")}`);
}

// 2. timings, on pages made here
const page = (widgets) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module" src="/assets/headmap/headmap.js"></script></head><body>
${Array.from({ length: widgets }, (_, k) => `<attention-heatmap id="w${k}" model="small" text="Minsu gave Younghee a book number ${k}." head="${k % 4}"></attention-heatmap>`).join("\n")}
</body></html>`;
const pages = { "/one.html": page(1), "/ten.html": page(10) };
const server = await serve(DIST, 0, {
  mounts: { "/assets/headmap/": DIST },
  routes: { "/one.html": (req, res) => res.end(pages["/one.html"]), "/ten.html": (req, res) => res.end(pages["/ten.html"]) },
});
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();

/** ms from headmap.js arriving to every widget's first `render`. */
async function time(path) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 20000 } });
  const tab = await context.newPage();
  await tab.addInitScript(() => {
    globalThis.__done = new Map();
    document.addEventListener("render", (e) => e.target.localName === "attention-heatmap" && !__done.has(e.target.id) && __done.set(e.target.id, performance.now()), true);
  });
  await tab.goto(base + path);
  const n = path === "/ten.html" ? 10 : 1;
  await tab.waitForFunction((k) => globalThis.__done.size >= k, n, { timeout: 60000 });
  const ms = await tab.evaluate(() => {
    const script = performance.getEntriesByType("resource").find((r) => r.name.endsWith("/headmap.js"));
    return Math.max(...globalThis.__done.values()) - script.responseEnd;
  });
  await context.close();
  return ms;
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0].toFixed(0)} · median ${s[s.length >> 1].toFixed(0)} · max ${s.at(-1).toFixed(0)} ms`;
};
for (const [path, label, budget] of [["/one.html", "first figure after the script loads", 150], ["/ten.html", "ten widgets, all drawn", 1000]]) {
  const xs = [];
  for (let k = 0; k < loads; k++) xs.push(await time(path));
  console.log(`${label}: ${stats(xs)} over ${loads} fresh loads (budget ${budget} ms)`);
}
await browser.close();
server.close();
