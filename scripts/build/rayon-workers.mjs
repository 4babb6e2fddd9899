// wasm-bindgen-rayon's no-bundler helper starts each thread from a blob: copy of itself, which a
// page whose CSP says `worker-src 'self'` (ours, and most careful blogs') refuses. The helper is
// served beside the package, same-origin, so the threads start from its own URL instead, through
// the Trusted Types policy `headmap` where the page enforces them; and a thread that traps says
// so where the page listens; each thread starts its package as wasm-bindgen asks. Run by
// scripts/build/all on www/pkg-hf-threads/; fails if the helper no longer reads as expected.
// Usage: node scripts/build/rayon-workers.mjs PACKAGE_DIR
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const dir = join(process.argv[2], "snippets");
const crate = (await readdir(dir)).find((d) => d.startsWith("wasm-bindgen-rayon-"));
if (!crate) throw new Error(`no wasm-bindgen-rayon snippet in ${dir}`);
const file = join(dir, crate, "src", "workerHelpers.no-bundler.js");
const text = (await readFile(file, "utf8")).replaceAll("\r\n", "\n"); // the crate's file has CRLF
const from = `      let scriptBlob = await fetch(import.meta.url).then(r => r.blob());
      let url = URL.createObjectURL(scriptBlob);`;
const to = `      let url = threadScript(import.meta.url);`;
if (!text.includes(from)) {
  if (text.includes(to)) process.exit(0); // patched already
  throw new Error(`${file} no longer starts its workers from a blob: update scripts/build/rayon-workers.mjs`);
}
const helper = `
// (headmap) a thread's script: this file's own URL, as a TrustedScriptURL where Trusted Types
// are enforced (a page allowing the policy \`headmap\`)
let headmapPolicy;
function threadScript(url) {
  const tt = globalThis.trustedTypes;
  if (!tt?.createPolicy) return url;
  headmapPolicy ??= tt.createPolicy("headmap", { createScriptURL: (u) => (u === import.meta.url ? u : "") });
  return headmapPolicy.createScriptURL(url);
}
`;
const stale = `      // The script is fetched as a blob so it works even if this script is
      // hosted remotely (e.g. on a CDN). This avoids a cross-origin
      // security error.
`;
// a trap on a thread (an abort, as running out of memory is, passes Rust's panic hook by) is said
// where the page listens (compute.js names the channel), as the hook says a panic: the worker
// waiting for this thread would wait for ever
const start = "  pkg.wbg_rayon_start_worker(data.receiver);\n";
const said = `  try {
    pkg.wbg_rayon_start_worker(data.receiver);
  } catch (e) {
    // (headmap) a trap on this thread, said where the page listens
    if (data.headmapPanics) new BroadcastChannel(data.headmapPanics).postMessage(String(e));
    throw e;
  }
`;
// the thread starts its package with one object, as wasm-bindgen now asks: the two arguments
// logged "using deprecated parameters" once a thread on every page load
const load = "  await pkg.default(data.module, data.memory);\n";
const loaded = "  await pkg.default({ module_or_path: data.module, memory: data.memory });\n";
const init = "    mainJS: builder.mainJS()\n";
const named = "    mainJS: builder.mainJS(),\n    headmapPanics: globalThis.headmapPanics\n";
if (!text.includes(start) || !text.includes(init) || !text.includes(load)) throw new Error(`${file} no longer starts its threads as expected: update scripts/build/rayon-workers.mjs`);
const patched = text
  .replace(from, to)
  .replace("URL.revokeObjectURL(url);", "")
  .replace(stale, "      // (headmap) started from this file's own URL: see threadScript below\n")
  .replace(start, said)
  .replace(load, loaded)
  .replace(init, named);
await writeFile(file, patched + helper);
