// Relaxed SIMD in the browser: where WebAssembly.validate accepts f32x4.relaxed_madd (Chromium
// does) real models run on the -relaxed twins of the real-model builds, fused multiply–add in
// the matrix kernel; a host that serves only the plain folders gets the plain simd128 builds,
// with no error, and the same weights within float rounding (a fused multiply–add rounds once
// where the plain kernel rounds twice). Both pairs, threaded (isolated page) and single.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { isolatedBuild, openHarness, savedExport, servePlain, waitForRender } from "./harness.mjs";

const TEXT = "The little dog ran across the busy street because it wanted to reach the park where the other dogs were playing.";
// the parity bound with transformers: the two kernels may differ by less, never by more
const BOUND = 1e-4;

let h;
let plain; // the same files without isolation: one thread
before(async () => {
  h = await openHarness();
  plain = await servePlain();
});
after(async () => {
  await h?.close();
  plain?.close();
});

/** The explorer at `base` on MiniLM and TEXT, drawn; with `onlyPlain` the relaxed folders 404. */
async function minilm(base, { onlyPlain = false } = {}) {
  const page = await h.page({ width: 1280, height: 1000 });
  const asked = [];
  if (onlyPlain) {
    await page.context().route(/\/pkg-hf(-threads)?-relaxed\//, (route) => {
      asked.push(route.request().url());
      return route.fulfill({ status: 404, contentType: "text/plain", body: "not here" });
    });
  }
  await page.goto(`${base}?model=minilm&lang=en&text=${encodeURIComponent(TEXT)}`);
  await page.waitForFunction(() => globalThis.__headmap?.model?.compute || globalThis.__headmap?.errors.length, null, { timeout: 90000 });
  await waitForRender(page);
  assert.deepEqual(await page.evaluate(() => globalThis.__headmap.errors), []);
  return { page, asked, compute: await page.evaluate(() => globalThis.__headmap.model.compute) };
}

/** Every weight of the page's run, as its "weights (JSON)" button saves them, in one array. */
async function weights(page) {
  const numbers = [];
  const all = (v) => (Array.isArray(v) ? v.forEach(all) : typeof v === "number" && numbers.push(v));
  // the numbers under every "weights" key of the document (docs/attention.schema.json)
  const find = (v) => v && typeof v === "object" && Object.entries(v).forEach(([k, x]) => (k === "weights" ? all(x) : find(x)));
  find(JSON.parse((await savedExport(page)).toString("utf8")));
  return numbers;
}

function largestDifference(a, b) {
  assert.equal(a.length, b.length, "the same number of weights");
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
}

/** The page's run on the relaxed twin, then on the plain build where the host lacks the twin;
 * on an isolated page the threaded pair where the browser has two cores (`isolatedBuild`). */
async function bothBuilds(base, isolated) {
  const fused = await minilm(base);
  const expected = await isolatedBuild(fused.page);
  const [twin, plainBuild] = isolated ? [expected.compute.package, expected.plain] : ["pkg-hf-relaxed", "pkg-hf"];
  // the page's own probe (compute.js), not a stand-in
  assert.equal(await fused.page.evaluate(() => import("/js/compute.js").then((c) => c.relaxedSimd())), true, "Chromium has relaxed SIMD");
  assert.equal(fused.compute.package, twin, JSON.stringify(fused.compute));
  assert.equal(await fused.page.locator("#cost").getAttribute("title"), `wasm: ${twin}`);
  const separate = await minilm(base, { onlyPlain: true });
  assert.ok(separate.asked.length > 0, "the page asked for the relaxed twin first");
  assert.equal(separate.compute.package, plainBuild, JSON.stringify(separate.compute));
  assert.equal(separate.compute.build, fused.compute.build, "threads or not, as the page allows");
  const [a, b] = [await weights(fused.page), await weights(separate.page)];
  assert.ok(a.length >= 6 * 12 * 20 * 20, `a whole run's weights (${a.length})`);
  const d = largestDifference(a, b);
  assert.ok(d <= BOUND, `${twin} and ${plainBuild} differ by ${d}`);
  console.log(`# ${twin} vs ${plainBuild}: max |Δ| ${d.toExponential(1)} over ${a.length} weights`);
  await fused.page.close();
  await separate.page.close();
}

describe("relaxed SIMD", () => {
  it("runs the threaded twin on an isolated page, and the plain threaded build where the host lacks it, to the same weights", () =>
    bothBuilds(h.base, true));

  it("runs the single-threaded twin elsewhere, and the plain build where the host lacks it, to the same weights", () =>
    bothBuilds(`http://127.0.0.1:${plain.address().port}/`, false));
});
