// Generate and watch (issue 31), as a reader finds it: the trained model translates the seed
// sentence token by token in the explorer, each token's row of the shown head drawn as it
// comes, the KV cache growing by a row a step with its cost counted; the induction model
// continues a repeat and stops copying with its previous-token head off; the whole text opens in
// every view. In the widget on a strict-CSP blog: view="generate" writes as it comes into view,
// on a tap with start="tap", and says which attributes it could not read.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { SHOTS, inShadow, openBlog, openExplorer, openHarness, waitForRender, waitRender } from "./harness.mjs";

const SEED = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.";
const REPEAT = "고양이 공원 노래 꽃 강 가방 고양이 공원";

/** Waits for the page's newest generation to end; its tokens. */
async function generated(page) {
  await page.waitForFunction(() => globalThis.__headmap.generation, null, { timeout: 60_000 });
  return page.evaluate(() => globalThis.__headmap.generation.generated.map((w) => w.token));
}

describe("generate and watch, in the explorer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  it("translates the seed sentence token by token, and shows what each token looked at and the cache", async () => {
    const page = await openExplorer(h, `?model=trained&lang=en&place=cross&layer=1&head=1&text=${encodeURIComponent(SEED)}`, { locale: "en-US", width: 1280, height: 900 });
    await page.waitForFunction(() => !document.getElementById("gen-run").disabled);
    await page.fill("#gen-prompt", SEED);
    await page.locator("#gen-run").click();
    const tokens = await generated(page);
    assert.equal(tokens.join(" ").replace(/ \./g, "."), "The animal did not cross the street. The animal was too tired. </s>");
    assert.equal(await page.locator("#gen-tokens .predict-cell").count(), tokens.length, "a cell per token");
    assert.match(await page.locator("#gen-status").textContent(), /The animal did not cross the street\. The animal was too tired\.” The model ended it with its end token\.$/);
    // cross-attention rows: every head of layer 2 over the 13 source tokens
    const shown = await page.evaluate(() => globalThis.__headmap.generated);
    assert.equal(shown.keys, 13);
    assert.match(await page.locator("#gen-looked").textContent(), /Layer 2, cross-attention: where in the source the model looked when it wrote “<\/s>”/);
    // a token's own step: "animal" reads the source with the head outlined
    await page.locator("#gen-tokens .predict-cell").nth(1).click();
    assert.match(await page.locator("#gen-looked").textContent(), /wrote “animal”/);
    await page.locator("#gen-cache summary").click();
    assert.match(await page.locator("#gen-cost").textContent(), /This step read 2 tokens: with the cache, its scores and weighted sum take [\d,]+ multiply-adds in a layer; the whole text again would take [\d,]+ \(2× as many\)\. The caches hold \d+ KB\. This step took [\d.]+ ms; the whole text at once took [\d.]+ ms\./);
    const box = await page.locator("#gen-kv canvas").boundingBox();
    assert.ok(box.height > 18 && box.width > 60, "the cache is drawn");
    await page.locator("#generate-panel").screenshot({ path: join(SHOTS, "generate-translate-en-1280.png") });
    // the whole text in every view
    await page.locator("#gen-open").click();
    await page.waitForFunction(() => document.getElementById("target").value.startsWith("The animal did not cross"));
    // another language: the status lines are said again in it, none half in the one before
    await page.locator("#lang").click();
    await page.waitForFunction(() => document.documentElement.lang === "ko");
    assert.match(await page.locator("#gen-status").textContent(), /^토큰 \d+개: “The animal .*” 모델이 끝 토큰을 써서 끝냈습니다\.$/);
    assert.match(await page.locator("#model-status").textContent(), /이 사이트/);
    assert.doesNotMatch(await page.locator("#model-status").textContent(), /this site/);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it("continues a repeat on a phone in Korean, and stops copying with the previous-token head off", async () => {
    const page = await openExplorer(h, `?model=induction&lang=ko&layer=1&head=3&text=${encodeURIComponent(REPEAT)}`, { locale: "ko-KR", width: 390, height: 844, touch: true });
    await page.waitForFunction(() => !document.getElementById("gen-run").disabled);
    await page.fill("#gen-max", "4");
    await page.locator("#gen-run").tap();
    assert.deepEqual(await generated(page), ["노래", "꽃", "강", "가방"]);
    assert.equal(await page.locator("#generate-title").textContent(), "생성: 쓰는 것을 지켜보기");
    assert.match(await page.locator("#gen-looked").textContent(), /2층: ‘강’ 자리가 ‘가방’을 쓸 때 본 곳, 헤드마다 한 줄\(4번 헤드에 테두리\)/);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(wide <= 0, `the page does not scroll sideways (${wide} px)`);
    await page.locator("#generate-panel").screenshot({ path: join(SHOTS, "generate-copy-ko-390.png") });
    // the cache opened on a phone: its own scrolling box, the newest row in sight
    await page.locator("#gen-cache summary").tap();
    await page.waitForFunction(() => document.querySelector("#gen-kv canvas")?.getAttribute("aria-label")?.includes("K와 V"));
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), "still no sideways scroll");
    await page.locator("#generate-panel").screenshot({ path: join(SHOTS, "generate-cache-ko-390.png") });
    // the previous-token head off, from the predictions panel: the copy fails
    await page.fill("#off", "0.3");
    await page.locator("#off").dispatchEvent("change");
    await page.waitForFunction(() => location.search.includes("off=0.3"));
    await page.evaluate(() => (globalThis.__headmap.generation = null));
    await page.locator("#gen-run").tap();
    assert.notDeepEqual(await generated(page), ["노래", "꽃", "강", "가방"]);
  });

  it("keeps the buttons that need a model or a run disabled until there is one", async () => {
    const page = await h.page({ locale: "en-US", width: 1280, height: 900 });
    let release;
    const held = new Promise((ok) => (release = ok));
    await page.route(/headmap_bg\.wasm$/, async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${h.base}?model=induction`);
    await page.waitForSelector("#gen-run");
    const disabled = () => page.evaluate(() => ["gen-run", "patch-run", "qk-draw", "off-this"].map((id) => document.getElementById(id).disabled));
    assert.deepEqual(await disabled(), [true, true, true, true], "nothing to run yet");
    release();
    await waitForRender(page);
    await page.waitForFunction(() => !document.getElementById("gen-run").disabled);
    assert.deepEqual(await disabled(), [false, false, false, false]);
    await page.close();
  });

  it("refuses a temperature of 0 and says why, in English", async () => {
    const page = await openExplorer(h, `?model=induction&lang=en&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 1280, height: 900 });
    await page.waitForFunction(() => !document.getElementById("gen-run").disabled);
    await page.fill("#gen-temperature", "0");
    await page.locator("#gen-run").click();
    await page.locator("#gen-error").waitFor({ state: "visible" });
    assert.match(await page.locator("#gen-error").textContent(), /Temperature 0 must be greater than 0 \(leave it out for greedy decoding\)/);
  });

  it("writes from its own prompt while the main text is empty, and says when its prompt is empty", async () => {
    const page = await openExplorer(h, `?model=induction&lang=en&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 390, height: 844 });
    await page.waitForFunction(() => !document.getElementById("gen-run").disabled);
    await page.locator("#text").fill("  ");
    await page.locator("#status").waitFor({ state: "visible" });
    assert.ok(await page.locator("#heatmap-area").isHidden(), "the views of the text give way to the hint");
    assert.ok(await page.locator("#text-panels").isHidden());
    assert.ok(await page.locator("#generate-panel").isVisible(), "the panel with its own prompt stays");
    await page.locator("#gen-run").click();
    await page.locator("#gen-error").waitFor({ state: "visible" });
    assert.match(await page.locator("#gen-error").textContent(), /^The prompt is empty: type the text the model should go on from/);
    await page.fill("#gen-prompt", REPEAT);
    await page.fill("#gen-max", "2");
    await page.locator("#gen-run").click();
    assert.deepEqual(await generated(page), ["노래", "꽃"]);
    assert.ok(await page.locator("#gen-error").isHidden());
    await page.close();
  });

  it("refuses new tokens outside 1–200 by name, in both languages, and writes until the model's positions are full", async () => {
    const page = await openExplorer(h, `?model=induction&lang=en&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 390, height: 844 });
    await page.waitForFunction(() => !document.getElementById("gen-run").disabled);
    for (const [value, shown] of [["0", "0"], ["500", "500"], ["2.5", "2.5"], ["", "empty"]]) {
      await page.fill("#gen-max", value);
      await page.locator("#gen-run").click();
      await page.locator("#gen-error").waitFor({ state: "visible" });
      assert.equal(await page.locator("#gen-error").textContent(), `The writing setting new tokens is ${shown}: it must be 1 to 200.`);
    }
    assert.equal(await page.evaluate(() => globalThis.__headmap.generation ?? null), null, "nothing was written");
    // 200 asked of a model of 128 positions: it writes until they are full, and the whole text opens
    await page.fill("#gen-max", "200");
    await page.locator("#gen-run").click();
    const tokens = await generated(page);
    assert.ok(await page.locator("#gen-error").isHidden(), await page.locator("#gen-error").textContent());
    assert.ok(tokens.length > 100, `${tokens.length} tokens written`);
    assert.match(await page.locator("#gen-status").textContent(), /It stopped where the model's 128 positions ran out\.$/);
    await page.locator("#gen-open").click();
    await waitForRender(page, 2);
    assert.ok(await page.locator("#status").isHidden(), "the whole text opens in every view");
    const ko = await openExplorer(h, `?model=induction&lang=ko&text=${encodeURIComponent(REPEAT)}`, { locale: "ko-KR", width: 390, height: 844 });
    await ko.waitForFunction(() => !document.getElementById("gen-run").disabled);
    await ko.fill("#gen-max", "0");
    await ko.locator("#gen-run").click();
    await ko.locator("#gen-error").waitFor({ state: "visible" });
    assert.equal(await ko.locator("#gen-error").textContent(), "글쓰기 설정 새 토큰 수의 값 0은 쓸 수 없습니다: 1–200 사이의 정수이어야 합니다.");
    await page.close();
    await ko.close();
  });

  it("says what it wrote when the reader stops it, in either language", async () => {
    const page = await openExplorer(h, `?model=induction&lang=en&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 1280, height: 900 });
    await page.waitForFunction(() => !document.getElementById("gen-run").disabled);
    await page.fill("#gen-max", "200");
    // Stop pressed as the first token shows: a tiny model writes its 120 tokens in a moment
    await page.evaluate(() => {
      new MutationObserver((_, observer) => {
        observer.disconnect();
        document.getElementById("gen-stop").click();
      }).observe(document.getElementById("gen-tokens"), { childList: true, subtree: true });
      document.getElementById("gen-run").click();
    });
    await page.waitForFunction(() => document.getElementById("gen-stop").hidden && document.getElementById("gen-status").textContent);
    assert.match(await page.locator("#gen-status").textContent(), /^\S.* Stopped\.$/, "the tokens so far, then that it stopped");
    assert.ok(await page.locator("#gen-error").isHidden());
    await page.locator("#lang").click();
    await page.waitForFunction(() => document.documentElement.lang === "ko");
    assert.match(await page.locator("#gen-status").textContent(), /^\S.* 멈췄습니다\.$/);
    await page.close();
  });

  it("says the toy cannot write", async () => {
    const page = await openExplorer(h, "?model=toy&lang=en", { locale: "en-US", width: 1280, height: 900 });
    await page.locator("#gen-note").waitFor({ state: "visible" });
    assert.ok(await page.locator("#gen-run").isDisabled());
    assert.match(await page.locator("#gen-note").textContent(), /cannot write/);
  });
});

describe("generate and watch, in the widget on a blog under a strict CSP", () => {
  let blog;
  before(async () => {
    blog = await openBlog();
  });
  after(async () => blog?.close());

  const tokens = (page, id) => inShadow(page, id, (e) => [...e.shadowRoot.querySelectorAll(".predict-top")].map((c) => c.textContent));

  it("writes as it comes into view, on a tap, and says what it could not read", async () => {
    const page = await blog.open("generate.html", { locale: "ko-KR" });
    for (const id of ["translate", "copy"]) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRender(page, id);
    }
    const doc = await page.evaluate(async () => JSON.parse(await document.getElementById("translate").toJSON()));
    assert.equal(doc.format, "headmap.generation");
    assert.equal(doc.text, "The animal did not cross the street. The animal was too tired.");
    assert.deepEqual(await tokens(page, "copy"), ["노래", "꽃", "강", "가방"]);
    // the text, and why it ends there, in the page's language
    const said = (id) => inShadow(page, id, (e) => e.shadowRoot.querySelector(".gen-text").textContent);
    assert.match(await said("translate"), /^토큰 \d+개: “The animal did not cross the street\. The animal was too tired\.” 모델이 끝 토큰을 써서 끝냈습니다\.$/);
    assert.match(await said("copy"), /^토큰 4개: “.+” 요청한 새 토큰 수에서 멈췄습니다\.$/);
    assert.match(await inShadow(page, "translate", (e) => e.shadowRoot.querySelector(".gen-growing").getAttribute("aria-label")), /교차 어텐션 2층 2번 헤드가 원문에서 본 곳/);
    await page.locator("#translate").screenshot({ path: join(SHOTS, "widget-generate-translate-ko.png") });
    await page.locator("#copy").screenshot({ path: join(SHOTS, "widget-generate-copy-ko.png") });
    // another head of what was written is drawn from the rows kept, not written again
    await page.evaluate(() => {
      globalThis.__writes = 0;
      const post = Worker.prototype.postMessage;
      Worker.prototype.postMessage = function (message, ...rest) {
        if (message?.op === "write") globalThis.__writes++;
        return post.call(this, message, ...rest);
      };
    });
    const label = () => inShadow(page, "copy", (e) => e.shadowRoot.querySelector(".gen-growing").getAttribute("aria-label"));
    assert.match(await label(), /2층 4번 헤드/);
    await inShadow(page, "copy", (e) => {
      const menu = [...e.shadowRoot.querySelectorAll("select")].at(-1);
      menu.value = "0";
      menu.dispatchEvent(new Event("change"));
    });
    await page.waitForFunction(() => /2층 1번 헤드/.test(document.getElementById("copy").shadowRoot.querySelector(".gen-growing")?.getAttribute("aria-label")));
    assert.deepEqual(await tokens(page, "copy"), ["노래", "꽃", "강", "가방"]);
    assert.equal(await page.evaluate(() => globalThis.__writes), 0, "no second write for another head");
    // start="tap": nothing until the reader taps; a sampled text the seed fixes
    await page.locator("#tap").scrollIntoViewIfNeeded();
    await waitRender(page, "tap");
    assert.deepEqual(await tokens(page, "tap"), []);
    await inShadow(page, "tap", (e) => e.shadowRoot.querySelector(".gen-bar button").click());
    await page.waitForFunction(() => document.getElementById("tap").shadowRoot.querySelectorAll(".predict-top").length === 6, null, { timeout: 30_000 });
    const first = await tokens(page, "tap");
    await page.waitForFunction(() => !document.getElementById("tap").shadowRoot.querySelectorAll(".gen-bar button")[0].hidden);
    await inShadow(page, "tap", (e) => e.shadowRoot.querySelector(".gen-bar button").click());
    await page.waitForFunction(() => !document.getElementById("tap").shadowRoot.querySelectorAll(".gen-bar button")[0].hidden && document.getElementById("tap").shadowRoot.querySelectorAll(".predict-top").length === 6);
    assert.deepEqual(await tokens(page, "tap"), first, "the same seed writes the same text");
    await page.locator("#bad").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => ["temperature", "max-new-tokens"].every((a) => globalThis.__events.some((e) => e.id === "bad" && e.type === "error" && e.detail.attribute === a)));
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });
});
