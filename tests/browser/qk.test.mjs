// Queries and keys in one picture (AttentionViz), as a reader uses it: draw a corpus, read and
// open a point with the pointer, a finger or the keys, find a token, let t-SNE place a head,
// and be refused (empty, too many lines, a binary file, a line too long, a stop) without losing
// the picture; in English at 1280 px and in Korean on a phone; and the widget's view="qk" on a
// blog under a strict CSP. Counts are checked against the corpus files, r against its range,
// and an opened point against the sentence, head and token the main heatmap then shows.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { ROOT, SHOTS, afterRender, openBlog, openExplorer, openHarness, renders, waitRender } from "./harness.mjs";

const MINILM = join(ROOT, "models", "all-MiniLM-L6-v2");
const EXAMPLES = (lang) => readFileSync(join(ROOT, "www", "data", `sentences.${lang}.txt`), "utf8").split("\n").map((l) => l.trim()).filter(Boolean);

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Every element carrying a style attribute, in the document and in every shadow root. */
const STYLED = () => {
  const found = [];
  const walk = (root) => {
    for (const node of root.querySelectorAll("*")) {
      if (node.hasAttribute("style")) found.push(`${node.localName}.${node.className} style="${node.getAttribute("style")}"`);
      if (node.shadowRoot) walk(node.shadowRoot);
    }
  };
  walk(document);
  return found;
};

/**
 * The big plot's pixels: a hash, how many are not white, and the viewport place of a drawn
 * point (the pixel nearest the middle whose 5×5 neighbourhood is all strongly coloured).
 */
async function plotPixels(page, scope) {
  const plot = page.locator(`${scope} .qk-plot`);
  await plot.scrollIntoViewIfNeeded();
  return plot.evaluate((canvas) => {
    const { width, height } = canvas;
    const data = canvas.getContext("2d").getImageData(0, 0, width, height).data;
    const coloured = (x, y) => {
      const i = 4 * (y * width + x);
      return Math.max(data[i], data[i + 1], data[i + 2]) - Math.min(data[i], data[i + 1], data[i + 2]) > 60;
    };
    let [hash, inked, at] = [0, 0, null];
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const i = 4 * (y * width + x);
        hash = (Math.imul(hash, 31) + data[i] + 7 * data[i + 1] + 13 * data[i + 2]) >>> 0;
        if (data[i] + data[i + 1] + data[i + 2] < 750) inked += 1;
        const far = (x - width / 2) ** 2 + (y - height / 2) ** 2;
        if ((!at || far < at.far) && x > 2 && y > 2 && x < width - 3 && y < height - 3 && [-2, 0, 2].every((dy) => [-2, 0, 2].every((dx) => coloured(x + dx, y + dy)))) at = { x, y, far };
      }
    }
    const r = canvas.getBoundingClientRect();
    const k = canvas.clientWidth / width; // CSS pixels per canvas pixel
    return { hash, inked, at: at && { x: r.left + canvas.clientLeft + (at.x + 0.5) * k, y: r.top + canvas.clientTop + (at.y + 0.5) * k } };
  });
}

/** A point's read-out, parsed: "query “waited”, position 3 of sentence 12: … 【waited】 …". */
function readPoint(text) {
  const m = text.match(/^(query|key) “(.+?)”, position (\d+) of sentence (\d+): (.*)$/);
  assert.ok(m, `a point's read-out: ${text}`);
  const [, side, token, position, sentence, context] = m;
  assert.ok(context.includes(`【${token}】`), `the token is marked in its sentence: ${text}`);
  return { side, token, position: Number(position), sentence: Number(sentence) };
}

/** Draws the panel's corpus (own `lines`, else the examples) and waits for the picture or an error. */
async function draw(page, lines = null) {
  if (lines) {
    await page.locator("#qk-source").selectOption("text");
    await page.locator("#qk-text").fill(lines.join("\n"));
  }
  await page.locator("#qk-draw").click();
  await page.waitForFunction(() => /^Sentences: \d+; tokens: \d+\.$|^문장 \d+개, 토큰 \d+개\.$/.test(document.getElementById("qk-status").textContent) || !document.getElementById("qk-error").hidden, null, { timeout: 90000 });
  assert.equal(await page.locator("#qk-error").isHidden(), true, `drawn: ${await page.locator("#qk-error").textContent()}`);
}

