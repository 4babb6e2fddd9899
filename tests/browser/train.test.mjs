// Heads that form (issue 32), as a reader finds it in the explorer: a small GPT-2 trained from
// random weights in the worker, its loss, copy accuracy and every head's scores drawn as it
// goes — the same numbers `headmap train` records for the seed (tests/fixtures/train/
// page-seed0.json, held to the command line by tests/cli_train.rs) — through the phase change;
// a pause that holds and a go-on that continues; the model kept as one more in the picker that
// every view opens and a link reopens, its files downloadable; bad settings refused by name in
// both languages; no long task (over 50 ms) while it trains. Screenshots before, during and
// after the change at 390 and 1280 px.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { ROOT, SHOTS, openExplorer, openHarness, waitForRender } from "./harness.mjs";

const FIXTURE = JSON.parse(readFileSync(join(ROOT, "tests", "fixtures", "train", "page-seed0.json"), "utf8"));

const training = (page) => page.evaluate(() => globalThis.__headmap.training);

/** Waits until the page has trained to `step` (or past it); the probe's record. */
async function trainedTo(page, step, timeout = 180_000) {
  await page.waitForFunction((s) => (globalThis.__headmap.training?.step ?? 0) >= s, step, { timeout, polling: 100 });
  return training(page);
}

/** Sets the panel's number fields. */
async function settings(page, values) {
  for (const [id, value] of Object.entries(values)) await page.fill(`#train-${id}`, String(value));
}

/** A screenshot of the panel, and when it was taken in the page's time (a screenshot is a long task of its own). */
async function shot(page, name, shots = []) {
  const from = await page.evaluate(() => performance.now());
  await page.locator("#train-panel").screenshot({ path: join(SHOTS, name) });
  shots.push([from, await page.evaluate(() => performance.now())]);
}

/** The page's long tasks (over 50 ms) from now on, as [start, duration]. */
const watchFrames = (page) =>
  page.evaluate(() => {
    globalThis.__long = [];
    new PerformanceObserver((list) => globalThis.__long.push(...list.getEntries().map((e) => [Math.round(e.startTime), Math.round(e.duration)]))).observe({ type: "longtask" });
  });

/**
 * The page's long tasks since `watchFrames`, a screenshot's own left out, as [start, ms]; says
 * what it saw, and the draws' times.
 */
async function longTasks(page, shots, name) {
  const long = (await page.evaluate(() => globalThis.__long)).filter(([start]) => !shots.some(([a, b]) => start >= a - 20 && start <= b + 20));
  const draws = await page.evaluate(() => globalThis.__headmap.trainingDraws ?? []);
  console.log(`# ${name}: long tasks while training: ${long.length}${long.length ? `, longest ${Math.max(...long.map((l) => l[1]))} ms` : ""}; ${draws.length} draws, the longest ${Math.max(...draws.map((d) => d[1]))} ms`);
  return long;
}

/**
 * No frame while it trains takes over 50 ms (issue 32): none on `page` since `watchFrames`.
 * This machine is shared, and a task can be held up by another process: where one was seen, a
 * fresh page at the same size and language (`query`, `options`) trains the same 1,500 steps
 * once more, and that run must have none. A frame the page makes long itself (a font looked up,
 * new canvases' buffers: the issue's two) comes back on every page.
 */
async function framesHeld(h, page, shots, name, query, options) {
  if (!(await longTasks(page, shots, name)).length) return;
  const again = await openExplorer(h, query, options);
  await again.locator("#train-panel").scrollIntoViewIfNeeded();
  await settings(again, { steps: 1500 });
  await watchFrames(again);
  await again.locator("#train-start").click();
  await trainedTo(again, 1500);
  const long = await longTasks(again, [], `${name}, a fresh page`);
  await again.close();
  assert.deepEqual(long, [], `no long task while training (${name}) on two pages, as [start, ms]`);
}

