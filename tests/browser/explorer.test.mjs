// The explorer as a user sees it, in headless Chromium: every example, every mask type,
// hover read-outs, head switching, URL state, bad input. Screenshots: artifacts/screenshots/.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";

import { HATCH } from "../../www/js/render/heatmap.js";
import { SHOTS, afterRender, cellColor, hoverCell, openHarness, waitForRender } from "./harness.mjs";

const HATCHED = new Set([HATCH.base.join(), HATCH.stripe.join()]);
const isHatched = (colors) => colors.length > 0 && colors.every((c) => HATCHED.has(c));

let h;
before(async () => {
  h = await openHarness();
});
after(async () => h?.close());

async function open(query = "", options) {
  const page = await h.page(options);
  await page.goto(h.base + query);
  await waitForRender(page);
  return page;
}

describe("explorer", () => {
  it("opens on the seed sentence with PAD key columns hatched and no console errors", async () => {
    const page = await open();
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.equal(meta.mask, "padding");
    assert.equal(meta.batch, 2);
    assert.deepEqual(meta.queries[0].slice(0, 3), ["동물이", "길을", "건너지"]);
    assert.equal(meta.keys[1][8], "[PAD]");
    assert.ok(isHatched(await cellColor(page, 0, 8)), "a PAD key column is hatched");
    assert.ok(!isHatched(await cellColor(page, 0, 0)), "a real key is a weight colour");
    await hoverCell(page, 0, 8);
    assert.equal(await page.locator("#readout").getAttribute("data-weight"), "0");
    await page.screenshot({ path: join(SHOTS, "padding.png"), fullPage: true });
    assert.deepEqual(page.consoleErrors, []);
  });

  it("shows every example sentence, Korean tokens included", async () => {
    const page = await open();
    const examples = await page.locator("#example-buttons button").all();
    assert.equal(examples.length, 4);
    for (const button of examples) {
      const id = await button.getAttribute("data-example");
      const text = await button.textContent();
      await afterRender(page, () => button.click());
      const meta = await page.evaluate(() => globalThis.__headmap.meta);
      assert.equal(meta.queries[0].filter((t) => t !== "[PAD]").join(""), text.replace(/\s+/g, ""), id);
      await page.locator("#table-details summary").click();
      const firstHeader = await page.locator("#table thead th").nth(1).textContent();
      assert.equal(firstHeader, meta.keys[meta.batch > 1 ? 1 : 0][0], `${id}: the table names the tokens`);
      await page.locator("#table-details summary").click();
    }
    assert.ok(await page.locator("#example-buttons button[lang=ko]").count() >= 2);
    assert.deepEqual(page.consoleErrors, []);
  });

  it("hatches the causal upper triangle and reads 0 there", async () => {
    const page = await open();
    await afterRender(page, () => page.locator("input[name=mask][value=causal]").check());
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.equal(meta.mask, "causal");
    assert.ok(isHatched(await cellColor(page, 1, 3)), "future key (1, 3) is hatched");
    assert.ok(!isHatched(await cellColor(page, 3, 1)), "past key (3, 1) is a weight colour");
    await hoverCell(page, 1, 3);
    const readout = await page.locator("#readout").textContent();
    assert.match(readout, /weight 0 \(masked\)/);
    assert.equal(await page.locator("#readout").getAttribute("data-weight"), "0");
    await page.screenshot({ path: join(SHOTS, "causal.png"), fullPage: true });
    assert.deepEqual(page.consoleErrors, []);
  });

  it("draws cross-attention as Tq x Tk with the decoder down the side", async () => {
    const page = await open();
    await afterRender(page, () => page.locator("input[name=mask][value=cross]").check());
    const { meta, layout } = await page.evaluate(() => ({ meta: globalThis.__headmap.meta, layout: globalThis.__headmap.layout }));
    assert.equal(meta.tq, 12, "the English target has 12 tokens");
    assert.equal(meta.tk, 9, "the Korean source has 9");
    assert.equal(Math.round(layout.plotWidth / layout.cell), 9);
    assert.equal(Math.round(layout.plotHeight / layout.cell), 12);
    assert.equal(meta.queries[0][0], "The");
    assert.equal(meta.keys[0][0], "동물이");
    assert.ok(await page.locator("#target").isVisible());
    await page.screenshot({ path: join(SHOTS, "cross.png"), fullPage: true });
    assert.deepEqual(page.consoleErrors, []);
  });

  it("lets PAD keys take weight when nothing is masked", async () => {
    const page = await open("?mask=none");
    const w = await page.evaluate(() => globalThis.__headmap.meta);
    assert.equal(w.mask, "none");
    assert.ok(!isHatched(await cellColor(page, 0, 8)), "the PAD column is coloured, not hatched");
    await hoverCell(page, 0, 8);
    assert.notEqual(await page.locator("#readout").getAttribute("data-weight"), "0");
    await page.screenshot({ path: join(SHOTS, "none.png"), fullPage: true });
  });

  it("switches heads from the grid with the keyboard, and the pixels change", async () => {
    const page = await open();
    const before = await page.locator("#heatmap").evaluate((c) => c.toDataURL());
    await page.locator("#grid button.selected").focus();
    await afterRender(page, () => page.keyboard.press("ArrowRight"));
    const state = await page.evaluate(() => globalThis.__headmap.state);
    assert.equal(state.head, 1);
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), "Layer 1, Head 2");
    const afterShot = await page.locator("#heatmap").evaluate((c) => c.toDataURL());
    assert.notEqual(afterShot, before);
    await afterRender(page, () => page.keyboard.press("ArrowDown"));
    assert.equal((await page.evaluate(() => globalThis.__headmap.state)).layer, 1);
    assert.match(page.url(), /layer=1/);
    await page.screenshot({ path: join(SHOTS, "grid-focus.png") });
  });

  it("round-trips the whole view through the URL", async () => {
    const query = "?mask=causal&layer=1&head=2&row=0&scale=0&seed=7&lang=ko";
    const page = await open(query);
    const state = await page.evaluate(() => globalThis.__headmap.state);
    assert.equal(state.mask, "causal");
    assert.equal(state.layer, 1);
    assert.equal(state.head, 2);
    assert.equal(state.scale, false);
    assert.equal(state.seed, 7);
    assert.equal(await page.locator("#scale").isChecked(), false);
    assert.equal(await page.locator("#layer").inputValue(), "1");
    assert.equal(await page.locator("html").getAttribute("lang"), "ko");
    assert.equal(await page.locator("input[name=mask][value=causal]").isChecked(), true);
    const again = await open(new URL(page.url()).search);
    assert.deepEqual(await again.evaluate(() => globalThis.__headmap.state), state);
    await page.screenshot({ path: join(SHOTS, "korean-ui.png"), fullPage: true });
  });

  it("follows a Korean browser", async () => {
    const page = await open("", { locale: "ko-KR" });
    assert.equal(await page.locator("h1").textContent(), "headmap — head별로 보는 어텐션");
  });

  it("shows a hint for empty text and a clear refusal for text that is too long", async () => {
    const page = await open();
    await page.locator("#text").fill("   ");
    await page.locator("#status").waitFor({ state: "visible" });
    assert.match(await page.locator("#status").textContent(), /Type a sentence/);
    assert.equal(await page.locator("#heatmap-area").isHidden(), true);
    await page.locator("#text").fill("word ".repeat(2100));
    await page.waitForFunction(() => /more than the maximum/.test(document.getElementById("status").textContent));
    assert.equal(await page.locator("#status").textContent(), "the text has 2100 tokens, more than the maximum of 2048");
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
    await afterRender(page, () => page.getByRole("button", { name: "Sentence 1" }).click());
    await page.locator("#table-details summary").click();
    await page.waitForTimeout(300);
    assert.equal(dialogs, 0);
    assert.equal(await page.locator("img").count(), 0, "no element was injected");
    assert.equal(await page.locator("body script").count(), 0);
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.ok(meta.queries[0].includes("onerror"), "the text became tokens");
    assert.ok((await page.locator("#table").textContent()).includes("<"), "shown literally in the table");
  });

  it("recomputes the seed's weighted sum in the core", async () => {
    const page = await open();
    const total = page.locator("#mixing .total");
    await page.waitForFunction(() => document.querySelector("#mixing .total")?.textContent === "[8, 2]");
    await page.locator("#mixing input").first().fill("0.5");
    await page.waitForFunction(() => document.querySelector("#mixing .total")?.textContent === "[6, 2]");
    assert.equal(await total.textContent(), "[6, 2]");
  });

  it("runs the paper's base size: d_model 512, 8 heads of 64", async () => {
    const page = await open("?preset=base&layers=1");
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.equal(meta.heads, 8);
    assert.match(await page.locator("#cost").textContent(), /d_model 512, h 8, d_k 64/);
    assert.equal(await page.locator("#grid button.thumb").count(), 8);
  });
});
