// The tables scripts/bench/peers prints: per length, every engine's median and min–max, the
// ratio headmap ÷ peer, the weights' agreement; the GEMM throughput on MiniLM's shapes and
// the forward's share of it. Pure: figures in, text out.

/** The engine that runs a forward's matrix products and nothing else (scripts/bench/peer-harness/gemm). */
export const GEMM_ONLY = "GEMM only: the forward's products (ndarray dot)";
/** The same with matrixmultiply's AVX-512 kernel: what headmap runs natively on such CPUs. */
export const GEMM_AVX512 = "GEMM only: the forward's products (ndarray dot, AVX-512 kernel)";

/** The native GEMM headmap's forward is measured against: the kernel it runs. */
const nativeGemm = (times) => (GEMM_AVX512 in times ? GEMM_AVX512 : GEMM_ONLY in times ? GEMM_ONLY : null);

/**
 * `a ÷ b` three ways: of the medians, of the minima, and the median of the ratios round by
 * round (each round runs every engine once, so a machine that slows down for a minute slows
 * both sides of a round's ratio alike; absent for figures saved without their rounds).
 */
function ratios(a, b) {
  const text = `${(a.median / b.median).toFixed(2)} (${(a.min / b.min).toFixed(2)})`;
  if (!a.times || !b.times || a.times.length !== b.times.length) return text;
  const paired = a.times.map((x, r) => x / b.times[r]).sort((x, y) => x - y);
  return `${text} ${paired[paired.length >> 1].toFixed(2)}`;
}

const f1 = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const cell = (s, w) => String(s).padStart(w);
const left = (s, w) => String(s).padEnd(w);

/** FLOPs of one forward's matrix products at t tokens: 6 layers of Q, K, V, O, the FFN, QKᵀ, ·V. */
export function forwardFlops(config, t) {
  const { hidden_size: d, intermediate_size: ff, num_hidden_layers: layers } = config;
  return layers * (8 * t * d * d + 4 * t * d * ff + 4 * t * t * d);
}

/** The time a forward would take at the GEMM's own speed: Σ per shape (count × median). */
export function gemmBoundMs(rows, config, t) {
  return config.num_hidden_layers * rows.filter((r) => r.t === t).reduce((s, r) => s + r.perLayer * r.median, 0);
}

function engineTable(title, lengths, data, reference, out) {
  const names = Object.keys(data[lengths[0]].times);
  const w = Math.max(...names.map((n) => n.length)) + 2;
  out.push(title);
  out.push(left("median ms (min–max)", w) + lengths.map((n) => cell(`${n} tok`, 22)).join(""));
  for (const name of names) {
    out.push(left(name, w) + lengths.map((n) => {
      const s = data[n].times[name];
      return cell(`${f1(s.median)} (${f1(s.min)}–${f1(s.max)})`, 22);
    }).join(""));
  }
  out.push(left(`${reference} ÷ peer: medians (minima) round by round`, w) + lengths.map((n) => cell("", 22)).join(""));
  for (const name of names.filter((n) => n !== reference)) {
    out.push(left(`  ÷ ${name}`, w) + lengths.map((n) => cell(ratios(data[n].times[reference], data[n].times[name]), 22)).join(""));
  }
  out.push(left("max |Δ| of the weights vs headmap", w));
  for (const name of names.filter((n) => n in data[lengths[0]].delta)) {
    out.push(left(`  ${name}`, w) + lengths.map((n) => cell(data[n].delta[name].toExponential(1), 22)).join(""));
  }
  out.push("");
}

/** Ratios of one engine's figures to another's ([`ratios`]), for each pair [a, b] whose names match. */
function ratioLines(title, lengths, data, pairs, out) {
  const names = Object.keys(data[lengths[0]].times);
  const find = (p) => names.find((n) => (typeof p === "string" ? n === p : p.test(n)));
  const rows = pairs.map(([a, b]) => [find(a), find(b)]).filter(([a, b]) => a && b);
  if (!rows.length) return;
  out.push(title);
  for (const [a, b] of rows) {
    out.push(left(`  ${a} ÷ ${b}`, 72) + lengths.map((n) => cell(ratios(data[n].times[a], data[n].times[b]), 20)).join(""));
  }
  out.push("");
}

