// The explorer as a reader meets it, in headless Chromium under the server's strict CSP: every
// example and place, hover and tap read-outs, head switching, shared links, phones, Korean,
// bad input, saving. Screenshots: artifacts/screenshots/.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";

import { HATCH } from "../../www/js/render/heatmap.js";
import { SHOTS, afterRender, cellColor, cellPoint, hoverCell, openExplorer, openHarness, waitForRender } from "./harness.mjs";

const HATCHED = new Set([HATCH.base.join(), HATCH.stripe.join()]);
const isHatched = (colors) => colors.length > 0 && colors.every((c) => HATCHED.has(c));

let h;
before(async () => {
  h = await openHarness();
});
after(async () => h?.close());

/** The explorer on `query`; the untrained toy unless the query names a model. */
async function open(query = "", options) {
  if (!/[?&]model=/.test(query)) query = query ? `${query}&model=toy` : "?model=toy";
  return openExplorer(h, query, options);
}

const meta = (page) => page.evaluate(() => globalThis.__headmap.meta);

describe("explorer", () => {
  it("opens on the model trained here, with the head that links 그것 to 동물", async () => {
    const page = await h.page();
    await page.goto(h.base);
    await waitForRender(page);
    const m = await meta(page);
    const state = await page.evaluate(() => globalThis.__headmap.state);
    assert.equal(state.model, "trained");
    assert.equal(m.place, "encoder_self");
    assert.deepEqual(m.queries.slice(0, 4), ["동물", "##이", "길", "##을"], "Korean word pieces");
    for (const t of m.tokens.queries) assert.ok(!["unknown", "part"].includes(t.kind), `no [UNK] and no jamo: ${t.label}`);
    assert.ok(await page.locator("#coverage").isHidden());
    // the preselected head: its largest weight in the 그것 row is on 동물
    const it = m.queries.indexOf("그것");
    const weights = await page.evaluate(() => Array.from(globalThis.__headmap.shownWeights));
    const row = weights.slice(it * m.tk, (it + 1) * m.tk);
    assert.equal(m.keys[row.indexOf(Math.max(...row))], "동물", `head ${state.layer}.${state.head}`);
    assert.match(await page.locator("#notice").textContent(), /Trained model/);
    assert.match(await page.locator("#model-status").textContent(), /^headmap-tiny-ko-en is loaded/);
    await page.screenshot({ path: join(SHOTS, "trained.png"), fullPage: true });
    // cross-attention opens on the alignment head, with the model's own translation
    await page.locator("#settings").evaluate((d) => (d.open = true));
    await afterRender(page, () => page.locator("input[name=place][value=cross]").check());
    const cross = await meta(page);
    assert.equal(cross.tokens.queries[0].kind, "special", "the decoder starts from its start token");
    assert.ok(cross.queries.includes("animal"));
    assert.deepEqual(page.consoleErrors, []);
  });

  it("opens on the first sentence, and a tab switches to the padded one with PAD keys hatched", async () => {
    const page = await open();
    let m = await meta(page);
    assert.equal(m.place, "encoder_self");
    assert.equal(m.mask, "padding");
    assert.equal(m.batch, 2);
    assert.deepEqual(m.queries.slice(0, 3), ["동물이", "길을", "건너지"], "the sentence in the first box is the one shown");
    assert.equal(await page.locator("#rows button[aria-pressed=true]").textContent(), "Sentence 1 · 동물이 길을 건너지 않았다. 그것은 너무 피곤했다.");
    await afterRender(page, () => page.locator("#rows button").nth(1).click());
    m = await meta(page);
    assert.equal(m.keys[8], "[PAD]");
    assert.ok(isHatched(await cellColor(page, 0, 8)), "a PAD key column is hatched");
    assert.ok(!isHatched(await cellColor(page, 0, 0)), "a real key is a weight colour");
    await hoverCell(page, 0, 8);
    assert.equal(await page.locator("#readout").getAttribute("data-weight"), "0");
    await page.screenshot({ path: join(SHOTS, "padding.png"), fullPage: true });
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), [], "no CSP violation");
  });

  it("shows the sentence just typed or picked, in whichever box", async () => {
    const page = await open();
    await afterRender(page, () => page.locator("#text2").fill("고양이가 잤다."));
    let m = await meta(page);
    assert.deepEqual(m.queries.filter((t) => t !== "[PAD]"), ["고양이가", "잤다", "."], "typing in the second box shows the second sentence");
    assert.match(await page.locator("#rows button[aria-pressed=true]").textContent(), /^Sentence 2/);
    await afterRender(page, () => page.locator("#text").fill("Minsu gave a book."));
    m = await meta(page);
    assert.deepEqual(m.queries.slice(0, 4), ["Minsu", "gave", "a", "book"]);
    await afterRender(page, () => page.locator("#rows button").nth(1).click());
    const examples = await page.locator("#example-buttons button").all();
    assert.equal(examples.length, 4);
    for (const button of examples) {
      const id = await button.getAttribute("data-example");
      const text = await button.textContent();
      await afterRender(page, () => button.click());
      m = await meta(page);
      assert.equal(m.queries.filter((t) => t !== "[PAD]").join(""), text.replace(/\s+/g, ""), `${id} is shown as soon as it is picked`);
      await page.locator("#table-details summary").click();
      await page.waitForFunction((k) => document.querySelectorAll("#table thead th")[1]?.textContent === k, m.keys[0]);
      assert.match(await page.locator("#table-caption").textContent(), /^Sentence 1, Encoder self-attention, layer 1, head 1/);
      await page.locator("#table-details summary").click();
    }
    assert.ok((await page.locator("#example-buttons button[lang=ko]").count()) >= 2);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("hatches the causal upper triangle of the decoder and reads 0 there", async () => {
    const page = await open();
    await page.locator("#settings").evaluate((d) => (d.open = true));
    await afterRender(page, () => page.locator("input[name=place][value=decoder_self]").check());
    const m = await meta(page);
    assert.equal(m.mask, "causal");
    assert.equal(m.queries[0], "The", "the decoder reads the target");
    assert.ok(isHatched(await cellColor(page, 1, 3)), "future key (1, 3) is hatched");
    assert.ok(!isHatched(await cellColor(page, 3, 1)), "past key (3, 1) is a weight colour");
    await hoverCell(page, 1, 3);
    assert.match(await page.locator("#readout").textContent(), /weight 0 \(masked\)/);
    assert.equal(await page.locator("#readout").getAttribute("data-weight"), "0");
    await page.screenshot({ path: join(SHOTS, "causal.png"), fullPage: true });
    assert.deepEqual(page.consoleErrors, []);
  });

  it("draws cross-attention as Tq x Tk with the decoder down the side", async () => {
    const page = await open("?place=cross");
    const { meta: m, layout } = await page.evaluate(() => ({ meta: globalThis.__headmap.meta, layout: globalThis.__headmap.layout }));
    assert.equal(m.tq, 14, "the English target has 14 tokens");
    assert.equal(m.tk, 9, "the Korean source has 9");
    assert.equal(Math.round(layout.plotWidth / layout.cell), 9);
    assert.equal(Math.round(layout.plotHeight / layout.cell), 14);
    assert.equal(m.queries[0], "The");
    assert.equal(m.keys[0], "동물이");
    assert.ok(await page.locator("#target").isVisible());
    assert.ok(await page.locator("#text2").isHidden(), "one source and its target");
    await page.screenshot({ path: join(SHOTS, "cross.png"), fullPage: true });
    assert.deepEqual(page.consoleErrors, []);
  });

  it("lets PAD keys take weight with no mask, and says it is for comparison", async () => {
    const page = await open("?mask=none&row=1");
    const m = await meta(page);
    assert.equal(m.mask, "none");
    assert.equal(m.whatIf, true);
    assert.ok(!isHatched(await cellColor(page, 0, 8)), "the PAD column is coloured, not hatched");
    await hoverCell(page, 0, 8);
    assert.notEqual(await page.locator("#readout").getAttribute("data-weight"), "0");
    assert.match(await page.locator("#what-if").textContent(), /For comparison/);
    await page.screenshot({ path: join(SHOTS, "none.png"), fullPage: true });
  });

  it("switches heads from the grid with the keyboard, and the pixels change", async () => {
    const page = await open();
    const before = await page.locator("#heatmap").evaluate((c) => c.toDataURL());
    await page.locator("#grid button.selected").focus();
    await afterRender(page, () => page.keyboard.press("ArrowRight"));
    assert.equal((await page.evaluate(() => globalThis.__headmap.state)).head, 1);
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Layer 1, head 2");
    assert.notEqual(await page.locator("#heatmap").evaluate((c) => c.toDataURL()), before);
    await afterRender(page, () => page.keyboard.press("ArrowDown"));
    assert.equal((await page.evaluate(() => globalThis.__headmap.state)).layer, 1);
    await page.waitForFunction(() => /layer=1/.test(location.search));
    await page.screenshot({ path: join(SHOTS, "grid-focus.png") });
  });

  it("reads cells with the keyboard from the focusable, named heatmap", async () => {
    const page = await open();
    const canvas = page.locator("#heatmap");
    assert.equal(await canvas.getAttribute("tabindex"), "0");
    assert.match(await canvas.getAttribute("aria-label"), /^Attention weights of Encoder self-attention, layer 1, head 1: 9 queries by 9 keys/);
    await canvas.focus();
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowDown");
    assert.match(await page.locator("#readout").textContent(), /^query “길을” \(#2\) → key “길을” \(#2\) · weight /);
  });

  it("round-trips the whole view through the link, and old links keep working", async () => {
    const query = "?place=decoder_self&layer=1&head=2&scale=0&seed=7&lang=ko";
    const page = await open(query);
    const state = await page.evaluate(() => globalThis.__headmap.state);
    assert.equal(state.place, "decoder_self");
    assert.equal(state.layer, 1);
    assert.equal(state.head, 2);
    assert.equal(state.scale, false);
    assert.equal(state.seed, 7);
    assert.equal(await page.locator("#scale").isChecked(), false);
    assert.equal(await page.locator("#layer").inputValue(), "1");
    assert.equal(await page.locator("html").getAttribute("lang"), "ko");
    assert.equal(await page.locator("input[name=place][value=decoder_self]").isChecked(), true);
    await page.waitForFunction(() => location.search.includes("seed=7"));
    const again = await open(new URL(page.url()).search);
    assert.deepEqual(await again.evaluate(() => globalThis.__headmap.state), state);
    await page.screenshot({ path: join(SHOTS, "korean-ui.png"), fullPage: true });
    const old = await open("?mask=causal");
    assert.equal((await meta(old)).place, "decoder_self", "a link from before places existed names the decoder");
  });

  it("keeps a long text in a link the server accepts, and reloads it", async () => {
    const page = await open();
    const long = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다. ".repeat(120).trim();
    await afterRender(page, () => page.locator("#text").fill(long));
    await page.waitForFunction(() => location.hash.startsWith("#z="));
    const url = page.url();
    assert.ok(new URL(url).search.length < 1500, "the query stays short");
    const reloaded = await h.page();
    const response = await reloaded.goto(url);
    assert.equal(response.status(), 200);
    await waitForRender(reloaded);
    assert.equal(await reloaded.locator("#text").inputValue(), long);
    assert.equal((await meta(reloaded)).tq, 120 * 9);
    await page.screenshot({ path: join(SHOTS, "long-text.png") });
  });

  it("follows a Korean browser, and leaves no English words in the Korean page", async () => {
    const page = await open("", { locale: "ko-KR" });
    assert.equal(await page.locator("h1").textContent(), "headmap — 헤드별로 보는 어텐션");
    await page.locator("#settings").evaluate((d) => (d.open = true));
    await page.locator("#table-details summary").click();
    await page.locator("#text").fill("word ".repeat(2100));
    await page.waitForFunction(() => document.getElementById("status").textContent.includes("2100"));
    assert.equal(await page.locator("#status").textContent(), "텍스트가 토큰 2100개로, 최대 2048개를 넘습니다. 텍스트를 줄이거나 더 긴 텍스트를 읽는 모델을 고르세요.");
    const words = await page.evaluate(() => {
      // what a reader sees, user text and tokens aside: labels, notes, buttons, errors
      const skip = (n) => n.closest("textarea, #example-buttons, #rows, #table, script, style, [hidden], .visually-hidden, [lang=en]");
      const out = [];
      const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) if (!skip(n.parentElement)) out.push(n.textContent);
      for (const el of document.querySelectorAll("[aria-label], [title], option")) if (!skip(el)) out.push(el.getAttribute("aria-label") ?? "", el.getAttribute("title") ?? "", el.textContent);
      return out.join(" ").match(/[A-Za-z][A-Za-z_-]*/g) ?? [];
    });
    // formulas, file formats and names that stay as they are in Korean writing too
    const allowed = new Set(["headmap", "X", "Q", "K", "V", "QK", "W_Q", "W_K", "W_V", "QKᵀ", "d_model", "d_k", "d_ff", "h", "n", "d", "Kᵀ", "PNG", "SVG", "JSON", "CSV", "all-MiniLM-L", "v", "MiniLM", "GPT-", "Olsson", "KV"]); // the KV cache, a model's and a paper's author's names
    const latin = [...new Set(words)].filter((w) => !allowed.has(w));
    assert.deepEqual(latin, [], "Latin-script words in the Korean page");
  });

  it("shows a hint for empty text and a clear refusal for text that is too long", async () => {
    const page = await open();
    await page.locator("#text").fill("   ");
    await page.locator("#status").waitFor({ state: "visible" });
    assert.match(await page.locator("#status").textContent(), /Type a sentence/);
    assert.equal(await page.locator("#heatmap-area").isHidden(), true);
    await page.locator("#text").fill("word ".repeat(2100));
    await page.waitForFunction(() => /more than the maximum/.test(document.getElementById("status").textContent));
    assert.equal(await page.locator("#status").textContent(), "The text has 2100 tokens, more than the maximum of 2048. Shorten the text, or choose a model that reads longer texts.");
    // nothing of the last text stays: no tab, no note, no button speaking of it
    assert.equal(await page.locator("#rows button").count(), 0);
    assert.ok(await page.locator("#mixing-from-head").isHidden());
    await page.locator("#lang").click();
    assert.match(await page.locator("#status").textContent(), /^텍스트가 토큰 2100개로/, "the error follows the language");
    assert.equal(await page.locator("#layer option").first().textContent(), "층 1");
    await page.locator("#lang").click();
    assert.equal(await page.locator("#status").getAttribute("role"), "alert");
    assert.ok(await page.locator("#status").evaluate((n) => n.classList.contains("error")));
    await page.screenshot({ path: join(SHOTS, "too-long.png") });
    await afterRender(page, () => page.locator("#text").fill("back to normal"));
    assert.equal(await page.locator("#status").isHidden(), true);
  });

  it("shows HTML in the text as text and never runs it", async () => {
    const page = await open();
    let dialogs = 0;
    page.on("dialog", (d) => {
      dialogs += 1;
      d.dismiss();
    });
    const evil = `<img src=x onerror=alert(1)> <script>alert(2)</script>`;
    await afterRender(page, () => page.locator("#text").fill(evil));
    await page.locator("#table-details summary").click();
    await page.waitForTimeout(300);
    assert.equal(dialogs, 0);
    assert.equal(await page.locator("img").count(), 0, "no element was injected");
    assert.equal(await page.locator("body script").count(), 0);
    assert.ok((await meta(page)).queries.includes("onerror"), "the text became tokens");
    assert.ok((await page.locator("#table").textContent()).includes("<"), "shown literally in the table");
    assert.ok((await page.locator("#rows button").first().textContent()).includes("<img"), "and in the row tab");
  });

  it("recomputes the seed's weighted sum in the core, refuses negative weights, and fills from a head", async () => {
    const page = await open();
    const total = page.locator("#mixing .total");
    await page.waitForFunction(() => document.querySelector("#mixing .total")?.textContent === "[8, 2]");
    await page.locator("#mixing input").first().fill("0.5");
    await page.waitForFunction(() => document.querySelector("#mixing .total")?.textContent === "[6, 2]");
    assert.match(await page.locator(".mixing-warning").textContent(), /add up to 0\.80, not 1/);
    await page.locator("#mixing input").first().fill("-0.5");
    await page.waitForFunction(() => document.querySelector("#mixing .total")?.textContent === "—");
    assert.match(await page.locator(".mixing-warning").textContent(), /cannot be negative/);
    assert.equal(await total.textContent(), "—");
    await hoverCell(page, 5, 0);
    await page.locator("#mixing-from-head").waitFor({ state: "visible" });
    assert.equal(await page.locator("#mixing-from-head").textContent(), "Fill from the shown head, query “그것은”");
    await page.locator("#mixing-from-head").click();
    await page.waitForFunction(() => document.querySelector("#mixing .total")?.dataset.value);
    assert.equal(await page.locator("#mixing tbody tr").count(), 9, "one row per visible key");
  });

  it("runs the paper's base size: d_model 512, 8 heads of 64", async () => {
    const page = await open("?preset=base&layers=1");
    assert.equal((await meta(page)).heads, 8);
    assert.match(await page.locator("#cost").textContent(), /d_model 512, h 8, d_k 64/);
    assert.equal(await page.locator("#grid button.thumb").count(), 8);
  });

  it("shows every step to the output, and the scaling caption follows the switch", async () => {
    const page = await open();
    await page.locator("#steps figure[data-step=output]").waitFor();
    assert.equal(await page.locator("#steps figure").count(), 9, "X, Q, K, V, QKᵀ, ÷√d_k, mask, softmax, · V");
    assert.match(await page.locator("#steps .step-note").first().textContent(), /X \[9, 64\] × W_Q \[64, 16\] = Q \[9, 16\]/);
    assert.match(await page.locator("#steps figure[data-step=scaled] strong").textContent(), /÷ √d_k/);
    assert.match(await page.locator("#steps figure[data-step=output] span").textContent(), /\[9, 16\]/, "weights · V: a row of d_k per query");
    await page.locator("#settings").evaluate((d) => (d.open = true));
    await afterRender(page, () => page.locator("#scale").uncheck());
    await page.waitForFunction(() => document.querySelector("#steps figure[data-step=scaled] strong")?.textContent === "not scaled");
    assert.match(await page.locator(".step-note").nth(1).textContent(), /scores \[9, 9\] → mask/);
    assert.ok(await page.locator("#scale-note").isVisible());
  });

  it("works on a phone: no sideways scroll, and a tap reads a cell", async () => {
    for (const width of [390, 320]) {
      const page = await open("", { width, height: 844, touch: true, scale: 2 });
      const scroll = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      assert.ok(scroll[0] <= scroll[1], `${width} px: the page is ${scroll[0]} px wide`);
      const heatmap = await page.locator("#heatmap").boundingBox();
      assert.ok(heatmap.x >= 0 && heatmap.x + heatmap.width <= width, `${width} px: the heatmap fits`);
      const button = await page.locator("#lang").boundingBox();
      assert.ok(button.height < 48, "the language button is one line");
      await page.locator("#heatmap").scrollIntoViewIfNeeded();
      const { x, y } = await cellPoint(page, 5, 0);
      await page.touchscreen.tap(x, y);
      await page.waitForFunction(() => document.getElementById("readout").dataset.weight !== undefined);
      assert.match(await page.locator("#readout").textContent(), /query “그것은” \(#6\) → key “동물이” \(#1\)/);
      await page.screenshot({ path: join(SHOTS, `phone-${width}.png`), fullPage: true });
      assert.deepEqual(page.consoleErrors, []);
    }
  });

  it("saves the shown heatmap as PNG and SVG and the run as JSON and CSV", async () => {
    const page = await open();
    const save = async (format) => {
      const [download] = await Promise.all([page.waitForEvent("download"), page.locator(`[data-export=${format}]`).click()]);
      const path = await download.path();
      return { name: download.suggestedFilename(), bytes: await import("node:fs/promises").then((fs) => fs.readFile(path)) };
    };
    const png = await save("png");
    assert.equal(png.name, "headmap-toy-encoder_self-l1-h1.png");
    assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const svg = (await save("svg")).bytes.toString();
    assert.ok(svg.startsWith("<svg") && svg.includes("동물이") && svg.includes("Encoder self-attention · Layer 1 · Head 1"));
    const shown = await page.evaluate(() => {
      const s = globalThis.__headmap.meta;
      return { tq: s.tq, tk: s.tk };
    });
    const json = JSON.parse((await save("json")).bytes.toString());
    assert.equal(json.model_type, "toy");
    const place = json.rows[0].attention.encoder_self;
    assert.equal(place.weights.length, 2, "layers");
    assert.equal(place.weights[0][0].length, shown.tq);
    const head = await page.evaluate(() => Array.from(globalThis.__headmap.shownWeights));
    assert.deepEqual(place.weights[0][0].flat().map((w) => Math.fround(w)), head, "the saved weights are the ones shown");
    const csv = (await save("csv")).bytes.toString().trim().split("\n");
    assert.equal(csv[0], "row,attention,layer,head,query_index,query,key_index,key,weight");
    assert.equal(csv.length - 1, 2 * 2 * 4 * 9 * 9, "every weight of both rows, layers and heads");
  });

  it("answers a malformed request with 400, and sends a strict policy", async () => {
    const bad = await fetch(`${h.base}%E0%A4%A`);
    assert.equal(bad.status, 400);
    const ok = await fetch(h.base);
    assert.match(ok.headers.get("content-security-policy"), /script-src 'self' 'wasm-unsafe-eval'/);
    assert.match(ok.headers.get("content-security-policy"), /connect-src 'self' https:\/\/huggingface\.co/);
  });
});
