// What finding heads costs in wasm, as ratios to a plain run in the same process (issue 18):
// every score of every head of MiniLM at 128 tokens against the run that made the weights, and
// the induction probe at 2 × 50 tokens in SmolLM-135M's shape against a plain run of as many
// tokens. Min / median / max of repeated runs; figures, not assertions.
//
// Run after scripts/build/all and scripts/setup:  node scripts/bench/find.mjs [repetitions]
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { SHAPES, modelFiles } from "./llama-shape.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const pkg = await import(`${ROOT}www/pkg-hf/headmap.js`);
pkg.initSync({ module: await readFile(`${ROOT}www/pkg-hf/headmap_bg.wasm`) });
const reps = Number(process.argv[2] ?? 7);

/** `work()` `n` times after one warm-up: { min, median, max } in ms. */
function time(work, n = reps) {
  work();
  const ms = [];
  for (let r = 0; r < n; r++) {
    const t0 = performance.now();
    work();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { min: ms[0], median: ms[ms.length >> 1], max: ms.at(-1) };
}
const fmt = ({ min, median, max }) => `${median.toFixed(1)} ms (min ${min.toFixed(1)}, max ${max.toFixed(1)})`;

// 1. MiniLM at 128 tokens: the run, then every score of its 72 heads
const dir = `${ROOT}models/all-MiniLM-L6-v2/`;
const bytes = async (name) => new Uint8Array(await readFile(dir + name));
const minilm = pkg.Model.fromFiles(await bytes("config.json"), await bytes("model.safetensors"), await bytes("tokenizer.json"));
const words = "the animal did not cross the street because it was too tired and the road was long".split(" ");
const text = (n) => Array.from({ length: n }, (_, k) => words[k % words.length]).join(" ");
const request = { texts: [text(126)], place: "encoder_self" }; // 126 words and [CLS] [SEP]
let run = minilm.run(request);
const tq = run.info().places[0].tq;
run.free();
const runTime = time(() => minilm.run(request).free());
run = minilm.run(request);
const scoreTime = time(() => run.scores("encoder_self", 0));
const massTime = time(() => run.mass("encoder_self", 0, [10], [2]));
const rolloutTime = time(() => run.rollout("encoder_self", 0, "mean"));
run.free();
console.log(`MiniLM, ${tq} tokens, 6 layers × 12 heads (wasm, ${reps} runs after a warm-up)`);
console.log(`  run (the weights)            ${fmt(runTime)}`);
console.log(`  all ten scores of every head ${fmt(scoreTime)}   ×${(scoreTime.median / runTime.median).toFixed(3)} of the run`);
console.log(`  token-to-token mass          ${fmt(massTime)}   ×${(massTime.median / runTime.median).toFixed(3)}`);
console.log(`  rollout, every layer         ${fmt(rolloutTime)}   ×${(rolloutTime.median / runTime.median).toFixed(3)}`);
minilm.free();

// 2. the induction probe in SmolLM-135M's shape: 1 + 2 × 50 tokens against a plain run of 101
const tokenizer = new Uint8Array(await readFile(`${ROOT}tests/fixtures/hf/llama/tokenizer.json`));
const files = modelFiles(SHAPES.smollm);
const smollm = pkg.Model.fromFiles(files.config, files.weights, tokenizer);
const probeOnce = smollm.probe(undefined, 50, 0);
const probeTokens = probeOnce.ids.length;
probeOnce.run.free();
// a plain text of as many tokens: the fixture's tokenizer splits these words alike every time
const sized = (n) => smollm.run({ texts: [text(n)] });
const perWord = (() => {
  const r = sized(40);
  const t = r.info().places[0].tq / 40;
  r.free();
  return t;
})();
const plain = { texts: [text(Math.round(probeTokens / perWord))] };
const few = Math.max(3, Math.min(reps, 5)); // each run of this shape takes seconds
const plainTime = time(() => smollm.run(plain).free(), few);
const probeTime = time(() => smollm.probe(undefined, 50, 0).run.free(), few);
const r = smollm.run(plain);
const plainTokens = r.info().places[0].tq;
r.free();
console.log(`SmolLM-135M's shape (random weights), 30 layers × 9 heads`);
console.log(`  plain run, ${plainTokens} tokens          ${fmt(plainTime)}`);
console.log(`  induction probe, ${probeTokens} tokens   ${fmt(probeTime)}   ×${(probeTime.median / plainTime.median).toFixed(3)} of the plain run`);
smollm.free();