/** What the panel shows now, to compare before and after a refusal. */
const shown = async (page) => ({ heads: await page.locator("#qk .qk-cell").count(), label: await page.locator("#qk .qk-plot").getAttribute("aria-label"), hash: (await plotPixels(page, "#qk")).hash });

/** Clicks Draw and waits for the panel's error; resolves to its text. */
async function refused(page) {
  await page.locator("#qk-draw").click();
  await page.waitForFunction(() => !document.getElementById("qk-error").hidden, null, { timeout: 60000 });
  return page.locator("#qk-error").textContent();
}

describe("queries and keys in the explorer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  const minilm = () => openExplorer(h, "?model=minilm&lang=en", { width: 1280, height: 1000, locale: "en-US" });

  it("draws the English examples' heads, opens a clicked point's sentence at its head, and finds a token", async () => {
    const lines = EXAMPLES("en");
    assert.equal(lines.length, 40);
    const page = await minilm();
    await page.locator("#qk-layer").selectOption({ value: "1" }); // the second layer: not the one the page shows
    await draw(page);
    const status = await page.locator("#qk-status").textContent();
    const tokens = Number(status.match(/^Sentences: 40; tokens: (\d+)\.$/)?.[1]);
    assert.ok(tokens > 2 * 40, status); // [CLS] and [SEP] around every sentence
    assert.equal(await page.locator("#qk .qk-cell").count(), 12);
    assert.match(await page.locator("#qk .qk-plot").getAttribute("aria-label"), new RegExp(`^Queries and keys of layer 2, head 1: ${tokens} queries and ${tokens} keys from 40 sentences\\.`));
    const stats = await page.locator("#qk .qk-stats").textContent();
    const [, rBefore, rAfter] = stats.match(/: (-?\d\.\d\d) as the model has them, (-?\d\.\d\d) after moving and scaling\./) ?? [];
    for (const r of [rBefore, rAfter]) assert.ok(Math.abs(Number(r)) <= 1, stats);
    const [, x, y] = stats.match(/The two axes carry (\d+)% and (\d+)% of the spread/) ?? [];
    assert.ok(Number(x) >= Number(y) && Number(y) > 0 && Number(x) + Number(y) <= 100, stats);
    assert.equal(await page.locator("#qk .qk-cell").first().getAttribute("aria-label"), `Layer 2, head 1: r ${rAfter}`, "the head's button says the r its stats say");
    assert.ok((await plotPixels(page, "#qk")).inked > 1000, "the plot has points");
    // head 3, chosen in the matrix, is drawn large
    const third = page.locator("#qk .qk-cell").nth(2);
    await third.click();
    assert.deepEqual(await page.locator("#qk .qk-cell").evaluateAll((b) => b.map((e) => e.getAttribute("aria-pressed"))), Array.from({ length: 12 }, (_, i) => String(i === 2)));
    assert.match(await page.locator("#qk .qk-plot").getAttribute("aria-label"), /^Queries and keys of layer 2, head 3:/);
    // a click on a drawn point reads its token in its sentence
    const { at } = await plotPixels(page, "#qk");
    await page.mouse.click(at.x, at.y);
    const point = readPoint(await page.locator("#qk .qk-readout").textContent());
    await page.locator("#qk-panel").screenshot({ path: join(SHOTS, "qk-explorer-1280-en.png") });
    // Open: the sentence in the text field, at the picture's layer and head, the token's row lit
    await afterRender(page, () => page.locator("#qk .qk-readout + button").click());
    assert.equal(await page.locator("#text").inputValue(), lines[point.sentence - 1]);
    await page.waitForFunction(() => document.getElementById("readout").classList.contains("live"));
    const opened = await page.evaluate(() => globalThis.__headmap);
    assert.deepEqual([opened.state.layer, opened.state.head], [1, 2]);
    assert.equal(opened.meta[point.side === "query" ? "queries" : "keys"][point.position - 1], point.token);
    const lit = await page.locator("#readout").textContent();
    assert.match(lit, new RegExp(`^query “${escape(point.token)}” \\(#${point.position}[,)]`), `the main read-out names the opened token, for ${JSON.stringify(point)}`);
    // a token found: "the" twice (query and key) per "the" in the sentences
    const the = lines.join(" ").match(/\bthe\b/gi).length;
    await page.locator("#qk .qk-search").fill("the");
    await page.waitForFunction((n) => document.querySelector("#qk").textContent.includes(`${n} points are “the”.`), 2 * the);
    await page.locator("#qk .qk-search").fill("zzzz");
    await page.waitForFunction(() => document.querySelector("#qk").textContent.includes("No token is “zzzz”."));
    assert.deepEqual(page.consoleErrors, []);
  });

  it("steps through the points with the keys, and Enter opens the sentence", async () => {
    const lines = EXAMPLES("en");
    const page = await minilm();
    await draw(page);
    const plot = page.locator("#qk .qk-plot");
    await plot.focus();
    await page.keyboard.press("ArrowRight");
    assert.deepEqual(readPoint(await page.locator("#qk .qk-readout").textContent()), { side: "query", token: "[CLS]", position: 1, sentence: 1 });
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    const third = readPoint(await page.locator("#qk .qk-readout").textContent());
    assert.deepEqual([third.sentence, third.position], [3, 1]);
    await afterRender(page, () => page.keyboard.press("Enter"));
    assert.equal(await page.locator("#text").inputValue(), lines[2]);
    // End is the last key; Escape lets the point go, and Open with it
    await plot.focus();
    await page.keyboard.press("End");
    const last = readPoint(await page.locator("#qk .qk-readout").textContent());
    assert.deepEqual([last.side, last.token, last.sentence], ["key", "[SEP]", 40]);
    await page.keyboard.press("Escape");
    assert.match(await page.locator("#qk .qk-readout").textContent(), /^Tap a point to read its token/);
    assert.equal(await page.locator("#qk .qk-readout + button").isHidden(), true);
    assert.deepEqual(page.consoleErrors, []);
    // own lines refused after a picture of the examples: the lines stay in view, to be mended
    await page.locator("#qk-source").selectOption("text");
    await page.locator("#qk-text").fill("\n  \n");
    assert.match(await refused(page), /^The corpus has no sentence/);
    assert.equal(await page.locator("#qk-source").inputValue(), "text");
    assert.ok(await page.locator("#qk-text").isVisible(), "the refused lines stay in view");
  });

  it("refuses an empty corpus, too many lines, a binary file, a line too long and a stop, keeping the picture", async () => {
    const page = await minilm();
    const six = ["The cat sat on the mat.", "A dog ran across the park.", "She opened the window.", "The children played in the garden.", "It rained all day.", "He read the letter twice."];
    await draw(page, six);
    assert.match(await page.locator("#qk-status").textContent(), /^Sentences: 6; tokens: \d+\.$/);
    const before = await shown(page);
    assert.equal(before.heads, 12);
    const keeps = async (why) => assert.deepEqual(await shown(page), before, `${why}: the picture before stays`);
    // (a) no line
    await page.locator("#qk-text").fill("\n  \n");
    assert.equal(await refused(page), "The corpus has no sentence: give at least one line of text.");
    await keeps("empty");
    // (b) 201 lines
    await page.locator("#qk-text").fill(Array.from({ length: 201 }, (_, i) => `Line ${i}.`).join("\n"));
    assert.match(await refused(page), /^The corpus has 201 sentences: at most 200 are drawn at once\./);
    await keeps("too many lines");
    // (c) a binary file: refused, the lines typed stay; then a text file fills them
    await page.locator("#qk-file").setInputFiles({ name: "x.txt", mimeType: "text/plain", buffer: Buffer.from([0x68, 0x69, 0x00, 0xff, 0xfe]) });
    await page.waitForFunction(() => !document.getElementById("qk-error").hidden && document.getElementById("qk-error").textContent.startsWith("x.txt"));
    assert.equal(await page.locator("#qk-error").textContent(), "x.txt is not a text file: choose UTF-8 text (.txt).");
    assert.equal((await page.locator("#qk-text").inputValue()).split("\n").length, 201);
    await page.locator("#qk-file").setInputFiles({ name: "y.txt", mimeType: "text/plain", buffer: Buffer.from([0x41, 0xff, 0xfe, 0x42]) }); // no NUL, not UTF-8
    await page.waitForFunction(() => document.getElementById("qk-error").textContent.startsWith("y.txt"));
    await page.locator("#qk-file").setInputFiles({ name: "big.txt", mimeType: "text/plain", buffer: Buffer.alloc(2 << 20, "a\n") }); // 2 MB
    await page.waitForFunction(() => document.getElementById("qk-error").textContent.startsWith("big.txt is too large for a corpus: at most 1 MB"));
    await page.locator("#qk-file").setInputFiles({ name: "two.txt", mimeType: "text/plain", buffer: Buffer.from("  First line.\r\n\r\nSecond line.\n") });
    await page.waitForFunction(() => document.getElementById("qk-text").value === "First line.\nSecond line.");
    assert.equal(await page.locator("#qk-error").isHidden(), true);
    await keeps("a file read");
    // (d) a line longer than MiniLM reads (512 tokens)
    await page.locator("#qk-text").fill(`${six[0]}\n${"word ".repeat(600)}`);
    assert.match(await refused(page), /^The text has 602 tokens, more than the maximum of 512\./);
    await keeps("a line too long");
    // (e) a long corpus stopped on its way
    await page.locator("#qk-text").fill(Array.from({ length: 150 }, (_, i) => `The cat number ${i} sat on the mat by the door.`).join("\n"));
    await page.locator("#qk-draw").click();
    await page.waitForFunction(() => /^Sentence \d+ of 150$/.test(document.getElementById("qk-status").textContent));
    await page.locator("#qk-cancel").click();
    await page.waitForFunction(() => document.getElementById("qk-status").textContent === "Stopped: the picture before stays.", null, { timeout: 30000 });
    assert.equal(await page.locator("#qk-error").isHidden(), true);
    assert.equal(await page.locator("#qk-cancel").isHidden(), true);
    assert.equal(await page.locator("#qk-progress").isHidden(), true);
    await keeps("stopped");
    // the worker still draws after all that
    await draw(page, six.slice(0, 3));
    assert.match(await page.locator("#qk .qk-plot").getAttribute("aria-label"), /from 3 sentences\./);
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it("places the head drawn large by t-SNE, saying its steps, and goes back to PCA's picture", async () => {
    const page = await minilm();
    const twelve = Array.from({ length: 12 }, (_, i) => `${["The", "A", "One"][i % 3]} ${["cat", "dog", "bird", "child"][i % 4]} saw ${i + 2} boats near the river.`);
    await draw(page, twelve);
    const pca = await plotPixels(page, "#qk");
    const pcaStats = await page.locator("#qk .qk-stats").textContent();
    const matrix = await page.locator("#qk .qk-cell canvas").first().evaluate((c) => c.toDataURL());
    // every text the progress line shows, however fast it goes
    await page.locator("#qk").evaluate((box) => {
      globalThis.__placing = [];
      new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach((n) => n.nodeType === 3 && globalThis.__placing.push(n.data)))).observe(box, { childList: true, subtree: true });
    });
    await page.getByLabel("Placed by").selectOption("tsne");
    await page.waitForFunction(() => document.querySelector("#qk .qk-stats").textContent.includes("t-SNE (perplexity 30, started from the PCA picture)"), null, { timeout: 60000 });
    const said = await page.evaluate(() => globalThis.__placing);
    assert.ok(said.some((t) => /^t-SNE: step \d+ of \d+$/.test(t)), `the steps are said: ${JSON.stringify(said.slice(0, 5))}`);
    assert.match((await page.locator("#qk .qk-stats").textContent()), /^How well nearness follows the dot product .*: -?\d\.\d\d as the model has them/);
    const tsne = await plotPixels(page, "#qk");
    assert.notEqual(tsne.hash, pca.hash, "t-SNE moves the points");
    assert.ok(tsne.inked > 500, "and draws them");
    assert.equal(await page.locator("#qk .qk-cell canvas").first().evaluate((c) => c.toDataURL()), matrix, "the small pictures stay PCA");
    await page.locator("#qk-panel").screenshot({ path: join(SHOTS, "qk-tsne-1280-en.png") });
    await page.getByLabel("Placed by").selectOption("pca");
    await page.waitForFunction((s) => document.querySelector("#qk .qk-stats").textContent === s, pcaStats);
    assert.equal((await plotPixels(page, "#qk")).hash, pca.hash, "PCA's picture again, exactly");
    assert.deepEqual(page.consoleErrors, []);
  });

  it("keeps the picture of the examples in the link, and draws it again from the link", async () => {
    const page = await openExplorer(h, "?model=minilm&lang=en&qk=1,4", { width: 1280, height: 1000 });
    // the link's picture is drawn once the model has run: layer 2, head 5
    await page.waitForFunction(() => document.querySelectorAll("#qk .qk-cell").length === 12, null, { timeout: 120000 });
    assert.match(await page.locator("#qk .qk-plot").getAttribute("aria-label"), /^Queries and keys of layer 2, head 5: /);
    assert.equal(await page.locator("#qk .qk-cell[aria-pressed=true]").count(), 1);
    assert.equal(await page.locator("#qk .qk-cell >> nth=4").getAttribute("aria-pressed"), "true");
    // another head is in the link a moment later
    await page.locator("#qk .qk-cell >> nth=7").click();
    await page.waitForFunction(() => new URLSearchParams(location.search).get("qk") === "1,7");
    // a link with a layer past the model's draws its last
    const past = await openExplorer(h, "?model=minilm&lang=en&qk=40,0", { width: 1280, height: 1000 });
    await past.waitForFunction(() => document.querySelectorAll("#qk .qk-cell").length === 12, null, { timeout: 120000 });
    assert.match(await past.locator("#qk .qk-plot").getAttribute("aria-label"), /^Queries and keys of layer 6, head 1: /);
    assert.deepEqual([...page.consoleErrors, ...past.consoleErrors], []);
  });

  it("reads a tapped point in Korean on a phone, without sideways scrolling", async () => {
    const lines = EXAMPLES("ko");
    const page = await openExplorer(h, "?model=trained&lang=ko", { width: 390, height: 844, locale: "ko-KR", touch: true });
    await draw(page);
    assert.match(await page.locator("#qk-status").textContent(), /^문장 40개, 토큰 \d+개\.$/);
    const { at } = await plotPixels(page, "#qk");
    await page.touchscreen.tap(at.x, at.y);
    const text = await page.locator("#qk .qk-readout").textContent();
    const m = text.match(/^(\d+)번 문장 (\d+)번째 토큰 “(.+?)”의 (쿼리|키): (.*)$/);
    assert.ok(m, text);
    assert.ok(m[5].includes(`【${m[3]}】`), text);
    assert.ok(Number(m[1]) >= 1 && Number(m[1]) <= lines.length, text);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page scrolls ${overflow} px sideways`);
    await page.locator("#qk-panel").screenshot({ path: join(SHOTS, "qk-explorer-390-ko.png") });
    assert.deepEqual(page.consoleErrors, []);
  });
});

describe("a picture of a whole corpus, from the file headmap.corpus.qk_picture writes", () => {
  // 1,800 Korean sources of the translator's templates, 21,083 tokens: the axes from all of
  // them, 53 sentences drawn (scripts/dev/make_qk_picture.py; tests/python checks it is current)
  const PICTURE = join(ROOT, "tests", "fixtures", "qk", "picture-tiny-ko-en.json");
  const doc = JSON.parse(readFileSync(PICTURE, "utf8"));
  const open = (page, name, buffer) => page.locator("#qk-file").setInputFiles({ name, mimeType: "application/json", buffer });
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  it("draws every head of the corpus's layer in the explorer, in Korean on a phone, and opens a tapped sentence", async () => {
    const page = await openExplorer(h, "?lang=ko", { width: 390, height: 844, locale: "ko-KR", touch: true });
    await open(page, "picture-tiny-ko-en.json", readFileSync(PICTURE));
    await page.waitForFunction(() => document.getElementById("qk-status").textContent.startsWith("파일에서 연 말뭉치 그림"));
    assert.equal(await page.locator("#qk-status").textContent(), `파일에서 연 말뭉치 그림: 축은 텍스트 1,800개의 토큰 ${doc.corpus.queries.toLocaleString("ko")}개로 만들었고(marian 모델), 그중 문장 ${doc.sentences.length}개를 그립니다.`);
    assert.ok(doc.corpus.queries >= 20000);
    assert.equal(await page.locator("#qk .qk-cell").count(), doc.heads);
    assert.deepEqual(await page.locator("#qk .qk-cell").evaluateAll((b) => b.map((e) => e.getAttribute("aria-pressed"))), Array.from({ length: doc.heads }, (_, i) => String(i === doc.head)));
    const drawn = doc.pictures[doc.head];
    assert.match(await page.locator("#qk .qk-plot").getAttribute("aria-label"), new RegExp(`^${doc.layer + 1}층 ${doc.head + 1}번 헤드의 쿼리와 키: 문장 ${doc.sentences.length}개에서 쿼리 ${drawn.queries}개와 키 ${drawn.keys}개`));
    assert.equal(await page.locator("#qk select").first().isDisabled(), true, "no t-SNE: a file has the points, not the vectors");
    const pixels = await plotPixels(page, "#qk");
    assert.ok(pixels.inked > 1000, "the plot has points");
    await page.touchscreen.tap(pixels.at.x, pixels.at.y);
    const readout = await page.locator("#qk .qk-readout").textContent();
    const m = readout.match(/^(\d+)번 문장 (\d+)번째 토큰 “(.+?)”의 (쿼리|키): .*【(.+?)】/);
    assert.ok(m && m[3] === m[5], readout);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page scrolls ${overflow} px sideways`);
    await page.locator("#qk-panel").screenshot({ path: join(SHOTS, "qk-file-390-ko.png") });
    // Open: the tapped sentence of the corpus in the main view, with the translator on show
    await afterRender(page, () => page.locator("#qk .qk-readout + button").click());
    assert.equal(await page.locator("#text").inputValue(), doc.lines[Number(m[1]) - 1]);
    const opened = await page.evaluate(() => globalThis.__headmap);
    assert.deepEqual([opened.state.layer, opened.state.head], [doc.layer, doc.head]);
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it("refuses a crafted or broken picture file by name, keeping the picture before, in English at 1280 px", async () => {
    const page = await openExplorer(h, "?lang=en", { width: 1280, height: 1000, locale: "en-US" });
    await open(page, "picture.json", readFileSync(PICTURE));
    await page.waitForFunction(() => document.getElementById("qk-status").textContent.startsWith("A picture of a corpus from a file"));
    await page.locator("#qk-panel").screenshot({ path: join(SHOTS, "qk-file-1280-en.png") });
    const before = await shown(page);
    const crafted = (change) => {
      const copy = JSON.parse(JSON.stringify(doc));
      change(copy);
      return Buffer.from(JSON.stringify(copy));
    };
    const cases = [
      ["broken.json", Buffer.from('{"format": "headmap.qk", "vers'), "it is not UTF-8 JSON"],
      ["weights.json", Buffer.from(JSON.stringify({ format: "headmap.attention", version: 1 })), 'its format is not "headmap.qk"'],
      ["future.json", crafted((d) => (d.version = 2)), "version 2: this page reads version 1"],
      ["short.json", crafted((d) => d.pictures[1].coords.pop()), "head 2's picture's coordinates are not"],
      ["nan.json", crafted((d) => (d.pictures[0].norms[3] = "NaN")), "head 1's picture's lengths have a value that is not a finite number at 3"],
      ["heads.json", crafted((d) => (d.heads = 1e9)), "heads is not a whole number from 0 to 1024"],
      ["html.json", crafted((d) => (d.sentences[0].queries[0] = { label: "<img src=x onerror=alert(1)>", kind: "script", text: "" })), "sentence 1's queries 1 is not a token"],
      ["lines.json", crafted((d) => d.lines.pop()), "its lines and sentences are not two lists of the same length"],
    ];
    for (const [name, buffer, problem] of cases) {
      await open(page, name, buffer);
      await page.waitForFunction((n) => document.getElementById("qk-error").textContent.startsWith(n), name);
      const error = await page.locator("#qk-error").textContent();
      assert.ok(error.startsWith(`${name} is not a query–key picture headmap can draw: `) && error.includes(problem), `${name}: ${error}`);
      assert.deepEqual(await shown(page), before, `${name}: the picture before stays`);
    }
    // a label from a file is text, never markup
    await open(page, "label.json", crafted((d) => (d.sentences[0].queries[0].label = "<b>bold</b>")));
    await page.waitForFunction(() => document.getElementById("qk-status").textContent.startsWith("A picture of a corpus"));
    assert.equal(await page.locator("#qk b").count(), 0);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("draws in the widget with view=\"qk\" src=, on a blog under a strict CSP, and says a bad file by name", async () => {
    const blog = await openBlog({ "/qk/": join(ROOT, "tests", "fixtures", "qk") });
    try {
      for (const [width, locale] of [[390, "ko-KR"], [1280, "en-US"]]) {
        const page = await blog.open("qk-file.html", { width, height: 900, locale, touch: width < 500 });
        // the page is Korean; the second widget says lang="en" and asks for head 4
        const [id, head] = locale === "ko-KR" ? ["corpus", doc.head] : ["corpus-en", 3];
        await page.locator(`#${id}`).scrollIntoViewIfNeeded();
        await waitRender(page, id);
        assert.equal(await page.locator(`#${id} .qk-cell`).count(), doc.heads);
        assert.equal(await page.locator(`#${id} .qk-cell[aria-pressed="true"]`).textContent(), String(head + 1));
        assert.ok((await plotPixels(page, `#${id}`)).inked > 1000);
        const title = await page.locator(`#${id} .title`).first().textContent();
        assert.equal(title, locale === "ko-KR" ? `말뭉치의 쿼리와 키 · ${doc.layer + 1}층 · marian` : `Queries and keys of a corpus · layer ${doc.layer + 1} · marian`);
        const { at } = await plotPixels(page, `#${id}`);
        await page.mouse.click(at.x, at.y);
        assert.ok((await page.locator(`#${id} .qk-readout`).textContent()).includes("【"));
        assert.equal(await page.locator(`#${id} .qk-readout + button`).isHidden(), true, "no model behind a file: no sentence to open");
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
        assert.ok(overflow <= 0, `the page scrolls ${overflow} px sideways`);
        await page.locator(`#${id}`).screenshot({ path: join(SHOTS, `qk-file-widget-${width}-${locale.slice(0, 2)}.png`) });
        await page.locator("#bad").scrollIntoViewIfNeeded();
        await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "bad" && e.type === "error" && e.detail.code === "bad_qk_file"), null, { timeout: 60000 });
        // the page is Korean: so is the bad file's widget, whatever the browser's language
        assert.match(await page.locator("#bad .error").textContent(), /^bert\.json은\(는\) headmap이 그릴 수 있는 쿼리–키 그림 파일이 아닙니다\(형식\(format\)이 "headmap\.qk"이\(가\) 아닙니다\)\. 파이썬 함수 qk_picture가 쓴 \.json 파일을 고르세요\.$/);
        // heads off beside a picture from a file: refused, as beside weights from one
        await page.locator("#ablated").scrollIntoViewIfNeeded();
        await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "ablated" && e.type === "error" && e.detail.code === "file_heads_off"), null, { timeout: 60000 });
        assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
        assert.deepEqual(page.consoleErrors.filter((e) => !/query–key picture|쿼리–키 그림|ablate|헤드는 끌 수 없습니다/.test(e)), []);
      }
    } finally {
      await blog.close();
    }
  });
});

