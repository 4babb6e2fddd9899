// A Llama-style model (or a GPT-2) of a given shape with random bf16 weights, as
// benches/memory.rs makes it natively: for the wasm benchmarks (wasm-memory.mjs, bench-find.mjs,
// predict.mjs), where no real weights of that size can be downloaded.

export const SHAPES = {
  tiny: { name: "tiny (the llama fixture's shape)", hidden: 32, layers: 2, heads: 4, kvHeads: 2, intermediate: 48, vocab: 400 },
  smollm: { name: "SmolLM-135M's shape", hidden: 576, layers: 30, heads: 9, kvHeads: 3, intermediate: 1536, vocab: 49152 },
};

/** A bf16 value's two bytes (round to nearest even) for an f32. */
function bf16(value) {
  const bits = new Uint32Array(new Float32Array([value]).buffer)[0];
  return (bits + 0x7fff + ((bits >> 16) & 1)) >>> 16;
}

/** `config.json` and a random bf16 `model.safetensors` of `shape`, as benches/memory.rs makes them. */
export function modelFiles(shape) {
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
  return { config: new TextEncoder().encode(JSON.stringify(config)), weights: safetensors(tensors) };
}

/** The same for a GPT-2 of `shape` (`hidden`, `layers`, `heads`, `vocab`; the MLP 4 × hidden
 * wide, learnt positions), its Conv1D weights stored (in, out) as GPT-2's checkpoints have them. */
export function gpt2Files(shape) {
  const d = shape.hidden;
  const config = {
    model_type: "gpt2", n_embd: d, n_layer: shape.layers, n_head: shape.heads, n_positions: 1024,
    vocab_size: shape.vocab, activation_function: "gelu_new", layer_norm_epsilon: 1e-5, eos_token_id: 2,
    tie_word_embeddings: true,
  };
  const tensors = [["wte.weight", [shape.vocab, d]], ["wpe.weight", [1024, d]], ["ln_f.weight", [d]], ["ln_f.bias", [d]]];
  for (let l = 0; l < shape.layers; l++) {
    for (const [name, dims] of [
      ["ln_1.weight", [d]], ["ln_1.bias", [d]], ["ln_2.weight", [d]], ["ln_2.bias", [d]],
      ["attn.c_attn.weight", [d, 3 * d]], ["attn.c_attn.bias", [3 * d]],
      ["attn.c_proj.weight", [d, d]], ["attn.c_proj.bias", [d]],
      ["mlp.c_fc.weight", [d, 4 * d]], ["mlp.c_fc.bias", [4 * d]],
      ["mlp.c_proj.weight", [4 * d, d]], ["mlp.c_proj.bias", [d]],
    ]) tensors.push([`h.${l}.${name}`, dims]);
  }
  return { config: new TextEncoder().encode(JSON.stringify(config)), weights: safetensors(tensors) };
}

/** A text the llama fixture's tokenizer (every bench's) splits into at most `n` tokens, <s>
 * included, of `model`: the seed sentence's words, repeated. */
export function textOf(model, n) {
  const words = "동물이 길을 건너지 않았다 그것은 너무 피곤했다".split(" ");
  let text = "";
  for (let k = 0; ; k++) {
    const next = `${text} ${words[k % words.length]}`.trim();
    const run = model.run({ texts: [next], throughLayer: 0 });
    const tq = run.info().places[0].tq;
    run.free();
    if (tq > n) return text;
    text = next;
  }
}

/** A bf16 safetensors file of `tensors` ([name, dims]): norms' weights 1 and biases 0 (the
 * one-dimensional tensors named `.weight` and `.bias`), every other value uniform in ±0.05
 * from a fixed seed. */
function safetensors(tensors) {
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
    const flat = dims.length === 1;
    const value = flat && name.endsWith(".bias") ? () => 0 : flat ? () => 1 : () => 0.05 * random();
    for (let k = from / 2; k < to / 2; k++) data[k] = bf16(value());
  }
  return file;
}
