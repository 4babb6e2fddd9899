// Peak wasm memory of a Llama-style model at 2048 tokens (issue 10): the real-model package in
// Node, fed the same random bf16 model `benches/memory.rs` measures natively, run on 2048 tokens
// and then viewed as the explorer views it (every head max-pooled for the grid, one head at
// full size, the maxima). Wasm memory only grows, so its size after each step is the peak so
// far. Figures, not assertions.
//
// Run after scripts/build:  node scripts/wasm-memory.mjs [tiny|smollm|both]   (both: ~2 minutes)
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const pkg = await import(`${ROOT}www/pkg-hf/headmap.js`);
const wasm = pkg.initSync({ module: await readFile(`${ROOT}www/pkg-hf/headmap_bg.wasm`) });
const MB = (bytes) => (bytes / 2 ** 20).toFixed(1).padStart(8);

const SHAPES = {
  tiny: { name: "tiny (the llama fixture's shape)", hidden: 32, layers: 2, heads: 4, kvHeads: 2, intermediate: 48, vocab: 400 },
  smollm: { name: "SmolLM-135M's shape", hidden: 576, layers: 30, heads: 9, kvHeads: 3, intermediate: 1536, vocab: 49152 },
};

/** A bf16 value's two bytes (round to nearest even) for an f32. */
function bf16(value) {
  const bits = new Uint32Array(new Float32Array([value]).buffer)[0];
  return (bits + 0x7fff + ((bits >> 16) & 1)) >>> 16;
}

/** `config.json` and a random bf16 `model.safetensors` of `shape`, as benches/memory.rs makes them. */
function modelFiles(shape) {
  const headDim = shape.hidden / shape.heads;
  const [d, i, q, kv] = [shape.hidden, shape.intermediate, shape.heads * headDim, shape.kvHeads * headDim];
  const config = {
    model_type: "llama", hidden_size: d, num_hidden_layers: shape.layers, num_attention_heads: shape.heads,
    num_key_value_heads: shape.kvHeads, intermediate_size: i, vocab_size: shape.vocab,
    max_position_embeddings: 2048, rms_norm_eps: 1e-5, rope_theta: 10000.0, eos_token_id: 2, tie_word_embeddings: true,
  };
  const tensors = [["model.embed_tokens.weight", [shape.vocab, d]], ["model.norm.weight", [d]]];
  for (let l = 0; l < shape.layers; l++) {
    for (const [name, dims] of [
      ["input_layernorm.weight", [d]], ["post_attention_layernorm.weight", [d]],
      ["self_attn.q_proj.weight", [q, d]], ["self_attn.k_proj.weight", [kv, d]],
      ["self_attn.v_proj.weight", [kv, d]], ["self_attn.o_proj.weight", [d, q]],
      ["mlp.gate_proj.weight", [i, d]], ["mlp.up_proj.weight", [i, d]], ["mlp.down_proj.weight", [d, i]],
    ]) tensors.push([`model.layers.${l}.${name}`, dims]);
  }
  const header = {};
  let offset = 0;
  for (const [name, dims] of tensors) {
    const bytes = dims.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: "BF16", shape: dims, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header).padEnd(Math.ceil(JSON.stringify(header).length / 8) * 8));
  const file = new Uint8Array(8 + json.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
  file.set(json, 8);
  const data = new Uint16Array(file.buffer, 8 + json.length, offset / 2);
  let seed = 7;
  const random = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  for (const [name, dims] of tensors) {
    const { data_offsets: [from, to] } = header[name];
    const norm = dims.length === 1;
    for (let k = from / 2; k < to / 2; k++) data[k] = bf16(norm ? 1 : 0.05 * random());
  }
  return { config: new TextEncoder().encode(JSON.stringify(config)), weights: file };
}

async function measure(shape) {
  const tokenizer = await readFile(`${ROOT}tests/fixtures/hf/llama/tokenizer.json`);
  const at = { start: wasm.memory.buffer.byteLength };
  let files = modelFiles(shape);
  const model = pkg.Model.fromFiles(files.config, files.weights, new Uint8Array(tokenizer));
  files = null;
  at.model = wasm.memory.buffer.byteLength;
  // a text the fixture's tokenizer splits into at most 2048 tokens, as near it as words allow
  const textOf = (words) => Array.from({ length: words }, (_, k) => ["the", "animal", "road", "tired", "it"][k % 5]).join(" ");
  const perWord = model.tokenize(textOf(100)).tokens.length / 100;
  let words = Math.floor(2040 / perWord);
  const fits = (n) => {
    try {
      model.tokenize(textOf(n));
      return true;
    } catch (e) {
      if (e.code !== "too_long") throw e;
      return false;
    }
  };
  while (!fits(words)) words -= 5;
  const text = textOf(words);
  const started = performance.now();
  const run = model.run({ texts: [text] });
  const forwardS = (performance.now() - started) / 1000;
  const place = run.info().places[0];
  at.run = wasm.memory.buffer.byteLength;
  const viewStart = performance.now();
  for (let layer = 0; layer < place.layers; layer++) {
    for (let head = 0; head < place.heads; head++) run.pooled(place.place, 0, layer, head, 96, 96);
  }
  run.head(place.place, 0, place.layers - 1, 0);
  run.maxima(place.place, 0);
  const viewS = (performance.now() - viewStart) / 1000;
  at.view = wasm.memory.buffer.byteLength;
  const every = shape.layers * shape.heads * place.tq * place.tk * 4;
  console.log(`${shape.name}: ${shape.layers} layers × ${shape.heads} heads (${shape.kvHeads} KV), hidden ${shape.hidden}, ${place.tq} tokens`);
  console.log(`  wasm memory after loading the model   ${MB(at.model)} MB  (from ${MB(at.start).trim()})`);
  console.log(`  … after the forward                   ${MB(at.run)} MB  (${forwardS.toFixed(1)} s)`);
  console.log(`  … after viewing every head            ${MB(at.view)} MB  (every head pooled for the grid, one at full size, the maxima: ${viewS.toFixed(1)} s)`);
  console.log(`  every weight kept would be            ${MB(every)} MB`);
  run.free();
  model.free();
}

const which = process.argv[2] ?? "both";
for (const key of which === "both" ? ["tiny", "smollm"] : [which]) {
  if (!SHAPES[key]) throw new Error(`unknown shape ${key}: tiny, smollm or both`);
  await measure(SHAPES[key]);
}
