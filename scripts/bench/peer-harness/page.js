// The page of scripts/bench/peers: one worker per engine (engine.js), the same token ids for
// all, the agreement of every attention weight checked first, then rounds in which every
// engine runs once, in an order drawn anew each round. `globalThis.bench` is what the driver calls.

// Words that are one WordPiece each, so n − 2 of them are exactly n tokens with [CLS], [SEP].
const WORDS = `a small boat left the harbour before dawn and the old fisherman watched the grey water
while his daughter counted the nets she spoke about the storm that had passed during the night and
about the price of fish in the market town across the bay where her brother worked in a bakery
every morning the bread came out of the oven at six and people waited in a long line outside the
door talking about the weather the news and the football match on sunday when the boat came back in
the evening the birds followed it all the way to the pier and children ran along the wall to see
what the nets held`.split(/\s+/);

const textOf = (n) => Array.from({ length: n - 2 }, (_, i) => WORDS[i % WORDS.length]).join(" ");

class Engine {
  constructor(kind, threads = 1, variant = "") {
    this.worker = new Worker(`engine.js?engine=${kind}&threads=${threads}&variant=${variant}`, { type: "module" });
    this.pending = new Map();
    this.next = 0;
    this.worker.onmessage = ({ data }) => {
      const { resolve, reject } = this.pending.get(data.id);
      this.pending.delete(data.id);
      data.error ? reject(new Error(`${this.name ?? kind}: ${data.error}`)) : resolve(data);
    };
    this.worker.onerror = (e) => {
      for (const { reject } of this.pending.values()) reject(new Error(`${kind}: ${e.message}`));
    };
  }

  ask(op, args = {}) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, ...args });
    });
  }
}

function maxAbsDelta(a, b) {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  // `times` in the order of the rounds, for ratios round by round (table.mjs)
  return { median: s[s.length >> 1], min: s[0], max: s[s.length - 1], runs: s.length, times: xs };
}

const log = (...a) => console.log("[peers]", ...a);

async function run({ lengths = [16, 128, 512], runs = 20, warmup = 3, gemmReps = 20, baseline = false, idle = 0 } = {}) {
  // 1. load every engine, one after another (load times are not the point, but cheap to keep);
  //    the last two are no forward: the forward's matrix products alone, at the GEMM's own speed,
  //    built as headmap is (simd128) and with relaxed SIMD (fused multiply-add)
  const gemms = [new Engine("gemm"), new Engine("gemm", 1, "relaxed")];
  //    with `baseline`, another build of headmap beside ours, on 1 and 2 threads
  const others = baseline ? [new Engine("headmap", 1, "baseline"), new Engine("headmap", 2, "baseline")] : [];
  const engines = [new Engine("headmap"), new Engine("headmap", 2), ...others, new Engine("ort", 1), new Engine("ort", 2), new Engine("tjs", 1), ...gemms];
  const peers = engines.slice(1, -2); // the engines whose weights are compared with headmap's
  const loads = {};
  for (const e of engines) {
    const { name, loadMs, isolated } = await e.ask("load");
    e.name = name;
    loads[name] = loadMs;
    log(`loaded ${name} in ${loadMs.toFixed(0)} ms${isolated ? "" : " (not cross-origin isolated: no threads)"}`);
  }
  const [headmap] = engines;
  const layers = (await (await fetch("/model/config.json")).json()).num_hidden_layers;

  // 2. the same ids for all: headmap's own pieces of the text, through the model's vocabulary
  const vocab = (await (await fetch("/model/tokenizer.json")).json()).model.vocab;
  const ids = {};
  for (const n of lengths) {
    const text = textOf(n);
    const { pieces } = await headmap.ask("tokenize", { text });
    ids[n] = pieces.map((p) => vocab[p]);
    if (ids[n].length !== n || ids[n].some((id) => id === undefined)) {
      throw new Error(`the text for ${n} tokens gives ${pieces.length} pieces: ${pieces.slice(0, 8).join(" ")} …`);
    }
    for (const e of engines) await e.ask("prepare", { n, text, ids: ids[n], layers });
  }

  // 3. per length: warm-up, agreement with headmap's weights, then interleaved rounds
  const lengthsOut = {};
  for (const n of lengths) {
    for (let w = 0; w < warmup; w++) for (const e of engines) await e.ask("run", { n });
    const reference = await headmap.ask("weights", { n });
    const delta = {};
    for (const e of peers) delta[e.name] = maxAbsDelta((await e.ask("weights", { n })).weights, reference.weights);
    const times = Object.fromEntries(engines.map((e) => [e.name, []]));
    // each headmap engine's forward and copy of the weights to JS, apart
    const parts = Object.fromEntries(engines.filter((e) => /^(headmap|baseline) wasm/.test(e.name)).map((e) => [e.name, { forward: [], copy: [] }]));
    for (let r = 0; r < runs; r++) {
      // a new order each round, the same in every run: rotating the list kept each engine
      // behind the same one in nearly every round
      for (const e of shuffled(engines, r)) {
        if (idle) await new Promise((ok) => setTimeout(ok, idle)); // the page idle, its threads asleep
        const t = await e.ask("run", { n });
        times[e.name].push(t.ms);
        if (parts[e.name]) {
          parts[e.name].forward.push(t.forward);
          parts[e.name].copy.push(t.copy);
        }
      }
    }
    lengthsOut[n] = {
      delta,
      times: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, stats(v)])),
      headmapParts: Object.fromEntries(Object.entries(parts).map(([name, p]) => [name, { forward: stats(p.forward), copy: stats(p.copy) }])),
    };
    log(`${n} tokens:`, Object.entries(lengthsOut[n].times).map(([k, v]) => `${k} ${v.median.toFixed(1)}`).join(", "));
  }
  // 4. each product shape on its own, in wasm, with nothing else running
  const { rows } = await gemms[0].ask("gemm", { lengths, reps: gemmReps });
  const { rows: relaxed } = await gemms[1].ask("gemm", { lengths, reps: gemmReps });
  for (const e of engines) e.worker.terminate();
  return { userAgent: navigator.userAgent, isolated: crossOriginIsolated, idle, ids, loads, engines: engines.map((e) => e.name), lengths: lengthsOut, gemm: rows, gemmRelaxed: relaxed };
}

/** headmap's forward on this (main) thread, `count` times at n tokens, for the profiler. */
async function profileTarget() {
  const pkg = await import("/pkg-hf/headmap.js");
  await pkg.default();
  const files = await Promise.all(["config.json", "model.safetensors", "tokenizer.json"].map(async (f) => new Uint8Array(await (await fetch(`/model/${f}`)).arrayBuffer())));
  const model = pkg.Model.fromFiles(...files);
  return (n, count) => {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const run = model.run({ texts: [textOf(n)], place: "encoder_self" });
      run.row("encoder_self", 0);
      run.free();
    }
    return (performance.now() - t0) / count;
  };
}

let profiled = null;
globalThis.bench = {
  run,
  async prepareProfile() {
    profiled = await profileTarget();
    profiled(16, 1);
  },
  profile: (n, count) => profiled(n, count),
};
globalThis.benchReady = true;

/** `items` in an order drawn from `seed` (Fisher–Yates on a small linear congruential generator). */
function shuffled(items, seed) {
  const out = [...items];
  let state = (seed * 2654435761 + 1) >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
