// Finding a model's files: Hub URLs, ids, picked files, downloads with fallbacks and errors.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { errorText } from "../../www/js/error-text.js";
import { MAX_WEIGHT_BYTES, fetchModelFiles, filesToRead, hubUrl, pickFiles, shardNames, validModelId } from "../../www/js/model-files.js";

const bytes = (s) => new TextEncoder().encode(s);

/** A fetch that serves `files` (name → string) and 404s the rest. */
function fakeFetch(files) {
  const asked = [];
  const impl = async (url) => {
    asked.push(url);
    const name = url.split("/").pop();
    return name in files ? new Response(bytes(files[name])) : new Response("not found", { status: 404 });
  };
  return { impl, asked };
}

describe("model files", () => {
  it("builds Hub URLs and accepts only model ids", () => {
    assert.equal(hubUrl("https://huggingface.co/", "Helsinki-NLP/opus-mt-ko-en", "config.json"), "https://huggingface.co/Helsinki-NLP/opus-mt-ko-en/resolve/main/config.json");
    assert.ok(validModelId("gpt2"));
    assert.ok(validModelId("sentence-transformers/all-MiniLM-L6-v2"));
    for (const bad of ["", "../x", "a/b/c", "a b", "/gpt2", "a/..", "<script>"]) assert.ok(!validModelId(bad), bad);
  });

  it("picks files by name from a chosen folder and says what is missing", () => {
    const files = pickFiles({ "m/config.json": bytes("{}"), "m/model.safetensors": bytes("x"), "m/tokenizer.json": bytes("{}"), "m/README.md": bytes("") });
    assert.deepEqual(Object.keys(files).sort(), ["config", "tokenizer", "weights"]);
    assert.throws(() => pickFiles({ "config.json": bytes("{}") }), /missing model\.safetensors, tokenizer\.json/);
    const marian = pickFiles({ "config.json": bytes("{}"), "model.safetensors": bytes("x"), "source.spm": bytes("s"), "vocab.json": bytes("{}") });
    assert.ok(marian.sourceSpm && marian.vocab);
  });

  it("takes the model from the folder of the shallowest config.json, as a Hub checkout holds it", () => {
    const files = pickFiles({
      "m/1_Pooling/config.json": bytes("pooling"),
      "m/config.json": bytes("root"),
      "m/onnx/config.json": bytes("onnx"),
      "m/onnx/model.safetensors": bytes("wrong weights"),
      "m/model.safetensors": bytes("weights"),
      "m/tokenizer.json": bytes("{}"),
    });
    assert.equal(new TextDecoder().decode(files.config), "root");
    assert.equal(new TextDecoder().decode(files.weights), "weights");
    // the files of another folder are not mixed in
    assert.throws(() => pickFiles({ "m/config.json": bytes("{}"), "m/sub/model.safetensors": bytes("x"), "m/sub/tokenizer.json": bytes("{}") }), (e) => e.code === "files_missing" && /missing model\.safetensors/.test(e.message));
  });

  it("downloads tokenizer.json, or falls back to source.spm + vocab.json, reporting progress", async () => {
    const { impl, asked } = fakeFetch({ "config.json": "{}", "model.safetensors": "weights", "source.spm": "spm", "vocab.json": "{}" });
    const progress = [];
    const files = await fetchModelFiles((f) => `https://hub/x/${f}`, { fetchImpl: impl, onProgress: (p) => progress.push(p.file) });
    assert.equal(new TextDecoder().decode(files.weights), "weights");
    assert.ok(asked.includes("https://hub/x/tokenizer.json"));
    assert.ok(files.sourceSpm && files.vocab && !files.tokenizer);
    assert.ok(progress.includes("model.safetensors"));
  });

  it("explains a repository without safetensors weights, or without a config", async () => {
    const noWeights = fakeFetch({ "config.json": "{}", "tokenizer.json": "{}" });
    await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: noWeights.impl }), /model\.safetensors: not found \(headmap reads safetensors weights, not pytorch_model\.bin\)/);
    const nothing = fakeFetch({});
    await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: nothing.impl }), /^Error: config\.json: h\/config\.json answered 404$/);
    const offline = async () => {
      throw new TypeError("Failed to fetch");
    };
    await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: offline }), /config\.json: cannot be fetched from h\/config\.json \(Failed to fetch\)/);
  });

  it("points a failed fetch at what to check: the model id on the Hub, the address of a folder", async () => {
    const nothing = fakeFetch({});
    const offline = async () => {
      throw new TypeError("Failed to fetch");
    };
    const said = async (options, lang) => {
      try {
        await fetchModelFiles((f) => `https://blog.example/nope-folder/${f}`, options);
      } catch (e) {
        return errorText(lang, e);
      }
      assert.fail("fetched");
    };
    assert.match(await said({ fetchImpl: nothing.impl }, "en"), /answered 404\. Check the model id: the Hub has no such file for it\.$/);
    assert.match(await said({ fetchImpl: nothing.impl, from: "folder" }, "en"), /answered 404\. Check the folder's address: the site has no such file in it\.$/);
    assert.match(await said({ fetchImpl: nothing.impl, from: "folder" }, "ko"), /404(으)?로 응답했습니다\. 폴더 주소를 확인하세요\./);
    assert.match(await said({ fetchImpl: offline, from: "folder" }, "en"), /Check the folder's address and your connection\.$/);
    assert.doesNotMatch(await said({ fetchImpl: offline, from: "folder" }, "ko"), /아이디|허브/);
  });

  it("reads a sharded checkpoint: the index, then each shard it names once", async () => {
    const index = JSON.stringify({ metadata: {}, weight_map: { a: "model-00001-of-00002.safetensors", b: "model-00002-of-00002.safetensors", c: "model-00001-of-00002.safetensors" } });
    const { impl, asked } = fakeFetch({ "config.json": "{}", "tokenizer.json": "{}", "model.safetensors.index.json": index, "model-00001-of-00002.safetensors": "one", "model-00002-of-00002.safetensors": "two" });
    const files = await fetchModelFiles((f) => `h/${f}`, { fetchImpl: impl });
    assert.equal(files.weights, undefined);
    assert.deepEqual(files.shards.map((s) => [s.name, new TextDecoder().decode(s.bytes)]), [["model-00001-of-00002.safetensors", "one"], ["model-00002-of-00002.safetensors", "two"]]);
    assert.equal(asked.filter((u) => u.endsWith("00001-of-00002.safetensors")).length, 1);
    // a missing shard is an error naming it, not a half-loaded model
    const partial = fakeFetch({ "config.json": "{}", "tokenizer.json": "{}", "model.safetensors.index.json": index, "model-00001-of-00002.safetensors": "one" });
    await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: partial.impl }), /model-00002-of-00002\.safetensors: h\/model-00002-of-00002\.safetensors answered 404/);
    // picked files: the shards are found beside the index
    const picked = pickFiles({ "m/config.json": bytes("{}"), "m/tokenizer.json": bytes("{}"), "m/model.safetensors.index.json": bytes(index), "m/model-00001-of-00002.safetensors": bytes("one"), "m/model-00002-of-00002.safetensors": bytes("two") });
    assert.equal(picked.shards.length, 2);
    assert.throws(() => pickFiles({ "m/config.json": bytes("{}"), "m/tokenizer.json": bytes("{}"), "m/model.safetensors.index.json": bytes(index), "m/model-00001-of-00002.safetensors": bytes("one") }), (e) => e.code === "files_missing" && /model-00002-of-00002/.test(e.message));
  });

  it("refuses an index whose shard names reach outside the model's folder", async () => {
    for (const name of ["../secret.safetensors", "a/b.safetensors", "https://evil.example/x.safetensors", "/abs.safetensors", "x.bin", ".hidden.safetensors", 7]) {
      const index = JSON.stringify({ weight_map: { a: name } });
      assert.throws(() => shardNames(bytes(index)), (e) => e.code === "bad_index", String(name));
      const { impl, asked } = fakeFetch({ "config.json": "{}", "tokenizer.json": "{}", "model.safetensors.index.json": index });
      await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: impl }), (e) => e.code === "bad_index");
      assert.ok(!asked.some((u) => u.includes("secret") || u.includes("evil")), String(name));
    }
    for (const bad of ["not json", "{}", '{"weight_map": []}', '{"weight_map": {}}']) assert.throws(() => shardNames(bytes(bad)), (e) => e.code === "bad_index", bad);
  });

  it("refuses a model too big for a tab before reading it, whatever its server says of its size", async () => {
    const huge = MAX_WEIGHT_BYTES + 1;
    // a server that says how big the weights are: refused before the body is read
    let pulled = 0;
    const big = async (url) => {
      if (!url.endsWith("model.safetensors")) return url.endsWith("config.json") || url.endsWith("tokenizer.json") ? new Response("{}") : new Response("", { status: 404 });
      const body = new ReadableStream({ pull: (c) => (pulled++ < 4 ? c.enqueue(new Uint8Array(1024)) : c.close()) });
      return new Response(body, { headers: { "content-length": String(huge) } });
    };
    await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: big }), (e) => e.code === "model_too_large" && e.details.megabytes === 1025 && e.details.max === 1024);
    assert.ok(pulled <= 1, "the body was not read");
    // one that says nothing, or too little: refused as soon as the bytes pass the limit
    let sent = 0;
    const liar = async (url) => {
      if (!url.endsWith("model.safetensors")) return url.endsWith("config.json") || url.endsWith("tokenizer.json") ? new Response("{}") : new Response("", { status: 404 });
      const chunk = new Uint8Array(64 * 2 ** 20);
      const body = new ReadableStream({ pull: (c) => (sent < 40 ? (sent++, c.enqueue(chunk)) : c.close()) });
      return new Response(body, { headers: { "content-length": "10" } });
    };
    await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: liar }), (e) => e.code === "model_too_large");
    assert.ok(sent <= 18, `stopped near the limit, not at the end (${sent} chunks of 64 MB)`);
    // shards: the index's total is enough to refuse
    const index = JSON.stringify({ metadata: { total_size: 5e10 }, weight_map: { a: "model-00001-of-00002.safetensors" } });
    const sharded = fakeFetch({ "config.json": "{}", "tokenizer.json": "{}", "model.safetensors.index.json": index, "model-00001-of-00002.safetensors": "x" });
    await assert.rejects(fetchModelFiles((f) => `h/${f}`, { fetchImpl: sharded.impl }), (e) => e.code === "model_too_large");
    assert.ok(!sharded.asked.some((u) => u.includes("00001")), "no shard was fetched");
    // chosen files: sizes are known before anything is read, and other formats are left unread
    assert.deepEqual(
      filesToRead([
        { path: "m/config.json", size: 600 },
        { path: "m/model.safetensors", size: 9e7 },
        { path: "m/pytorch_model.bin", size: 9e7 },
        { path: "m/onnx/model.onnx", size: 9e7 },
        { path: "m/tokenizer.json", size: 7e5 },
        { path: "m/README.md", size: 1e4 },
      ]),
      ["m/config.json", "m/model.safetensors", "m/tokenizer.json"],
    );
    assert.throws(() => filesToRead([{ path: "m/model-00001-of-00002.safetensors", size: 6e8 }, { path: "m/model-00002-of-00002.safetensors", size: 6e8 }]), (e) => e.code === "model_too_large");
    assert.throws(() => filesToRead([{ path: "m/tokenizer.json", size: 2e9 }]), (e) => e.code === "model_too_large" && e.details.file === "tokenizer.json");
  });
});
