// The training timelines of the trained models (issue 32), as a reader finds them: a slider
// over the induction model's checkpoints above the views, every view then showing the model
// at that step — the induction probe's scores equal to the timeline's own at that checkpoint
// (computed on the same f16 weights) — the curves with the step and the phase change marked,
// a link that keeps the step (a step between checkpoints moved to the nearest, and said), on a
// phone in Korean; and the widget's `step` on a strict-CSP blog.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { ROOT, SHOTS, afterRender, inShadow, openBlog, openExplorer, openHarness, waitRender } from "./harness.mjs";

const timelineOf = (name) => JSON.parse(readFileSync(join(ROOT, "www", "models", name, "timeline", "timeline.json"), "utf8"));
const TIMELINE = timelineOf("headmap-tiny-induction");
/** The translator's: every encoder head's 그것 → 동물 mass on the seed sentence. */
const KO_EN = timelineOf("headmap-tiny-ko-en");
const steps = TIMELINE.checkpoints.map((c) => c.step);
/** The last checkpoint before the phase change: induction heads not formed yet. */
const EARLY = steps.filter((s) => s < TIMELINE.phaseChange.step).at(-1);

/** Moves the slider to checkpoint `index`, as a drag that ends there would. */
const slide = (page, index) =>
  page.evaluate((i) => {
    const slider = document.getElementById("timeline-step");
    slider.value = String(i);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
  }, index);

/** Runs the induction probe; its scores, [layers × heads]. */
async function probed(page) {
  await page.evaluate(() => (globalThis.__headmap.induction = null));
  await page.locator("#find-probe").click();
  await page.waitForFunction(() => globalThis.__headmap.induction);
  return page.evaluate(() => globalThis.__headmap.induction.values);
}

describe("the trained models' timelines, in the explorer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  it("moves every view to a checkpoint, whose probe scores are the timeline's", async () => {
    const page = await openExplorer(h, "?model=induction&lang=en&layer=1&head=3", { locale: "en-US", width: 1280, height: 900 });
    await page.waitForFunction(() => !document.getElementById("timeline").hidden);
    assert.equal(await page.locator("#timeline-label").textContent(), "step 9,000 of 9,000: the model as trained");
    assert.equal(await page.locator("#timeline-step").getAttribute("max"), String(steps.length - 1));
    assert.equal(await page.locator("#timeline-curves canvas").count(), 4, "loss, accuracy, and both scores of every head");
    assert.match(await page.locator("#timeline-note").textContent(), /The phase change: step 5,260, the first scored step/);
    await page.locator("#timeline").screenshot({ path: join(SHOTS, "timeline-final-en-1280.png") });

    await afterRender(page, () => slide(page, steps.indexOf(EARLY)));
    await page.waitForFunction((s) => new URLSearchParams(location.search).get("step") === String(s), EARLY);
    assert.equal(await page.locator("#timeline-label").textContent(), `step ${EARLY.toLocaleString("en")} of 9,000`);
    assert.match(await page.locator("#model-status").textContent(), new RegExp(`^headmap-tiny-induction at step ${EARLY.toLocaleString("en")} is loaded from this site`));
    assert.equal(await page.evaluate(() => document.getElementById("layer").value), "1", "the head shown stays");
    // the probe on this checkpoint gives the timeline's scores at its step
    const recorded = TIMELINE.heads.find((x) => x.step === EARLY).scores.induction.flat();
    const early = await probed(page);
    const off = Math.max(...early.map((v, i) => Math.abs(v - recorded[i])));
    assert.ok(off < 1e-4, `the probe's induction scores at step ${EARLY} are the timeline's (off by ${off})`);
    assert.ok(Math.max(...early) < 0.5, "no induction head yet");
    await page.locator(".view").screenshot({ path: join(SHOTS, "timeline-early-en-1280.png") });
    // and at the last step, the model as trained has them
    await slide(page, steps.length - 1);
    await page.waitForFunction(() => !new URLSearchParams(location.search).has("step"));
    await page.waitForFunction(() => /^headmap-tiny-induction is loaded/.test(document.getElementById("model-status").textContent));
    const last = TIMELINE.heads.at(-1).scores.induction.flat();
    const end = await probed(page);
    assert.ok(Math.max(...end) > 0.7, "induction heads at the end");
    // the final f32 weights score within f16's rounding of the last checkpoint's
    assert.ok(Math.max(...end.map((v, i) => Math.abs(v - last[i]))) < 0.01);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("keeps the step in a link, moves a step between checkpoints to the nearest, and fits a phone in Korean", async () => {
    const asked = EARLY + 7;
    const page = await openExplorer(h, `?model=induction&lang=ko&step=${asked}`, { locale: "ko-KR", width: 390, height: 844, touch: true });
    await page.waitForFunction(() => !document.getElementById("timeline").hidden);
    assert.equal(await page.locator("#timeline-label").textContent(), `9,000단계 중 ${EARLY.toLocaleString("en")}단계`);
    assert.match(await page.locator("#link-notice").textContent(), new RegExp(`링크가 ${asked.toLocaleString("en")}단계를 물었지만, 가장 가까운 체크포인트인 ${EARLY.toLocaleString("en")}단계를 보여 줍니다`));
    assert.equal(await page.locator("#timeline-curves canvas").count(), 0, "on a phone the curves wait for a tap");
    await page.locator("#timeline-charts summary").tap();
    await page.waitForFunction(() => document.querySelectorAll("#timeline-curves canvas").length === 4);
    await afterRender(page, () => page.locator("#timeline-next").tap());
    const next = steps[steps.indexOf(EARLY) + 1];
    assert.equal(await page.locator("#timeline-label").textContent(), `9,000단계 중 ${next.toLocaleString("en")}단계`);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(wide <= 0, `the page does not scroll sideways (${wide} px)`);
    await page.locator("#timeline").screenshot({ path: join(SHOTS, "timeline-ko-390.png") });
    assert.deepEqual(page.consoleErrors, []);
  });
});

