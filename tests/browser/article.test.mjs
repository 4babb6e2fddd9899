// The article page (www/article.html) as a reader meets it, in headless Chromium under the
// server's strict CSP: every live figure renders, in Korean and in English, on a phone and on a
// desktop, and below the article every attribute has a snippet with a copy button.
// Screenshots: artifacts/screenshots/article-{en,ko}-{390,1280}.png.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";

import { ATTRIBUTES, VIEWS } from "../../www/js/widget/attributes.js";
import { SHOTS, openHarness } from "./harness.mjs";

let h;
before(async () => {
  h = await openHarness();
});
after(async () => h?.close());

/** Opens the article, recording CSP violations and every widget's load, render and error. */
async function open(query = "", options) {
  const page = await h.page(options);
  await page.addInitScript(() => {
    globalThis.__csp = [];
    globalThis.__events = [];
    addEventListener("securitypolicyviolation", (e) => globalThis.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    for (const type of ["load", "render", "error"]) {
      document.addEventListener(type, (e) => e.target?.localName === "attention-heatmap" && globalThis.__events.push({ id: e.target.id, type, detail: e.detail }), true);
    }
  });
  await page.goto(`${h.base}article.html${query}`);
  await page.waitForFunction(() => customElements.get("attention-heatmap") && !document.getElementById("lang-switch").hidden);
  return page;
}

const renders = (page, id) => page.evaluate((i) => globalThis.__events.filter((e) => e.id === i && e.type === "render").length, id);

/** Scrolls every widget into view (they compute only when near) and waits for its figure. */
async function renderAll(page) {
  const ids = await page.evaluate(() => [...document.querySelectorAll("attention-heatmap")].map((e) => e.id));
  for (const id of ids) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForFunction((i) => globalThis.__events.some((e) => e.id === i && (e.type === "render" || e.type === "error")), id, { timeout: 90000 });
  }
  const errors = await page.evaluate(() => globalThis.__events.filter((e) => e.type === "error").map((e) => `${e.id}: ${e.detail.message}`));
  assert.deepEqual(errors, [], "no widget reported an error");
  return ids;
}

/** Waits until every widget has drawn more figures than `counts` says. */
async function allRenderedAgain(page, counts) {
  for (const [id, n] of Object.entries(counts)) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForFunction(([i, k]) => globalThis.__events.filter((e) => e.id === i && e.type === "render").length > k, [id, n], { timeout: 90000 });
  }
}

const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
const heading = (page) => page.locator("h1").evaluate((h1) => h1.innerText.trim());

