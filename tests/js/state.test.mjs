// Links (state in the query and the fragment), the requests built from the state, the UI
// language and the errors worded in it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { readFileSync, readdirSync } from "node:fs";

import { EXPLORER_STRINGS } from "../../www/js/explorer/strings.js";
import { GENERATE } from "../../www/js/strings/generate.js";
import { VIEW_WORDS } from "../../www/js/strings/views.js";
import { QK } from "../../www/js/strings/qk.js";
import { ERRORS_KO, STRINGS, addStrings, browserLang, errorText, formatBytes, particles, t, tf } from "../../www/js/i18n.js";
import { masksFor } from "../../www/js/places.js";
import { DEFAULTS, MAX_TEXT_CHARS, decodeState, deflate, encodeState, inflate, requestFor, validHub, validModel } from "../../www/js/state.js";

const toy = {
  encoderDecoder: true,
  places: [
    { place: "encoder_self", mask: "padding" },
    { place: "decoder_self", mask: "causal" },
    { place: "cross", mask: "cross" },
  ],
};
const bert = { encoderDecoder: false, places: [{ place: "encoder_self", mask: "padding" }] };
const gpt2 = { encoderDecoder: false, places: [{ place: "decoder_self", mask: "causal" }] };

const link = async (state) => {
  const { search, hash } = await encodeState(state);
  return decodeState(search, hash);
};

