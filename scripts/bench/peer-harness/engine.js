// One engine of scripts/bench/peers in a worker of its own (so onnxruntime-web can run with 1
// and 2 threads in one page: its thread count is fixed per wasm instance). The URL says which:
//   engine.js?engine=headmap[&variant=baseline] | ort&threads=N | tjs | gemm[&variant=relaxed]
// Messages in: { id, op: "load" | "prepare" | "run" | "weights" | "tokenize" | "gemm", … };
// out: { id, …result } or { id, error }. Every engine times its own forward, from ids (or,
// for headmap, the text the explorer would send) to every attention weight in JS memory.

const params = new URL(self.location.href).searchParams;
const kind = params.get("engine");
const threads = Number(params.get("threads") ?? 1);
// the GEMM: "" (simd128, as headmap) or "relaxed"; headmap: "" (this build) or "baseline"
const variant = params.get("variant") ?? "";

const MODEL = "/model/"; // config.json, model.safetensors, tokenizer.json
const ONNX = "/tjs-models/minilm/onnx/model.onnx";

const bytes = async (url) => {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
};

/** The feeds a BERT export takes, for ids (1, T). */
function feeds(Tensor, ids) {
  const n = ids.length;
  const big = (f) => BigInt64Array.from(ids, f);
  return {
    input_ids: new Tensor("int64", big((id) => BigInt(id)), [1, n]),
    attention_mask: new Tensor("int64", big(() => 1n), [1, n]),
    token_type_ids: new Tensor("int64", big(() => 0n), [1, n]),
  };
}

