// Every view as readers see it, at a phone's 390 px and a desktop's 1280 px, in English and in
// Korean: the explorer's places and masks on the trained model and the toy, and each of the
// widget's views. The pictures land in artifacts/screenshots/views/ for a person to look at;
// the test checks what a picture cannot: no sideways scroll, and labels inside the page.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { SHOTS, openHarness, waitForRender } from "./harness.mjs";

const VIEWS = join(SHOTS, "views");
const WIDTHS = [390, 1280];
const LANGS = ["en", "ko"];

let h;
before(async () => {
  h = await openHarness();
  await mkdir(VIEWS, { recursive: true });
});
after(async () => h?.close());

async function shoot(page, name, width) {
  const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  assert.ok(scroll <= client, `${name}: the page is ${scroll} px wide at ${width}`);
  await page.screenshot({ path: join(VIEWS, `${name}.png`), fullPage: width > 500 });
  if (width <= 500) {
    // a phone's reader scrolls: the heatmap's screenful too
    await page.locator("#heatmap").evaluate((e) => e.scrollIntoView({ block: "center" }));
    await page.screenshot({ path: join(VIEWS, `${name}-view.png`) });
  }
}

describe("every view at both widths, in both languages", () => {
  for (const width of WIDTHS) {
    for (const lang of LANGS) {
      it(`the explorer at ${width} px in ${lang}`, async () => {
        const page = await h.page({ width, height: width > 500 ? 1000 : 844, touch: width <= 500, scale: width > 500 ? 1 : 2 });
        for (const [query, name] of [
          ["", "trained-encoder"],
          ["?place=cross", "trained-cross"],
          ["?place=decoder_self", "trained-decoder"],
          ["?model=toy&row=1", "toy-padding"],
          ["?model=toy&place=encoder_self&mask=causal", "toy-what-if"],
        ]) {
          const sep = query ? "&" : "?";
          await page.goto(`${h.base}${query}${sep}lang=${lang}`);
          await waitForRender(page);
          await page.waitForFunction(() => document.querySelector("#steps figure"));
          await shoot(page, `explorer-${name}-${lang}-${width}`, width);
        }
      });

      it(`the widget's views at ${width} px in ${lang}`, async () => {
        const page = await h.page({ width, height: 900, touch: width <= 500 });
        await page.goto(`${h.base}article.html?lang=${lang}`);
        const views = await page.evaluate(() => [...new Set([...document.querySelectorAll("attention-heatmap")].map((e) => e.getAttribute("view") ?? "heatmap"))]);
        for (const view of views) {
          const widget = page.locator(`attention-heatmap${view === "heatmap" ? ":not([view])" : `[view=${view}]`}`).first();
          await widget.scrollIntoViewIfNeeded();
          await widget.evaluate((e) => new Promise((ok) => (e.figure ? ok() : e.addEventListener("render", ok, { once: true }))));
          await page.waitForTimeout(200);
          await widget.screenshot({ path: join(VIEWS, `widget-${view}-${lang}-${width}.png`) });
          const box = await widget.boundingBox();
          assert.ok(box.x >= 0 && box.x + box.width <= width + 1, `the ${view} widget fits ${width} px`);
        }
      });
    }
  }
});
