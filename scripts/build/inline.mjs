// Builds dist/headmap-inline.js: the widget, its worker and the real-model wasm in one classic
// script (www/js/inline/main.js), for figures that must stand alone — a notebook's output, an
// HTML file saved from it. The wasm is deflated and base64'd (about 1.5 MB of text); the views
// and words that the hosted widget loads on first use are all inside.
// Run by scripts/build/all after scripts/build/dist.mjs; prints its size.
import { readFile, writeFile } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import { build } from "esbuild";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WWW = join(ROOT, "www");
const OUT = join(ROOT, "dist", "headmap-inline.js");

/** `headmap:<name>` modules made here, and every wasm package (toy, real-model, threaded, relaxed) as the inline one. */
const virtual = (modules) => ({
  name: "inline",
  setup(b) {
    b.onResolve({ filter: /^headmap:/ }, ({ path }) => ({ path, namespace: "headmap" }));
    b.onLoad({ filter: /.*/, namespace: "headmap" }, ({ path }) => ({ contents: modules[path], loader: "js" }));
    b.onResolve({ filter: /(^|\/)pkg(-hf)?(-threads)?(-relaxed)?\/headmap\.js$/ }, ({ importer }) =>
      importer.endsWith(join("inline", "pkg.js")) ? undefined : { path: join(WWW, "js", "inline", "pkg.js") },
    );
  },
});

const options = {
  bundle: true,
  format: "iife",
  minify: true,
  charset: "utf8",
  target: "es2022",
  legalComments: "none",
  write: false,
  logLevel: "error", // import.meta.url is never reached: the worker and wasm come inline
};

const wasm = deflateSync(await readFile(join(WWW, "pkg-hf", "headmap_bg.wasm")), { level: 9 }).toString("base64");
const worker = await build({
  ...options,
  entryPoints: [join(WWW, "js", "worker.js")],
  plugins: [virtual({ "headmap:wasm": `export const WASM = ${JSON.stringify(wasm)};` })],
});
const workerSource = worker.outputFiles[0].text;
const main = await build({
  ...options,
  entryPoints: [join(WWW, "js", "inline", "main.js")],
  plugins: [virtual({ "headmap:worker-source": `export const WORKER_SOURCE = ${JSON.stringify(workerSource)};` })],
});
const text = main.outputFiles[0].text;
// what would end or change the script element it is put in (the notebook package checks the same)
if (/<\/script|<!--/i.test(text)) throw new Error("the inline bundle must not contain </script or <!--: it goes inside a script element");
await writeFile(OUT, text);
console.log(`[inline] dist/headmap-inline.js: ${(text.length / 2 ** 20).toFixed(2)} MB (the wasm ${(wasm.length / 2 ** 20).toFixed(2)} MB of it)`);