describe("heads that form, trained in the explorer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  it("trains seed 0 through the phase change with the command line's numbers, pauses, goes on and keeps the model", async () => {
    const page = await openExplorer(h, "?model=induction&lang=en", { locale: "en-US", width: 1280, height: 900 });
    await page.locator("#train-panel").scrollIntoViewIfNeeded();
    assert.equal(await page.locator("#train-title").textContent(), "Heads that form: train a model here");
    await settings(page, { steps: 1500 });
    await watchFrames(page);
    await page.locator("#train-start").click();
    // before the change: the heads as they start, the loss on its plateau
    await trainedTo(page, 300);
    const shots = [];
    await shot(page, "train-before-en-1280.png", shots);
    await page.waitForFunction(() => globalThis.__headmap.training?.phase, null, { timeout: 180_000, polling: 100 });
    await shot(page, "train-during-en-1280.png", shots);
    await trainedTo(page, 1500);
    await page.waitForFunction(() => !document.getElementById("train-start").disabled);
    const done = await training(page);
    assert.equal(done.steps, 1500);
    // every scored step the command line records for this seed, within the sums' order
    const scored = await page.evaluate(() => globalThis.__headmap.trainingScores);
    for (const expected of FIXTURE.scores) {
      const got = scored.find((s) => s.step === expected.step);
      assert.ok(got, `step ${expected.step} is scored`);
      assert.ok(Math.abs(got.copyAccuracy - expected.copyAccuracy) < 2e-3, `copy accuracy at ${expected.step}: ${got.copyAccuracy} against ${expected.copyAccuracy}`);
      for (const key of ["induction", "previousToken"]) {
        const most = Math.max(...got[key].flatMap((row, l) => row.map((v, i) => Math.abs(v - expected[key][l][i]))));
        assert.ok(most < 2e-3, `${key} at step ${expected.step}: off by ${most}`);
      }
    }
    // the phase change, found by the command line's rule, near where the command line finds it
    assert.ok(done.phase, "the phase change is found");
    assert.ok(Math.abs(done.phase.step - FIXTURE.phaseChange) <= 200, `the page's phase change at ${done.phase.step}, the command line's at ${FIXTURE.phaseChange}`);
    console.log(`# phase change in the page: step ${done.phase.step} after ${done.phase.seconds.toFixed(1)} s (command line: step ${FIXTURE.phaseChange}); ${Math.round(done.rate)} steps/s at the end`);
    await framesHeld(h, page, shots, "en, 1280 px", "?model=induction&lang=en", { locale: "en-US", width: 1280, height: 900 });
    assert.match(await page.locator("#train-phase").textContent(), /^Phase change at step [\d,]+, [\d.]+ s in: copy accuracy [\d.]+ and layer 2, head \d an induction head \([\d.]+\)\.$/);
    assert.match(await page.locator("#train-status").textContent(), /^Step 1,500 of 1,500 · loss [\d.]+ · copy accuracy [\d.]+ · [\d,]+ steps a second\. Trained for 1,500 steps in [\d.]+ s\.$/);
    // every head on the probe, a layer a row
    assert.equal(await page.locator("#train-thumbs canvas").count(), 8);
    assert.match(await page.locator("#train-thumbs canvas").nth(4).getAttribute("aria-label"), /^L2 H1: induction [\d.]+, previous [\d.]+$/);
    for (const id of ["loss", "accuracy", "induction", "previous"]) {
      assert.match(await page.locator(`#train-${id}`).getAttribute("aria-label"), /: [\d.]+ at step [\d,]+, [\d.]+ at step 1,500$/, id);
    }
    await page.locator("#train-panel").screenshot({ path: join(SHOTS, "train-after-en-1280.png") });

    // on to 2,000 from where it stopped, then a pause that holds
    await settings(page, { steps: 2000 });
    assert.equal(await page.locator("#train-start").textContent(), "Go on");
    await page.locator("#train-start").click();
    await trainedTo(page, 1600);
    await page.locator("#train-pause").click();
    await page.waitForFunction(() => !document.getElementById("train-start").disabled);
    const paused = (await training(page)).step;
    assert.ok(paused >= 1600 && paused < 2000, `paused at ${paused}`);
    await page.waitForTimeout(800);
    assert.equal((await training(page)).step, paused, "a pause holds");
    assert.match(await page.locator("#train-status").textContent(), new RegExp(`Paused at step ${paused.toLocaleString("en")}\\.$`));

    // kept: a model like any other, open in every view, its files in GPT-2's layout
    await page.locator("#train-keep").click();
    await page.waitForFunction(() => document.getElementById("model").value.startsWith("kept:"));
    await waitForRender(page, 2);
    const info = await page.evaluate(() => globalThis.__headmap.model);
    assert.equal(info.architecture, "gpt2");
    assert.equal(await page.locator("#grid .thumb").count(), 8, "every head in the grid");
    assert.ok(await page.locator("#status").isHidden(), "no error in place of the heatmap");
    assert.match(await page.locator("#model-status").textContent(), /^Trained here \(seed 0, step [\d,]+\) is loaded from this page \(gpt2, up to 33 tokens\)\.$/);
    assert.match(await page.locator("#notice").textContent(), /^Trained in this page: the model the training panel made/);
    const names = await page.locator("#train-files a").allTextContents();
    assert.deepEqual(names.sort(), ["config.json", "model.safetensors", "tokenizer.json"]);
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator('#train-files a[download="config.json"]').click()]);
    const config = JSON.parse(readFileSync(await download.path(), "utf8"));
    assert.equal(config.model_type, "gpt2");
    assert.deepEqual([config.n_layer, config.n_head, config.n_embd], [2, 4, 32]);
    // a link to it opens in another tab of the same browser
    await page.waitForFunction(() => location.search.includes("model=kept%3A") || location.search.includes("model=kept:"));
    const again = await page.context().newPage();
    again.consoleErrors = [];
    await again.goto(page.url());
    await waitForRender(again);
    assert.equal((await again.evaluate(() => globalThis.__headmap.model)).architecture, "gpt2");
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("says a model in training was lost when the computation started afresh, and trains again from step 0", async () => {
    const page = await openExplorer(h, "?model=induction&lang=en", { locale: "en-US", width: 1280, height: 900 });
    await page.locator("#train-panel").scrollIntoViewIfNeeded();
    await settings(page, { lr: "0.001", seed: 0, heads: 4, d: 32, layers: 2, steps: 100 });
    await page.locator("#train-start").click();
    await trainedTo(page, 100);
    await page.waitForFunction(() => !document.getElementById("train-start").disabled);
    // the core stops (a trap, as running out of memory is): its worker, and the trainer in it, go
    const outcome = await page.evaluate(async () => {
      const { AttentionClient } = await import("/js/client.js");
      return new AttentionClient().call("panic", { where: "here" }).catch((e) => e.code);
    });
    assert.equal(outcome, "computation_stopped");
    // "Go on" finds no trainer: said, and the panel starts again rather than from a step it lacks
    await settings(page, { steps: 200 });
    await page.locator("#train-start").click();
    await page.waitForFunction(() => !document.getElementById("train-error").hidden);
    assert.match(await page.locator("#train-error").textContent(), /^The model trained to step 100 was lost when the computation started afresh: train it again\.$/);
    assert.equal(await training(page), null);
    await page.locator("#train-start").click();
    const again = await trainedTo(page, 50);
    assert.ok(again.losses >= 50 && again.losses <= 200, `a new run from step 0 (${again.losses} losses)`);
    await page.close();
  });

  it("trains on a phone in Korean, and refuses bad settings by name in both languages", async () => {
    const page = await openExplorer(h, "?model=induction&lang=ko", { locale: "ko-KR", width: 390, height: 844, touch: true });
    await page.locator("#train-panel").scrollIntoViewIfNeeded();
    assert.equal(await page.locator("#train-title").textContent(), "헤드가 생기는 과정: 여기서 학습하기");
    const refused = async (values, pattern) => {
      await settings(page, { lr: "0.001", seed: 0, heads: 4, d: 32, layers: 2, steps: 1500, ...values });
      await page.locator("#train-start").tap();
      await page.waitForFunction(() => !document.getElementById("train-error").hidden);
      assert.match(await page.locator("#train-error").textContent(), pattern);
    };
    await refused({ lr: "abc" }, /^학습 설정 학습률의 값 abc은\(는\) 쓸 수 없습니다: 0보다 크고 1 이하인 수이어야 합니다\.$/);
    await refused({ lr: "-1" }, /학습률의 값 -1/);
    await refused({ heads: 3 }, /헤드 수의 값 3은 쓸 수 없습니다: d_model 32의 약수이어야 합니다/);
    await refused({ seed: "1.5" }, /시드의 값 1\.5/);
    await refused({ layers: 9 }, /층 수의 값 9는 쓸 수 없습니다: 1–3 사이의 정수이어야 합니다/);
    await refused({ d: 256 }, /d_model의 값 256/);
    await page.locator("#lang").tap();
    await page.waitForFunction(() => document.documentElement.lang === "en");
    await refused({ lr: "abc" }, /^The training setting learning rate is abc: it must be a number above 0, at most 1\.$/);
    await page.locator("#lang").tap();
    await page.waitForFunction(() => document.documentElement.lang === "ko");

    await settings(page, { lr: "0.001", seed: 0, heads: 4, d: 32, layers: 2, steps: 1500 });
    await watchFrames(page);
    await page.locator("#train-start").tap();
    await page.waitForFunction(() => document.getElementById("train-error").hidden);
    await trainedTo(page, 400);
    const shots = [];
    await shot(page, "train-before-ko-390.png", shots);
    const phase = await page.waitForFunction(() => globalThis.__headmap.training?.phase, null, { timeout: 180_000, polling: 100 });
    assert.ok(await phase.jsonValue());
    await shot(page, "train-during-ko-390.png", shots);
    await trainedTo(page, 1500);
    await framesHeld(h, page, shots, "ko, 390 px", "?model=induction&lang=ko", { locale: "ko-KR", width: 390, height: 844, touch: true });
    assert.match(await page.locator("#train-phase").textContent(), /^[\d,]+단계\([\d.]+초\)에서 상전이: 복사 정확도 [\d.]+, 2층 \d번 헤드가 인덕션 헤드\([\d.]+\)\.$/);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(wide <= 0, `the page does not scroll sideways (${wide} px)`);
    await page.locator("#train-panel").screenshot({ path: join(SHOTS, "train-after-ko-390.png") });
    assert.deepEqual(page.consoleErrors, []);
  });
});
