// Wasm half of the wasm/native benchmark (see scripts/bench/multi-head): the same multi-head block as
// benches/multi_head.rs, built for Node, timed with performance.now(). One JSON line per size.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { MultiHeadBench } = require("../../target/bench-pkg/headmap.js");

const sizes = (process.env.HEADMAP_BENCH_SIZES ?? "64,256,1024,2048").split(",").map(Number);
const repetitions = (n) => (n <= 256 ? 21 : n <= 1024 ? 7 : 3);

for (const n of sizes) {
  const bench = new MultiHeadBench(n, 512, 8);
  bench.run(); // warm-up: compiles the hot paths
  const reps = repetitions(n);
  const times = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    bench.run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ side: "wasm", n, reps, median_ms: Number(times[reps >> 1].toFixed(3)) }));
  bench.free();
}
