// What a head does (issue 30), as a reader finds it: the trained language model copies the
// second half of a repeated word list; turning its induction heads off (from the link, as
// `off=1.0,1.1,1.3`) stops the copying and the page says which heads are off; the previous-token
// head's patch brings the answer back; the lens has a row per layer; the toy says it predicts
// nothing. In English at 1280 px and in Korean on a phone, with screenshots.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { SHOTS, afterRender, inShadow, openBlog, openExplorer, openHarness, waitRender } from "./harness.mjs";

const WORDS = "고양이 공원 노래 꽃 강 가방 길 개 그림 공";
const REPEAT = `${WORDS} ${WORDS}`;

/** Waits for the predictions of the newest run, with `off` heads off. */
const predicted = (page, off = "") => page.waitForFunction((o) => globalThis.__headmap.predictions?.after && globalThis.__headmap.predictions.off === o, off);

/** The share of the second copy's words the page predicts from the word before. */
const copying = (page) =>
  page.evaluate(() => {
    const row = globalThis.__headmap.predictions.after.rows[0];
    const n = (row.tokens.length - 1) / 2;
    let right = 0;
    for (let t = row.tokens.length - n; t < row.tokens.length - 1; t++) if (row.predictions[t][0].token === row.tokens[t + 1]) right++;
    return right / (n - 1);
  });

