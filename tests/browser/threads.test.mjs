// Threads in the browser: on a cross-origin isolated page (scripts/serve sends COOP and COEP)
// real models run on the threaded build (www/pkg-hf-threads/), one thread per core up to 8; on
// a page that is not isolated, on the single-threaded one, with no error in the console. Both
// draw the same pixels: threads change the time, not the weights. The page says which it uses.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";

import { ISOLATION } from "../../scripts/serve.mjs";
import { ROOT, SHOTS, isolatedBuild, openBlog, openHarness, renders, savedExport, servePlain, waitForRender } from "./harness.mjs";

// long enough that every split is taken: heads (12 · n² · 32 ≥ 2¹⁸ at n ≥ 26) and products,
// which from 64 rows a thread (par::COLUMNS_BELOW_ROWS) split by rows: 135 tokens, 68 rows a
// thread on two (the short text below splits them by columns)
const TEXT =
  "The little dog ran across the busy street because it wanted to reach the park where the other dogs were playing with a red ball, and then it rested under a tall tree in the warm afternoon sun. " +
  "After a while it walked home slowly, tired but happy, and slept by the door until the next morning came. " +
  "The next day it woke early, ate its breakfast quickly and ran back to the park to look for the red ball again, but the other dogs had carried it to the far side of the field, near the old stone wall where the children liked to play after school. " +
  "So it lay down in the grass and waited for them to bring it back.";

let h;
let plain; // the same files without isolation
before(async () => {
  h = await openHarness();
  plain = await servePlain();
});
after(async () => {
  await h?.close();
  plain?.close();
});

/** The explorer at `base` on MiniLM and TEXT, once drawn; console errors recorded. */
async function minilm(base, { lang = "en", width = 1280, locale = "en-US", text = TEXT } = {}) {
  const page = await h.page({ width, height: 1000, locale });
  await page.goto(`${base}?model=minilm&lang=${lang}&text=${encodeURIComponent(text)}`);
  await page.waitForFunction(() => globalThis.__headmap?.model?.compute || globalThis.__headmap?.errors.length, null, { timeout: 90000 });
  await waitForRender(page);
  await page.waitForFunction(() => document.querySelectorAll("#grid button.thumb canvas, #grid button.thumb").length >= 72);
  return page;
}

/** SHA-256 of the heatmap's pixels and of every head's thumbnail. */
function pixels(page) {
  return page.evaluate(() =>
    [document.querySelector("#heatmap"), ...document.querySelectorAll("#grid canvas")].map((c) => {
      // copied onto a canvas of our own: the thumbnails hold bitmaps, not a 2d context
      const copy = document.createElement("canvas");
      [copy.width, copy.height] = [c.width, c.height];
      const ctx = copy.getContext("2d");
      ctx.drawImage(c, 0, 0);
      return Array.from(ctx.getImageData(0, 0, c.width, c.height).data).join(",");
    }),
  ).then((all) => all.map((p) => createHash("sha256").update(p).digest("hex")));
}

