// Reading <attention-heatmap>'s attributes, and the requests they make.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { readFileSync } from "node:fs";

import { ATTRIBUTES, DEFAULTS, VIEWS, attributesOf, authorChanged, parseAttributes, readerChose, requestOf, sourceOf, selectionOf, withReader } from "../../www/js/widget/attributes.js";

const BASE = "https://blog.example/posts/attention/";
const read = (attrs) => parseAttributes(attrs, BASE);

const toy = { encoderDecoder: true, places: [{ place: "encoder_self", mask: "padding" }, { place: "decoder_self", mask: "causal" }, { place: "cross", mask: "cross" }] };
const bert = { encoderDecoder: false, places: [{ place: "encoder_self", mask: "padding" }] };

describe("widget attributes", () => {
  it("default to the seed sentence on the trained model", () => {
    const { settings, problems } = read({});
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, DEFAULTS);
  });

  it("read texts as a JSON array, lines, or a text and a second text", () => {
    assert.deepEqual(read({ texts: '["a b", "c"]' }).settings.texts, ["a b", "c"]);
    assert.deepEqual(read({ texts: "a b\n c \n\n" }).settings.texts, ["a b", "c"]);
    assert.deepEqual(read({ text: "a", text2: "b" }).settings.texts, ["a", "b"]);
    assert.deepEqual(read({ text: "a", text2: "  " }).settings.texts, ["a"]);
    assert.equal(read({ texts: "[1, 2]" }).problems[0].attribute, "texts");
  });

  it("read models: trained, toy presets, and folder URLs resolved against the page", () => {
    assert.deepEqual(read({ model: "small" }).settings.model, { from: "toy", preset: "small" });
    assert.deepEqual(read({ model: "toy" }).settings.model, { from: "toy", preset: "small" });
    assert.deepEqual(read({ model: "base" }).settings.model, { from: "toy", preset: "base" });
    assert.deepEqual(read({ model: "../models/opus" }).settings.model, { from: "url", base: "https://blog.example/posts/models/opus/" });
    assert.equal(read({ model: "javascript:alert(1)" }).problems[0].attribute, "model");
    const assets = new URL("https://blog.example/assets/headmap/");
    assert.equal(sourceOf({ from: "trained" }, 1, assets).base, "https://blog.example/assets/headmap/models/headmap-tiny-ko-en/");
    assert.deepEqual(sourceOf({ from: "toy", preset: "base" }, 7, assets), { from: "toy", preset: "base", seed: 7, layers: 6 });
  });

  it("read numbers, switches and lists, and report what they cannot read", () => {
    const { settings, problems } = read({ layer: "2", head: "all", scale: "false", controls: "sentence, mask head", lang: "ko", view: "lines", colormap: "magma", theme: "dark" });
    assert.equal(settings.layer, 2);
    assert.equal(settings.head, "all");
    assert.equal(settings.scale, false);
    assert.deepEqual(settings.controls, ["sentence", "mask", "head"]);
    assert.equal(settings.view, "lines");
    assert.deepEqual(problems, []);
    assert.equal(read({ head: "all" }).settings.view, "grid", "all heads is the grid");
    const bad = read({ layer: "-1", head: "1.5", mask: "diagonal", view: "pie", lang: "fr", theme: "neon", colormap: "jet", controls: "everything" });
    assert.deepEqual(bad.problems.map((p) => p.attribute).sort(), ["colormap", "controls", "head", "lang", "layer", "mask", "theme", "view"]);
    assert.equal(bad.settings.mask, null, "a value that cannot be read keeps its default");
    assert.equal(read({ controls: "none" }).settings.controls.length, 0);
  });

  it("read what view=\"generate\" writes: the prompt, how many tokens, the temperature and when it starts", () => {
    const { settings, problems } = read({ view: "generate", prompt: "고양이 공원", "max-new-tokens": "8", temperature: "1.5", start: "tap", seed: "3" });
    assert.deepEqual(problems, []);
    assert.deepEqual([settings.prompt, settings.texts, settings.maxNewTokens, settings.temperature, settings.start, settings.seed], ["고양이 공원", ["고양이 공원"], 8, 1.5, "tap", 3]);
    assert.deepEqual([DEFAULTS.maxNewTokens, DEFAULTS.temperature, DEFAULTS.start], [20, null, "visible"], "greedy, 20 tokens, as it comes into view");
    const bad = read({ prompt: " ", "max-new-tokens": "0", temperature: "0", start: "now" });
    assert.deepEqual(bad.problems.map((p) => p.attribute).sort(), ["max-new-tokens", "prompt", "start", "temperature"]);
    assert.equal(read({ "max-new-tokens": "201" }).problems[0].attribute, "max-new-tokens");
    assert.equal(read({ temperature: "-1" }).settings.temperature, null, "a temperature that cannot be read writes greedily");
  });

  it("make requests: a batch at an encoder, one text and its target at a decoder", () => {
    const s = read({ texts: '["a b", "c"]', mask: "causal" }).settings;
    assert.deepEqual(requestOf(s, toy), { texts: ["a b"], place: "decoder_self", scale: true, mask: "causal" });
    assert.deepEqual(requestOf(s, toy, "x y"), { texts: ["a b"], place: "decoder_self", scale: true, mask: "causal", targets: ["x y"] });
    assert.deepEqual(requestOf(s, bert), { texts: ["a b", "c"], place: "encoder_self", scale: true, mask: "causal" }, "BERT made causal: a what-if at its only place");
    assert.deepEqual(requestOf(read({ place: "cross" }).settings, bert).place, "encoder_self", "a place the model lacks falls back to its first");
  });
});