describe("what the model predicts, and what a head does to it", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(async () => h?.close());

  it("copies a repeated list, and stops when the induction heads are off", async () => {
    const page = await openExplorer(h, `?model=induction&lang=en&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 1280, height: 900 });
    await predicted(page);
    assert.equal(await copying(page), 1, "every word of the second copy is predicted");
    assert.equal(await page.evaluate(() => globalThis.__headmap.predictions.fromRun), true, "read from the run on show: no second run");
    assert.equal(await page.locator("#predict-strip .predict-cell").count(), 21, "one cell per token, <bos> included");
    assert.ok(await page.locator("#off-note").isHidden(), "no heads off, no note");
    await page.locator("#predict-panel").screenshot({ path: join(SHOTS, "predict-en-1280.png") });

    await page.fill("#off", "1.0, 1.1, 1.3");
    await page.locator("#off").dispatchEvent("change");
    await predicted(page, "1.0,1.1,1.3");
    assert.equal(await copying(page), 0, "the induction heads off: no word is copied");
    assert.equal(await page.evaluate(() => globalThis.__headmap.predictions.fromRun), true, "the run with the heads off gives the after");
    assert.match(await page.locator("#off-note").textContent(), /Heads off: Layer 2, head 1; Layer 2, head 2; Layer 2, head 4 \(off=1\.0,1\.1,1\.3, counted from 0\)/);
    assert.ok((await page.locator("#predict-strip s.predict-was").count()) >= 9, "what each position predicted before is struck through");
    await page.waitForFunction(() => location.search.includes("off=1.0%2C1.1%2C1.3"));
    // a position's top 10, before and after
    await page.locator("#predict-strip .predict-cell").nth(15).click();
    assert.equal(await page.locator("#predict-detail ol").count(), 2);
    assert.equal(await page.locator("#predict-detail ol").first().locator("li").count(), 10);
    await page.locator("#predict-panel").screenshot({ path: join(SHOTS, "predict-off-en-1280.png") });
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it("opens from a link with heads off, and says which in Korean on a phone", async () => {
    const query = `?model=induction&lang=ko&off=0.3&text=${encodeURIComponent(REPEAT)}`;
    const page = await openExplorer(h, query, { locale: "ko-KR", width: 390, height: 844, touch: true });
    await predicted(page, "0.3");
    assert.equal(await copying(page), 0, "the previous-token head off: the induction heads have nothing to copy from");
    assert.match(await page.locator("#off-note").textContent(), /꺼진 헤드: 1층, 4번 헤드 \(off=0\.3, 0부터 셈\)/);
    assert.equal(await page.locator("#predict-title").textContent(), "모델의 예측");
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(wide <= 0, `the page does not scroll sideways (${wide} px)`);
    await page.locator("#predict-strip .predict-cell").nth(12).tap();
    await page.locator("#predict-panel").screenshot({ path: join(SHOTS, "predict-ko-390.png") });
  });

  it("leaves on, and names, heads the model lacks, from a link or typed, and keeps the view", async () => {
    const query = `?model=induction&lang=en&off=5.0,1.3&text=${encodeURIComponent(REPEAT)}`;
    const page = await openExplorer(h, query, { locale: "en-US", width: 390, height: 844, touch: true });
    await predicted(page, "1.3");
    assert.ok(await page.locator("#heatmap-area").isVisible(), "the view stays, with the field to mend the heads in");
    assert.ok(await page.locator("#off").isVisible());
    assert.match(await page.locator("#off-note").textContent(), /Heads off: Layer 2, head 4 .*Left on, not in this model: Layer 6, head 1\. This model's heads: 2 × 4 \(layers × heads\)\. Heads are written layer\.head, counted from 0/);
    assert.equal(await page.locator("#off").getAttribute("aria-invalid"), "true");
    await page.fill("#off", "9.9, x, 1.1, cross:0.1");
    await page.locator("#off").dispatchEvent("change");
    await predicted(page, "1.1");
    // a place the model lacks is named; an item that is no head is told apart from a head it lacks
    const note = await page.locator("#off-note").textContent();
    assert.match(note, /not in this model: Layer 10, head 10; Decoder cross-attention: Layer 1, head 2\./);
    assert.match(note, /Left out, not written as heads: “x”\./);
    // the link keeps the field as it was left: opened again, the same heads are off and the same items named
    await page.waitForFunction(() => location.search.includes("off=9.9%2Cx%2C1.1%2Ccross%3A0.1"));
    const again = await openExplorer(h, new URL(page.url()).search, { locale: "en-US", width: 390, height: 844, touch: true });
    await predicted(again, "1.1");
    assert.equal(await again.inputValue("#off"), "9.9,x,1.1,cross:0.1");
    assert.equal(await again.locator("#off-note").textContent(), note);
    // patching names the fields left empty instead of running
    await page.locator("#patch-details summary").tap();
    assert.equal(await page.inputValue("#patch-corrupt"), REPEAT, "the corrupted text starts as the clean one");
    await page.locator("#patch-run").tap();
    assert.match(await page.locator("#patch-error").textContent(), /^Fill in Answer, Wrong answer first/);
    assert.equal(await page.locator("#patch-answer").getAttribute("aria-invalid"), "true");
    await page.locator("#off-note").screenshot({ path: join(SHOTS, "predict-off-missing-en-390.png") });
  });

  it("leaves heads off with their model: a checkpoint of it keeps them, another model starts with none", async () => {
    const page = await openExplorer(h, `?model=induction&off=1.0,1.3&lang=en&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 1280, height: 900 });
    await predicted(page, "1.0,1.3");
    await page.waitForFunction(() => !document.getElementById("timeline").hidden);
    // the model at another step of its training: the same heads, still off
    await afterRender(page, () => page.locator("#timeline-prev").click());
    await predicted(page, "1.0,1.3");
    assert.equal(await page.inputValue("#off"), "1.0,1.3");
    assert.equal(await page.locator("#grid .thumb.off").count(), 2);
    // another model: layer.head there names other heads, so none is off
    await afterRender(page, () => page.selectOption("#model", "trained"));
    assert.equal(await page.inputValue("#off"), "");
    assert.ok(await page.locator("#off-note").isHidden(), "no heads off, no note");
    assert.equal(await page.locator("#grid .thumb.off").count(), 0);
    await page.waitForFunction(() => !new URLSearchParams(location.search).has("off"));
    assert.deepEqual(page.consoleErrors, []);
    await page.close();
  });

  it("opens a link that turns heads off on the toy: the view draws, and says the toy turns none off", async () => {
    for (const [lang, locale, said] of [["en", "en-US", /^The toy model turns no head off/], ["ko", "ko-KR", /^토이 모델은 헤드를 끄지 않습니다/]]) {
      const page = await openExplorer(h, `?model=toy&off=1.0&lang=${lang}`, { locale, width: 390, height: 844, touch: true });
      assert.ok(await page.locator("#status").isHidden(), `a heatmap, not an error (${lang}): ${await page.locator("#status").textContent()}`);
      assert.match(await page.locator("#off-note").textContent(), said);
      assert.equal(await page.locator("#grid .thumb.off").count(), 0, "no head marked off");
      assert.equal(await page.locator("#off").getAttribute("aria-invalid"), "false");
      for (const label of await page.locator(".off-tap").all()) assert.ok(await label.isHidden(), "no tap turns a toy's head off");
      assert.ok(await page.locator("#off-this").isHidden(), "nor does a button");
      await page.close();
    }
  });

  it("turns heads off and on with a tap in the grid and the find-heads map, and marks them there", async () => {
    const page = await openExplorer(h, `?model=induction&lang=en&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 1280, height: 900 });
    await predicted(page);
    await page.check("#off-tap");
    assert.ok(await page.locator("#off-tap-find").isChecked(), "the switch by the map is the same switch");
    const pressed = () => page.evaluate(() => document.querySelector("#grid button[aria-pressed=true]")?.dataset.head);
    const opened = await pressed();
    await page.locator('#grid button[data-layer="1"][data-head="3"]').click();
    await predicted(page, "1.3");
    assert.equal(await pressed(), opened, "a tap that turns a head off opens nothing");
    await page.locator('#grid button[data-layer="1"][data-head="0"]').click();
    await predicted(page, "1.3,1.0");
    const off = page.locator("#grid button.off");
    assert.equal(await off.count(), 2);
    assert.match(await off.first().getAttribute("aria-label"), /· off$/);
    await page.locator("#grid-scroll").screenshot({ path: join(SHOTS, "predict-grid-off-en-1280.png") });
    // the map: a tap on layer 2, head 4's cell turns it back on
    await page.waitForFunction(() => globalThis.__headmap.find?.geometry);
    const { cell, gutter, top } = await page.evaluate(() => globalThis.__headmap.find.geometry);
    const atlas = page.locator("#atlas canvas");
    await atlas.scrollIntoViewIfNeeded();
    await atlas.click({ position: { x: gutter + 3.5 * cell, y: top + 1.5 * cell } });
    await predicted(page, "1.0");
    assert.equal(await page.locator("#grid button.off").count(), 1);
    await page.locator("#find").screenshot({ path: join(SHOTS, "predict-find-off-en-1280.png") });
    // with the switch off, a tap opens the head again
    await page.uncheck("#off-tap");
    await page.locator('#grid button[data-layer="0"][data-head="2"]').click();
    await page.waitForFunction(() => document.querySelector('#grid button[data-layer="0"][data-head="2"]')?.getAttribute("aria-pressed") === "true");
    assert.equal(await page.evaluate(() => globalThis.__headmap.predictions.off), "1.0");
  });

  it("colours a head by what each key adds, and shows what a head writes across the layers", async () => {
    const page = await openExplorer(h, `?model=induction&lang=en&layer=1&head=3&text=${encodeURIComponent(REPEAT)}`, { locale: "en-US", width: 1280, height: 900 });
    await predicted(page);
    const alpha = await page.evaluate(() => Array.from(globalThis.__headmap.shownWeights));
    await afterRender(page, () => page.check("#norm"));
    await page.waitForFunction(() => location.search.includes("norm=1"));
    const weighted = await page.evaluate(() => Array.from(globalThis.__headmap.shownWeights));
    const t = Math.sqrt(alpha.length);
    // each key's column is its weights times one number, ‖v_j W_O‖: the same ratio down the column
    let columns = 0;
    for (let j = 0; j < t; j++) {
      const ratios = [];
      for (let i = j; i < t; i++) if (alpha[i * t + j] > 1e-3) ratios.push(weighted[i * t + j] / alpha[i * t + j]);
      if (ratios.length < 2) continue;
      columns++;
      for (const r of ratios) assert.ok(Math.abs(r - ratios[0]) <= 1e-3 * ratios[0], `key ${j}: ${r} against ${ratios[0]}`);
    }
    assert.ok(columns >= 10, `${columns} columns compared`);
    assert.notDeepEqual(weighted, alpha);
    assert.match(await page.locator("#norm-note").textContent(), /Value-weighted: each cell is α_ij · ‖v_j W_O‖/);
    assert.match(await page.locator("#readout").textContent(), /./);
    await page.locator(".view").screenshot({ path: join(SHOTS, "predict-norm-en-1280.png") });
    // the flow: each real token's shares at a layer add up to one
    await page.locator("#flow-details summary").click();
    await page.waitForFunction(() => globalThis.__headmap.flow?.head === 3);
    const flow = await page.evaluate(() => globalThis.__headmap.flow);
    const heads = 4;
    for (let layer = 0; layer < 2; layer++) {
      for (let q = 1; q < t; q++) {
        let sum = 0;
        for (let hd = 0; hd < heads; hd++) sum += flow.shares[(layer * heads + hd) * t + q];
        assert.ok(Math.abs(sum - 1) < 1e-4, `layer ${layer + 1}, token ${q}: shares add up to ${sum}`);
      }
    }
    // a tap on a cell lists every head's share there
    const { gutter, cell, rowHeight } = flow.geometry;
    await page.locator("#flow canvas").click({ position: { x: gutter + 15.5 * cell, y: 1.5 * rowHeight } });
    assert.match(await page.locator("#flow .flow-breakdown").textContent(), /^Layer 2, “.*” \(#16\): Head \d: \d+%/);
    await page.locator("#flow-details").screenshot({ path: join(SHOTS, "predict-flow-en-1280.png") });
    // the head turned off writes nothing
    await page.uncheck("#norm");
    await page.fill("#off", "1.3");
    await page.locator("#off").dispatchEvent("change");
    await predicted(page, "1.3");
    await page.waitForFunction(() => globalThis.__headmap.flow?.key && globalThis.__headmap.flow.shares.slice(7 * 21, 8 * 21).every((s) => s === 0)); // layer 2, head 4: [L, H, T]
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it("patches every head, draws the map and reads the lens", async () => {
    const clean = "고양이 공원 노래 꽃 강 고양이 공원";
    const page = await openExplorer(h, `?model=induction&lang=en&text=${encodeURIComponent(clean)}`, { locale: "en-US" });
    await predicted(page);
    await page.locator("#patch-details summary").click();
    await page.fill("#patch-corrupt", "고양이 길 노래 꽃 강 고양이 공원");
    await page.fill("#patch-answer", "노래");
    await page.fill("#patch-wrong", "길");
    await page.click("#patch-run");
    await page.waitForFunction(() => globalThis.__headmap.patching);
    const map = await page.evaluate(() => globalThis.__headmap.patching.map);
    // the reference from transformers' hooks (tests/fixtures/predict/induction-patch.json)
    assert.ok(Math.abs(map[0][3] - 1.0109) < 1e-3, `layer 0 head 3 brings the answer back: ${map[0][3]}`);
    assert.equal(await page.locator("#patch-map tbody button").count(), 8);
    assert.doesNotMatch(await page.locator("#patch-status").textContent(), /every head on/);
    // patching runs every head: with heads turned off the map says so, in the language shown
    await page.fill("#off", "1.0");
    await page.locator("#off").dispatchEvent("change");
    await predicted(page, "1.0");
    assert.match(await page.locator("#patch-status").textContent(), /Patched with every head on/);
    await page.locator("#lang").click();
    await page.waitForFunction(() => /패치는 모든 헤드를 켠 채로/.test(document.getElementById("patch-status").textContent));
    assert.match(await page.locator("#patch-status").textContent(), /^디코더 마스크드 셀프 어텐션, 로짓은/);
    await page.locator("#lang").click();
    await page.fill("#off", "");
    await page.locator("#off").dispatchEvent("change");
    await predicted(page, "");
    await page.locator("#lens-details summary").click();
    await page.waitForFunction(() => globalThis.__headmap.lens);
    assert.equal(await page.locator("#lens-table tbody tr").count(), 2, "a row per layer");
    await page.locator("#predict-panel").screenshot({ path: join(SHOTS, "predict-patch-lens-en-1280.png") });
    // answers that are not one token are refused with the tokens they are
    await page.fill("#patch-answer", "노래 길");
    await page.click("#patch-run");
    await page.waitForSelector("#patch-error:not([hidden])");
    assert.match(await page.locator("#patch-error").textContent(), /is 2 tokens \(노래 길\)/);
  });

  it("patches the heads on show of the default translation model, its decoder reading the English target", async () => {
    // the page as it opens: the trained model, encoder self-attention, the seed sentence
    const page = await openExplorer(h, "?lang=en", { locale: "en-US", width: 390, height: 844, touch: true });
    await predicted(page);
    await page.locator("#patch-details summary").tap();
    await page.fill("#patch-corrupt", "고양이가 길을 건너지 않았다. 그것은 너무 피곤했다.");
    await page.fill("#patch-answer", "animal");
    await page.fill("#patch-wrong", "cat");
    await page.locator("#patch-run").tap();
    await page.waitForFunction(() => globalThis.__headmap.patching);
    const doc = await page.evaluate(() => globalThis.__headmap.patching);
    assert.equal(doc.place, "encoder_self", "the place on show");
    assert.equal(doc.tokens[doc.position + 1], "animal", `read where the target writes the answer: ${doc.tokens.join(" ")}`);
    assert.ok(doc.answer.p > 0.5, `the clean run writes it: p ${doc.answer.p}`);
    assert.ok(doc.map.flat().some((v) => Math.abs(v) > 0.1), `a head carries the word: ${JSON.stringify(doc.map)}`);
    assert.match(await page.locator("#patch-status").textContent(), /^Encoder self-attention, the logits read after “The” \(position 1\): clean lead [\d.]+/);
    await page.locator("#predict-panel").screenshot({ path: join(SHOTS, "predict-patch-trained-en-390.png") });
    // the map stays with its place: from another view, a head of it opens at encoder self-attention
    const place = () => page.evaluate(() => document.querySelector("input[name=place]:checked").value);
    await page.locator("#settings").evaluate((d) => (d.open = true));
    await afterRender(page, () => page.locator("input[name=place][value=cross]").check());
    assert.equal(await place(), "cross");
    await afterRender(page, () => page.locator("#patch-map tbody button").nth(1).tap());
    assert.equal(await place(), "encoder_self");
    // from cross-attention, the map is of its heads
    await afterRender(page, () => page.locator("input[name=place][value=cross]").check());
    await page.locator("#patch-run").tap();
    await page.waitForFunction(() => globalThis.__headmap.patching?.place === "cross");
    assert.match(await page.locator("#patch-status").textContent(), /^Decoder cross-attention, the logits read after “The”/);
    await page.close();
  });

  it("says the toy model predicts nothing, and keeps drawing its attention", async () => {
    const page = await openExplorer(h, "?model=toy&lang=en", { locale: "en-US" });
    await page.waitForFunction(() => globalThis.__headmap.predictions?.error);
    assert.match(await page.locator("#predict-status").textContent(), /has no output head/);
    assert.ok(await page.locator("#heatmap").isVisible());
  });
});

describe("what the model predicts, in the widget on a blog under a strict CSP", () => {
  let blog;
  before(async () => {
    blog = await openBlog();
  });
  after(async () => blog?.close());

  /** The top token at each position of widget `id`'s strip. */
  const strip = (page, id) => inShadow(page, id, (e) => [...e.shadowRoot.querySelectorAll(".predict-cell")].map((c) => [c.querySelector(".predict-token").textContent, c.querySelector(".predict-top")?.textContent ?? null]));

  it("copies the second copy, stops with the previous-token head off, and says it", async () => {
    const page = await blog.open("predict.html", { locale: "ko-KR" });
    for (const id of ["on", "off"]) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRender(page, id);
    }
    const copied = (cells) => cells.slice(7, 12).filter(([, top], i) => top === cells[8 + i][0]).length;
    assert.equal(copied(await strip(page, "on")), 5, "every word of the second copy");
    assert.equal(copied(await strip(page, "off")), 0, "none with head 0.3 off");
    assert.match(await inShadow(page, "off", (e) => e.shadowRoot.textContent), /꺼진 헤드: 1층, 4번 헤드 \(/);
    assert.ok((await inShadow(page, "off", (e) => e.shadowRoot.querySelectorAll("s.predict-was").length)) >= 5);
    await inShadow(page, "on", (e) => e.shadowRoot.querySelectorAll(".predict-cell")[9].click());
    assert.equal(await inShadow(page, "on", (e) => e.shadowRoot.querySelectorAll(".predict-list li").length), 10);
    await page.locator("#on").screenshot({ path: join(SHOTS, "widget-predict-ko.png") });
    await page.locator("#off").screenshot({ path: join(SHOTS, "widget-predict-off-ko.png") });
    await page.locator("#lens").scrollIntoViewIfNeeded();
    await waitRender(page, "lens");
    assert.equal(await inShadow(page, "lens", (e) => e.shadowRoot.querySelectorAll(".lens-table tbody tr").length), 2);
    const menus = (id) => inShadow(page, id, (e) => [...e.shadowRoot.querySelectorAll("select")].map((m) => m.getAttribute("aria-label")));
    assert.deepEqual(await menus("lens"), [], "the lens reads every layer: no layer or head menu that would change nothing");
    await page.locator("#heat-off").scrollIntoViewIfNeeded();
    await waitRender(page, "heat-off");
    assert.match(await inShadow(page, "heat-off", (e) => e.shadowRoot.textContent), /꺼진 헤드: 1층, 4번 헤드 \(/, "a heatmap with heads off says so");
    await page.locator("#bad").scrollIntoViewIfNeeded();
    await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "bad" && e.type === "error" && e.detail.attribute === "ablate"));
    // an item that is no head and a head the model lacks are named; the figure draws with 0.3 off
    await waitRender(page, "bad");
    const said = await inShadow(page, "bad", (e) => e.shadowRoot.textContent);
    assert.match(said, /속성 ablate: first은\(는\) 헤드가 아니어서 뺍니다/);
    assert.match(said, /속성 ablate: 9\.9는 이 모델에 없는 헤드라 끄지 않습니다\(decoder_self 2 × 4; 0부터\)/);
    assert.match(said, /꺼진 헤드: 1층, 4번 헤드 \(/);
    // which heads are off is the figure's note to say, once: neither problem line says it again
    assert.doesNotMatch(said, /나머지 헤드/);
    await page.locator("#bad").screenshot({ path: join(SHOTS, "widget-ablate-problems-ko.png") });
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it("draws what a head writes, and a grid value-weighted with a head marked off", async () => {
    const page = await blog.open("predict.html", { locale: "en-US" });
    for (const id of ["flow", "norm"]) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRender(page, id);
    }
    const flow = await page.evaluate(async () => JSON.parse(await document.getElementById("flow").toJSON()));
    assert.equal(flow.format, "headmap.flow");
    assert.deepEqual([flow.layers, flow.heads, flow.tokens.length, flow.head], [2, 4, 11, 3]);
    for (let q = 0; q < 11; q++) {
      const sum = [0, 1, 2, 3].reduce((a, hd) => a + flow.shares[(1 * 4 + hd) * 11 + q], 0);
      assert.ok(Math.abs(sum - 1) < 1e-4, `token ${q}: ${sum}`);
    }
    assert.match(await inShadow(page, "flow", (e) => e.shadowRoot.querySelector(".flow").getAttribute("aria-label")), /4번 헤드의 몫/);
    const menus = await inShadow(page, "flow", (e) => e.shadowRoot.querySelectorAll("select").length);
    assert.equal(menus, 1, "the flow spans every layer: a head menu, no layer menu");
    assert.match(await inShadow(page, "flow", (e) => e.shadowRoot.querySelector(".title").textContent), /^디코더 마스크드 셀프 어텐션 · 헤드 4 · gpt2$/, "its title names no layer");
    await page.locator("#flow").screenshot({ path: join(SHOTS, "widget-flow-ko.png") });
    assert.equal(await inShadow(page, "norm", (e) => e.shadowRoot.querySelectorAll(".thumb.off").length), 1, "the head turned off is marked in the grid");
    assert.match(await inShadow(page, "norm", (e) => e.shadowRoot.textContent), /값 가중: 각 칸은/);
    await page.locator("#norm").screenshot({ path: join(SHOTS, "widget-norm-off-ko.png") });
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it("fits a 390 px phone in English", async () => {
    const page = await blog.open("predict.html", { locale: "en-US", width: 390, height: 844, touch: true });
    await page.locator("#off").scrollIntoViewIfNeeded();
    await waitRender(page, "off");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    assert.ok(overflow <= 0, `the page scrolls ${overflow} px sideways`);
    await page.locator("#off").screenshot({ path: join(SHOTS, "widget-predict-off-en-390.png") });
  });
});