function gemmTable(title, rows, lengths, out) {
  out.push(title);
  out.push(left("GFLOP/s at the median (min–max ms)", 36) + lengths.map((n) => cell(`${n} tok`, 24)).join(""));
  for (const shape of [...new Set(rows.map((r) => r.shape))]) {
    const per = rows.find((r) => r.shape === shape).perLayer;
    out.push(left(`${shape} ×${per}/layer`, 36) + lengths.map((t) => {
      const r = rows.find((x) => x.shape === shape && x.t === t);
      return cell(r ? `${r.gflops.toFixed(1)} (${r.min.toFixed(3)}–${r.max.toFixed(3)})` : "", 24);
    }).join(""));
  }
}

/** The forward against the GEMM: `forward` and `gemmOnly` are the interleaved medians (ms). */
function shareTable(rows, forward, gemmOnly, label, lengths, config, out) {
  out.push(left(`${label} against the GEMM`, 36) + lengths.map((n) => cell(`${n} tok`, 24)).join(""));
  const line = (text, fn) => out.push(left(text, 36) + lengths.map((t) => cell(fn(t), 24)).join(""));
  const gflops = (t, ms) => (forwardFlops(config, t) / ms / 1e6).toFixed(1);
  line("FLOPs of the products (G)", (t) => (forwardFlops(config, t) / 1e9).toFixed(3));
  line("the forward (ms, GFLOP/s)", (t) => `${f1(forward(t))}, ${gflops(t, forward(t))}`);
  if (gemmOnly) line("its products alone (ms, GFLOP/s)", (t) => `${f1(gemmOnly(t))}, ${gflops(t, gemmOnly(t))}`);
  line("Σ shape × count, each alone (ms, GF/s)", (t) => `${f1(gemmBoundMs(rows, config, t))}, ${gflops(t, gemmBoundMs(rows, config, t))}`);
  if (gemmOnly) line("share: products alone ÷ forward", (t) => `${((100 * gemmOnly(t)) / forward(t)).toFixed(0)} %`);
  out.push("");
}