describe("links", () => {
  it("round-trip every setting", async () => {
    const s = { ...DEFAULTS, model: "hub:Helsinki-NLP/opus-mt-ko-en", hub: "/hub-mock", text: "민수가 <b>책</b>을 & 주었다?", text2: "", place: "cross", mask: "none", target: "Minsu gave a book.", scale: false, preset: "base", layers: 6, seed: 42, layer: 3, head: 7, row: 1, range: "one", lang: "ko" };
    assert.deepEqual(await link(s), s);
  });

  it("leave defaults out and ignore nonsense", async () => {
    assert.deepEqual(await encodeState(DEFAULTS), { search: "", hash: "", dropped: false });
    assert.equal((await encodeState({ ...DEFAULTS, model: "local" })).search, "", "files on a disk are not shared");
    assert.equal((await decodeState("?model=local")).model, DEFAULTS.model);
    const s = await decodeState("?mask=diagonal&place=middle&layers=99&head=-1&preset=huge&scale=0&lang=fr&row=1e3");
    assert.equal(s.mask, null);
    assert.equal(s.place, null);
    assert.equal(s.layers, DEFAULTS.layers);
    assert.equal(s.head, DEFAULTS.head);
    assert.equal(s.row, DEFAULTS.row);
    assert.equal(s.preset, DEFAULTS.preset);
    assert.equal(s.scale, false);
    assert.equal(s.lang, null);
  });

  it("never name another host, and name only model ids a typed id could be", async () => {
    for (const hub of ["https://evil.example", "//evil.example", "javascript:alert(1)", "/a/../../b", "http://127.0.0.1:9/"]) {
      assert.equal(validHub(hub), false, hub);
      assert.equal((await decodeState(`?hub=${encodeURIComponent(hub)}`)).hub, "", hub);
    }
    assert.equal(validHub("/hub-mock"), true);
    for (const model of ["hub:../../etc/passwd", "hub:a/b/c", "hub:<script>", "hub:", "https://evil.example"]) {
      assert.equal(validModel(model), false, model);
      assert.equal((await decodeState(`?model=${encodeURIComponent(model)}`)).model, DEFAULTS.model, model);
    }
    assert.equal((await decodeState("?model=hub%3Agpt2")).model, "hub:gpt2");
  });

  it("read links from before places existed", async () => {
    assert.equal((await decodeState("?mask=causal")).place, "decoder_self");
    assert.equal((await decodeState("?mask=cross")).place, "cross");
    const none = await decodeState("?mask=none");
    assert.deepEqual([none.place, none.mask], ["encoder_self", "none"]);
  });

  it("keep long text out of the query, deflated in the fragment", async () => {
    const long = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다. ".repeat(400);
    const { search, hash, dropped } = await encodeState({ ...DEFAULTS, text: long, seed: 3 });
    assert.equal(dropped, false);
    assert.equal(search, "?seed=3", "only the short settings in the query");
    assert.ok(hash.startsWith("#z=") && hash.length < long.length, `${hash.length} characters`);
    const back = await decodeState(search, hash);
    assert.equal(back.text, long);
    assert.equal(back.seed, 3);
    assert.equal(await inflate(await deflate("민수가 책을 주었다")), "민수가 책을 주었다");
    assert.equal((await decodeState("", "#z=not-deflate")).text, DEFAULTS.text, "a damaged fragment keeps the defaults");
    const random = Array.from({ length: 600_000 }, (_, i) => String.fromCharCode(0xac00 + ((i * 7919) % 11172))).join("");
    const huge = await encodeState({ ...DEFAULTS, text: random });
    assert.equal(huge.dropped, true, "too long even for the fragment: left out, and said so");
  });

  it("unpack a fragment only up to the longest texts the page accepts", async () => {
    // 39 KB of link that would unpack to 30 MB: refused while unpacking, and the page says so
    const bomb = await deflate(JSON.stringify({ text: "가".repeat(10_000_000) }));
    assert.ok(bomb.length < 60_000, `${bomb.length} characters of link`);
    await assert.rejects(inflate(bomb), RangeError);
    const s = await decodeState("", `#z=${bomb}`);
    assert.equal(s.text, DEFAULTS.text);
    assert.equal(s.linkProblem, true);
    assert.equal((await decodeState("", "#z=not-deflate")).linkProblem, true);
    assert.equal((await decodeState("?seed=2")).linkProblem, undefined);
    // three texts at the limit still fit, and the limit is the core's
    const longest = "가".repeat(MAX_TEXT_CHARS);
    const back = await link({ ...DEFAULTS, text: longest, text2: longest, target: longest });
    assert.equal(back.text.length + back.text2.length + back.target.length, 3 * MAX_TEXT_CHARS);
    const core = readFileSync(new URL("../../src/tokenize/mod.rs", import.meta.url), "utf8");
    assert.equal(Number(core.match(/pub const MAX_TEXT_CHARS: usize = ([\d_]+);/)[1].replaceAll("_", "")), MAX_TEXT_CHARS);
  });

  it("set right a mask the linked place cannot run with", async () => {
    for (const place of ["encoder_self", "decoder_self", "cross"]) {
      for (const mask of ["padding", "causal", "cross", "none"]) {
        const s = await decodeState(`?place=${place}&mask=${mask}`);
        assert.equal(s.place, place);
        assert.equal(s.mask, masksFor(place).includes(mask) ? mask : null, `${place} with ${mask}`);
      }
    }
  });
});

describe("requests", () => {
  const s = { ...DEFAULTS, text: "a b", text2: "c", target: "x y z" };
  it("run a padded batch at an encoder or a decoder-only model", () => {
    assert.deepEqual(requestFor(s, toy), { texts: ["a b", "c"], place: "encoder_self", scale: true });
    assert.deepEqual(requestFor({ ...s, text2: "  " }, bert), { texts: ["a b"], place: "encoder_self", scale: true });
    assert.deepEqual(requestFor(s, gpt2), { texts: ["a b", "c"], place: "decoder_self", scale: true });
  });

  it("run one source and its target at an encoder–decoder's decoder", () => {
    assert.deepEqual(requestFor({ ...s, place: "cross" }, toy), { texts: ["a b"], targets: ["x y z"], place: "cross", scale: true });
    assert.deepEqual(requestFor({ ...s, place: "decoder_self" }, toy), { texts: ["a b"], targets: ["x y z"], place: "decoder_self", scale: true });
  });

  it("name a mask only when it is a what-if, and fall back to a place the model has", () => {
    assert.deepEqual(requestFor({ ...s, place: "encoder_self", mask: "causal" }, bert).mask, "causal");
    assert.equal(requestFor({ ...s, place: "encoder_self", mask: "padding" }, bert).mask, undefined);
    assert.equal(requestFor({ ...s, place: "cross" }, bert).place, "encoder_self");
    // a link's cross mask on a model without cross-attention: its own place, its own mask
    assert.deepEqual(requestFor({ ...s, place: "cross", mask: "cross" }, bert), { texts: ["a b", "c"], place: "encoder_self", scale: true });
  });
});

