// Real models in the explorer: the default MiniLM, folders from this computer as people have
// them, and model ids fetched from a stand-in for the Hugging Face Hub on the page's origin,
// kept in the Cache API. Failures are errors a reader can see, and keep the model shown.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile, mkdir, copyFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";

import { HATCH } from "../../www/js/render/heatmap.js";
import { FIXTURES, SHOTS, afterRender, cellColor, mockHub, openHarness, waitForRender } from "./harness.mjs";

const HATCHED = new Set([HATCH.base.join(), HATCH.stripe.join()]);
const isHatched = (colors) => colors.length > 0 && colors.every((c) => HATCHED.has(c));

let h;
let hub;
let scratch;
before(async () => {
  hub = mockHub();
  h = await openHarness({ routes: { [`${hub.path}/`]: hub.handler } });
  scratch = await mkdtemp(join(tmpdir(), "headmap-models-"));
});
after(async () => {
  await h?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** Waits for a real model (not the toy the page starts with) to load, or for an error. */
async function modelLoaded(page) {
  await page.waitForFunction(() => (globalThis.__headmap?.model && globalThis.__headmap.model.architecture !== "toy") || globalThis.__headmap?.errors.length, null, { timeout: 60000 });
  const { model, errors } = await page.evaluate(() => globalThis.__headmap);
  assert.deepEqual(errors, []);
  return model;
}

/** The explorer on the untrained toy, so the model a test loads is the only real one. */
async function toyPage() {
  const page = await h.page();
  await page.goto(`${h.base}?model=toy`);
  await waitForRender(page);
  return page;
}

/** A copy of fixture `name`'s model files in a folder laid out by `layout` (path → source file or text). */
async function folder(name, layout) {
  const dir = await mkdtemp(join(scratch, `${name}-`));
  for (const [path, source] of Object.entries(layout)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    if (source.startsWith("@")) await copyFile(join(FIXTURES, name, source.slice(1)), join(dir, path));
    else await writeFile(join(dir, path), source);
  }
  return dir;
}

describe("real models", () => {
  it("shows MiniLM's 6 x 12 heads on a padded batch, with what its vocabulary cannot read said plainly", async () => {
    const page = await h.page();
    await page.goto(`${h.base}?model=minilm`);
    const model = await modelLoaded(page);
    assert.equal(model.architecture, "bert");
    await page.waitForFunction(() => globalThis.__headmap.meta?.heads === 12);
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.equal(meta.layers, 6);
    assert.equal(meta.keys[0], "[CLS]");
    assert.equal(meta.batch, 2);
    assert.equal(await page.locator("#grid button.thumb").count(), 72);
    // Korean through an English uncased vocabulary: jamo as numbered parts of their syllable, [UNK] as [UNK]
    assert.deepEqual(meta.queries.slice(1, 4), ["동₁", "동₂", "동₃"]);
    assert.ok(meta.queries.includes("[UNK]"));
    assert.ok(meta.queries.every((t) => !/^[\u1100-\u11ff]+$/.test(t)), "no lone jamo");
    assert.ok(await page.locator("#coverage").isVisible());
    assert.match(await page.locator("#coverage").textContent(), /does not cover this script/);
    assert.match(await page.locator("#model-status").textContent(), /all-MiniLM-L6-v2 is loaded from this site \(bert, up to 512 tokens\)\. It was named by the link you opened\./);
    assert.equal(await page.locator("input[name=place][value=cross]").isDisabled(), true, "BERT has no decoder");
    await page.screenshot({ path: join(SHOTS, "minilm.png"), fullPage: true });

    await afterRender(page, () => page.locator("#rows button").nth(1).click());
    const row = await page.evaluate(() => globalThis.__headmap.meta);
    const padColumn = row.keyValid.indexOf(false);
    assert.ok(padColumn > 0, "the shorter sentence is padded");
    assert.ok(isHatched(await cellColor(page, 1, padColumn)), "its PAD keys are hatched");

    // English: words and ## pieces, nothing unreadable
    await afterRender(page, () => page.locator("#text").fill("The animal was unbelievably tired."));
    const english = await page.evaluate(() => globalThis.__headmap.meta.queries);
    assert.ok(english.some((t) => t.startsWith("##")), `continuation pieces are marked: ${english}`);
    assert.ok(await page.locator("#coverage").isHidden());

    // What-if: BERT under a causal mask it never saw, labelled as such.
    await page.locator("#settings").evaluate((d) => (d.open = true));
    await afterRender(page, () => page.locator("input[name=mask][value=causal]").check());
    assert.equal((await page.evaluate(() => globalThis.__headmap.meta)).mask, "causal");
    assert.ok(isHatched(await cellColor(page, 1, 3)), "the future is hatched");
    assert.match(await page.locator("#what-if").textContent(), /^What-if: all-MiniLM-L6-v2 was trained with the padding mask here; this runs it with the causal mask instead/);
    assert.match(await page.locator("label.option", { hasText: "Causal mask" }).textContent(), /\(what-if\)/);
    await page.screenshot({ path: join(SHOTS, "minilm-what-if-causal.png"), fullPage: true });
    await page.waitForFunction(() => location.search.includes("mask=causal"));
    const shared = await h.page();
    await shared.goto(page.url());
    await modelLoaded(shared);
    await shared.waitForFunction(() => globalThis.__headmap.meta?.heads === 12);
    assert.equal((await shared.evaluate(() => globalThis.__headmap.meta)).mask, "causal", "a shared what-if view stays what-if");
    assert.deepEqual(page.consoleErrors, []);
  });

  it("loads a model folder as it comes from the Hub, nested config files and all", async () => {
    const page = await toyPage();
    await page.locator("#model").selectOption("local");
    const dir = await folder("bert", {
      "tiny-bert/config.json": "@config.json",
      "tiny-bert/model.safetensors": "@model.safetensors",
      "tiny-bert/tokenizer.json": "@tokenizer.json",
      "tiny-bert/1_Pooling/config.json": JSON.stringify({ word_embedding_dimension: 32, pooling_mode_mean_tokens: true }),
      "tiny-bert/onnx/config.json": "{}",
      "tiny-bert/README.md": "# a sentence-transformers checkout",
    });
    await page.locator("#local-folder").setInputFiles(join(dir, "tiny-bert"));
    const model = await modelLoaded(page);
    assert.equal(model.architecture, "bert", "the root config.json, not 1_Pooling's");
    await page.waitForFunction(() => globalThis.__headmap.meta?.keys[0] === "[CLS]");
    assert.match(await page.locator("#model-status").textContent(), /^tiny-bert is loaded from this computer/);
    await page.waitForFunction(() => !new URLSearchParams(location.search).has("model"));
    assert.equal(new URL(page.url()).searchParams.get("model"), null, "a local folder is not put in the link");
  });

  it("loads picked files of a GPT-2", async () => {
    const page = await toyPage();
    await page.locator("#model").selectOption("local");
    const dir = join(FIXTURES, "gpt2");
    await page.locator("#local-files").setInputFiles(["config.json", "model.safetensors", "tokenizer.json"].map((f) => join(dir, f)));
    const model = await modelLoaded(page);
    assert.equal(model.architecture, "gpt2");
    await page.waitForFunction(() => globalThis.__headmap.meta?.mask === "causal");
    assert.ok(isHatched(await cellColor(page, 0, 1)), "GPT-2's future is hatched");
    await page.screenshot({ path: join(SHOTS, "local-gpt2.png"), fullPage: true });
  });

  it("says which files a chosen folder lacks, as an error, and keeps the model shown", async () => {
    const page = await toyPage();
    await page.locator("#model").selectOption("local");
    await page.locator("#local-files").setInputFiles([join(FIXTURES, "bert", "config.json")]);
    await page.locator("#model-error").waitFor({ state: "visible" });
    assert.equal(
      await page.locator("#model-error").textContent(),
      "The chosen files: missing model.safetensors, tokenizer.json (or source.spm + vocab.json). Choose the model's whole folder, or all of its files. The model shown stays Toy model (untrained).",
    );
    assert.equal(await page.locator("#model-error").getAttribute("role"), "alert");
    assert.equal(await page.locator("#model").inputValue(), "toy");
    assert.equal(await page.locator("#layer option").count(), 2, "the toy's menus stay");
  });

  it("refuses an impossible config clearly, in both languages, and keeps the model shown", async () => {
    const page = await toyPage();
    const config = JSON.parse(await readFile(join(FIXTURES, "bert", "config.json"), "utf8"));
    for (const [change, message] of [
      [{ num_hidden_layers: 0 }, "config.json: `num_hidden_layers` = 0 is impossible: it must be at least 1"],
      [{ num_attention_heads: 5 }, "5 heads do not divide d_model = 32"],
      [{ vocab_size: 10 }, "config.json: the tokenizer's vocabulary has"],
      [{ hidden_size: "wide" }, "config.json: `hidden_size` has the wrong type: expected a whole number"],
    ]) {
      const dir = await folder("bert", {
        "config.json": JSON.stringify({ ...config, ...change }),
        "model.safetensors": "@model.safetensors",
        "tokenizer.json": "@tokenizer.json",
      });
      await page.locator("#model").selectOption("local");
      await page.locator("#local-folder").setInputFiles(dir);
      await page.waitForFunction((m) => document.getElementById("model-error").textContent.includes(m), message);
      assert.equal((await page.evaluate(() => globalThis.__headmap.meta)).heads, 4, "still the toy");
      assert.equal(await page.locator("#head option").count(), 4, "no empty menus");
    }
    await page.locator("#lang").click();
    assert.match(await page.locator("#model-error").textContent(), /^config\.json: ‘hidden_size’의 형식이 틀렸습니다: 정수이어야 합니다\./);
    assert.doesNotMatch(await page.locator("#model-error").textContent(), /expected struct|untagged|invalid type/);
    await page.screenshot({ path: join(SHOTS, "impossible-config-ko.png"), fullPage: true });
  });

  it("fetches a Hub model id with progress, shows all three places, and keeps it in the cache", async () => {
    const page = await h.page();
    await page.goto(`${h.base}?model=toy&hub=${hub.path}`);
    await waitForRender(page);
    await page.locator("#model").selectOption("hub");
    await page.locator("#hub-id").fill("headmap-tests/tiny-marian");
    await page.locator("#hub-load").click();
    const model = await modelLoaded(page);
    assert.equal(model.architecture, "marian");
    assert.deepEqual(model.places.map((p) => p.place), ["encoder_self", "decoder_self", "cross"]);
    assert.ok(hub.requests.includes("/headmap-tests/tiny-marian/resolve/main/source.spm"), "fell back to the .spm tokenizer");
    assert.ok((await page.evaluate(() => globalThis.__headmap.progressEvents)) >= 4, "progress was reported per file");
    await page.locator("#settings").evaluate((d) => (d.open = true));
    await afterRender(page, () => page.locator("input[name=place][value=cross]").check());
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.notEqual(meta.tq, meta.tk, "cross-attention is Tq x Tk");
    assert.equal(meta.queries[0], "<pad>", "the decoder starts from its start token");
    await page.waitForFunction(() => /model=hub%3Aheadmap-tests%2Ftiny-marian/.test(location.search));
    await page.screenshot({ path: join(SHOTS, "hub-marian-cross.png"), fullPage: true });

    // The model's own greedy output as the target.
    const before = await page.locator("#target").inputValue();
    await page.locator("#generate").click();
    await page.waitForFunction((old) => document.getElementById("target").value !== old, before);
    assert.ok(!(await page.locator("#target").inputValue()).includes("</s>"));
    await page.waitForFunction(() => globalThis.__headmap.state.target === document.getElementById("target").value);

    // Reloading the shared link loads the model again, from the cache this time.
    const asked = hub.requests.length;
    await page.reload();
    await modelLoaded(page);
    await page.waitForFunction(() => globalThis.__headmap.meta?.place === "cross");
    assert.equal(hub.requests.length, asked, "no request reached the Hub the second time");
    assert.match(await page.locator("#model-status").textContent(), /named by the link you opened/);
  });

  it("refuses ids that are not model ids, explains a missing repository, and keeps the model", async () => {
    const page = await h.page();
    await page.goto(`${h.base}?model=toy&hub=${hub.path}`);
    await waitForRender(page);
    await page.locator("#model").selectOption("hub");
    await page.locator("#hub-id").fill("../../etc/passwd");
    await page.locator("#hub-load").click();
    assert.match(await page.locator("#model-error").textContent(), /not a model id/);
    await page.locator("#hub-id").fill("headmap-tests/tiny-nothing");
    await page.locator("#hub-load").click();
    await page.waitForFunction(() => /answered 404/.test(document.getElementById("model-error").textContent));
    assert.match(await page.locator("#model-error").textContent(), /^config\.json: .* answered 404\. Check the model id: the Hub has no such file for it\. The model shown stays/);
    assert.equal(await page.locator("#model").inputValue(), "hub", "the id stays in its field, to correct it");
    assert.equal(await page.locator("#hub-id").inputValue(), "headmap-tests/tiny-nothing");
    assert.equal((await page.evaluate(() => globalThis.__headmap.meta)).heads, 4, "the toy is still shown");
  });

  it("says so when a link's model cannot be loaded, shows the default model, and keeps the link", async () => {
    const page = await h.page();
    // the link's heads off name heads of the model that failed: none is off in the fallback
    await page.goto(`${h.base}?model=hub:headmap-tests/tiny-nothing&hub=${hub.path}&off=0.1&layer=2&head=2`);
    await page.waitForFunction(() => globalThis.__headmap?.ready, null, { timeout: 60000 });
    await page.locator("#model-error").waitFor({ state: "visible" });
    assert.match(await page.locator("#model-error").textContent(), /answered 404\. .* The model shown stays headmap-tiny-ko-en\./);
    assert.equal((await page.evaluate(() => globalThis.__headmap.model)).architecture, "marian");
    await page.waitForTimeout(300);
    assert.match(page.url(), /model=hub%3Aheadmap-tests%2Ftiny-nothing/, "the link still names its model");
    assert.equal(await page.locator("#hub-id").inputValue(), "headmap-tests/tiny-nothing");
    assert.equal(await page.locator("#off").inputValue(), "", "no head of the fallback is off");
    assert.doesNotMatch(page.url(), /[?&]off=/);
    assert.equal(await page.locator("#grid .thumb.off").count(), 0);
  });

  it("reads the newer families from the Hub: a sharded Llama's shared K/V heads and rotated Q and K, Mistral's windows, T5's position bias", async () => {
    const page = await h.page();
    await page.goto(`${h.base}?model=hub:headmap-tests/tiny-llama-sharded&hub=${hub.path}`);
    const llama = await modelLoaded(page);
    await waitForRender(page);
    assert.equal(llama.architecture, "llama");
    for (const n of [1, 2, 3, 4]) assert.ok(hub.requests.includes(`/headmap-tests/tiny-llama-sharded/resolve/main/model-0000${n}-of-00004.safetensors`), `shard ${n} fetched`);
    assert.ok(hub.requests.includes("/headmap-tests/tiny-llama-sharded/resolve/main/model.safetensors.index.json"));
    assert.match(await page.locator("#grid-note").textContent(), /4 query heads share 2 key\/value heads, 2 to each/);
    assert.match(await page.locator("#grid button.thumb").nth(3).getAttribute("aria-label"), /head 4 · K\/V head 2/);
    await page.locator("#steps figure[data-step=output]").waitFor();
    const steps = await page.locator("#steps figure").evaluateAll((fs) => fs.map((f) => f.dataset.step));
    assert.deepEqual(steps, ["xQ", "q", "k", "v", "qRotated", "kRotated", "scores", "scaled", "masked", "weights", "output"]);
    assert.match(await page.locator("#steps .step-note").last().textContent(), /head 1 reads the keys and values of K\/V head 1/);
    await page.screenshot({ path: join(SHOTS, "hub-llama-sharded.png"), fullPage: true });

    await page.goto(`${h.base}?model=hub:headmap-tests/tiny-mistral&hub=${hub.path}&lang=ko`);
    await modelLoaded(page);
    await waitForRender(page);
    assert.match(await page.locator("#grid-note").textContent(), /1, 2층은 지역 어텐션입니다: 쿼리는 자신을 포함해 최근 토큰 5개만/);

    await page.goto(`${h.base}?model=hub:headmap-tests/tiny-t5&hub=${hub.path}`);
    const t5 = await modelLoaded(page);
    await waitForRender(page);
    assert.equal(t5.architecture, "t5");
    await page.locator("#steps figure[data-step=output]").waitFor();
    const t5Steps = await page.locator("#steps figure").evaluateAll((fs) => fs.map((f) => f.dataset.step));
    assert.deepEqual(t5Steps, ["xQ", "q", "k", "v", "scores", "scaled", "positionBias", "biased", "masked", "weights", "output"]);
    assert.equal(await page.locator("#steps figure[data-step=scaled] strong").textContent(), "not scaled", "T5 does not divide by √d_k");
    assert.ok(await page.locator("#grid-note").isHidden(), "every T5 head has its own K and V, and no layer is local");
  });

  it("never fetches from a host a link names", async () => {
    const asked = [];
    const evil = createServer((req, res) => {
      asked.push(req.url);
      res.writeHead(200, { "access-control-allow-origin": "*" });
      res.end("{}");
    });
    await new Promise((ok) => evil.listen(0, "127.0.0.1", ok));
    const host = `http://127.0.0.1:${evil.address().port}`;
    try {
      for (const query of [
        `?model=hub:headmap-tests/tiny-bert&hub=${encodeURIComponent(host)}`,
        `?model=hub:headmap-tests/tiny-bert&hub=${encodeURIComponent(`//127.0.0.1:${evil.address().port}`)}`,
        `?model=hub:..%2F..%2F${encodeURIComponent(host)}`,
      ]) {
        const page = await h.page();
        await page.goto(h.base + query);
        // a refused or failed model gives way to the default one, drawn: then the state is known
        await page.waitForFunction(() => globalThis.__headmap?.ready, null, { timeout: 60000 });
        assert.equal(await page.evaluate(() => globalThis.__headmap.state.hub), "", `${query}: the hub stays the Hub`);
      }
      assert.deepEqual(asked, [], "nothing was asked of the host the links named");
    } finally {
      evil.close();
    }
  });
});
