// A DevTools CPU profile (CDP `Profiler.stop`) of headmap's wasm forward, summed by function
// (self time) and sorted into the kinds of work issue 11 asks about. Function names come from
// the wasm's name section (Rust paths).

// First match wins; patterns are tried against the demangled Rust path.
export const KINDS = [
  ["matrix products (matrixmultiply)", /matrixmultiply|gemm|ndarray::linalg/],
  ["softmax / exp", /softmax|expf|::exp\b|libm::math::exp/],
  ["GELU / erf", /erf|Activation::apply/],
  ["layer norm", /LayerNorm|layer_norm/],
  ["masks", /mask|Mask/],
  ["copies (assign, to_owned, standard layout, memcpy)", /memcpy|memmove|assign|to_owned|as_standard_layout|clone|copy|zip|Zip/],
  ["allocation (dlmalloc, memset)", /dlmalloc|malloc|alloc|free|memset|realloc/],
  ["finite checks", /ensure_finite|is_finite/],
  ["row copy to JS, serde, wasm-bindgen", /Float32Array|serde|wasm_bindgen|js_sys|head_maxima|__wbg/],
  ["tokenizer", /tokeniz|regex|unicode/],
  ["JS, GC and the rest", /.*/],
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
