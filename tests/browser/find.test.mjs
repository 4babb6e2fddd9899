// Finding heads (issue 18), as a reader does it: colour the heads by a score and open the best
// one, tap 그것 and 동물 and rank the heads by the weight between them, read the rollout, run
// the induction probe; in Korean on a phone; and the widget's atlas and rollout views on a
// blog under a strict CSP. Every number the page shows is checked against the weights the
// main heatmap draws, so the panel cannot drift from the core.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { SHOTS, afterRender, inShadow, openBlog, openExplorer, openHarness, renders, waitRender } from "./harness.mjs";

/** Waits until the find panel has drawn for the newest render. */
const found = (page, score) => page.waitForFunction((s) => globalThis.__headmap.find?.score === s, score);

describe("find heads in the explorer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  it("colours every head by a score equal to the weights drawn, and opens the best head", async () => {
    const page = await openExplorer(h, "", { locale: "en-US" });
    await found(page, "previous_token");
    const check = await page.evaluate(() => {
      const { meta, find, state, shownWeights } = globalThis.__headmap;
      // TransformerLens's previous-token score of the head on show, from the weights the heatmap drew
      let on = 0;
      let all = 0;
      for (let i = 0; i < meta.tq; i++) {
        for (let j = 0; j < meta.tk; j++) {
          all += shownWeights[i * meta.tk + j];
          if (j === i - 1) on += shownWeights[i * meta.tk + j];
        }
      }
      return { want: on / all, got: find.values[state.layer * meta.heads + state.head], top: find.top, heads: meta.heads, layers: meta.layers };
    });
    assert.ok(Math.abs(check.got - check.want) < 1e-5, `${check.got} vs ${check.want}`);
    assert.equal(await page.locator("#atlas .atlas-top li").count(), 5);
    assert.match(await page.locator("#atlas canvas").getAttribute("aria-label"), /Previous token of 3 layers by 4 heads; highest: layer \d, head \d/);
    // the table holds every head's number
    assert.equal(await page.locator("#atlas table tbody td").count(), check.layers * check.heads);
    // one tap on the best head opens it
    const best = check.top[0];
    await afterRender(page, () => page.locator("#atlas .atlas-top button").first().click());
    const state = await page.evaluate(() => globalThis.__headmap.state);
    assert.deepEqual([state.layer, state.head], [best.layer, best.head]);
    // another score, from the menu; the link keeps it
    await page.locator("#find-score").selectOption("broad");
    await found(page, "broad");
    await page.waitForFunction(() => location.search.includes("find=broad"));
    assert.deepEqual(page.consoleErrors, []);
  });

  it("ranks the heads by the weight from tapped queries to tapped keys (그것 → 동물)", async () => {
    const page = await openExplorer(h, "", { locale: "en-US" });
    await found(page, "previous_token");
    const labels = await page.evaluate(() => globalThis.__headmap.meta.queries);
    const from = labels.indexOf("그것");
    const to = labels.indexOf("동물");
    assert.ok(from > 0 && to >= 0, labels.join(" "));
    await page.locator("#find-queries button").nth(from).click();
    await page.locator("#find-keys button").nth(to).click();
    await found(page, "mass");
    assert.equal(await page.locator("#find-score").inputValue(), "mass");
    const check = await page.evaluate(([i, j]) => {
      const { meta, find, state, shownWeights } = globalThis.__headmap;
      return { got: find.values[state.layer * meta.heads + state.head], want: shownWeights[i * meta.tk + j], name: find.name };
    }, [from, to]);
    assert.ok(Math.abs(check.got - check.want) < 1e-6, `${check.got} vs ${check.want}`);
    assert.equal(check.name, "weight from 그것 to 동물");
    // the trained model's showcase: its head on 그것 → 동물 is among the top ones
    const top = await page.evaluate(() => globalThis.__headmap.find.top.map((t) => [t.layer, t.head]));
    assert.ok(top.some(([l, hd]) => l === 1 && hd === 1), JSON.stringify(top));
    // the selection is in the link: opening it shows the same ranking
    await page.waitForFunction(() => location.search.includes("from=") && location.search.includes("to="));
    const again = await openExplorer(h, new URL(page.url()).search, { locale: "en-US" });
    await found(again, "mass");
    assert.deepEqual(await again.evaluate(() => globalThis.__headmap.find.top), await page.evaluate(() => globalThis.__headmap.find.top));
    // clearing goes back to a score
    await page.locator("#find-clear").click();
    await found(page, "previous_token");
    await page.screenshot({ path: join(SHOTS, "find-en-1280.png"), fullPage: true });
    assert.deepEqual(page.consoleErrors, []);
  });

  it("draws the rollout of the sentence, and says why cross-attention has none", async () => {
    const page = await openExplorer(h, "", { locale: "en-US" });
    await found(page, "previous_token");
    await page.waitForFunction(() => document.querySelector("#rollout canvas")?.getAttribute("aria-label")?.startsWith("Attention rollout after layer 3"));
    await page.locator("#rollout-fusion").selectOption("max");
    await page.waitForFunction(() => location.search.includes("fusion=max"));
    assert.deepEqual(page.consoleErrors, []);
    const cross = await openExplorer(h, "?place=cross", { locale: "en-US" });
    await found(cross, "first_token");
    await cross.waitForFunction(() => !document.getElementById("rollout-note").hidden);
    assert.match(await cross.locator("#rollout-note").textContent(), /self-attention place/);
    // cross-attention has no positions to compare: those scores are off in the menu
    assert.ok(await cross.locator("#find-score option[value=previous_token]").isDisabled());
    assert.deepEqual(cross.consoleErrors, []);
  });

  it("probes an encoder–decoder in its decoder, from its encoder's view", async () => {
    const page = await openExplorer(h, "", { locale: "en-US" });
    await found(page, "previous_token");
    assert.equal(await page.evaluate(() => globalThis.__headmap.meta.place), "encoder_self");
    await page.locator("#find-probe").click();
    await page.waitForFunction(() => globalThis.__headmap.induction);
    assert.ok(await page.evaluate(() => globalThis.__headmap.induction.causal), "the decoder's masked self-attention is causal");
    assert.doesNotMatch(await page.locator("#probe-text").textContent(), /not causal|needs causal/);
    // "chosen tokens" before any is tapped: the hint, no map of another score
    await page.locator("#find-score").selectOption("mass");
    await page.waitForFunction(() => !document.getElementById("find-note").hidden);
    assert.match(await page.locator("#find-note").textContent(), /Tap tokens to choose them/);
    assert.ok(await page.locator("#atlas").isHidden());
    assert.equal(await page.locator("#find-score").inputValue(), "mass");
    assert.deepEqual(page.consoleErrors, []);
  });

  it("runs the induction probe, and says an encoder is not causal", async () => {
    const page = await openExplorer(h, "?model=minilm", { locale: "en-US" });
    await page.waitForFunction(() => globalThis.__headmap.meta.heads === 12);
    await page.locator("#find-probe").click();
    await page.waitForFunction(() => globalThis.__headmap.induction);
    const text = await page.locator("#probe-text").textContent();
    assert.match(text, /Induction probe on 101 tokens/);
    assert.match(text, /not causal/);
    assert.equal(await page.locator("#probe-atlas .atlas-top li").count(), 5);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("finds the trained language model's induction heads, on a repeated sentence and with the probe", async () => {
    const text = "민수 가 사과 를 먹는다 . 민수 가 사과 를 먹는다 .";
    const page = await openExplorer(h, `?model=induction&text=${encodeURIComponent(text)}&find=induction`, { locale: "en-US" });
    await found(page, "induction");
    // the model opens on the head its card names (headmap.json), in layer 2 (1 from 0)
    const { state, find } = await page.evaluate(() => globalThis.__headmap);
    assert.equal(state.layer, 1);
    assert.ok(find.top[0].layer === 1 && find.top[0].value > 0.15, JSON.stringify(find.top));
    await page.locator("#find-probe").click();
    await page.waitForFunction(() => globalThis.__headmap.induction);
    const probe = await page.evaluate(() => globalThis.__headmap.induction);
    assert.ok(probe.causal);
    assert.ok(probe.best.layer === 1 && probe.best.value > 0.6, JSON.stringify(probe.best));
    assert.match(await page.locator("#probe-text").textContent(), /Induction probe on 101 tokens \(<bos> /);
    await page.locator("#find").screenshot({ path: join(SHOTS, "find-induction-en-1280.png") });
    assert.deepEqual(page.consoleErrors, []);
  });

  it("reads in Korean on a phone, without sideways scrolling", async () => {
    const page = await openExplorer(h, "?lang=ko", { locale: "ko-KR", width: 390, height: 844, touch: true });
    await found(page, "previous_token");
    assert.equal(await page.locator("#find-title").textContent(), "헤드 찾기");
    assert.equal(await page.locator("#find-score option[value=induction]").textContent(), "인덕션: 앞선 같은 토큰의 다음 토큰");
    const labels = await page.evaluate(() => globalThis.__headmap.meta.queries);
    await page.locator("#find-queries button").nth(labels.indexOf("그것")).tap();
    await page.locator("#find-keys button").nth(labels.indexOf("동물")).tap();
    await found(page, "mass");
    assert.match(await page.locator("#atlas canvas").getAttribute("aria-label"), /그것에서 동물로 가는 가중치/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page scrolls ${overflow} px sideways`);
    await page.locator("#find").screenshot({ path: join(SHOTS, "find-ko-390.png") });
    await page.locator("#rollout-panel").screenshot({ path: join(SHOTS, "rollout-ko-390.png") });
    assert.deepEqual(page.consoleErrors, []);
  });
});

describe("find heads in the widget, on a blog under a strict CSP", () => {
  let blog;
  before(async () => {
    blog = await openBlog();
  });
  after(async () => blog?.close());

  it("draws the atlas and the rollout, opens a head from the atlas, and says the toy has nothing to find", async () => {
    const page = await blog.open("find.html", { locale: "ko-KR" });
    await page.locator("#atlas").scrollIntoViewIfNeeded();
    const first = await waitRender(page, "atlas");
    const atlas = await inShadow(page, "atlas", (e) => {
      const canvas = e.shadowRoot.querySelector("canvas.atlas");
      return { label: canvas.getAttribute("aria-label"), top: [...e.shadowRoot.querySelectorAll(".atlas-top button")].map((b) => [Number(b.dataset.layer), Number(b.dataset.head)]) };
    });
    assert.match(atlas.label, /층 3개와 헤드 4개의 바로 앞 토큰/);
    assert.equal(atlas.top.length, 5);
    // a listed head opens in the heatmap below the atlas
    const [layer, head] = atlas.top.find(([l, hd]) => l !== first.layer || hd !== first.head);
    const before = await renders(page, "atlas");
    await inShadow(page, "atlas", (e, [l, hd]) => e.shadowRoot.querySelector(`.atlas-top button[data-layer="${l}"][data-head="${hd}"]`).click(), [layer, head]);
    const opened = await waitRender(page, "atlas", before);
    assert.deepEqual([opened.layer, opened.head], [layer, head]);
    await page.locator("#atlas").screenshot({ path: join(SHOTS, "widget-atlas-ko.png") });
    // the rollout after the last layer
    await page.locator("#rollout").scrollIntoViewIfNeeded();
    await waitRender(page, "rollout");
    const label = await inShadow(page, "rollout", (e) => e.shadowRoot.querySelector("canvas.heatmap").getAttribute("aria-label"));
    assert.match(label, /3층까지의 어텐션 롤아웃: 토큰 \d+개/);
    await page.locator("#rollout").screenshot({ path: join(SHOTS, "widget-rollout-ko.png") });
    // the toy: said, in Korean, not drawn from random heads
    await page.locator("#toy").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "toy" && e.type === "error" && e.detail.code === "untrained_heads"));
    assert.match(await inShadow(page, "toy", (e) => e.shadowRoot.querySelector(".error").textContent), /토이 모델은 학습되지 않아/);
    // an unknown score is the author's problem, named with the scores there are
    await page.locator("#bad").scrollIntoViewIfNeeded();
    await waitRender(page, "bad");
    const problem = await page.evaluate(() => globalThis.__events.find((e) => e.id === "bad" && e.type === "error")?.detail);
    assert.equal(problem.attribute, "score");
    assert.match(problem.expected, /previous_token \| duplicate_token/);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    assert.deepEqual(page.consoleErrors.filter((m) => !/untrained/.test(m)), []);
  });

  it("fits a 390 px phone in English", async () => {
    const page = await blog.open("find.html", { locale: "en-US", width: 390, height: 844, touch: true });
    await page.locator("#atlas").scrollIntoViewIfNeeded();
    await waitRender(page, "atlas");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page scrolls ${overflow} px sideways`);
    await page.locator("#atlas").screenshot({ path: join(SHOTS, "widget-atlas-en-390.png") });
    await page.locator("#rollout").scrollIntoViewIfNeeded();
    await waitRender(page, "rollout");
    await page.locator("#rollout").screenshot({ path: join(SHOTS, "widget-rollout-en-390.png") });
  });
});
