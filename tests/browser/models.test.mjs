// Real models in the explorer: the default MiniLM, a local folder, and a model id fetched
// from a mock of the Hugging Face Hub (same URL layout, on 127.0.0.1), kept in the Cache API.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";

import { HATCH } from "../../www/js/render/heatmap.js";
import { ROOT, SHOTS, afterRender, cellColor, openHarness, waitForRender } from "./harness.mjs";

const FIXTURES = join(ROOT, "tests", "fixtures", "hf");
const HATCHED = new Set([HATCH.base.join(), HATCH.stripe.join()]);
const isHatched = (colors) => colors.length > 0 && colors.every((c) => HATCHED.has(c));

/** A stand-in for the Hub: /headmap-tests/tiny-{name}/resolve/main/{file} → tests/fixtures/hf/{name}/{file}. */
function mockHub() {
  const requests = [];
  const server = createServer(async (req, res) => {
    requests.push(req.url);
    const m = req.url.match(/^\/headmap-tests\/tiny-(\w+)\/resolve\/main\/([\w.]+)$/);
    const headers = { "access-control-allow-origin": "*" };
    try {
      if (!m || m[2].startsWith("reference")) throw new Error("no such file");
      const body = await readFile(join(FIXTURES, m[1], m[2]));
      res.writeHead(200, { ...headers, "content-type": "application/octet-stream", "content-length": body.length });
      res.end(body);
    } catch {
      res.writeHead(404, headers);
      res.end("Entry not found");
    }
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok({ server, requests, url: `http://127.0.0.1:${server.address().port}` })));
}

let h;
let hub;
before(async () => {
  h = await openHarness();
  hub = await mockHub();
});
after(async () => {
  await h?.close();
  hub?.server.close();
});

async function modelLoaded(page) {
  await page.waitForFunction(() => globalThis.__headmap?.model || globalThis.__headmap?.errors.length, null, { timeout: 60000 });
  const { model, errors } = await page.evaluate(() => globalThis.__headmap);
  assert.deepEqual(errors, []);
  return model;
}

