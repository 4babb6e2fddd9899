// Attention computed elsewhere, drawn by the widget on a strict-CSP blog (tests/widget/
// files.html): the command line's JSON and safetensors of the trained model draw exactly the
// pixels of the same run computed in the browser; the views that need only weights draw from
// the file, the ones that need the model say so; every bad file is refused by name and the
// figure before it stays. Fixtures: tests/fixtures/attention/ (scripts/dev/make_attention_fixtures.sh).

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { deflateSync } from "node:zlib";
import { join } from "node:path";
import { ROOT, SHOTS, afterRender, openBlog, openExplorer, openHarness, renders } from "./harness.mjs";

const FIXTURES = join(ROOT, "tests", "fixtures", "attention");

/** A digest of widget `id`'s heatmap pixels (canvas.heatmap, or the view's own canvas). */
const pixels = (page, id, selector = "canvas.heatmap") =>
  page.evaluate(async ([id, selector]) => {
    const canvas = document.getElementById(id).shadowRoot.querySelector(selector);
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    const digest = await crypto.subtle.digest("SHA-256", data);
    return { size: `${canvas.width}x${canvas.height}`, digest: [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("") };
  }, [id, selector]);

const waitRenders = (page, id, n = 1) => page.waitForFunction(([i, k]) => globalThis.__events.filter((e) => e.id === i && e.type === "render").length >= k, [id, n], { timeout: 60000 });
const waitError = (page, id, n = 1) => page.waitForFunction(([i, k]) => globalThis.__events.filter((e) => e.id === i && e.type === "error").length >= k, [id, n], { timeout: 60000 });
const lastError = (page, id) => page.evaluate((i) => globalThis.__events.filter((e) => e.id === i && e.type === "error").at(-1).detail, id);
const errorBox = (page, id) => page.evaluate((i) => document.getElementById(i).shadowRoot.querySelector(".error")?.textContent ?? "", id);

describe("weights from a file, in the widget", () => {
  let blog;
  let page;
  before(async () => {
    blog = await openBlog({ "/fixtures/": FIXTURES });
    page = await blog.open("files.html", { width: 1000, height: 900 });
    for (const id of ["computed", "json", "f32", "f16"]) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRenders(page, id);
    }
  });
  after(() => blog?.close());

  it("draws the command line's JSON and f32 safetensors exactly as the run computed in the browser", async () => {
    const computed = await pixels(page, "computed");
    assert.deepEqual(await pixels(page, "json"), computed, "the JSON file");
    assert.deepEqual(await pixels(page, "f32"), computed, "the f32 safetensors file");
    // f16 rounds each weight by at most 2⁻¹¹ of it: a few cells may fall in the next colour
    const differ = await page.evaluate(() => {
      const data = (id) => {
        const c = document.getElementById(id).shadowRoot.querySelector("canvas.heatmap");
        return c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      };
      const [a, b] = [data("computed"), data("f16")];
      let worst = 0;
      for (let k = 0; k < a.length; k++) worst = Math.max(worst, Math.abs(a[k] - b[k]));
      return worst;
    });
    assert.ok(differ <= 8, `f16 changes a channel by ${differ} at most`);
    const title = await page.evaluate(() => document.getElementById("json").shadowRoot.querySelector(".title").textContent);
    assert.match(title, /bart|marian/, "the title names the file's model type");
  });

  it("draws the grid, lines, atlas and rollout from a file, and says the steps need the model", async () => {
    for (const id of ["grid", "lines", "atlas", "rollout"]) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await waitRenders(page, id);
    }
    const atlas = await page.evaluate(() => document.getElementById("atlas").shadowRoot.querySelectorAll("canvas").length);
    assert.ok(atlas >= 1, "the atlas draws its scores from the file's weights");
    await page.locator("#steps").scrollIntoViewIfNeeded();
    await waitError(page, "steps");
    assert.equal((await lastError(page, "steps")).code, "needs_model");
    assert.match(await errorBox(page, "steps"), /모델/, "said in Korean, the page's language");
    // heads off need the model too: refused, not drawn as if a head were off in weights that have it on
    await page.locator("#ablated").scrollIntoViewIfNeeded();
    await waitError(page, "ablated");
    assert.equal((await lastError(page, "ablated")).code, "file_heads_off");
    assert.match(await errorBox(page, "ablated"), /헤드는 끌 수 없습니다/);
    assert.equal(await page.evaluate(() => document.getElementById("ablated").shadowRoot.querySelectorAll(".thumb.off").length), 0);
    await page.locator("#missing").scrollIntoViewIfNeeded();
    await waitError(page, "missing");
    const missing = await lastError(page, "missing");
    assert.equal(missing.code, "src_status");
  });

  it("refuses every bad file by name and keeps the figure it had", async () => {
    const id = "scripted";
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await waitRenders(page, id); // the trained model's default sentence, first
    const doc = JSON.parse(readFileSync(join(FIXTURES, "tiny-ko-en.json"), "utf8"));
    const drawn = await renders(page, id);
    await page.evaluate(([i, d]) => {
      document.getElementById(i).data = d;
    }, [id, doc]);
    await waitRenders(page, id, drawn + 1);
    const good = await pixels(page, id);
    const st = [...readFileSync(join(FIXTURES, "tiny-ko-en.safetensors"))];
    const place = doc.rows[0].attention.encoder_self;
    const bad = (change) => {
      const copy = structuredClone(doc);
      change(copy.rows[0].attention.encoder_self);
      return copy;
    };
    const cases = [
      ["row sum", bad((p) => (p.weights[0][0][1][0] += 0.01)), "row_sum"],
      ["NaN", bad((p) => (p.weights[1][2][0][3] = null)), "non_finite_weight"],
      ["negative", bad((p) => (p.weights[0][0][0][0] = -0.2)), "weight_out_of_range"],
      ["a token too many", bad((p) => (p.queries.push("더"), p.keys.push("더"))), "tokens_mismatch"],
      ["queries without their keys", bad((p) => p.queries.push("더")), "not_square"],
      ["a head missing", bad((p) => p.weights[1].pop()), "wrong_shape"],
      ["not attention", { hello: "world" }, "missing_field"],
      ["truncated safetensors", new Uint8Array(st.slice(0, Math.floor(st.length / 2))), "not_safetensors"],
      ["text", "어텐션이 아닌 글", "not_attention"],
    ];
    assert.ok(place.weights.length >= 2 && place.weights[1].length >= 3);
    let errors = (await page.evaluate((i) => globalThis.__events.filter((e) => e.id === i && e.type === "error").length, id));
    for (const [name, data, problem] of cases) {
      await page.evaluate(([i, d, isBytes]) => {
        document.getElementById(i).data = isBytes ? new Uint8Array(d) : d;
      }, [id, data instanceof Uint8Array ? [...data] : data, data instanceof Uint8Array]);
      await waitError(page, id, ++errors);
      const e = await lastError(page, id);
      assert.equal(e.code, "file", `${name}: ${e.message}`);
      assert.equal(e.details.problem.problem, problem, `${name}: ${e.message}`);
      const text = await errorBox(page, id);
      assert.ok(text.length > 10 && !/undefined|\{/.test(text), `${name}: ${text}`);
      assert.deepEqual(await pixels(page, id), good, `${name}: the figure before it stays`);
    }
    // a deflated file that would unfold past the page's limit stops at the limit
    const bomb = deflateSync(Buffer.alloc(520 * 2 ** 20), { level: 9 }).toString("base64");
    await page.evaluate(([i, b]) => {
      const script = document.createElement("script");
      script.type = "application/vnd.headmap+safetensors";
      script.dataset.encoding = "deflate;base64";
      // left out of the document: a script element put there by script meets Trusted Types
      script.append(document.createTextNode(b));
      document.getElementById(i).data = script;
    }, [id, bomb]);
    await waitError(page, id, ++errors);
    const e = await lastError(page, id);
    assert.equal(e.details.problem.problem, "too_large", e.message);
    assert.deepEqual(await pixels(page, id), good, "the figure stays after the bomb");
  });

  it("keeps the blog's strict CSP, and takes screenshots at 390 and 1280 px", async () => {
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), []);
    const errors = page.consoleErrors.filter((m) => !/404|Failed to load resource/.test(m));
    assert.deepEqual(errors, []);
    for (const [width, locale, lang] of [[390, "ko-KR", "ko"], [1280, "en-US", "en"]]) {
      const p = await blog.open("files.html", { width, height: 900, locale });
      if (lang === "en") await p.evaluate(() => document.querySelectorAll("attention-heatmap").forEach((e) => e.setAttribute("lang", "en")));
      for (const id of ["json", "lines"]) {
        await p.locator(`#${id}`).scrollIntoViewIfNeeded();
        await waitRenders(p, id, 1);
        await p.locator(`#${id}`).screenshot({ path: join(SHOTS, `file-${id}-${width}-${lang}.png`) });
      }
      await p.locator("#steps").scrollIntoViewIfNeeded();
      await waitError(p, "steps");
      await p.locator("#steps").screenshot({ path: join(SHOTS, `file-steps-${width}-${lang}.png`) });
      await p.context().close();
    }
  });
});