describe("queries and keys in the widget, on a blog under a strict CSP", () => {
  let blog;
  before(async () => {
    blog = await openBlog({ "/minilm/": MINILM });
  });
  after(async () => blog?.close());

  /** Taps (or clicks) a drawn point of widget `id`, presses Open; resolves to the point and the new render. */
  async function openPoint(page, id, tap) {
    const { at } = await plotPixels(page, `#${id}`);
    if (tap) await page.touchscreen.tap(at.x, at.y);
    else await page.mouse.click(at.x, at.y);
    const readout = await page.locator(`#${id} .qk-readout`).textContent();
    const before = await renders(page, id);
    await page.locator(`#${id} .qk-readout + button`).click();
    return { readout, detail: await waitRender(page, id, before) };
  }

  it("draws a model's heads over the examples, opens a tapped point, and refuses the toy, in Korean on a phone", async () => {
    const page = await blog.open("qk.html", { width: 390, height: 844, locale: "ko-KR", touch: true });
    await page.locator("#examples").scrollIntoViewIfNeeded();
    const first = await waitRender(page, "examples");
    const heads = first.model.places[0].heads;
    assert.equal(await page.locator("#examples .qk-cell").count(), heads);
    assert.match(await page.locator("#examples .qk-plot").getAttribute("aria-label"), /^2층 1번 헤드의 쿼리와 키: 문장 40개에서 쿼리 \d+개와 키 \d+개/);
    const { readout, detail } = await openPoint(page, "examples", true);
    const m = readout.match(/^(\d+)번 문장 (\d+)번째 토큰 “(.+?)”의 (쿼리|키): .*【(.+?)】/);
    assert.ok(m && m[3] === m[5], readout);
    const sentence = EXAMPLES("ko")[Number(m[1]) - 1];
    assert.deepEqual([detail.layer, detail.head], [first.layer, first.head]);
    assert.ok((await page.locator("#examples").getAttribute("aria-label")).includes(sentence.slice(0, 120)), "the heatmap below is the tapped sentence's");
    await page.waitForFunction(() => document.querySelector("#examples").shadowRoot.querySelector(".readout:not(.qk-readout)").textContent.length > 0);
    assert.ok((await page.locator("#examples .readout:not(.qk-readout)").textContent()).includes(m[3]), "its row is the tapped token's");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page scrolls ${overflow} px sideways`);
    assert.deepEqual(await page.evaluate(STYLED), [], "no style attribute (checked before a screenshot: Playwright leaves style=\"\" on inputs it hides the caret of)");
    await page.locator("#examples").screenshot({ path: join(SHOTS, "qk-widget-390-ko.png") });
    // the toy: said, not drawn from random heads
    await page.locator("#toy").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "toy" && e.type === "error" && e.detail.code === "untrained_heads"), null, { timeout: 60000 });
    assert.match(await page.locator("#toy .error").textContent(), /토이 모델은 학습되지 않아/);
    // an author's corpus past 200 sentences: said by name, not cut
    await page.evaluate(() => {
      const w = document.createElement("attention-heatmap");
      Object.assign(w, { id: "big" });
      w.setAttribute("model", "induction");
      w.setAttribute("view", "qk");
      w.setAttribute("texts", JSON.stringify(Array.from({ length: 201 }, (_, i) => `민수 가 사과 를 먹는다 ${i}`)));
      document.querySelector("article").append(w);
    });
    await page.locator("#big").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "big" && e.type === "error" && e.detail.code === "too_many_sentences"), null, { timeout: 60000 });
    assert.match(await page.locator("#big .error").textContent(), /문장이 201개 있습니다: 한 번에 200개까지/);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    assert.deepEqual(page.consoleErrors.filter((e) => !/untrained/.test(e)), []);
  });

  it("draws an author's four English texts with MiniLM, and opens a clicked point, at 1280 px", async () => {
    const texts = ["The cat sat on the mat.", "A dog ran across the park.", "She opened the window because the room was warm.", "The children played in the garden until it got dark."];
    const page = await blog.open("qk.html", { width: 1280, height: 1000, locale: "en-US" });
    await page.locator("#texts").scrollIntoViewIfNeeded();
    const first = await waitRender(page, "texts");
    assert.equal(await page.locator("#texts .qk-cell").count(), 12);
    assert.match(await page.locator("#texts .qk-plot").getAttribute("aria-label"), /^Queries and keys of layer 1, head 1: \d+ queries and \d+ keys from 4 sentences\./);
    // the reader colours by kind and finds "the" (a query and a key per "the" in the texts)
    const the = 2 * texts.join(" ").match(/\bthe\b/gi).length;
    await page.locator("#texts").getByLabel("Colour by").selectOption("kind");
    await page.locator("#texts .qk-search").fill("the");
    const found = `${the} points are “the”.`;
    await page.waitForFunction((f) => document.getElementById("texts").shadowRoot.querySelector(".qk-box").textContent.includes(f), found);
    const { readout, detail } = await openPoint(page, "texts", false);
    const point = readPoint(readout);
    assert.deepEqual([detail.layer, detail.head], [first.layer, first.head]);
    assert.ok((await page.locator("#texts").getAttribute("aria-label")).includes(texts[point.sentence - 1]), "the heatmap below is the clicked sentence's");
    // drawn again, the view keeps the reader's choices
    assert.equal(await page.locator("#texts").getByLabel("Colour by").inputValue(), "kind");
    assert.equal(await page.locator("#texts .qk-search").inputValue(), "the");
    assert.ok((await page.locator("#texts .qk-box").textContent()).includes(found));
    assert.deepEqual(await page.evaluate(STYLED), []);
    await page.locator("#texts").screenshot({ path: join(SHOTS, "qk-widget-1280-en.png") });
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    assert.deepEqual(page.consoleErrors.filter((e) => !/untrained/.test(e)), []);
  });
});
