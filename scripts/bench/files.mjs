// How long a widget takes to draw weights computed elsewhere, in headless Chromium: a
// 12-layer × 12-head × 512-token run (37.7 M weights, as BERT-base would give) as an f16
// safetensors file (75 MB) and as f32 (151 MB), from `src` to the figure's `render` event,
// for the one-head heatmap and the grid of every head. Prints min / median / max of `runs`
// (default 3) and the page's longest gap between animation frames meanwhile.
//
//   node scripts/bench/files.mjs [runs]      (after scripts/build/all)

import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "../browser.mjs";
import { serve } from "../serve.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const RUNS = Number(process.argv[2] ?? 3);
const [L, H, T] = [12, 12, 512];

/** f32 → f16 bits, round to nearest even (what the file stores). */
function half(value) {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return sign;
    const m = (mant | 0x800000) >>> (1 - exp);
    const round = (mant | 0x800000) & ((1 << (1 - exp)) - 1);
    const halfway = 1 << (-exp);
    let h = m >>> 13;
    const rest = m & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (h & 1 || round > halfway))) h += 1;
    return sign | h;
  }
  let h = sign | (exp << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h += 1;
  return h;
}

/** A safetensors file of softmax rows over random scores: peaked like a trained head's. */
function attentionFile(dtype) {
  const n = L * H * T * T;
  const bytes = dtype === "F16" ? 2 : 4;
  const data = Buffer.alloc(n * bytes);
  let seed = 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const row = new Float64Array(T);
  for (let r = 0; r < L * H * T; r++) {
    let sum = 0;
    for (let j = 0; j < T; j++) sum += row[j] = Math.exp(6 * random());
    for (let j = 0; j < T; j++) {
      const w = row[j] / sum;
      const at = (r * T + j) * bytes;
      if (bytes === 2) data.writeUInt16LE(half(w), at);
      else data.writeFloatLE(w, at);
    }
  }
  const tokens = Array.from({ length: T }, (_, i) => (i === 0 ? "[CLS]" : i === T - 1 ? "[SEP]" : `word${i}`));
  const doc = { format: "headmap.attention", version: 1, model_type: "bert", rows: [{ attention: { encoder_self: { mask: "padding", queries: tokens, keys: tokens } } }] };
  const header = { __metadata__: { headmap: JSON.stringify(doc) }, "rows.0.encoder_self": { dtype, shape: [L, H, T, T], data_offsets: [0, data.length] } };
  let text = JSON.stringify(header);
  text += " ".repeat((8 - (text.length % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  return Buffer.concat([length, Buffer.from(text), data]);
}

const dir = await mkdtemp(join(tmpdir(), "headmap-bench-files-"));
for (const dtype of ["F16", "F32"]) await writeFile(join(dir, `big-${dtype.toLowerCase()}.safetensors`), attentionFile(dtype));
await writeFile(join(dir, "page.html"), `<!doctype html><html lang="en"><head><meta charset="utf-8"><script type="module" src="/assets/headmap/headmap.js"></script></head><body></body></html>`);
const server = await serve(dir, 0, { mounts: { "/assets/headmap/": join(ROOT, "dist", "headmap") } });
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0].toFixed(0)} · median ${s[Math.floor(s.length / 2)].toFixed(0)} · max ${s.at(-1).toFixed(0)} ms`;
};
try {
  for (const [file, view] of [["big-f16", "heatmap"], ["big-f16", "grid"], ["big-f32", "heatmap"]]) {
    const times = [];
    const gaps = [];
    for (let run = 0; run < RUNS; run++) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${base}page.html`);
      const { ms, gap } = await page.evaluate(async ([src, view]) => {
        await customElements.whenDefined("attention-heatmap");
        let gap = 0;
        let last = performance.now();
        let frames = true;
        const tick = (t) => {
          gap = Math.max(gap, t - last);
          last = t;
          if (frames) requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
        const el = document.createElement("attention-heatmap");
        el.setAttribute("lang", "en");
        if (view === "grid") el.setAttribute("head", "all");
        const t0 = performance.now();
        const done = new Promise((ok, fail) => {
          el.addEventListener("render", ok, { once: true });
          el.addEventListener("error", (e) => fail(new Error(e.detail.message)), { once: true });
        });
        el.setAttribute("src", src);
        document.body.append(el);
        await done;
        frames = false;
        return { ms: performance.now() - t0, gap };
      }, [`${base}${file}.safetensors`, view]);
      times.push(ms);
      gaps.push(gap);
      await page.close();
    }
    console.log(`${file}.safetensors (${L}×${H}×${T}×${T}), ${view}: ${stats(times)}; longest frame gap ${stats(gaps)}`);
  }
} finally {
  await browser.close();
  server.close();
}
