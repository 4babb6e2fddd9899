// <attention-heatmap> as a blog author ships it: the built dist/headmap/ folder (and the same
// folder packed by npm), on a sample blog page (tests/widget/blog.html) served under a strict
// Content-Security-Policy with Trusted Types enforced, beside a hostile stylesheet.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { TOY_BUDGET_KIB, toyDownload } from "../../scripts/build/toy-download.mjs";
import { serve } from "../../scripts/serve.mjs";
import { BLOG_CSP, FIXTURES, ROOT, SHOTS, openBlog } from "./harness.mjs";

const DIST = join(ROOT, "dist", "headmap");
const BLOG = join(ROOT, "tests", "widget");
const CSP = BLOG_CSP;

let blog;
let browser;
let scratch;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), "headmap-widget-"));
  await mkdir(join(scratch, "site"), { recursive: true }); // the npm test installs the package there
  blog = await openBlog({ "/packed/": join(scratch, "site"), "/models/": FIXTURES });
  browser = blog.browser;
});
after(async () => {
  await blog?.close();
  await rm(scratch, { recursive: true, force: true });
});

const open = (path = "blog.html", { width = 1000, height = 900, touch = false, javaScript = true } = {}) => blog.open(path, { width, height, touch, javaScript });

/** Scrolls every widget into view and waits until each has drawn. */
async function renderAll(page) {
  const ids = await page.evaluate(() => [...document.querySelectorAll("attention-heatmap")].map((e) => e.id));
  for (const id of ids) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForFunction((i) => globalThis.__events.some((e) => e.id === i && (e.type === "render" || e.type === "error")), id, { timeout: 60000 });
  }
  return ids;
}

const rendered = (page, id) => page.evaluate((i) => globalThis.__events.filter((e) => e.id === i && e.type === "render").length, id);

async function nextRender(page, id, action) {
  const before = await rendered(page, id);
  await action();
  await page.waitForFunction(([i, n]) => globalThis.__events.filter((e) => e.id === i && e.type === "render").length > n, [id, before], { timeout: 60000 });
  return page.evaluate((i) => globalThis.__events.filter((e) => e.id === i && e.type === "render").at(-1).detail, id);
}

