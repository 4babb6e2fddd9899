// A DevTools CPU profile (CDP `Profiler.stop`) of headmap's wasm forward, summed by function
// (self time) and sorted into the kinds of work issue 11 asks about. Function names come from
// the wasm's name section (Rust paths).

// First match wins; patterns are tried against the demangled Rust path.
export const KINDS = [
  ["matrix products: kernel", /sgemm_kernel::kernel|headmap::gemm::/],
  ["matrix products: packing, loops", /matrixmultiply|ndarray::linalg/],
  ["softmax: exp", /expf|math::exp_neg|math::exp_sum/],
  ["GELU: erf", /erf/],
  ["GELU: the rest of the map", /Activation::apply/],
  ["softmax: max, sum, normalise", /softmax|math::max|math::sum/],
  ["mask (-inf where hidden)", /apply_mask|mask::/],
  ["finite checks (ensure_finite)", /ensure_finite|all_finite/],
  ["scores ÷ √d_k, bias, mask, into the run's buffer (weights_into)", /weights_into/],
  ["layer norm", /LayerNorm/],
  ["weights into the run (push_layer)", /push_layer/],
  ["per-head copies, ÷√d_k, the block (MultiHeadAttention::forward)", /MultiHeadAttention|scaled_dot_product_attention|multi_head/],
  ["Run.row: weights to JS (Float32Array copy)", /new_from_slice|Float32Array/],
  ["Run.row: head maxima, allowed cells", /head_maxima|allowed|Run::row/],
  ["allocation, memset, memcpy", /dlmalloc|malloc|alloc|free|memset|memcpy|memmove|realloc/],
  ["copies: assign, to_owned, zip", /assign|to_owned|as_standard_layout|clone|zip|Zip|copy/],
  ["residual adds, encode", /encode|transformer|Add|add/],
  ["tokenizer", /tokeniz|regex|unicode|normaliz/],
  ["serde, wasm-bindgen glue", /serde|wasm_bindgen|js_sys|__wbg|getDataViewMemory|getStringFromWasm|decode/],
  ["GC", /\(garbage collector\)/],
  ["the rest (JS, runtime)", /.*/],
];

export function profileSummary(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map(); // function name → µs
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const dt = profile.timeDeltas[i + 1] ?? 0;
    // Rust paths without their hash: `headmap::nn::LayerNorm::forward::h5093…` → `…::forward`
    const name = (node.callFrame.functionName || `(${node.callFrame.url.split("/").pop() || "anonymous"})`).replace(/::h[0-9a-f]{16}$/, "");
    if (name === "(idle)" || name === "(program)") continue;
    self.set(name, (self.get(name) ?? 0) + dt);
    total += dt;
  }
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / total]);
  const kinds = new Map(KINDS.map(([k]) => [k, 0]));
  for (const [name, share] of top) {
    const [kind] = KINDS.find(([, re]) => re.test(name));
    kinds.set(kind, kinds.get(kind) + share);
  }
  return { totalMs: total / 1e3, top: top.slice(0, 40), kinds: [...kinds.entries()].filter(([, s]) => s > 0) };
}