describe("languages", () => {
  it("follow the browser, Korean when it is preferred", () => {
    assert.equal(browserLang(["ko-KR", "en"]), "ko");
    assert.equal(browserLang(["en-US"]), "en");
    assert.equal(browserLang([]), "en");
  });

  it("have every English string in Korean too", () => {
    for (const strings of [STRINGS, EXPLORER_STRINGS, GENERATE, QK, VIEW_WORDS]) {
      assert.deepEqual(Object.keys(strings.en).filter((k) => !(k in strings.ko)), []);
      assert.deepEqual(Object.keys(strings.ko).filter((k) => !(k in strings.en)), []);
    }
    assert.equal(t("ko", "place.decoder_self"), "디코더 마스크드 셀프 어텐션");
    assert.equal(t("xx", "place.decoder_self"), "Decoder masked self-attention");
  });

  it("leave out of the widget only words no module of the widget uses", () => {
    // the widget bundles i18n.js but not explorer/strings.js: a key moved there by mistake
    // would show as the bare key in a blog's widget
    const root = new URL("../../www/", import.meta.url);
    const files = ["headmap.js", "js/client.js", ...["js/widget", "js/views", "js/render"].flatMap((dir) => readdirSync(new URL(dir, root)).map((f) => `${dir}/${f}`))];
    const source = files.map((f) => readFileSync(new URL(f, root), "utf8")).join("\n");
    const used = Object.keys(EXPLORER_STRINGS.en).filter((k) => source.includes(`"${k}"`) || source.includes(`'${k}'`));
    assert.deepEqual(used, []);
    assert.deepEqual(Object.keys(EXPLORER_STRINGS.en).filter((k) => k in STRINGS.en), [], "a key lives in one place");
  });

  it("word the core's errors in Korean from their code and details", () => {
    const tooLong = { message: "the text has 2100 tokens, more than the maximum of 2048", code: "too_long", details: { code: "too_long", tokens: 2100, max: 2048 } };
    assert.equal(errorText("ko", tooLong), "텍스트가 토큰 2100개로, 최대 2048개를 넘습니다. 텍스트를 줄이거나 더 긴 텍스트를 읽는 모델을 고르세요.");
    assert.equal(errorText("en", tooLong), "The text has 2100 tokens, more than the maximum of 2048. Shorten the text, or choose a model that reads longer texts.", "a sentence, then what to do");
    const shape = {
      code: "file",
      details: { code: "file", file: "model.safetensors", problem: { problem: "wrong_shape", name: "a.weight", got: [48, 32], expected: [50, 32] } },
    };
    assert.equal(errorText("ko", shape), "model.safetensors: 텐서 ‘a.weight’의 모양이 [48, 32]인데, [50, 32]이어야 합니다.");
    const place = { code: "mask_not_for_place", details: { mask: "causal", place: "cross", expected: ["cross", "none"] } };
    assert.equal(errorText("ko", place), "인과 마스크는 디코더 크로스 어텐션에 쓸 수 없습니다: 원문 패딩 마스크, 마스크 없음 중에서 고르세요.");
    assert.equal(errorText("en", { ...place, message: "the causal mask does not apply to cross: use cross or none" }), "The causal mask does not apply to decoder cross-attention: use the source padding mask or no mask.", "names, not codes");
    const absent = { code: "place_absent", message: "this model has no cross attention", details: { place: "cross", have: ["encoder_self"] } };
    assert.equal(errorText("en", absent), "This model has no decoder cross-attention; it has encoder self-attention.");
    const chars = { code: "text_too_long", message: "the text has 40000 characters, more than the maximum of 32768", details: { chars: 40000, max: 32768 } };
    assert.equal(errorText("ko", chars), "텍스트가 40000자로, 최대 32768자를 넘습니다. 텍스트를 줄이세요.");
    assert.equal(errorText("ko", { code: "something_new" }), "알 수 없는 오류가 생겼습니다 (something_new).");
    assert.equal(errorText("en", { message: "worker stopped", code: "x" }), "Worker stopped.");
  });

  it("fit Korean particles to the word before them", () => {
    assert.equal(particles("마스크 없음(으)로 실행"), "마스크 없음으로 실행");
    assert.equal(particles("패딩 마스크(으)로, 서울(으)로"), "패딩 마스크로, 서울로");
    assert.equal(particles("‘동물’이(가) 크로스 어텐션은(는) 마스크을(를)"), "‘동물’이 크로스 어텐션은 마스크를");
    assert.equal(particles("404(으)로 500(으)로 64을(를) 3과(와)"), "404로 500으로 64를 3과");
    assert.equal(particles("MiniLM은(는)"), "MiniLM은(는)", "after a Latin word both forms stay");
    const note = tf("ko", "whatIfNote", { model: "headmap-tiny-ko-en", trained: "원문 패딩 마스크", mask: "마스크 없음" });
    assert.match(note, /원문 패딩 마스크로 학습되었는데, 여기서는 마스크 없음으로 실행했습니다/);
    addStrings(VIEW_WORDS); // as views/lines-view.js does
    assert.match(tf("ko", "linesReadout", { token: "a", head: 1, query: "b", key: "그것은", weight: 1 }), /‘그것은’으로 가며/, "through a closing quote");
    // what a reader wrote is theirs: a pair typed in a sentence stays as typed
    assert.match(tf("ko", "widgetLabel", { place: "p", layer: 1, head: 1, text: "학생이(가) 왔다" }), /‘학생이\(가\) 왔다’/);
    const unknown = { code: "unknown_name", details: { setting: "mask", value: "diagonal", expected: ["padding", "causal", "cross", "none"] } };
    assert.equal(errorText("ko", unknown), "알 수 없는 마스크 ‘diagonal’: 패딩 마스크, 인과 마스크, 원문 패딩 마스크, 마스크 없음 중에서 고르세요.");
    // no template of either language leaves a particle glued to a value: every one is a pair
    const glued = /\}[’”)」』'"]*(은|는|이|가|을|를|로|으로|와|과)(?![(가-힣])/;
    for (const [key, text] of [STRINGS.ko, EXPLORER_STRINGS.ko, GENERATE.ko, QK.ko, VIEW_WORDS.ko, ERRORS_KO].flatMap(Object.entries)) {
      assert.doesNotMatch(text, glued, key);
    }
  });

  it("write sizes in the unit that reads best", () => {
    assert.equal(formatBytes("en", 7.9 * 1024), "7.9 KiB");
    assert.equal(formatBytes("en", 325_035.4 * 1024), "317.4 MiB");
    assert.equal(formatBytes("ko", 3 * 1024 ** 3), "3기비바이트");
    assert.equal(formatBytes("ko", 2048), "2키비바이트");
  });

  it("have a Korean wording for every error the core can give", async () => {
    const { readFile } = await import("node:fs/promises");
    const source = await readFile(new URL("../../src/error.rs", import.meta.url), "utf8");
    const variants = (block) => [...block.matchAll(/^\s{4}([A-Z]\w+)\s*[{,]/gm)].map((m) => m[1].replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase()));
    const errorEnum = source.slice(source.indexOf("pub enum Error"), source.indexOf("pub enum FileProblem"));
    const problemEnum = source.slice(source.indexOf("pub enum FileProblem"), source.indexOf("pub type Result"));
    const codes = [...variants(errorEnum).filter((c) => c !== "file"), ...variants(problemEnum).map((c) => `file.${c}`)];
    assert.ok(codes.length > 30, `${codes.length} codes`);
    assert.deepEqual(codes.filter((c) => !(c in ERRORS_KO)), []);
  });
});
