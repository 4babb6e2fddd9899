// URL state, requests built from it, and the UI language.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { STRINGS, browserLang, t } from "../../www/js/i18n.js";
import { DEFAULTS, decodeState, encodeState, requestFor } from "../../www/js/state.js";

describe("URL state", () => {
  it("round-trips every setting", () => {
    const s = { ...DEFAULTS, model: "hub:Helsinki-NLP/opus-mt-ko-en", hub: "http://127.0.0.1:9/", text: "민수가 <b>책</b>을 & 주었다?", text2: "", mask: "cross", target: "Minsu gave a book.", scale: false, preset: "base", layers: 6, seed: 42, layer: 3, head: 7, row: 0, range: "one", lang: "ko" };
    assert.deepEqual(decodeState(encodeState(s)), s);
  });

  it("leaves defaults out of the URL and ignores nonsense", () => {
    assert.equal(encodeState(DEFAULTS), "");
    assert.equal(encodeState({ ...DEFAULTS, model: "local" }), "", "files on a disk are not shared");
    assert.equal(decodeState("?model=local").model, "toy");
    assert.equal(decodeState("?hub=javascript:alert(1)").hub, DEFAULTS.hub);
    const s = decodeState("?mask=diagonal&layers=99&head=-1&preset=huge&scale=0&lang=fr");
    assert.equal(s.mask, DEFAULTS.mask);
    assert.equal(s.layers, DEFAULTS.layers);
    assert.equal(s.head, DEFAULTS.head);
    assert.equal(s.preset, DEFAULTS.preset);
    assert.equal(s.scale, false);
    assert.equal(s.lang, null);
  });

  it("builds a padded batch, or a source and a target for cross-attention", () => {
    const s = { ...DEFAULTS, text: "a b", text2: "c", mask: "padding" };
    assert.deepEqual(requestFor(s), { texts: ["a b", "c"], mask: "padding", scale: true });
    assert.deepEqual(requestFor({ ...s, text2: "  " }), { texts: ["a b"], mask: "padding", scale: true });
    assert.deepEqual(requestFor({ ...s, mask: "cross", target: "x y z" }), { texts: ["a b"], targets: ["x y z"], mask: "cross", scale: true });
  });
});

describe("languages", () => {
  it("follows the browser, Korean when it is preferred", () => {
    assert.equal(browserLang(["ko-KR", "en"]), "ko");
    assert.equal(browserLang(["en-US"]), "en");
    assert.equal(browserLang([]), "en");
  });

  it("has every English string in Korean too", () => {
    const missing = Object.keys(STRINGS.en).filter((k) => !(k in STRINGS.ko));
    assert.deepEqual(missing, []);
    assert.equal(t("ko", "mask.causal"), "디코더 Masked Self-Attention");
    assert.equal(t("xx", "mask.causal"), "Decoder masked self-attention");
  });
});
