// The newcomer's first hour (issue 17), tried the way it was found: their own sentence in the
// explorer, a blog with more widgets than the worker keeps, saving every view, a strict
// `style-src 'self'`, a 390 px phone, links that ask for what a model does not have.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { ROOT, SHOTS, afterRender, cellPoint, inShadow, openBlog, openExplorer, openHarness, renders, waitRender } from "./harness.mjs";

const MINILM = join(ROOT, "models", "all-MiniLM-L6-v2");

/** Every element carrying a style attribute, in the document and in every shadow root. */
const STYLED = () => {
  const found = [];
  const walk = (root) => {
    for (const node of root.querySelectorAll("*")) {
      if (node.hasAttribute("style")) found.push(`${node.localName}.${node.className}`);
      if (node.shadowRoot) walk(node.shadowRoot);
    }
  };
  walk(document);
  return found;
};

describe("the explorer, for a newcomer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  const open = (query, options) => openExplorer(h, query, options);
  const meta = (page) => page.evaluate(() => globalThis.__headmap.meta);

  it("says what the trained model reads, and offers a model that reads the reader's sentence", async () => {
    const page = await open("", { locale: "en-US" });
    const showcase = await page.evaluate(() => globalThis.__headmap.state);
    assert.ok(await page.locator("#coverage").isHidden(), "the seed sentence is the model's own kind");
    await afterRender(page, () => page.locator("#text").fill("The cat chased the mouse because it was hungry."));
    assert.ok(await page.locator("#coverage").isVisible(), "letters and pieces are said, not shown silently");
    const note = await page.locator("#coverage-text").textContent();
    assert.match(note, /headmap-tiny-ko-en read \d+% of this text's tokens as words it knows/);
    assert.match(note, /knows only their 63 words/);
    const offered = await page.locator("#coverage-choices button").evaluateAll((bs) => bs.map((b) => b.dataset.model));
    assert.deepEqual(offered, ["minilm", "toy"], "English first to the model that reads English");
    await page.screenshot({ path: join(SHOTS, "newcomer-coverage-en-1280.png"), fullPage: true });
    // a Korean sentence outside the templates' words: said as such, Korean models first
    await afterRender(page, () => page.locator("#text").fill("고양이가 쥐를 쫓았다. 그것은 매우 빨랐다."));
    assert.ok(await page.locator("#coverage").isVisible());
    assert.doesNotMatch(await page.locator("#coverage-text").textContent(), /enter a Korean sentence/i, "it was a Korean sentence");
    // one tap: the same text in MiniLM
    await page.locator("#text").fill("The cat chased the mouse because it was hungry.");
    await page.waitForFunction(() => globalThis.__headmap.meta.queries.includes("##h"));
    await afterRender(page, () => page.locator("#coverage-choices button[data-model=minilm]").click());
    await page.waitForFunction(() => globalThis.__headmap.meta.heads === 12);
    assert.ok(await page.locator("#coverage").isHidden(), "MiniLM reads it");
    assert.equal(await page.locator("#text").inputValue(), "The cat chased the mouse because it was hungry.", "the text stays");
    // back to the trained model on the seed: its showcase head again
    await page.locator("#text").fill("동물이 길을 건너지 않았다. 그것은 너무 피곤했다.");
    await afterRender(page, () => page.locator("#grid button.thumb").nth(7).click());
    await page.locator("#model").selectOption("trained");
    await page.waitForFunction(() => globalThis.__headmap.meta.heads === 4 && globalThis.__headmap.meta.queries[0] === "동물");
    const state = await page.evaluate(() => globalThis.__headmap.state);
    assert.deepEqual([state.layer, state.head], [showcase.layer, showcase.head], "layer 2, head 2 (1 and 1 from 0) again");
    assert.deepEqual(page.consoleErrors, []);
  });

  it("says in Korean what it reads, with the choices in Korean", async () => {
    const page = await open("?lang=ko", { locale: "ko-KR", width: 390, height: 844, touch: true });
    await afterRender(page, () => page.locator("#text").fill("나는 어제 친구와 영화를 봤다."));
    assert.ok(await page.locator("#coverage").isVisible());
    assert.match(await page.locator("#coverage-text").textContent(), /단어 63개/);
    assert.doesNotMatch(await page.locator("#coverage-text").textContent(), /문자를 다루지 않아/, "the model reads Hangul; it lacks the words");
    assert.deepEqual(await page.locator("#coverage-choices button").evaluateAll((bs) => bs.map((b) => b.dataset.model)), ["minilm", "toy"]);
    assert.match(await page.locator("#coverage-choices button[data-model=toy]").textContent(), /학습 안 됨/);
    // every example says what to look at in the reader's language, English examples included
    await page.locator("#model").selectOption("toy");
    await page.waitForFunction(() => document.querySelectorAll("#example-buttons button").length === 4);
    const titles = await page.locator("#example-buttons button").evaluateAll((bs) => bs.map((b) => b.title));
    for (const title of titles) assert.match(title, /[가-힣]/, `a Korean tooltip: ${title}`);
    assert.ok(titles.every((t) => !/head마다/.test(t)));
    await page.screenshot({ path: join(SHOTS, "newcomer-coverage-ko-390.png"), fullPage: true });
  });

  it("says when a link asks for a layer or head the model lacks, and refuses a link's bad model id as a typed one", async () => {
    let page = await open("?model=toy&layer=63&head=127", { locale: "en-US" });
    const m = await meta(page);
    const state = await page.evaluate(() => globalThis.__headmap.state);
    assert.deepEqual([state.layer, state.head], [m.layers - 1, m.heads - 1]);
    assert.ok(await page.locator("#link-notice").isVisible());
    assert.equal(await page.locator("#link-notice").textContent(), "The link asked for layer 64, but this model has 2 layers: layer 2 is shown; and for head 128, but this model has 4 heads a layer: head 4 is shown.");
    // only what was past the model's is said
    const only = await open("?model=toy&head=9", { locale: "en-US" });
    assert.equal(await only.locator("#link-notice").textContent(), "The link asked for head 10, but this model has 4 heads a layer: head 4 is shown.");
    page = await open("?model=hub:../../etc/passwd", { locale: "en-US" });
    assert.ok(await page.locator("#model-error").isVisible());
    assert.match(await page.locator("#model-error").textContent(), /That is not a model id: use owner\/name/);
    assert.doesNotMatch(await page.locator("#model-status").textContent(), /named by the link/, "the link named no model that was loaded");
  });

  it("keeps the read-out of a tapped cell on a 390 px phone's screen, and the link notice above the heatmap", async () => {
    // a link whose text is damaged: the notice says so where the reader looks first
    const phone = await open("?model=toy#z=not-a-packed-text", { width: 390, height: 844, touch: true, locale: "en-US" });
    assert.ok(await phone.locator("#link-notice").isVisible());
    assert.match(await phone.locator("#link-notice").textContent(), /damaged or too long/);
    const notice = await phone.locator("#link-notice").boundingBox();
    const heatmap = await phone.locator("#heatmap").boundingBox();
    assert.ok(notice.y + notice.height <= heatmap.y, "above the heatmap, not under the Save buttons");
    // a longer text: many cells, the lowest far down a phone's screen
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    await afterRender(phone, () => phone.locator("#text").fill(words));
    // the heatmap's lower rows near the bottom of the screen, where the reader met the bug
    const top = await phone.evaluate(() => document.getElementById("heatmap").getBoundingClientRect().top + scrollY);
    const { layout } = await phone.evaluate(() => ({ layout: globalThis.__headmap.layout }));
    await phone.evaluate((y) => scrollTo(0, y), top + layout.top + 35 * layout.cell - 640);
    const { x, y } = await cellPoint(phone, 35, 30);
    assert.ok(y > 560 && y < 700, `the cell is low on the screen: ${y}`);
    await phone.touchscreen.tap(x, y);
    await phone.waitForFunction(() => document.getElementById("readout").dataset.weight !== undefined);
    const box = await phone.locator("#readout").boundingBox();
    assert.ok(box.y >= 0 && box.y + box.height <= 844, `the read-out is on screen: y ${box.y}–${box.y + box.height} of 844`);
    await phone.screenshot({ path: join(SHOTS, "newcomer-phone-tap-390.png") });
  });

  it("zooms a long text's heatmap so its cells can be read and tapped", async () => {
    const page = await open("?model=toy", { width: 390, height: 844, touch: true, locale: "en-US" });
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");
    await afterRender(page, () => page.locator("#text").fill(words));
    const small = await page.evaluate(() => globalThis.__headmap.layout.cell);
    assert.ok(small < 1.5, `cells of ${small} px before zooming`);
    assert.ok(await page.locator("#zoom").isVisible());
    for (let k = 0; k < 3 && !(await page.locator("#zoom-in").isDisabled()); k++) await afterRender(page, () => page.locator("#zoom-in").click());
    const big = await page.evaluate(() => globalThis.__headmap.layout.cell);
    assert.ok(big >= 4 * small, `cells of ${big} px zoomed`);
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(scroll <= client, "the frame scrolls, not the page");
    await page.locator("#heatmap").scrollIntoViewIfNeeded();
    const { x, y } = await cellPoint(page, 2, 1);
    await page.touchscreen.tap(x, y);
    await page.waitForFunction(() => document.getElementById("readout").dataset.weight !== undefined);
    assert.match(await page.locator("#readout").textContent(), /“w2” \(#3\)/);
    await page.screenshot({ path: join(SHOTS, "newcomer-zoom-390.png") });
  });

  it("refuses a mixing weight that is no share of one, rather than showing Infinity", async () => {
    const page = await open("?model=toy", { locale: "en-US" });
    const input = page.locator("#mixing input").first();
    await input.fill("1e39");
    await page.waitForFunction(() => document.querySelector("#mixing .mixing-warning")?.textContent.includes("from 0 to 1"));
    const total = await page.locator("#mixing .total").textContent();
    assert.doesNotMatch(total, /Infinity|NaN/);
    await input.fill("2");
    await page.waitForFunction(() => document.querySelector("#mixing .total")?.textContent === "—");
    assert.match(await page.locator("#mixing .mixing-warning").textContent(), /from 0 to 1/);
  });

  it("fits the article's mixing table in a phone's width", async () => {
    const page = await h.page({ width: 390, height: 844, touch: true, locale: "ko-KR" });
    await page.goto(`${h.base}article.html`);
    const widget = page.locator('attention-heatmap[view="mixing"]').first();
    await widget.scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('attention-heatmap[view="mixing"]').shadowRoot.querySelector(".mixing .total")?.textContent.startsWith("["), null, { timeout: 60000 });
    // the widest case: the table filled from the shown head, V of width d_k for every key
    await widget.evaluate((e) => {
      const pick = e.shadowRoot.querySelector(".mix-pick select");
      pick.value = pick.options[8].value;
      pick.dispatchEvent(new Event("change"));
    });
    await page.waitForFunction(() => document.querySelector('attention-heatmap[view="mixing"]').shadowRoot.querySelectorAll("table.mixing tbody tr").length > 3, null, { timeout: 60000 });
    const [scroll, client, rows] = await widget.evaluate((e) => {
      const box = e.shadowRoot.querySelector("table.mixing").closest(".table-scroll");
      return [box.scrollWidth, box.clientWidth, box.querySelectorAll("tbody tr").length];
    });
    assert.ok(rows > 3, `filled from the head: ${rows} keys`);
    assert.ok(scroll <= client + 1, `the table is ${scroll} px in ${client}`);
    await widget.screenshot({ path: join(SHOTS, "newcomer-article-mixing-390.png") });
  });

  it("writes no style attribute, and breaks no style-src 'self'", async () => {
    const page = await open("?model=toy", { locale: "en-US" });
    await page.locator("#table-details").evaluate((d) => (d.open = true));
    await afterRender(page, () => page.locator("#grid button.thumb").nth(3).click());
    assert.deepEqual(await page.evaluate(STYLED), []);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });
});

describe("the widget, for a newcomer", () => {
  let blog;
  before(async () => {
    blog = await openBlog({ "/minilm/": MINILM });
  });
  after(async () => blog?.close());
  const open = (path, options) => blog.open(path, options);

  it("reloads what the shared worker let go: 26 widgets, six models, back to the first", async () => {
    const page = await open("many.html");
    const ids = await page.evaluate(() => [...document.querySelectorAll("attention-heatmap")].map((e) => e.id));
    assert.equal(ids.length, 26);
    for (const id of ids) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRender(page, id);
    }
    // back to the first: its model and its run were let go long ago
    await page.locator("#w0").scrollIntoViewIfNeeded();
    let before = await renders(page, "w0");
    await inShadow(page, "w0", (e) => {
      const head = e.shadowRoot.querySelector('select[aria-label="헤드"]');
      head.value = "2";
      head.dispatchEvent(new Event("change"));
    });
    let detail = await waitRender(page, "w0", before);
    assert.equal(detail.head, 2);
    await page.waitForFunction(() => document.getElementById("w0").shadowRoot.querySelectorAll(".steps figure").length >= 9, null, { timeout: 60000 });
    const title = await inShadow(page, "w0", (e) => e.shadowRoot.querySelector(".title").textContent);
    assert.match(title, /헤드 3/, "the title names the head drawn");
    const drawn = await inShadow(page, "w0", (e) => e.shadowRoot.querySelector("canvas.heatmap").getAttribute("aria-label"));
    assert.match(drawn, /3번 헤드/, "and the heatmap drawn is that head's");
    assert.equal(await inShadow(page, "w0", (e) => e.shadowRoot.querySelector(".error").hidden), true, "no error box");
    // a new sentence: the model is loaded again, transparently
    before = await renders(page, "w0");
    await inShadow(page, "w0", (e) => {
      const area = e.shadowRoot.querySelector("textarea");
      area.value = "민수가 영희에게 책을 주었다.";
      area.dispatchEvent(new Event("input"));
    });
    detail = await waitRender(page, "w0", before);
    assert.equal(await inShadow(page, "w0", (e) => e.shadowRoot.querySelector(".error").hidden), true);
    // a widget from the middle, its run long gone: a head change draws what its title says
    await page.locator("#w6").scrollIntoViewIfNeeded();
    before = await renders(page, "w6");
    await inShadow(page, "w6", (e) => {
      const head = e.shadowRoot.querySelector('select[aria-label="헤드"]');
      head.value = "1";
      head.dispatchEvent(new Event("change"));
    });
    detail = await waitRender(page, "w6", before);
    assert.equal(detail.head, 1);
    assert.match(await inShadow(page, "w6", (e) => e.shadowRoot.querySelector(".title").textContent), /헤드 2/);
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), [], "no inline style or script anywhere");
    assert.deepEqual(await page.evaluate(STYLED), [], "no style attribute in any widget");
    await page.screenshot({ path: join(SHOTS, "newcomer-widgets-many.png") });
  });

  it("offers only the formats each view saves, saves each of them, and a good save clears a failed one", async () => {
    const page = await open("many.html");
    for (const id of ["w3", "w5"]) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRender(page, id);
    }
    const offered = (id) => inShadow(page, id, (e) => [...e.shadowRoot.querySelectorAll("[data-export]")].map((b) => b.dataset.export));
    assert.deepEqual(await offered("w3"), ["png", "json"], "lines: the drawing and the weights");
    assert.deepEqual(await offered("w5"), ["json"], "pipeline: the weights");
    for (const [id, format] of [["w3", "png"], ["w3", "json"], ["w5", "json"]]) {
      const [download] = await Promise.all([page.waitForEvent("download"), inShadow(page, id, (e, f) => e.shadowRoot.querySelector(`[data-export=${f}]`).click(), format)]);
      assert.match(download.suggestedFilename(), new RegExp(`\\.${format}$`));
    }
    // asked from script for a format the view does not offer: refused by name, in Korean
    await inShadow(page, "w5", (e) => e.save("svg"));
    const error = () => inShadow(page, "w5", (e) => [e.shadowRoot.querySelector(".error").hidden, e.shadowRoot.querySelector(".error").textContent]);
    // the error is said once its words have loaded (a chunk of their own, at the first error)
    await page.waitForFunction(() => !document.getElementById("w5").shadowRoot.querySelector(".error").hidden, null, { timeout: 60000 });
    const [hidden, text] = await error();
    assert.equal(hidden, false);
    assert.match(text, /SVG 형식으로 저장할 수 없습니다/);
    await Promise.all([page.waitForEvent("download"), inShadow(page, "w5", (e) => e.shadowRoot.querySelector("[data-export=json]").click())]);
    assert.equal((await error())[0], true, "the error went with the save that worked");
  });

  it("names the sentence shown, in the table and to a screen reader", async () => {
    const page = await open("blog.html");
    await page.locator("#grid").scrollIntoViewIfNeeded();
    await waitRender(page, "grid");
    const before = await renders(page, "grid");
    await inShadow(page, "grid", (e) => [...e.shadowRoot.querySelectorAll(".rows button")][1].click());
    await waitRender(page, "grid", before);
    const caption = await inShadow(page, "grid", (e) => e.shadowRoot.querySelector("caption").textContent);
    assert.match(caption, /^문장 2,/);
    assert.match(await page.locator("#grid").getAttribute("aria-label"), /‘동물이 잤다\.’/);
  });

  it("says when a layer or head is past the model's, instead of changing it silently", async () => {
    const page = await open("blog.html");
    await page.locator("#causal").scrollIntoViewIfNeeded();
    await waitRender(page, "causal");
    const before = await renders(page, "causal");
    await page.locator("#causal").evaluate((e) => {
      e.setAttribute("layer", "5");
      e.setAttribute("head", "9");
    });
    const detail = await waitRender(page, "causal", before);
    assert.deepEqual([detail.layer, detail.head], [1, 3]);
    const text = await inShadow(page, "causal", (e) => e.shadowRoot.querySelector(".error").textContent);
    assert.match(text, /속성 layer="5": 이 모델에는 층 2개만 있어/);
    assert.match(text, /속성 head="9": 이 모델에는 헤드 4개만 있어/);
  });

  it("keeps a tapped cell's read-out on a phone's screen", async () => {
    const page = await open("blog.html", { width: 390, height: 844, touch: true });
    await page.locator("#causal").scrollIntoViewIfNeeded();
    await waitRender(page, "causal");
    const point = await inShadow(page, "causal", (e) => {
      const box = e.shadowRoot.querySelector("canvas.heatmap").getBoundingClientRect();
      return { x: box.left + box.width * 0.6, y: box.top + box.height * 0.7 };
    });
    await page.touchscreen.tap(point.x, point.y);
    await page.waitForFunction(() => document.getElementById("causal").shadowRoot.querySelector(".readout").dataset.weight !== undefined);
    const box = await inShadow(page, "causal", (e) => e.shadowRoot.querySelector(".readout").getBoundingClientRect().toJSON());
    assert.ok(box.top >= 0 && box.bottom <= 844, `read-out at ${box.top}–${box.bottom} of 844`);
  });
});
