// Puts together dist/headmap/: the folder a blog author copies (or installs from npm) to embed
// <attention-heatmap>. Everything is found from headmap.js's own URL, so any static host works.
// Run by scripts/build/all after the wasm is built; prints the folder's sizes.
import { cp, mkdir, readFile, rm, stat, writeFile, readdir } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { build, transform } from "esbuild";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FUSIONS, SCORES } from "../../www/js/find-names.js";
import { TOY_BUDGET_KIB, toyDownload } from "./toy-download.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WWW = join(ROOT, "www");
const OUT = join(ROOT, "dist", "headmap");

/** What the widget needs besides its two bundles (headmap.js and js/worker.js). */
const FILES = [
  "headmap.d.ts",
  "pkg/headmap.js",
  "pkg/headmap_bg.wasm",
  "pkg/headmap.d.ts",
  "pkg-hf/headmap.js",
  "pkg-hf/headmap_bg.wasm",
  "pkg-hf/headmap.d.ts",
  "pkg-hf-relaxed/headmap.js",
  "pkg-hf-relaxed/headmap_bg.wasm",
  "pkg-hf-relaxed/headmap.d.ts",
  // the threaded build as wasm-bindgen wrote it: its thread helper (snippets/) starts each
  // thread from its own URL and imports headmap.js by URL, so neither is bundled
  "pkg-hf-threads",
  "pkg-hf-threads-relaxed",
  "models/headmap-tiny-ko-en/config.json",
  "models/headmap-tiny-ko-en/model.safetensors",
  "models/headmap-tiny-ko-en/tokenizer.json",
  "models/headmap-tiny-ko-en/headmap.json",
  "models/headmap-tiny-ko-en/README.md",
  "models/headmap-tiny-ko-en/timeline", // the training timeline a widget's `step` opens, fetched only then
  "models/headmap-tiny-induction/config.json",
  "models/headmap-tiny-induction/model.safetensors",
  "models/headmap-tiny-induction/tokenizer.json",
  "models/headmap-tiny-induction/headmap.json",
  "models/headmap-tiny-induction/README.md",
  "models/headmap-tiny-induction/timeline",
  "data/sentences.en.txt",
  "data/sentences.ko.txt",
];

const cargo = await readFile(join(ROOT, "Cargo.toml"), "utf8");
const version = cargo.match(/^version = "([^"]+)"/m)[1];

await rm(OUT, { recursive: true, force: true });
await mkdir(OUT, { recursive: true });
for (const f of FILES) await cp(join(WWW, f), join(OUT, f), { recursive: true });
// The widget's stylesheet is CSS in a JS string, which the JS minifier leaves as it is: this
// minifies it as CSS (comments and spaces out), a kilobyte less for every blog reader.
const minifiedStyles = {
  name: "minified-styles",
  setup(b) {
    b.onLoad({ filter: /widget[\\/]styles\.js$/ }, async ({ path }) => {
      const source = await readFile(path, "utf8");
      const css = source.slice(source.indexOf("`") + 1, source.lastIndexOf("`"));
      if (css.includes("${")) throw new Error("styles.js: the stylesheet must be plain text");
      const { code } = await transform(css, { loader: "css", minify: true, logLevel: "warning" });
      return { contents: `export const STYLES = ${JSON.stringify(code)};`, loader: "js" };
    });
  },
};

// The widget loads the words of its page's one language, not both: the catalogue and the error
// words come from strings/lazy.js in its bundle (the explorer, unbundled, has both at once).
const oneLanguage = {
  name: "one-language",
  setup(b) {
    b.onResolve({ filter: /(^|\/)(strings\/index|strings\/errors|errors)\.js$/ }, ({ path, importer, resolveDir }) => {
      const target = join(resolveDir, path);
      const strings = join(WWW, "js", "strings");
      if (importer.startsWith(strings) && importer.endsWith("lazy.js")) return undefined; // lazy.js's own imports
      if (target === join(strings, "index.js") || target === join(strings, "errors.js")) return { path: join(strings, "lazy.js") };
      return undefined;
    });
  },
};

// Modules without state whose copy in the lazily loaded code costs less than a chunk of their
// own that every page fetches (a gzip stream and an import more): esbuild makes one of any
// module both the eager code and a lazy view import. Code outside the eager files
// (`eagerInputs`, from a first build) gets its own copy of these, and their own imports of each
// other; the one the eager code imports joins the eager files. A module with state (sizes.js's
// stylesheet, i18n.js's words) must stay one and is not listed.
const COPIED = ["errors.js", "find-names.js", "views/table.js", "widget/attributes.js", "settings.js", "places.js"].map((f) => join(WWW, "js", f));
const copiedInLazy = (eagerInputs) => ({
  name: "copied-in-lazy",
  setup(b) {
    b.onResolve({ filter: /\.js$/ }, ({ path, importer, resolveDir, namespace }) => {
      if (!eagerInputs || !path.startsWith(".")) return undefined;
      const target = join(resolveDir, path);
      if (COPIED.includes(target) && (namespace === "copy" || !eagerInputs.has(importer))) return { path: target, namespace: "copy" };
      return undefined;
    });
    b.onLoad({ filter: /.*/, namespace: "copy" }, async ({ path }) => ({ contents: await readFile(path, "utf8"), loader: "js", resolveDir: join(path, "..") }));
  },
});

