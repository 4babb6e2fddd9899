// The widget's budgets, measured (issue 8): the toy widget's download (JS + wasm, gzipped; the
// widget test holds it to the budget), the time from the script arriving to the first figure,
// and ten widgets on one page to all drawn — in headless Chromium on a local server, min /
// median / max of fresh loads (times vary with the machine: measured here, never asserted).
// Run after scripts/build/all:  node scripts/bench/widget-budget.mjs [loads]
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "../browser.mjs";
import { TOY_BUDGET_KIB, toyDownload } from "../build/toy-download.mjs";
import { serve } from "../serve.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DIST = join(ROOT, "dist", "headmap");
const loads = Number(process.argv[2] ?? 7);

// 1. what a page with a toy widget downloads (scripts/build/toy-download.mjs says which files)
for (const lang of ["ko", "en"]) {
  const { files, gz } = await toyDownload(DIST, lang);
  console.log(`toy widget download, ${lang} page: ${(gz / 1024).toFixed(1)} KiB gzipped (budget ${TOY_BUDGET_KIB}) — ${files.map((f) => f.path).join(", ")}`);
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