describe("real models", () => {
  it("shows MiniLM's 6 x 12 heads on a padded batch, with only the mask it was trained with", async () => {
    const page = await h.page();
    await page.goto(`${h.base}?model=minilm`);
    const model = await modelLoaded(page);
    assert.equal(model.modelType, "bert");
    await page.waitForFunction(() => globalThis.__headmap.meta?.heads === 12);
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.equal(meta.layers, 6);
    assert.equal(meta.keys[0][0], "[CLS]");
    assert.equal(meta.batch, 2);
    assert.equal(await page.locator("#grid button.thumb").count(), 72);
    const padColumn = meta.keyValid[1].indexOf(false);
    assert.ok(padColumn > 0, "the shorter sentence is padded");
    assert.ok(isHatched(await cellColor(page, 1, padColumn)), "its PAD keys are hatched");
    assert.equal(await page.locator("input[name=mask][value=cross]").isDisabled(), true, "BERT has no decoder");
    assert.match(await page.locator("#notice").textContent(), /Real model/);
    assert.equal(await page.locator("#what-if").isHidden(), true);
    await page.screenshot({ path: join(SHOTS, "minilm.png"), fullPage: true });

    // What-if: BERT under a causal mask it never saw, labelled as such.
    await afterRender(page, () => page.locator("input[name=mask][value=causal]").check());
    assert.equal((await page.evaluate(() => globalThis.__headmap.meta)).mask, "causal");
    assert.ok(isHatched(await cellColor(page, 1, 3)), "the future is hatched");
    assert.match(await page.locator("#what-if").textContent(), /What-if: bert was trained with “Encoder self-attention”/);
    assert.match(await page.locator("label.mask-option", { hasText: "Decoder masked" }).textContent(), /\(what-if\)/);
    await page.screenshot({ path: join(SHOTS, "minilm-what-if-causal.png"), fullPage: true });
    const shared = await h.page();
    await shared.goto(page.url());
    await modelLoaded(shared);
    await shared.waitForFunction(() => globalThis.__headmap.meta?.heads === 12);
    assert.equal((await shared.evaluate(() => globalThis.__headmap.meta)).mask, "causal", "a shared what-if view stays what-if");
    assert.deepEqual(page.consoleErrors, []);
  });

  it("loads a model folder from this computer", async () => {
    const page = await h.page();
    await page.goto(h.base);
    await waitForRender(page);
    await page.locator("#model").selectOption("local");
    const dir = join(FIXTURES, "gpt2");
    await page.locator("#local-files").setInputFiles(["config.json", "model.safetensors", "tokenizer.json"].map((f) => join(dir, f)));
    const model = await modelLoaded(page);
    assert.equal(model.modelType, "gpt2");
    await page.waitForFunction(() => globalThis.__headmap.meta?.mask === "causal");
    assert.ok(isHatched(await cellColor(page, 0, 1)), "GPT-2's future is hatched");
    assert.equal(new URL(page.url()).searchParams.get("model"), null, "a local folder is not put in the URL");
    await page.screenshot({ path: join(SHOTS, "local-gpt2.png"), fullPage: true });
  });

  it("says which files a chosen folder lacks", async () => {
    const page = await h.page();
    await page.goto(h.base);
    await waitForRender(page);
    await page.locator("#model").selectOption("local");
    await page.locator("#local-files").setInputFiles([join(FIXTURES, "bert", "config.json")]);
    await page.waitForFunction(() => /missing/.test(document.getElementById("model-status").textContent));
    assert.equal(
      await page.locator("#model-status").textContent(),
      "the chosen files: missing model.safetensors, tokenizer.json (or source.spm + vocab.json)",
    );
  });

  it("fetches a Hub model id with progress, shows all three places, and keeps it in the cache", async () => {
    const page = await h.page();
    await page.goto(`${h.base}?hub=${encodeURIComponent(hub.url)}`);
    await waitForRender(page);
    await page.locator("#model").selectOption("hub");
    await page.locator("#hub-id").fill("headmap-tests/tiny-marian");
    await page.locator("#hub-load").click();
    const model = await modelLoaded(page);
    assert.equal(model.modelType, "marian");
    assert.deepEqual(model.kinds, ["padding", "causal", "cross"]);
    assert.ok(hub.requests.includes("/headmap-tests/tiny-marian/resolve/main/source.spm"), "fell back to the .spm tokenizer");
    assert.ok((await page.evaluate(() => globalThis.__headmap.progressEvents)) >= 4, "progress was reported per file");
    await afterRender(page, () => page.locator("input[name=mask][value=cross]").check());
    const meta = await page.evaluate(() => globalThis.__headmap.meta);
    assert.notEqual(meta.tq, meta.tk, "cross-attention is Tq x Tk");
    assert.equal(meta.queries[0][0], "<pad>", "the decoder starts from its start token");
    assert.match(page.url(), /model=hub%3Aheadmap-tests%2Ftiny-marian/);
    await page.screenshot({ path: join(SHOTS, "hub-marian-cross.png"), fullPage: true });

    // The model's own greedy output as the target. (Wait on the text, not on a render count:
    // a full-page screenshot resizes the page, which redraws it too.)
    const before = await page.locator("#target").inputValue();
    await page.locator("#generate").click();
    await page.waitForFunction((old) => document.getElementById("target").value !== old, before);
    const target = await page.locator("#target").inputValue();
    assert.ok(!target.includes("</s>"));
    await page.waitForFunction(() => globalThis.__headmap.state.target === document.getElementById("target").value);

    // Reloading the shared URL loads the model again, from the cache this time.
    const asked = hub.requests.length;
    await page.reload();
    await modelLoaded(page);
    await page.waitForFunction(() => globalThis.__headmap.meta?.mask === "cross");
    assert.equal(hub.requests.length, asked, "no request reached the Hub the second time");
  });

  it("refuses ids that are not model ids, and explains a missing repository", async () => {
    const page = await h.page();
    await page.goto(`${h.base}?hub=${encodeURIComponent(hub.url)}`);
    await waitForRender(page);
    await page.locator("#model").selectOption("hub");
    await page.locator("#hub-id").fill("../../etc/passwd");
    await page.locator("#hub-load").click();
    assert.match(await page.locator("#model-status").textContent(), /not a model id/);
    await page.locator("#hub-id").fill("headmap-tests/tiny-nothing");
    await page.locator("#hub-load").click();
    await page.waitForFunction(() => /answered 404|not found/.test(document.getElementById("model-status").textContent));
    assert.match(await page.locator("#model-status").textContent(), /^config\.json: .* answered 404$/);
    assert.equal(await page.locator("#model").inputValue(), "toy", "back on the toy model");
  });
});
