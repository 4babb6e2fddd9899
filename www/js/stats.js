// Numbers read off attention weights, for the read-outs beside the heatmap. (Row entropies
// come from the core, computed once per run: see Run.entropies.)

/** Entropy of a uniform row over `n` visible keys: the most a row can have. */
export function maxEntropy(n) {
  return n > 0 ? Math.log2(n) : 0;
}

/** How many keys each query may see, from a Tq × Tk 0/1 mask. */
export function visibleCounts(allowed, tq, tk) {
  const out = new Uint32Array(tq);
  for (let i = 0; i < tq; i++) for (let j = 0; j < tk; j++) out[i] += allowed[i * tk + j];
  return out;
}