describe("weights from a file, in the explorer", () => {
  let h;
  before(async () => {
    h = await openHarness();
  });
  after(() => h?.close());

  it("opens a file from disk, draws it, refuses a bad one by name and keeps what it shows", async () => {
    const page = await openExplorer(h);
    await page.selectOption("#model", "file");
    assert.equal(await page.isVisible("#file-field"), true, "the file chooser shows");
    await afterRender(page, () => page.setInputFiles("#attention-file", join(FIXTURES, "tiny-ko-en.safetensors")));
    assert.match(await page.textContent("#model-status"), /tiny-ko-en\.safetensors.*marian/);
    assert.equal(await page.evaluate(() => document.getElementById("text").readOnly), true);
    assert.match(await page.inputValue("#text"), /^동물 ##이 길/);
    const before = await page.evaluate(() => document.getElementById("heatmap").toDataURL());
    // a bad file: refused by name, in the page's language, and the figure stays
    const bad = join(tmpdir(), "headmap-bad-attention.json");
    const doc = JSON.parse(readFileSync(join(FIXTURES, "tiny-ko-en.json"), "utf8"));
    doc.rows[0].attention.encoder_self.weights[0][1][2][3] += 0.5;
    writeFileSync(bad, JSON.stringify(doc));
    const errors = await page.evaluate(() => globalThis.__headmap.errors.length);
    await page.setInputFiles("#attention-file", bad);
    await page.waitForFunction((n) => globalThis.__headmap.errors.length > n, errors);
    const said = await page.textContent("#model-error");
    assert.match(said, /headmap-bad-attention\.json: `rows\[0\]\.attention\.encoder_self`: the weights of layer 0, head 1, query 2 sum to 1\.5/);
    assert.equal(await page.evaluate(() => document.getElementById("heatmap").toDataURL()), before, "the figure stays");
    await page.screenshot({ path: join(SHOTS, "file-explorer-1280-en.png"), fullPage: false });
    // a link cannot carry the file: it says to choose it again
    const again = await openExplorer(h, "?model=file&lang=ko");
    assert.match(await again.textContent("#model-error"), /파일을 다시/);
    assert.equal(await again.isVisible("#file-field"), true);
    await again.context().close();
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  it("names a file's batch rows by their tokens, and a row's tab shows its tokens", async () => {
    const page = await openExplorer(h);
    await page.selectOption("#model", "file");
    await afterRender(page, () => page.setInputFiles("#attention-file", join(FIXTURES, "bert-two-rows.safetensors")));
    assert.deepEqual(await page.locator("#rows button").allTextContents(), ["Sentence 1 · [CLS] a b c [SEP]", "Sentence 2 · [CLS] d e [SEP]"]);
    await afterRender(page, () => page.locator("#rows button").nth(1).click());
    assert.equal(await page.inputValue("#text"), "[CLS] d e [SEP]");
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });

  it("marks no head off in a file's weights, and says why when heads are typed", async () => {
    for (const [lang, locale, said] of [["en", "en-US", /^Weights read from a file are drawn as they were saved/], ["ko", "ko-KR", /^파일에서 읽은 가중치는 저장된 그대로/]]) {
      const page = await openExplorer(h, `?model=induction&off=0.1,1.0&lang=${lang}`, { locale, width: 390, height: 844, touch: true });
      assert.equal(await page.locator("#grid .thumb.off").count(), 2, "the model's run marks its heads off");
      await page.selectOption("#model", "file");
      await afterRender(page, () => page.setInputFiles("#attention-file", join(FIXTURES, "bert-two-rows.safetensors")));
      // the model's heads off name other heads in the file, so they go with the model
      assert.equal(await page.inputValue("#off"), "");
      assert.ok(await page.locator("#off-note").isHidden(), "no heads off, no note");
      assert.equal(await page.locator("#grid .thumb.off").count(), 0, "no head marked off in the file's weights");
      await page.locator("#off").fill("0.1");
      await page.evaluate(() => (globalThis.__headmap.find = null)); // the map's next drawing, not the last
      await afterRender(page, () => page.locator("#off").press("Enter"));
      await page.locator("#off-note").waitFor({ state: "visible" });
      assert.equal(await page.locator("#grid .thumb.off").count(), 0, "a head typed is not marked off either");
      await page.waitForFunction(() => globalThis.__headmap.find);
      assert.deepEqual(await page.evaluate(() => globalThis.__headmap.find.off), [], "nor crossed out in the find-heads map");
      assert.ok(await page.locator("#off-this").isHidden(), "no button turns the head shown off");
      assert.match(await page.locator("#off-note").textContent(), said);
      assert.equal(await page.locator("#off").getAttribute("aria-invalid"), "false");
      for (const label of await page.locator(".off-tap").all()) assert.ok(await label.isHidden(), "no tap turns a file's head off");
      if (lang === "ko") await page.locator("#off-note").screenshot({ path: join(SHOTS, "file-off-note-390-ko.png") });
      assert.deepEqual(page.consoleErrors, []);
      await page.context().close();
    }
  });


  it("reads on a phone in Korean", async () => {
    const page = await openExplorer(h, "?lang=ko", { width: 390, height: 844, locale: "ko-KR", touch: true });
    await page.selectOption("#model", "file");
    await afterRender(page, () => page.setInputFiles("#attention-file", join(FIXTURES, "tiny-ko-en.json")));
    assert.match(await page.textContent("#model-status"), /파일에서 읽은/);
    const scroll = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(scroll <= 0, `no sideways scroll (${scroll} px)`);
    await page.screenshot({ path: join(SHOTS, "file-explorer-390-ko.png"), fullPage: false });
    await page.locator("#heatmap").screenshot({ path: join(SHOTS, "file-explorer-heatmap-390-ko.png") });
    await page.context().close();
  });
});