describe("threads in the browser", () => {
  it("runs MiniLM on the threaded build on an isolated page and draws what one thread draws elsewhere", async () => {
    const threaded = await minilm(h.base);
    assert.equal(await threaded.evaluate(() => crossOriginIsolated), true);
    const compute = await threaded.evaluate(() => globalThis.__headmap.model.compute);
    const expected = await isolatedBuild(threaded);
    // Chromium has relaxed SIMD: the threaded build's relaxed twin (relaxed.test.mjs: the plain one)
    assert.deepEqual({ ...compute, panics: undefined }, { ...expected.compute, panics: undefined });
    if (expected.cores >= 2) {
      assert.match(compute.panics, /^headmap-threads-/, "the channel a panicking thread speaks on");
      assert.match(await threaded.locator("#cost").textContent(), new RegExp(`computed in this browser on ${expected.cores} threads`));
    } else {
      assert.match(await threaded.locator("#cost").textContent(), /computed in this browser on one thread \(one core\)/);
    }
    assert.deepEqual(await threaded.evaluate(() => globalThis.__headmap.errors), []);
    assert.deepEqual(threaded.consoleErrors ?? [], []);
    await threaded.screenshot({ path: join(SHOTS, "threads-minilm-1280-en.png"), fullPage: false });

    const single = await minilm(`http://127.0.0.1:${plain.address().port}/`);
    assert.equal(await single.evaluate(() => crossOriginIsolated), false);
    assert.deepEqual(await single.evaluate(() => globalThis.__headmap.model.compute), { build: "single", threads: 1, why: "not_isolated", package: "pkg-hf-relaxed" });
    assert.match(await single.locator("#cost").textContent(), /on one thread \(the page is not cross-origin isolated/);
    assert.deepEqual(single.consoleErrors ?? [], [], "no error in the console where threads cannot run");
    const [a, b] = [await pixels(threaded), await pixels(single)];
    assert.equal(a.length, 73, "the heatmap and 72 heads");
    assert.deepEqual(a, b, "the same pixels on threads and on one thread");
    // and the same numbers: every weight of the run, as the page saves it
    const [x, y] = [await savedExport(threaded), await savedExport(single)];
    assert.ok(x.length > 1e6, `a whole run's weights (${x.length} bytes)`);
    assert.ok(x.equals(y), "the saved weights differ between threads and one thread");
    await threaded.close();
    await single.close();
  });

  it("gives a short text, its products split by columns, the weights one thread gives", async () => {
    // the worker keeps every forward and the pool's threads take pieces as they come
    // (par::beside); under 64 rows a thread (par::COLUMNS_BELOW_ROWS) a product splits by
    // columns, not rows: 14 tokens here
    const text = "A short sentence, split between the threads as they wake.";
    const threaded = await minilm(h.base, { text });
    const expected = await isolatedBuild(threaded);
    assert.equal((await threaded.evaluate(() => globalThis.__headmap.model.compute)).threads, expected.compute.threads);
    const single = await minilm(`http://127.0.0.1:${plain.address().port}/`, { text });
    const [x, y] = [await savedExport(threaded), await savedExport(single)];
    assert.ok(x.length > 1e5, `a whole run's weights (${x.length} bytes)`);
    assert.ok(x.equals(y), "the saved weights of a short text differ between threads and one thread");
    assert.deepEqual(await threaded.evaluate(() => globalThis.__headmap.errors), []);
    await threaded.close();
    await single.close();
  });

  /** Panics `where` through a client of the page's own (it shares the explorer's worker); → the call's outcome. */
  const panic = (page, where) =>
    page.evaluate(async (where) => {
      const { AttentionClient } = await import("/js/client.js");
      try {
        return { answer: await new AttentionClient().call("panic", { where }) };
      } catch (e) {
        return { code: e.code, message: e.message };
      }
    }, where);

  /** The explorer, after its worker stopped: says why at once, then draws `text` on a worker started afresh. */
  async function drawsAfresh(page, text, stopped) {
    const before = await page.evaluate(() => globalThis.__headmap.renders);
    await page.locator("#text").fill(text);
    await waitForRender(page, before + 1);
    const errors = await page.evaluate(() => globalThis.__headmap.errors);
    assert.deepEqual(errors.filter((e) => !stopped.test(e)), [], "no error but the stop");
  }

  it("ends the worker with a clear error when a pool thread panics or aborts, and draws the next sentence on a new one", async () => {
    const page = await minilm(h.base);
    // an abort (as running out of memory is) passes Rust's panic hook by: the thread's script says it
    for (const [where, said] of [["thread", /deliberate panic/], ["abort", /RuntimeError: unreachable/]]) {
      const outcome = await panic(page, where);
      if ((await isolatedBuild(page)).cores < 2) {
        assert.deepEqual(outcome, { answer: false }, "one core: no pool, so no thread to stop");
        return page.close();
      }
      assert.equal(outcome.code, "thread_stopped", JSON.stringify(outcome));
      assert.match(outcome.message, /a thread of the computation stopped: /);
      assert.match(outcome.message, said);
      assert.match(outcome.message, /starts afresh/);
      await drawsAfresh(page, `A sentence after the ${where} stopped a thread.`, /thread of the computation stopped/);
    }
    await page.locator("#lang").click();
    await page.waitForFunction(() => document.documentElement.lang === "ko");
    await page.close();
  });

  for (const [build, base] of [
    ["threaded", () => h.base],
    ["single-threaded", () => `http://127.0.0.1:${plain.address().port}/`],
  ]) {
    it(`starts the ${build} core afresh after a trap on the worker's own thread, as after running out of memory`, async () => {
      const page = await minilm(base(), { text: "A first sentence." });
      const outcome = await panic(page, "here");
      assert.equal(outcome.code, "computation_stopped", JSON.stringify(outcome));
      assert.match(outcome.message, /^the computation stopped \(unreachable; out of memory\?\): it starts afresh/);
      // the memory the trap left half written is never used again: the next sentence draws on
      // a new worker, which loads MiniLM again, and its weights are those of a page never stopped
      await drawsAfresh(page, TEXT, /computation stopped/);
      const fresh = await minilm(base());
      assert.ok((await savedExport(page)).equals(await savedExport(fresh)), "the weights after the restart differ from a fresh page's");
      await page.close();
      await fresh.close();
    });
  }

  it("says in Korean on a phone how many threads compute, with nothing cut off", async () => {
    const page = await minilm(h.base, { lang: "ko", width: 390, locale: "ko-KR" });
    const cost = await page.locator("#cost").textContent();
    const { cores } = await isolatedBuild(page);
    assert.match(cost, cores >= 2 ? /이 브라우저에서 스레드 \d+개로 계산/ : /이 브라우저에서 스레드 하나로 계산 \(코어 하나\)/);
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways}px`);
    await page.locator("#cost").scrollIntoViewIfNeeded();
    // two frames after the scroll: under CI's load the shot once caught a tile not yet painted
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await page.screenshot({ path: join(SHOTS, "threads-minilm-390-ko.png"), fullPage: false });
    await page.close();
  });
});

describe("the widget on a blog's page", () => {
  const MINILM = join(ROOT, "models", "all-MiniLM-L6-v2");
  let isolated;
  let plainBlog;
  before(async () => {
    isolated = await openBlog({ "/minilm/": MINILM }, { headers: ISOLATION });
    plainBlog = await openBlog({ "/minilm/": MINILM });
  });
  after(async () => {
    await isolated?.close();
    await plainBlog?.close();
  });

  /** The blog's MiniLM widget drawn: its figure's model info, its pixels, the page's CSP reports. */
  async function drawn(blog) {
    const page = await blog.open("threads.html", { width: 1000, locale: "en-US" });
    await page.waitForFunction(() => globalThis.__events.some((e) => e.id === "minilm" && (e.type === "render" || e.type === "error")), null, { timeout: 90000 });
    const events = await page.evaluate(() => globalThis.__events.filter((e) => e.id === "minilm"));
    assert.deepEqual(events.filter((e) => e.type === "error"), []);
    assert.ok((await renders(page, "minilm")) >= 1);
    const compute = events.find((e) => e.type === "render").detail.model.compute;
    const pixels = await page.evaluate(() => {
      const canvas = document.getElementById("minilm").shadowRoot.querySelector("canvas");
      const copy = document.createElement("canvas");
      [copy.width, copy.height] = [canvas.width, canvas.height];
      copy.getContext("2d").drawImage(canvas, 0, 0);
      return Array.from(copy.getContext("2d").getImageData(0, 0, copy.width, copy.height).data).join(",");
    });
    return { page, compute, hash: createHash("sha256").update(pixels).digest("hex"), csp: await page.evaluate(() => globalThis.__csp) };
  }

  it("uses threads on an isolated page under the blog's strict CSP and Trusted Types, and one thread elsewhere, drawing the same", async () => {
    const a = await drawn(isolated);
    assert.equal(await a.page.evaluate(() => crossOriginIsolated), true);
    const expected = (await isolatedBuild(a.page)).compute;
    assert.equal(a.compute.build, expected.build, `the widget did not start its threads: ${JSON.stringify(a.compute)}`);
    assert.equal(a.compute.threads, expected.threads);
    assert.deepEqual(a.csp, [], "no CSP or Trusted Types violation starting the threads");
    assert.deepEqual(a.page.consoleErrors, []);
    const b = await drawn(plainBlog);
    assert.deepEqual(b.compute, { build: "single", threads: 1, why: "not_isolated", package: "pkg-hf-relaxed" });
    assert.deepEqual(b.csp, []);
    assert.deepEqual(b.page.consoleErrors, []);
    assert.equal(a.hash, b.hash, "the same pixels with and without threads");
    await a.page.screenshot({ path: join(SHOTS, "threads-widget-1000-en.png") });
  });
});