describe("the widget's README", () => {
  it("names every attribute and every view an author can write", () => {
    // the README dist.mjs writes into the folder an author copies
    const source = readFileSync(new URL("../../scripts/build/dist.mjs", import.meta.url), "utf8");
    const readme = source.slice(source.indexOf("# headmap-widget"), source.indexOf("Events: "));
    assert.deepEqual(ATTRIBUTES.filter((a) => !readme.includes(`\\\`${a}\\\``)), [], "attributes the README leaves out");
    assert.deepEqual(VIEWS.filter((v) => !new RegExp(`[\\s|]${v}[\\s|(;]`).test(readme)), [], "views the README leaves out");
  });
});

describe("the head a widget draws", () => {
  const place = { place: "encoder_self", batch: 2, layers: 2, heads: 4 };
  const info = { suggestions: [{ place: "encoder_self", layer: 1, head: 1 }] };
  const settings = { ...DEFAULTS, layer: null, head: null };
  it("is the reader's, else the author's, else the model's suggestion", () => {
    const none = () => assert.fail("nothing clamped");
    assert.deepEqual(selectionOf({ settings, reader: {}, info, place, clamped: none }), { place: "encoder_self", row: 0, layer: 1, head: 1 });
    assert.deepEqual(selectionOf({ settings: { ...settings, layer: 0, head: 3 }, reader: {}, info, place, clamped: none }), { place: "encoder_self", row: 0, layer: 0, head: 3 });
    assert.deepEqual(selectionOf({ settings: { ...settings, layer: 0 }, reader: { layer: 1, head: 2, row: 5 }, info, place, clamped: none }), { place: "encoder_self", row: 1, layer: 1, head: 2 });
  });
  it("says when the author's layer or head is past the model's, and draws the last", () => {
    const said = [];
    const sel = selectionOf({ settings: { ...settings, layer: 5, head: 9 }, reader: {}, info, place, clamped: (...a) => said.push(a) });
    assert.deepEqual([sel.layer, sel.head], [1, 3]);
    assert.deepEqual(said, [["layer", 5, 2], ["head", 9, 4]]);
  });
  it("puts the reader's text and mask over the author's", () => {
    const s = withReader({ ...DEFAULTS, texts: ["a", "b"], mask: "causal" }, { text: "c", mask: null });
    assert.deepEqual([s.texts, s.mask], [["c", "b"], null]);
  });
});

describe("the reader's choices", () => {
  it("redraw for a row, layer or head, and run again for a text, place, mask or scale", () => {
    const reader = {};
    const sel = { place: "decoder_self", row: 0, layer: 0, head: 0 };
    assert.equal(readerChose(reader, sel, "select", { layer: 2, head: 3 }), "draw", "a head of the grid");
    assert.equal(readerChose(reader, sel, "row", 1), "draw");
    assert.deepEqual(sel, { place: "decoder_self", row: 1, layer: 2, head: 3 });
    assert.equal(readerChose(reader, sel, "mask", "padding"), "run");
    assert.deepEqual([reader.place, reader.mask], ["decoder_self", "padding"], "a mask keeps the place drawn");
    assert.equal(readerChose(reader, sel, "place", "cross"), "run");
    assert.deepEqual([reader.place, reader.mask], ["cross", null], "a place takes its own mask");
    assert.equal(readerChose(reader, sel, "text", "새 문장"), "run");
    assert.equal(reader.text, "새 문장");
  });
  it("give way to the author's change of the same thing", () => {
    const chosen = () => ({ text: "t", row: 1, layer: 2, head: 3, mask: "causal", place: "decoder_self", scale: "row" });
    const reader = chosen();
    authorChanged(reader, "texts");
    assert.deepEqual(Object.keys(reader).sort(), ["head", "layer", "mask", "place", "scale"], "a text takes the row with it");
    authorChanged(reader, "mask");
    assert.deepEqual(Object.keys(reader).sort(), ["head", "layer", "scale"], "a mask takes the place, and a place the mask");
    authorChanged(reader, "head");
    authorChanged(reader, "colormap"); // not the reader's: nothing to forget
    assert.deepEqual(reader, { layer: 2, scale: "row" });
  });
  it("are read with the attributes an element has, and only those", () => {
    const element = { attrs: { text: "a", head: "all", onclick: "x" }, hasAttribute(n) { return n in this.attrs; }, getAttribute(n) { return this.attrs[n]; } };
    assert.deepEqual(attributesOf(element), { text: "a", head: "all" });
  });
});