// two bundles: the element with its views (a page imports one file; the views a widget loads
// on first use are chunks beside it, in js/chunks/), and the worker with the core's glue; the
// wasm packages stay separate files, the larger one loaded only for real models
const bundle = (entry, eagerInputs = null) =>
  build({
    plugins: [minifiedStyles, oneLanguage, copiedInLazy(eagerInputs)],
    entryPoints: [join(WWW, entry)],
    outdir: OUT,
    outbase: WWW,
    splitting: true,
    chunkNames: "js/chunks/[name]-[hash]",
    metafile: true,
    write: eagerInputs !== null,
    bundle: true,
    format: "esm",
    minify: true,
    // Korean as UTF-8 (modules are always read as UTF-8), not as \uXXXX escapes twice its size
    charset: "utf8",
    target: "es2022",
    legalComments: "none",
    external: ["../pkg/headmap.js", ...["pkg-hf", "pkg-hf-relaxed", "pkg-hf-threads", "pkg-hf-threads-relaxed"].map((p) => `../${p}/headmap.js`)],
    logLevel: "warning",
  });
// what a page with a heatmap widget loads before its first figure: the entry and the chunks it
// imports statically (the lazily loaded views, words and model-file fetching aside)
const eagerOf = ({ outputs }, name) => {
  const eager = new Set();
  const follow = (file) => {
    if (eager.has(file) || file.startsWith("..")) return; // an external (the wasm package's glue) is listed apart
    eager.add(file);
    for (const i of outputs[file]?.imports ?? []) if (i.kind === "import-statement") follow(i.path);
  };
  follow(Object.keys(outputs).find((f) => f.endsWith(name)));
  return eager;
};
// each bundle twice: the first finds which modules the eager files hold (see copiedInLazy)
const twice = async (entry, name) => {
  const first = (await bundle(entry)).metafile;
  const inputs = new Set([...eagerOf(first, name)].flatMap((f) => Object.keys(first.outputs[f].inputs)).map((i) => resolve(i)));
  return eagerOf((await bundle(entry, inputs)).metafile, name);
};
const eager = [...(await twice("headmap.js", "/headmap.js")), ...(await twice("js/worker.js", "/js/worker.js"))];
// the packages' glue is imported by a path from js/: a chunk one folder down that imported it
// (a module of the core's shared with a lazily loaded one) would ask for js/pkg/… and fail
for (const chunk of await readdir(join(OUT, "js", "chunks"))) {
  const code = await readFile(join(OUT, "js", "chunks", chunk), "utf8");
  if (/["']\.\.\/pkg[\w-]*\/headmap\.js["']/.test(code)) throw new Error(`js/chunks/${chunk} imports a wasm package by a path from js/: keep the core (core.js) in the worker's bundle alone`);
}
await writeFile(join(OUT, "js", "chunks", "eager.json"), `${JSON.stringify(eager.map((f) => relative(OUT, f)).sort())}\n`);
for (const pkg of ["pkg", "pkg-hf", "pkg-hf-relaxed"]) {
  await build({ entryPoints: [join(WWW, pkg, "headmap.js")], outfile: join(OUT, pkg, "headmap.js"), format: "esm", minify: true, target: "es2022", logLevel: "warning", allowOverwrite: true });
}
await writeFile(
  join(OUT, "package.json"),
  `${JSON.stringify(
    {
      name: "headmap-widget",
      version,
      description: "<attention-heatmap>: live attention heatmaps of a Transformer, computed in the browser, for blog posts",
      license: "MIT OR Apache-2.0",
      type: "module",
      main: "./headmap.js",
      types: "./headmap.d.ts",
      exports: { ".": { types: "./headmap.d.ts", default: "./headmap.js" }, "./headmap.js": "./headmap.js", "./*": "./*" },
      sideEffects: ["./headmap.js"],
      files: ["headmap.js", "headmap.d.ts", "js/", "pkg/", "pkg-hf/", "pkg-hf-relaxed/", "pkg-hf-threads/", "pkg-hf-threads-relaxed/", "models/", "data/", "README.md"],
      keywords: ["attention", "transformer", "heatmap", "web-component", "wasm"],
    },
    null,
    2,
  )}\n`,
);
await writeFile(
  join(OUT, "README.md"),
  `# headmap-widget ${version}

\`<attention-heatmap>\`: the attention weights of a Transformer, head by head, computed in the
reader's browser — for blog posts. Copy this folder to your site (say \`/assets/headmap/\`):

\`\`\`html
<script type="module" src="/assets/headmap/headmap.js"></script>
<attention-heatmap text="동물이 길을 건너지 않았다. 그것은 너무 피곤했다." mask="causal" layer="0" head="3"></attention-heatmap>
\`\`\`

Attributes (each also a property; every one is optional):

- \`text\`, \`text2\` or \`texts\` (a padded batch: a JSON array, or one sentence a line), \`target\`
  (an encoder–decoder's decoder input; left out, the model writes its own);
- \`model\`: trained (the default, a tiny Korean–English translator), induction (a tiny GPT-2
  trained to copy), small or base (the untrained toy), or the URL of a folder with config.json,
  model.safetensors and tokenizer.json; \`seed\` (the toy's weights, and sampling's);
- \`src\`: a JSON or safetensors file of weights computed elsewhere, drawn instead
  (\`headmap attention --format safetensors\`, or \`view="qk"\` with a \`qk_picture\` file);
- \`place\` (encoder_self | decoder_self | cross), \`mask\` (none | padding | causal | cross),
  \`scale\` (true | false: divide by √d_k), \`norm\` (value-weighted: α·‖v W_O‖);
- \`layer\`, \`head\` (or all): both counted from 0, as transformers does — the figure's labels
  count from 1;
- \`view\`: heatmap | grid | steps | mixing | pipeline | lines | atlas | rollout | qk | predict
  (what the model predicts at each position) | lens (the logit lens) | flow (what each head
  writes) | generate (the model writes, token by token); \`score\` (what atlas colours heads by:
  ${SCORES.join(" | ")}), \`fusion\` (how rollout fuses a layer's heads: ${FUSIONS.join(" | ")});
- \`ablate\`: heads turned off, \`1.0,1.3\` (layer.head from 0; \`encoder_self:1.0\` names a place)
  — every view computes the rest of the model without them; heads the model lacks stay on, and
  the widget says so;
- \`step\`: a checkpoint of the trained models' training timeline (model="trained" or
  "induction"), the nearest one if the step was not kept;
- view="generate": \`prompt\` (the text to continue or translate; left out, \`text\`),
  \`max-new-tokens\` (1–200, 20 unless told), \`temperature\` (left out: the likeliest token;
  above 0 samples, with \`seed\`), \`start\` (visible — writes when it comes into view — or tap);
- \`lang\` (ko | en; left out, the page's \`lang\`, followed when it changes), \`controls\`
  (sentence mask layer head scale save), \`colormap\` (viridis | magma | blues), \`theme\`
  (light | dark | auto).

Events: \`load\`, \`render\`, \`error\`. Theme with \`--headmap-bg\`, \`--headmap-fg\`,
\`--headmap-muted\`, \`--headmap-line\`, \`--headmap-accent\`, \`--headmap-font\`, \`--headmap-radius\`.

It needs \`script-src 'self' 'wasm-unsafe-eval'\` in a Content-Security-Policy; with Trusted Types
enforced, allow the policy \`headmap\` (\`trusted-types headmap\`). What you put inside the element
shows until it upgrades (readers without JavaScript, feed readers).

Real models run on threads (\`pkg-hf-threads/\`, one per core up to 8) when the page is
cross-origin isolated — served with \`Cross-Origin-Opener-Policy: same-origin\` and
\`Cross-Origin-Embedder-Policy: require-corp\`, on the page and on this folder's files alike
(a worker whose script lacks COEP does not start on such a page) — and on one thread (\`pkg-hf/\`) anywhere else, with
nothing to change in the page. Where the browser has relaxed SIMD (Chrome, Edge) the twins
\`pkg-hf-relaxed/\` and \`pkg-hf-threads-relaxed/\` run instead (fused multiply–add, faster);
leave them out and the plain ones run (the browser's console notes the missing folder once).
`,
);

async function sizes(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const bytes = await readFile(path);
    out.push({ path: relative(OUT, path), raw: bytes.length, gz: gzipSync(bytes, { level: 9 }).length });
  }
  return out;
}

const all = await sizes(OUT);
const sum = (list) => list.reduce((a, f) => ({ raw: a.raw + f.raw, gz: a.gz + f.gz }), { raw: 0, gz: 0 });
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
// what a page with a toy heatmap widget downloads (toy-download.mjs says which files)
const toy = await toyDownload(OUT, "ko");
const toyEn = await toyDownload(OUT, "en");
const views = sum(all.filter((f) => /^js\/chunks\/(lines|mixing|pipeline|steps)-figure-/.test(f.path)));
const errorWords = sum(all.filter((f) => /^js\/chunks\/errors-/.test(f.path)));
const real = sum(all.filter((f) => f.path.startsWith("pkg-hf/") && !f.path.endsWith(".d.ts")));
const twin = sum(all.filter((f) => f.path.startsWith("pkg-hf-relaxed/") && !f.path.endsWith(".d.ts")));
const model = sum(all.filter((f) => f.path.startsWith("models/")));
console.log(`[dist] dist/headmap: toy widget ${kib(toy.gz)} gzipped on a Korean page (${kib(toy.raw)}), ${kib(toyEn.gz)} on an English one, JS + toy wasm (budget ${TOY_BUDGET_KIB} KiB); the steps, mixing, pipeline and lines views add ${kib(views.gz)} on first use, the error words ${kib(errorWords.gz)} at the first error; real models add ${kib(real.gz)} gzipped (${kib(twin.gz)} in the relaxed-SIMD twin); the trained models ${kib(model.raw)}`);