export function printTables({ browser, native, config, runs, warmup }) {
  const out = [];
  const lengths = Object.keys(browser?.lengths ?? native?.lengths ?? {}).map(Number);
  out.push(`all-MiniLM-L6-v2, every attention weight of every layer returned, the same token ids;`);
  out.push(`${runs} runs per engine after ${warmup} warm-ups, interleaved round by round.`);
  out.push("");
  if (browser) {
    const hm = browser.engines[0];
    engineTable(`In headless Chromium ${browser.chromium ?? ""} (wasm), cross-origin isolated: ${browser.isolated}${browser.idle ? `, idle ${browser.idle} ms before each forward` : ""}`, lengths, browser.lengths, hm, out);
    ratioLines("threads in wasm: medians (minima) round by round", lengths, browser.lengths, [
      [/^headmap wasm, \d+ threads/, /onnxruntime-web.*, 1 thread$/],
      [/^headmap wasm, \d+ threads/, /onnxruntime-web.*, 2 threads/],
      [/^headmap wasm, \d+ threads/, "headmap wasm, 1 thread"],
      ...(browser.engines.some((e) => e.startsWith("baseline"))
        ? [
            ["headmap wasm, 1 thread", "baseline wasm, 1 thread"],
            [/^headmap wasm, \d+ threads/, /^baseline wasm, \d+ threads/],
          ]
        : []),
    ], out);
    // the forward, and the copy of every weight into a fresh JS array (Run.row), apart
    // (a browser.json of before had one engine's split, the single thread's)
    const partsOf = (n) => (browser.lengths[n].headmapParts?.forward ? { "headmap wasm, 1 thread": browser.lengths[n].headmapParts } : browser.lengths[n].headmapParts ?? {});
    for (const name of Object.keys(partsOf(lengths[0]))) {
      const part = (n) => partsOf(n)[name];
      out.push(left(`${name}: run + row (median ms)`, 36) + lengths.map((n) => cell(`${f1(part(n).forward.median)} + ${f1(part(n).copy.median)}`, 22)).join(""));
    }
    // the forward alone on the threads, as the explorer runs it (it never copies every weight)
    const [one, many] = ["headmap wasm, 1 thread", Object.keys(partsOf(lengths[0])).find((k) => /threads$/.test(k))];
    if (many && partsOf(lengths[0])[one]) {
      out.push(left(`the run alone: ${many.replace("headmap wasm, ", "")} ÷ 1 thread`, 36) + lengths.map((n) => cell(ratios(partsOf(n)[many].forward, partsOf(n)[one].forward), 22)).join(""));
    }
    out.push("");
  }
  if (native) {
    engineTable("Natively (this CPU); headmap = 1 thread", lengths, native.lengths, "headmap", out);
    ratioLines("threads natively: medians (minima) round by round", lengths, native.lengths, [
      ["headmap, 2 threads", /^onnxruntime .*, 2 threads/],
      ["headmap, 2 threads", /^PyTorch .*, 2 threads/],
      ["headmap, 2 threads", "headmap"],
    ], out);
    if (native.missing.length) out.push(`left out natively: ${native.missing.join(", ")}`, "");
  }
  if (browser?.gemm) {
    gemmTable("ndarray's dot (matrixmultiply 0.3.11) in wasm (simd128), MiniLM's shapes", browser.gemm, lengths, out);
    if (browser.gemmRelaxed) gemmTable("the same built with +relaxed-simd (fused multiply-add)", browser.gemmRelaxed, lengths, out);
    const [hm, gemmOnly] = [browser.engines[0], GEMM_ONLY in browser.lengths[lengths[0]].times ? GEMM_ONLY : null];
    const median = (name) => (t) => browser.lengths[t].times[name].median;
    shareTable(browser.gemm, median(hm), gemmOnly && median(gemmOnly), "headmap wasm (forward + row copy)", lengths, config, out);
  }
  if (native?.gemm) {
    gemmTable(`ndarray's dot (matrixmultiply 0.3.11) natively, MiniLM's shapes${native.gemmKernel ? `, ${native.gemmKernel}` : ""}`, native.gemm, lengths, out);
    const gemmOnly = nativeGemm(native.lengths[lengths[0]].times);
    const median = (name) => (t) => native.lengths[t].times[name].median;
    shareTable(native.gemm, median("headmap"), gemmOnly && median(gemmOnly), "headmap native", lengths, config, out);
  }
  if (browser?.gemm && native?.gemm) {
    out.push(left("wasm ÷ native, same code", 36) + lengths.map((n) => cell("", 24)).join(""));
    const hm = browser.engines[0];
    out.push(left("  headmap forward", 36) + lengths.map((t) => cell((browser.lengths[t].times[hm].median / native.lengths[t].times.headmap.median).toFixed(2), 24)).join(""));
    const gemmNative = nativeGemm(native.lengths[lengths[0]].times);
    if (GEMM_ONLY in browser.lengths[lengths[0]].times && gemmNative) {
      out.push(left("  the products alone", 36) + lengths.map((t) => cell((browser.lengths[t].times[GEMM_ONLY].median / native.lengths[t].times[gemmNative].median).toFixed(2), 24)).join(""));
    }
    out.push("");
  }
  if (browser?.profile) {
    for (const [n, p] of Object.entries(browser.profile)) {
      out.push(`headmap wasm forward at ${n} tokens, DevTools profiler (${f1(p.ms)} ms per forward + row), self time by kind:`);
      for (const [k, share] of p.kinds) out.push(`  ${left(k, 44)}${cell((100 * share).toFixed(1), 6)} %`);
      out.push(`  top functions:`);
      for (const [name, share] of p.top.slice(0, 12)) out.push(`  ${cell((100 * share).toFixed(1), 5)} %  ${name.slice(0, 110)}`);
      out.push("");
    }
  }
  console.log(out.join("\n"));
}
