// Numbers read off attention weights, for the read-outs beside the heatmap.

/** Shannon entropy in bits of each row of a Tq × Tk matrix (a zero row has entropy 0). */
export function rowEntropies(weights, tq, tk) {
  const out = new Float32Array(tq);
  for (let i = 0; i < tq; i++) {
    let h = 0;
    for (let j = 0; j < tk; j++) {
      const p = weights[i * tk + j];
      if (p > 0) h -= p * Math.log2(p);
    }
    out[i] = h;
  }
  return out;
}

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

/** The largest value of an array (0 for an empty one). */
export function maxOf(values) {
  let m = 0;
  for (const v of values) if (v > m) m = v;
  return m;
}
