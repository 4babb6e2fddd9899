// What a page with a toy widget downloads before its first figure, gzipped at level 9 as a server
// sends it: the widget's entry with the chunks it imports statically (dist.mjs lists them, and
// the worker, in js/chunks/eager.json), the toy wasm with its glue, and the words of the page's
// one language. The views beyond heatmap and grid load on first use, the error words at the
// first error, the real-model package with the first real model: none of them counts. One
// definition for dist.mjs's summary, the budget bench (scripts/bench/widget-budget.mjs) and
// the widget test that holds the budget.
import { readFile, readdir } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { join } from "node:path";

/** The budget of issue 8, in KiB gzipped: a blog page with a toy widget on it. */
export const TOY_BUDGET_KIB = 150;

/** The files a toy widget on a page in `lang` ("en" or "ko") downloads from `dist` (dist/headmap/), with their sizes. */
export async function toyDownload(dist, lang) {
  const eager = JSON.parse(await readFile(join(dist, "js", "chunks", "eager.json"), "utf8"));
  const words = (await readdir(join(dist, "js", "chunks"))).filter((f) => new RegExp(`^${lang}-\\w+\\.js$`).test(f)).map((f) => `js/chunks/${f}`);
  const paths = [...eager, "pkg/headmap.js", "pkg/headmap_bg.wasm", ...words];
  const files = [];
  for (const path of paths) {
    const bytes = await readFile(join(dist, path));
    files.push({ path, raw: bytes.length, gz: gzipSync(bytes, { level: 9 }).length });
  }
  const sum = (key) => files.reduce((n, f) => n + f[key], 0);
  return { files, raw: sum("raw"), gz: sum("gz") };
}