describe("the translator's timeline, in the explorer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  const last = KO_EN.checkpoints.at(-1).step;
  const phase = KO_EN.phaseChange.step;
  const before_ = KO_EN.checkpoints.map((c) => c.step).filter((s) => s < phase).at(-1);

  it("opens at the model as trained, with its 그것 → 동물 curves and phase change, at 1280 px in English", async () => {
    const page = await openExplorer(h, "?model=trained&lang=en", { locale: "en-US", width: 1280, height: 900 });
    await page.waitForFunction(() => !document.getElementById("timeline").hidden);
    assert.equal(await page.locator("#timeline-label").textContent(), `step ${last.toLocaleString("en")} of ${last.toLocaleString("en")}: the model as trained`);
    assert.equal(await page.locator("#timeline-step").getAttribute("max"), String(KO_EN.checkpoints.length - 1));
    assert.equal(await page.locator("#timeline-curves canvas").count(), 3, "loss, accuracy, and every encoder head's 그것 → 동물 mass");
    assert.match(await page.locator("#timeline-curves canvas").nth(2).getAttribute("aria-label"), /^그것 → 동물/, "the mass chart names its tokens");
    assert.match(await page.locator("#timeline-note").textContent(), new RegExp(`step ${phase.toLocaleString("en")}`));
    await page.locator("#timeline").screenshot({ path: join(SHOTS, "timeline-trained-en-1280.png") });
    await afterRender(page, () => slide(page, KO_EN.checkpoints.findIndex((c) => c.step === before_)));
    await page.waitForFunction((s) => new URLSearchParams(location.search).get("step") === String(s), before_);
    assert.match(await page.locator("#model-status").textContent(), new RegExp(`^headmap-tiny-ko-en at step ${before_.toLocaleString("en")}`));
    await page.locator(".view").screenshot({ path: join(SHOTS, "timeline-trained-early-en-1280.png") });
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("keeps a step in a link and fits a phone in Korean", async () => {
    const page = await openExplorer(h, `?model=trained&lang=ko&step=${before_}`, { locale: "ko-KR", width: 390, height: 844, touch: true });
    await page.waitForFunction(() => !document.getElementById("timeline").hidden);
    assert.equal(await page.locator("#timeline-label").textContent(), `${last.toLocaleString("en")}단계 중 ${before_.toLocaleString("en")}단계`);
    await page.locator("#timeline-charts summary").tap();
    await page.waitForFunction(() => document.querySelectorAll("#timeline-curves canvas").length === 3);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(wide <= 0, `the page does not scroll sideways (${wide} px)`);
    await page.locator("#timeline").screenshot({ path: join(SHOTS, "timeline-trained-ko-390.png") });
    assert.deepEqual(page.consoleErrors, []);
  });
});

describe("the widget's step, on a strict-CSP blog", () => {
  let blog;
  before(async () => {
    blog = await openBlog();
  });
  after(async () => blog?.close());

  it("draws a checkpoint of the timeline, and says when a model has none", async () => {
    const page = await blog.open("timeline.html", { locale: "ko-KR" });
    const weights = async (id) => {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRender(page, id);
      return inShadow(page, id, async (e) => JSON.parse(await e.toJSON()).rows[0].attention.decoder_self.weights[1][3]);
    };
    const early = await weights("early");
    const late = await weights("late");
    assert.notDeepEqual(early, late, "step 1000's head is not the trained model's");
    assert.equal(await page.evaluate(() => document.getElementById("early").step), 1000);
    assert.match(await inShadow(page, "early", (e) => e.shadowRoot.textContent), /gpt2 · 학습 1,000단계/, "the figure says its step");
    await page.locator("#early").screenshot({ path: join(SHOTS, "widget-step-ko.png") });
    // the translator: each encoder head's weight from 그것 to 동물 is the timeline's mass at that step
    const encoder = async (id) => {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRender(page, id);
      return inShadow(page, id, async (e) => JSON.parse(await e.toJSON()).rows[0].attention.encoder_self.weights);
    };
    const [q, k] = [KO_EN.probe.queries[0], KO_EN.probe.keys[0]];
    const mass = (step) => KO_EN.heads.find((x) => x.step === step).scores.mass.flat();
    const drawn = (weights) => weights.flatMap((layer) => layer.map((head) => head[q][k]));
    const koEarly = drawn(await encoder("ko-early"));
    const offEarly = Math.max(...koEarly.map((v, i) => Math.abs(v - mass(250)[i])));
    assert.ok(offEarly < 1e-4, `step 250's 그것 → 동물 weights are the timeline's (off by ${offEarly})`);
    const koLate = drawn(await encoder("ko-late"));
    const offLate = Math.max(...koLate.map((v, i) => Math.abs(v - mass(KO_EN.checkpoints.at(-1).step)[i])));
    assert.ok(offLate < 0.01, `the model as trained is its last checkpoint's within f16 (off by ${offLate})`);
    assert.ok(Math.max(...koLate) > 0.9 && Math.max(...koEarly) < 0.6, "the coreference head forms between them");
    await page.locator("#ko-early").screenshot({ path: join(SHOTS, "widget-step-trained-ko.png") });
    await page.locator("#bad").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "bad" && e.type === "error" && e.detail.attribute === "step"));
    // a step between checkpoints: the nearest one is drawn, and said (it was "model.safetensors: not found")
    await page.locator("#between").scrollIntoViewIfNeeded();
    await waitRender(page, "between");
    const said = await inShadow(page, "between", (e) => e.shadowRoot.textContent);
    assert.match(said, /속성 step="4100"은 이 모델이 남긴 체크포인트가 아니어서 가장 가까운 4,090단계를 그립니다/);
    assert.match(said, /gpt2 · 학습 4,090단계/);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });
});