describe("article", () => {
  it("renders every figure in English under the CSP, with no console error", async () => {
    const page = await open("?lang=en", { width: 1280, height: 900 });
    const ids = await renderAll(page);
    assert.ok(ids.length >= 12, `a live widget at every figure (${ids.length})`);
    assert.equal(new Set(ids).size, ids.length, "every widget has its own id");
    const views = await page.evaluate(() => [...new Set([...document.querySelectorAll("attention-heatmap")].map((e) => e.getAttribute("view") ?? (e.getAttribute("head") === "all" ? "grid" : "heatmap")))]);
    assert.deepEqual(views.sort(), [...VIEWS].sort(), "every view is on the page");
    const details = await page.evaluate(() => Object.fromEntries(globalThis.__events.filter((e) => e.type === "render").map((e) => [e.id, e.detail])));
    assert.deepEqual([details["w-qkv"].place, details["w-qkv"].layer, details["w-qkv"].head], ["encoder_self", 1, 1], "the coreference head");
    assert.deepEqual([details["w-qk"].place, details["w-qk"].layer, details["w-qk"].head], ["encoder_self", 2, 2], "the positional head of the query–key section");
    assert.equal(details["w-file"].model.fromFile, true, "section 11 draws a file, not a model's run");
    assert.deepEqual([details["w-file"].place, details["w-file"].layer], ["encoder_self", 1]);
    assert.equal(details["w-causal"].place, "decoder_self");
    assert.equal(details["w-causal"].run.places[0].mask, "causal");
    assert.equal(details["w-cross"].place, "cross");
    assert.equal(details["w-padding"].run.places[0].mask, "padding");
    assert.equal(details["w-padding"].run.places[0].batch, 2);
    assert.equal(details["w-scale-on"].run.places[0].scale, true);
    assert.equal(details["w-scale-off"].run.places[0].scale, false, "the same head without ÷√d_k");
    assert.equal(await heading(page), "Attention, computed where you read it");
    assert.equal(await page.evaluate(() => document.documentElement.lang), "en");
    assert.deepEqual(await page.evaluate(() => [...new Set([...document.querySelectorAll("attention-heatmap")].map((e) => e.lang))]), ["en"]);
    assert.match(await page.locator("#w-qkv .title").textContent(), /^Encoder self-attention · Layer 2 · Head 2/);
    assert.ok(await page.locator("a[href^='index.html']").first().isVisible(), "a link back to the explorer");
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), [], "no CSP violation");
    assert.deepEqual(page.consoleErrors, []);
    await page.screenshot({ path: join(SHOTS, "article-en-1280.png"), fullPage: true });
  });

  it("fills the weighted-sum table with the article's [8, 2], then from a real head", async () => {
    const page = await open("?lang=en", { width: 1280, height: 900 });
    await page.locator("#w-mixing").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "w-mixing" && e.type === "render"), null, { timeout: 90000 });
    const total = page.locator("#w-mixing td.total");
    await page.waitForFunction(() => document.querySelector("#w-mixing").shadowRoot.querySelector("td.total")?.dataset.value);
    assert.deepEqual(JSON.parse(await total.getAttribute("data-value")), [8, 2]);
    const pick = page.locator("#w-mixing .mix-pick select");
    const option = await pick.locator("option", { hasText: "그것" }).first().getAttribute("value");
    await pick.selectOption(option);
    await page.locator("#w-mixing table.mixing caption").waitFor();
    assert.match(await page.locator("#w-mixing table.mixing caption").textContent(), /그것/);
    const rows = await page.locator("#w-mixing table.mixing tbody tr").count();
    assert.ok(rows > 3, `the real head's row has a line per key (${rows})`);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("switches to Korean: the text, the title, the URL and every widget's lang", async () => {
    const page = await open("?lang=en", { width: 1280, height: 900 });
    const ids = await renderAll(page);
    const counts = Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await renders(page, id)])));
    await page.locator("#lang-switch").click();
    assert.equal(await page.evaluate(() => document.documentElement.lang), "ko");
    assert.equal(await heading(page), "어텐션, 읽는 자리에서 계산하기");
    assert.match(await page.title(), /^어텐션/);
    assert.match(page.url(), /[?&]lang=ko\b/, "the choice is kept in the URL");
    assert.equal(await page.locator("#lang-switch").textContent(), "English");
    assert.equal(await page.locator("#lang-switch").getAttribute("lang"), "en");
    assert.ok(await page.locator("#qkv p[lang=en]").first().isHidden(), "the English text is hidden");
    assert.ok(await page.locator("#qkv p[lang=ko]").first().isVisible(), "the Korean text is shown");
    assert.deepEqual(await page.evaluate(() => [...new Set([...document.querySelectorAll("attention-heatmap")].map((e) => e.lang))]), ["ko"]);
    await allRenderedAgain(page, counts);
    assert.match(await page.locator("#w-qkv .title").textContent(), /^인코더 셀프 어텐션 · 2층 · 2번 헤드|^인코더 셀프 어텐션/);
    assert.equal(await page.locator("a[data-explorer]").first().getAttribute("href"), "index.html?lang=ko");
    await page.locator("#lang-switch").click();
    assert.equal(await heading(page), "Attention, computed where you read it");
    assert.match(page.url(), /[?&]lang=en\b/);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("follows the browser's language when the URL names none", async () => {
    const page = await open("", { width: 1280, height: 900, locale: "ko-KR" });
    assert.equal(await page.evaluate(() => document.documentElement.lang), "ko");
    assert.equal(await heading(page), "어텐션, 읽는 자리에서 계산하기");
    assert.doesNotMatch(page.url(), /lang=/, "the URL changes only when the reader chooses");
  });

  for (const lang of ["ko", "en"]) {
    it(`fits a 320 px and a 390 px phone in ${lang === "ko" ? "Korean" : "English"}, with no horizontal scroll`, async () => {
      const page = await open(`?lang=${lang}`, { width: 390, height: 844, touch: true, scale: 2 });
      await renderAll(page);
      assert.ok((await overflow(page)) <= 0, `no horizontal scroll at 390 px (${await overflow(page)} px over)`);
      await page.evaluate(() => scrollTo(0, 0));
      await page.screenshot({ path: join(SHOTS, `article-${lang}-390.png`), fullPage: true });
      const counts = Object.fromEntries(await Promise.all((await page.evaluate(() => [...document.querySelectorAll("attention-heatmap")].map((e) => e.id))).map(async (id) => [id, await renders(page, id)])));
      await page.setViewportSize({ width: 320, height: 640 });
      await allRenderedAgain(page, counts); // each widget redraws for its narrower width
      const over = await page.evaluate(() =>
        [...document.querySelectorAll("body *")]
          .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5 && e.checkVisibility())
          .map((e) => e.id || e.className || e.localName)
          .slice(0, 5),
      );
      assert.deepEqual(over, [], "nothing sticks out of a 320 px screen");
      assert.ok((await overflow(page)) <= 0, "no horizontal scroll at 320 px");
      assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
      assert.deepEqual(page.consoleErrors, []);
      if (lang === "ko") {
        const font = await page.locator("#qkv p[lang=ko]").first().evaluate((p) => getComputedStyle(p).fontFamily);
        assert.match(font, /Noto Sans CJK KR/, "Korean text asks for a Korean font");
      }
    });
  }

  it("keeps Korean at desktop width readable in one column", async () => {
    const page = await open("?lang=ko", { width: 1280, height: 900 });
    await renderAll(page);
    const width = await page.locator("article.article").evaluate((a) => a.getBoundingClientRect().width);
    assert.ok(width <= 46 * 16 + 1, `the column is at most 46rem (${width} px)`);
    const widget = await page.locator("#w-qkv").evaluate((w) => w.getBoundingClientRect().width);
    assert.ok(Math.abs(widget - width) < 2, "a widget takes the column's full width");
    assert.deepEqual(page.consoleErrors, []);
    await page.screenshot({ path: join(SHOTS, "article-ko-1280.png"), fullPage: true });
  });

  it("has a snippet with a copy button for every attribute, and the events, theming and CSP notes", async () => {
    const page = await open("?lang=en", { width: 1280, height: 900 });
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
    for (const name of ATTRIBUTES) {
      const card = page.locator(`[data-attribute="${name}"]`);
      assert.equal(await card.count(), 1, `a card for ${name}`);
      assert.match(await card.locator("pre.snippet").textContent(), new RegExp(`\\b${name}=`), `the ${name} snippet uses it`);
      assert.equal(await card.locator("button.copy").count(), 1, `a copy button for ${name}`);
      assert.match(await card.locator("button.copy").getAttribute("aria-label"), new RegExp(name));
    }
    const card = page.locator('[data-attribute="view"]');
    await card.locator("button.copy").click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await card.locator("pre.snippet").textContent());
    assert.equal(await card.locator("button.copy").textContent(), "Copied");
    const docs = await page.locator("#use").textContent();
    for (const event of ["load", "render", "error"]) assert.match(docs, new RegExp(`\\b${event}\\b`));
    for (const prop of ["bg", "fg", "muted", "line", "accent", "warn", "font", "radius", "max-width"]) assert.match(docs, new RegExp(`--headmap-${prop}\\b`));
    assert.match(docs, /script-src 'self' 'wasm-unsafe-eval'/);
    assert.match(docs, /trusted-types headmap/);
    assert.deepEqual(page.consoleErrors, []);
  });
});