/** `attentions.0` … `attentions.{L-1}` (each (1, H, T, T)) as one Float32Array (L, H, T, T). */
function concatAttentions(out) {
  const parts = [];
  for (let l = 0; `attentions.${l}` in out; l++) parts.push(out[`attentions.${l}`].data);
  const all = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

const engines = {
  /** headmap's own package, as the explorer's worker uses it: text in, `Run.row` out; with
   *  threads > 1 the threaded build on a pool of that many, as an isolated page loads it. */
  async headmap() {
    // variant "baseline": another build of headmap (PEERS_BASELINE), to compare in the same page
    const root = variant === "baseline" ? "/baseline" : "";
    const pkg = await import(threads > 1 ? `${root}/pkg-hf-threads/headmap.js` : `${root}/pkg-hf/headmap.js`);
    await pkg.default();
    if (threads > 1) await pkg.initThreadPool(threads);
    const [config, weights, tokenizer] = await Promise.all(["config.json", "model.safetensors", "tokenizer.json"].map((f) => bytes(MODEL + f)));
    const model = pkg.Model.fromFiles(config, weights, tokenizer);
    const texts = new Map();
    return {
      name: `${variant === "baseline" ? "baseline" : "headmap"} wasm, ${threads > 1 ? `${pkg.threadCount()} threads` : "1 thread"}`,
      tokenize(text) {
        const run = model.run({ texts: [text], place: "encoder_self" });
        const pieces = run.tokens("encoder_self", 0).queries.map((t) => t.piece);
        run.free();
        return pieces;
      },
      prepare: (n, { text }) => texts.set(n, text),
      async run(n) {
        const t0 = performance.now();
        const run = model.run({ texts: [texts.get(n)], place: "encoder_self" });
        const t1 = performance.now();
        const row = run.row("encoder_self", 0); // every weight, [L, H, Tq, Tk], copied to JS
        const t2 = performance.now();
        run.free();
        if (row.weights.length === 0) throw new Error("no weights");
        return { ms: t2 - t0, forward: t1 - t0, copy: t2 - t1 };
      },
      weights(n) {
        const run = model.run({ texts: [texts.get(n)], place: "encoder_self" });
        const row = run.row("encoder_self", 0);
        const tokens = run.tokens("encoder_self", 0).queries.length;
        run.free();
        return { weights: row.weights, tokens };
      },
    };
  },

  /** onnxruntime-web's CPU (wasm) backend, `threads` threads, on the exported file. */
  async ort() {
    const ort = await import("/ort/ort.wasm.min.mjs");
    ort.env.wasm.wasmPaths = "/ort/";
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.proxy = false;
    const session = await ort.InferenceSession.create(ONNX, { executionProviders: ["wasm"] });
    const inputs = new Map();
    return {
      name: `onnxruntime-web ${ort.env.versions.web}, ${threads} thread${threads > 1 ? "s" : ""}`,
      prepare: (n, { ids }) => inputs.set(n, feeds(ort.Tensor, ids)),
      async run(n) {
        const t0 = performance.now();
        const out = await session.run(inputs.get(n));
        const ms = performance.now() - t0;
        if (!out["attentions.5"]) throw new Error("no attentions.5");
        return { ms };
      },
      async weights(n) {
        return { weights: concatAttentions(await session.run(inputs.get(n))) };
      },
    };
  },

  /** transformers.js, pointed at the local files: no Hub, no CDN. */
  async tjs() {
    const { AutoModel, Tensor, env } = await import("/tjs/transformers.js");
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = "/tjs-models/";
    env.useBrowserCache = false;
    env.backends.onnx.wasm.wasmPaths = {
      mjs: "/tjs-ort/ort-wasm-simd-threaded.asyncify.mjs",
      wasm: "/tjs-ort/ort-wasm-simd-threaded.asyncify.wasm",
    };
    env.backends.onnx.wasm.numThreads = threads;
    const model = await AutoModel.from_pretrained("minilm", { dtype: "fp32", device: "wasm", local_files_only: true });
    const inputs = new Map();
    return {
      name: `transformers.js ${env.version}, ${threads} thread${threads > 1 ? "s" : ""}`,
      prepare: (n, { ids }) => inputs.set(n, feeds(Tensor, ids)),
      async run(n) {
        const t0 = performance.now();
        const out = await model(inputs.get(n));
        const ms = performance.now() - t0;
        if (!out["attentions.5"]) throw new Error(`no attentions.5 among ${Object.keys(out)}`);
        return { ms };
      },
      async weights(n) {
        return { weights: concatAttentions(await model(inputs.get(n))) };
      },
    };
  },

  /** ndarray's `dot` on MiniLM's shapes (scripts/bench/peer-harness/gemm), built for wasm like headmap. */
  async gemm() {
    const { instance } = await WebAssembly.instantiate(await bytes(`/gemm${variant && `-${variant}`}/headmap_peers_gemm.wasm`), {});
    const { gemm_new, gemm_run, gemm_free, forward_new, forward_run } = instance.exports;
    const forwards = new Map();
    const SHAPES = [
      ["Tx384.384x384", 4, (t) => [t, 384, 384]],
      ["Tx384.384x1536", 1, (t) => [t, 384, 1536]],
      ["Tx1536.1536x384", 1, (t) => [t, 1536, 384]],
      ["Tx32.32xT", 12, (t) => [t, 32, t]],
      ["TxT.Tx32", 12, (t) => [t, t, 32]],
    ];
    return {
      name: `GEMM only: the forward's products (ndarray dot${variant && `, ${variant} SIMD build`})`,
      /** every product of a forward at n tokens, timed in the rounds like a forward */
      prepare: (n, { layers }) => forwards.set(n, forward_new(n, layers)),
      run(n) {
        const t0 = performance.now();
        forward_run(forwards.get(n));
        return { ms: performance.now() - t0 };
      },
      gemm({ lengths, reps }) {
        const rows = [];
        for (const t of lengths) {
          SHAPES.forEach(([shape, perLayer, mkn], s) => {
            const [m, k, n] = mkn(t);
            const flops = 2 * m * k * n;
            const inner = Math.max(1, Math.ceil(2e6 / flops)); // small products in batches
            const c = gemm_new(s, t);
            gemm_run(c, 3 * inner);
            const ms = [];
            for (let r = 0; r < reps; r++) {
              const t0 = performance.now();
              gemm_run(c, inner);
              ms.push((performance.now() - t0) / inner);
            }
            gemm_free(c);
            ms.sort((a, b) => a - b);
            const median = ms[ms.length >> 1];
            rows.push({ t, shape, perLayer, flops, median, min: ms[0], max: ms[ms.length - 1], gflops: flops / median / 1e6 });
          });
        }
        return { rows };
      },
    };
  },
};

let engine = null;
self.onmessage = async ({ data }) => {
  const { id, op, ...args } = data;
  try {
    let reply;
    if (op === "load") {
      const t0 = performance.now();
      engine = await engines[kind]();
      reply = { name: engine.name, loadMs: performance.now() - t0, isolated: self.crossOriginIsolated };
    } else if (op === "tokenize") {
      reply = { pieces: engine.tokenize(args.text) };
    } else if (op === "gemm") {
      reply = engine.gemm(args);
    } else {
      reply = (await engine[op](args.n, args)) ?? {};
    }
    const transfer = reply.weights ? [reply.weights.buffer] : [];
    self.postMessage({ id, ...reply }, transfer);
  } catch (e) {
    self.postMessage({ id, error: String(e?.stack ?? e) });
  }
};