describe("the widget on a blog", () => {
  it("renders every widget under a strict CSP with Trusted Types, from one worker, with no error", async () => {
    const page = await open();
    const ids = await renderAll(page);
    assert.deepEqual(ids, ["causal", "lines", "grid"]);
    const events = await page.evaluate(() => globalThis.__events);
    for (const id of ids) {
      assert.ok(events.some((e) => e.id === id && e.type === "load"), `${id} fired load`);
      assert.ok(!events.some((e) => e.id === id && e.type === "error"), `${id} fired no error`);
    }
    const causal = events.find((e) => e.id === "causal" && e.type === "render").detail;
    assert.deepEqual([causal.place, causal.layer, causal.head], ["decoder_self", 0, 3], "mask=causal puts it in the decoder, layer and head as written");
    assert.equal(await page.evaluate(() => globalThis.__workers), 1, "three widgets share one worker");
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), [], "no CSP or Trusted Types violation");
    assert.deepEqual(page.consoleErrors, []);
    assert.equal(await page.locator("#causal").getAttribute("role"), "figure");
    assert.match(await page.locator("#causal").getAttribute("aria-label"), /^어텐션 히트맵: ‘동물이 길을 건너지 않았다\. 그것은 너무 피곤했다\.’의 디코더 마스크드 셀프 어텐션, 1층, 4번 헤드$/);
    await page.screenshot({ path: join(SHOTS, "widget-blog.png"), fullPage: true });
  });

  it("keeps the host page's styles out", async () => {
    const page = await open();
    await renderAll(page);
    const inside = await page.locator("#causal").evaluate((host) => {
      const frame = host.shadowRoot.querySelector(".frame");
      const canvas = host.shadowRoot.querySelector("canvas.heatmap");
      const button = host.shadowRoot.querySelector("button");
      const s = getComputedStyle(frame);
      return { color: s.color, spacing: s.letterSpacing, font: s.fontFamily, canvas: getComputedStyle(canvas).display, button: getComputedStyle(button).backgroundColor };
    });
    assert.notEqual(inside.color, "rgb(255, 0, 255)");
    assert.equal(inside.spacing, "normal");
    assert.doesNotMatch(inside.font, /Comic Sans/);
    assert.equal(inside.canvas, "block", "the page hides its own canvases, not the widget's");
    assert.notEqual(inside.button, "rgb(255, 255, 0)");
  });

  it("re-renders when an attribute changes, and keeps HTML in a text as text", async () => {
    const page = await open();
    await renderAll(page);
    let detail = await nextRender(page, "causal", () => page.locator("#causal").evaluate((e) => e.setAttribute("head", "1")));
    assert.equal(detail.head, 1);
    detail = await nextRender(page, "causal", () => page.locator("#causal").evaluate((e) => (e.layer = 1)));
    assert.equal(detail.layer, 1, "a property sets its attribute");
    assert.equal(await page.locator("#causal").getAttribute("layer"), "1");
    let dialogs = 0;
    page.on("dialog", (d) => {
      dialogs += 1;
      d.dismiss();
    });
    detail = await nextRender(page, "causal", () => page.locator("#causal").evaluate((e) => (e.text = `<img src=x onerror=alert(1)> <script>alert(2)</script> 끝`)));
    await page.waitForTimeout(300);
    assert.equal(dialogs, 0);
    const shadow = await page.locator("#causal").evaluate((e) => ({ imgs: e.shadowRoot.querySelectorAll("img, script").length, label: e.getAttribute("aria-label"), table: e.shadowRoot.querySelector("table").textContent }));
    assert.equal(shadow.imgs, 0, "nothing was injected into the widget");
    assert.ok(shadow.table.includes("<"), "the text is shown literally");
    detail = await nextRender(page, "causal", () => page.locator("#causal").evaluate((e) => e.setAttribute("view", "steps")));
    await page.locator("#causal").evaluate((e) => new Promise((ok) => {
      const check = () => (e.shadowRoot.querySelectorAll(".step").length === 9 ? ok() : setTimeout(check, 50));
      check();
    }));
    detail = await nextRender(page, "causal", () => page.locator("#causal").evaluate((e) => e.setAttribute("view", "pipeline")));
    const pipeline = await page.locator("#causal").evaluate((e) => e.shadowRoot.querySelector(".pipeline").textContent);
    assert.match(pipeline, /d_k = d_model \/ h = 64 \/ 4 = 16/);
    assert.match(pipeline, /h · n · m · d_k/);
    await nextRender(page, "causal", () => page.locator("#causal").evaluate((e) => e.setAttribute("view", "mixing")));
    await page.locator("#causal").evaluate((e) => new Promise((ok) => {
      const check = () => (e.shadowRoot.querySelector(".mixing .total")?.textContent === "[8, 2]" ? ok() : setTimeout(check, 50));
      check();
    }));
    await page.screenshot({ path: join(SHOTS, "widget-views.png"), fullPage: true });
  });

  it("fires error events with details instead of throwing", async () => {
    const page = await open();
    await renderAll(page);
    await page.locator("#grid").evaluate((e) => e.setAttribute("mask", "diagonal"));
    await page.waitForFunction(() => globalThis.__events.some((e) => e.type === "error" && e.detail.attribute === "mask"));
    const error = await page.evaluate(() => globalThis.__events.find((e) => e.type === "error").detail);
    assert.equal(error.code, "attribute");
    assert.match(error.message, /^mask="diagonal": use none \| padding \| causal \| cross$/);
    const shown = () => page.locator("#grid").evaluate((e) => e.shadowRoot.querySelector(".error").textContent);
    assert.equal(await shown(), '속성 mask="diagonal"을(를) 읽을 수 없어 기본값으로 그립니다. 쓸 수 있는 값: none | padding | causal | cross.', "readers read it in the page's language");
    // several problems: one line each, each in the reader's language
    await page.locator("#grid").evaluate((e) => {
      e.setAttribute("layer", "99");
      e.setAttribute("view", "bogus");
    });
    await page.waitForFunction(() => globalThis.__events.some((e) => e.type === "error" && e.detail.attribute === "view"));
    assert.deepEqual((await shown()).split("\n").map((line) => line.split("=")[0]), ["속성 mask", "속성 layer", "속성 view"]);
    assert.match(await shown(), /쓸 수 있는 값: 0부터 세는 층 번호\./);
    await page.locator("#grid").evaluate((e) => {
      e.removeAttribute("layer");
      e.removeAttribute("view");
      e.setAttribute("mask", "causal");
      e.setAttribute("place", "cross");
    });
    await page.waitForFunction(() => globalThis.__events.some((e) => e.type === "error" && e.detail.attribute === "mask" && e.detail.value === "causal"));
    assert.match(await shown(), /^⚠? ?속성 mask="causal".*쓸 수 있는 값: cross \| none\.$/, "a mask the place cannot take is the author's problem, said as one");
    // another update says it once more, not twice: the box is rebuilt, not appended to
    const before = await rendered(page, "grid");
    await page.locator("#grid").evaluate((e) => e.setAttribute("scale", "false"));
    await page.waitForFunction(([n]) => globalThis.__events.filter((e) => e.id === "grid" && e.type === "render").length > n, [before]);
    assert.equal((await shown()).split("\n").length, 1, await shown());
    await page.locator("#grid").evaluate((e) => {
      e.removeAttribute("place");
      e.setAttribute("mask", "cross");
    });
    await page.locator("#grid").evaluate((e) => e.setAttribute("model", "/no/such/model/"));
    await page.waitForFunction(() => globalThis.__events.some((e) => e.type === "error" && e.detail.code === "fetch_status"));
    const visible = await page.locator("#grid").evaluate((e) => e.shadowRoot.querySelector(".error").textContent);
    assert.match(visible, /config\.json: .*\/no\/such\/model\/config\.json이\(가\) 404로 응답했습니다\. 폴더 주소를 확인하세요\./, "in the page's language, about the folder, not a Hub id");
    // the page switches its language: a widget without its own `lang` follows it
    await page.evaluate(() => (document.documentElement.lang = "en"));
    await page.waitForFunction(() => /answered 404\. Check the folder's address: the site has no such file in it\.$/.test(document.getElementById("grid").shadowRoot.querySelector(".error").textContent));
  });

  it("says plainly when the page's Trusted Types policy leaves headmap out", async () => {
    const strict = await serve(BLOG, 0, { mounts: { "/assets/headmap/": DIST }, headers: { "content-security-policy": CSP.replace("trusted-types headmap", "trusted-types 'none'") } });
    try {
      const context = await browser.newContext({ viewport: { width: 1000, height: 900 }, locale: "ko-KR" });
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${strict.address().port}/blog.html`);
      const widgets = page.locator("attention-heatmap");
      for (let i = 0; i < (await widgets.count()); i++) {
        await widgets.nth(i).scrollIntoViewIfNeeded();
        await page.waitForFunction((n) => !document.querySelectorAll("attention-heatmap")[n].shadowRoot.querySelector(".error")?.hidden, i);
        const [text, lang] = await widgets.nth(i).evaluate((e) => [e.shadowRoot.querySelector(".error").textContent, e.getAttribute("lang")]);
        const expected = lang === "en" ? /Content-Security-Policy does not allow the Trusted Types policy `headmap`: add it to the trusted-types directive/ : /트러스티드 타입 정책 ‘headmap’을 허용하지 않습니다: trusted-types 지시어에 headmap을 더하세요/;
        assert.match(text, expected, `widget ${i}: ${text}`);
      }
      await context.close();
    } finally {
      await new Promise((ok) => strict.close(ok));
    }
  });

  it("fits a phone, and a tap shows a read-out", async () => {
    const page = await open("blog.html", { width: 390, height: 844, touch: true });
    await renderAll(page);
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(scroll <= client, `the page is ${scroll} px wide at 390`);
    const widget = await page.locator("#causal").boundingBox();
    assert.ok(widget.x >= 0 && widget.x + widget.width <= 390);
    await page.locator("#causal").scrollIntoViewIfNeeded();
    const point = await page.locator("#causal").evaluate((e) => {
      const canvas = e.shadowRoot.querySelector("canvas.heatmap");
      const box = canvas.getBoundingClientRect();
      const probe = canvas.getContext("2d");
      return { x: box.left + box.width * 0.5, y: box.top + box.height * 0.6, ok: Boolean(probe) };
    });
    await page.touchscreen.tap(point.x, point.y);
    await page.waitForFunction(() => document.getElementById("causal").shadowRoot.querySelector(".readout").dataset.weight !== undefined);
    assert.match(await page.locator("#causal").evaluate((e) => e.shadowRoot.querySelector(".readout").textContent), /쿼리 .* → 키 .* · 가중치/);
    await page.screenshot({ path: join(SHOTS, "widget-phone-390.png"), fullPage: true });
  });

  it("draws the strongest line of a chosen token at the largest weight of its row", async () => {
    const page = await open();
    await renderAll(page);
    await page.locator("#lines").scrollIntoViewIfNeeded();
    // choose "it" (query 7) with the keyboard, as a reader without a mouse would
    await page.locator("#lines").evaluate((e) => e.shadowRoot.querySelector("canvas.lines").focus());
    for (let k = 0; k < 8; k++) await page.keyboard.press("ArrowDown");
    const strongest = await page.locator("#lines").evaluate((e) => JSON.parse(e.shadowRoot.querySelector("canvas.lines").dataset.strongest));
    assert.equal(strongest.query, 7);
    const doc = JSON.parse(await page.locator("#lines").evaluate((e) => e.toJSON()));
    const place = doc.rows[0].attention.encoder_self;
    assert.equal(place.queries[7], "it");
    let best = { weight: -1 };
    place.weights[0].forEach((head, h) => head[7].forEach((w, j) => w > best.weight && (best = { weight: w, head: h, key: j })));
    assert.equal(strongest.head, best.head);
    assert.equal(strongest.key, best.key);
    assert.ok(Math.abs(strongest.weight - best.weight) < 1e-6, `${strongest.weight} vs ${best.weight}`);
    assert.match(await page.locator("#lines").evaluate((e) => e.shadowRoot.querySelector(".readout").textContent), /^“it”: the strongest line runs from “it” to/);
    const dark = await page.locator("#lines").evaluate((e) => getComputedStyle(e.shadowRoot.querySelector(".frame")).backgroundColor);
    assert.equal(dark, "rgb(21, 24, 31)", "theme=dark");
  });

  it("saves the figure as PNG and SVG and the weights as JSON", async () => {
    const page = await open();
    // a widget with nothing drawn yet (never scrolled into view, here never in the page) answers
    // a save with an `error` event, never a throw
    const early = await page.evaluate(async () => {
      const e = document.createElement("attention-heatmap");
      const said = new Promise((ok) => e.addEventListener("error", (ev) => ok(ev.detail.code)));
      let threw = null;
      try {
        await e.save("png");
      } catch (x) {
        threw = String(x);
      }
      return { threw, code: await Promise.race([said, new Promise((ok) => setTimeout(() => ok("no error event"), 5000))]) };
    });
    assert.deepEqual(early, { threw: null, code: "nothing_drawn" });
    await renderAll(page);
    const saved = {};
    for (const format of ["png", "svg", "json"]) {
      const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#causal").evaluate((e, f) => e.shadowRoot.querySelector(`[data-export=${f}]`).click(), format)]);
      saved[format] = await import("node:fs/promises").then(async (fs) => fs.readFile(await download.path()));
    }
    assert.deepEqual([...saved.png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.ok(saved.svg.toString().startsWith("<svg") && saved.svg.toString().includes("동물이"));
    assert.equal(JSON.parse(saved.json.toString()).model_type, "toy");
  });

  it("opens the newer families from a folder on the blog's own host: sharded Llama, T5's cross-attention, GPT-Neo's local layers", async () => {
    const page = await open();
    await renderAll(page);
    const cases = [
      { id: "llama", attrs: { model: "/models/llama-sharded/", view: "lines", text: "the animal was tired" }, place: "decoder_self", architecture: "llama" },
      { id: "t5", attrs: { model: "/models/t5/", mask: "cross", text: "the animal", target: "das Tier" }, place: "cross", architecture: "t5" },
      { id: "neo", attrs: { model: "/models/gpt_neo/", view: "grid", text: "one two three four five six seven" }, place: "decoder_self", architecture: "gpt_neo" },
    ];
    await page.evaluate((list) => {
      for (const { id, attrs } of list) {
        const w = document.createElement("attention-heatmap");
        w.id = id;
        for (const [k, v] of Object.entries(attrs)) w.setAttribute(k, v);
        document.body.append(w);
      }
    }, cases);
    await renderAll(page);
    for (const c of cases) {
      const events = await page.evaluate((i) => globalThis.__events.filter((e) => e.id === i), c.id);
      assert.deepEqual(events.filter((e) => e.type === "error").map((e) => e.detail.message), [], c.id);
      const figure = events.find((e) => e.type === "render").detail;
      assert.equal(figure.model.architecture, c.architecture);
      assert.equal(figure.place, c.place, c.id);
    }
    const neo = await page.evaluate(() => globalThis.__events.find((e) => e.id === "neo" && e.type === "render").detail.model.places[0]);
    assert.ok(neo.windows.some((w) => w !== null), "GPT-Neo's local layers come with their window");
    for (const c of cases) await page.locator(`#${c.id}`).screenshot({ path: join(SHOTS, `widget-${c.id}.png`) });
    assert.deepEqual(page.consoleErrors, []);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
  });

  it(`downloads at most ${TOY_BUDGET_KIB} KiB gzipped for a toy widget, on a Korean page and on an English one`, async () => {
    // sizes only: the same build gives the same bytes (scripts/bench/widget-budget.mjs times it)
    for (const lang of ["ko", "en"]) {
      const { files, gz } = await toyDownload(DIST, lang);
      const list = files.map((f) => `${f.path} ${f.gz}`).join(", ");
      assert.ok(gz <= TOY_BUDGET_KIB * 1024, `${lang}: ${(gz / 1024).toFixed(1)} KiB gzipped, over the budget: ${list}`);
    }
  });

  it("shows what the author put inside to readers without JavaScript", async () => {
    const page = await open("blog.html", { javaScript: false });
    assert.ok(await page.locator("#causal table.fallback").isVisible());
  });

  it("works the same installed from the npm package", async () => {
    const pack = join(scratch, "pack");
    await mkdir(pack, { recursive: true });
    execFileSync("npm", ["pack", DIST, "--pack-destination", pack, "--silent"], { stdio: "pipe" });
    const tarball = join(pack, execFileSync("ls", [pack]).toString().trim());
    const site = join(scratch, "site");
    execFileSync("npm", ["install", "--prefix", site, "--no-audit", "--no-fund", "--offline", tarball], { stdio: "pipe" });
    await writeFile(
      join(site, "packed.html"),
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module" src="/packed/node_modules/headmap-widget/headmap.js"></script></head>
<body><attention-heatmap id="packed" model="small" text="Minsu gave Younghee a book." view="grid"></attention-heatmap></body></html>\n`,
    );
    const page = await open("packed/packed.html");
    await renderAll(page);
    assert.ok((await page.evaluate(() => globalThis.__events)).some((e) => e.id === "packed" && e.type === "load"));
    assert.deepEqual(page.consoleErrors, []);
  });
});
