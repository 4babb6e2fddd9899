// One vocabulary, two hosts: the explorer's link and the widget's attributes read the same
// values the same way (www/js/settings.js), and build the same request from them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { RANGES, TOY_PRESETS, headNames, intOf, offAt, offHeads, offKept, offNames, offOf, offSplit, offTyped, predictsFromRun, sourceOf, toggleOff } from "../../www/js/settings.js";
import { decodeState, requestFor } from "../../www/js/state.js";
import { parseAttributes, requestOf, sourceOf as widgetSource } from "../../www/js/widget/attributes.js";

const BASE = "https://blog.example/posts/attention/";

/** The link's word for an attribute: the score is `find`, the heads turned off `off`. */
const LINK_NAMES = { score: "find", ablate: "off" };

/** A model with every place, and layers and heads enough for any head a spec can write. */
const EVERY_PLACE = {
  places: ["encoder_self", "decoder_self", "cross"].map((place) => ({ place, layers: 1000, heads: 1000, mask: "none", masks: ["none", "padding", "causal"] })),
  encoderDecoder: true,
};

/** The value each host reads for its setting `name` written as `value`. */
async function bothRead(name, value) {
  const linkName = LINK_NAMES[name] ?? name;
  const link = await decodeState(`?${new URLSearchParams({ [linkName]: value })}`);
  const { settings } = parseAttributes({ [name]: value }, BASE);
  // the link keeps the heads-off field as the reader left it, items that are no head too (the
  // page names them): what both hosts send the core turns off the same heads
  if (name === "ablate") {
    const sent = (request) => [...offHeads(request.ablate ?? "", EVERY_PLACE)];
    return { link: sent(requestFor({ ...link, text: "a" }, EVERY_PLACE)), attribute: sent(requestOf({ ...settings, texts: ["a"] }, EVERY_PLACE)) };
  }
  return { link: link[linkName], attribute: settings[name] };
}

// values written the ways authors and links write them, right and wrong
const TABLE = {
  layer: ["0", "5", "63", "64", "-1", "05", "5.0", "1e1", "+5", " 5", "", "x", "0x5", "NaN", "99999999999999999999"],
  head: ["0", "3", "127", "128", "-0", "1.5", "3 ", "٣"],
  seed: ["0", "1", "42", String(2 ** 31 - 1), String(2 ** 31), "-1", "1e3", "7.0"],
  step: ["0", "4090", "10000000", "10000001", "-1", "4090.0", "x", ""],
  scale: ["1", "0", "true", "false", "FALSE", " no ", "off", "on", "yes", ""],
  lang: ["ko", "en", "fr", "KO", ""],
  mask: ["none", "padding", "causal", "cross", "diagonal", "Causal"],
  place: ["encoder_self", "decoder_self", "cross", "middle"],
  fusion: ["mean", "max", "min", "sum"],
  score: ["previous_token", "induction", "distance", "nope"],
  ablate: ["1.0", "1.0,1.3", " 1.0 , cross:0.3", "decoder_self:12.300", "", "1", "1.0,", "a.b", "middle:1.0", "1.0;1.1", "01.0,x,1.0", "encoder_self:0.0,abc", Array(70).fill("0.1").join(",")],
};

describe("the link and the attributes", () => {
  for (const [name, values] of Object.entries(TABLE)) {
    it(`read ${name} alike`, async () => {
      for (const value of values) {
        const { link, attribute } = await bothRead(name, value);
        assert.deepEqual(link, attribute, `${name}=${JSON.stringify(value)}: the link reads ${JSON.stringify(link)}, the widget ${JSON.stringify(attribute)}`);
      }
    });
  }

  it("open a step of a trained model's timeline from the same checkpoint file, and no other file", async () => {
    const link = sourceOf("induction", BASE, null, 4090);
    assert.deepEqual(link, { from: "url", base: `${BASE}models/headmap-tiny-induction/`, weights: "timeline/step-4090.safetensors" });
    const { settings } = parseAttributes({ model: "induction", step: "4090" }, BASE);
    assert.deepEqual(widgetSource(settings.model, settings.seed, BASE, settings.step), link);
    assert.deepEqual(sourceOf("induction", BASE, null, null), { from: "url", base: `${BASE}models/headmap-tiny-induction/` });
    // a model without a timeline has no step: the widget says so
    const { problems } = parseAttributes({ model: "minilm", step: "4090" }, BASE);
    assert.deepEqual(problems.map((p) => p.attribute), ["step"]);
    const { isCheckpointFile } = await import("../../www/js/settings.js");
    for (const name of ["timeline/step-0.safetensors", "timeline/step-12345678.safetensors"]) assert.ok(isCheckpointFile(name), name);
    for (const name of ["model.safetensors", "../x/step-1.safetensors", "timeline/step-1.safetensors/../../a", "https://x/timeline/step-1.safetensors", "timeline/step-.safetensors"]) assert.ok(!isCheckpointFile(name), name);
  });

  it("take the ends of every range and refuse one past them", () => {
    for (const [name, [lo, hi]] of Object.entries(RANGES)) {
      assert.equal(intOf(name, String(lo)), lo, `${name} ${lo}`);
      assert.equal(intOf(name, String(hi)), hi, `${name} ${hi}`);
      assert.equal(intOf(name, String(lo - 1)), undefined, `${name} ${lo - 1}`);
      assert.equal(intOf(name, String(hi + 1)), undefined, `${name} ${hi + 1}`);
    }
  });

  it("run the same request for the same choice", async () => {
    const toy = { encoderDecoder: true, places: [{ place: "encoder_self", mask: "padding" }, { place: "decoder_self", mask: "causal" }, { place: "cross", mask: "cross" }] };
    const bert = { encoderDecoder: false, places: [{ place: "encoder_self", mask: "padding" }] };
    const gpt2 = { encoderDecoder: false, places: [{ place: "decoder_self", mask: "causal" }] };
    const choices = [{}, { mask: "causal" }, { mask: "none" }, { place: "cross" }, { place: "cross", mask: "none" }, { place: "decoder_self", mask: "cross" }, { mask: "cross" }];
    for (const info of [toy, bert, gpt2]) {
      for (const choice of choices) {
        const words = { text: "a b", text2: "c", target: "x y", ...choice };
        const link = requestFor(await decodeState(`?${new URLSearchParams(words)}`), info);
        const widget = requestOf(parseAttributes(words, BASE).settings, info);
        // the link leaves the place's own mask unsaid; the widget names it: the same run
        const want = { ...widget };
        if (want.mask === info.places.find((p) => p.place === want.place).mask) delete want.mask;
        assert.deepEqual(link, want, `${JSON.stringify(choice)} on ${info.places.map((p) => p.place).join("+")}`);
      }
    }
  });

  it("turn the same heads off in every view", async () => {
    const gpt2 = { encoderDecoder: false, places: [{ place: "decoder_self", mask: "causal" }] };
    const link = requestFor(await decodeState("?text=a+b&off=1.0%2C1.3&offMean=1"), gpt2);
    assert.deepEqual(link, { texts: ["a b", "민수가 영희에게 책을 주었다."], place: "decoder_self", scale: true, ablate: "1.0,1.3", ablation: "mean" });
    const widget = requestOf(parseAttributes({ text: "a b", ablate: "1.0, 1.3" }, BASE).settings, gpt2);
    assert.equal(widget.ablate, "1.0,1.3");
    assert.equal(requestOf(parseAttributes({ text: "a b" }, BASE).settings, gpt2).ablate, undefined, "no heads off: none asked");
    assert.deepEqual(parseAttributes({ ablate: "1.x" }, BASE).problems.map((p) => p.attribute), ["ablate"]);
  });

  it("read the predictions from the run on show only when that run is the model's own", async () => {
    const gpt2 = { encoderDecoder: false, places: [{ place: "decoder_self", mask: "causal", masks: ["causal", "none"] }] };
    const bart = { encoderDecoder: true, places: [{ place: "encoder_self", mask: "padding" }, { place: "decoder_self", mask: "causal" }, { place: "cross", mask: "cross" }] };
    const reads = async (query, info) => predictsFromRun(requestFor(await decodeState(query), info), info);
    assert.equal(await reads("?text=a+b", gpt2), true);
    assert.equal(await reads("?text=a+b&off=1.0", gpt2), true, "heads off: the run has them off as the predictions do");
    assert.equal(await reads("?text=a+b&off=1.0&offMean=1", gpt2), false, "a mean over two texts (the second by default) is not the first text's mean");
    assert.equal(await reads("?text=a+b&text2=&off=1.0&offMean=1", gpt2), true);
    assert.equal(await reads("?text=a+b&mask=none", gpt2), false, "a what-if mask predicts something else");
    assert.equal(await reads("?text=a+b&scale=0", gpt2), false, "so does a what-if scaling");
    assert.equal(await reads("?text=a&target=x&place=cross", bart), true);
    assert.equal(await reads("?text=a&target=x&place=encoder_self", bart), false, "the encoder's run has no decoder output");
    assert.equal(predictsFromRun({ texts: ["a"] }, { fromFile: true, places: [] }), false, "weights from a file: no model");
  });

  it("name the heads off the way the grid counts them, and toggle one at the place on show", () => {
    const shape = { layers: 3, heads: 4 };
    const bart = { places: [{ place: "encoder_self", ...shape }, { place: "decoder_self", ...shape }, { place: "cross", ...shape }] };
    const bert = { places: [{ place: "encoder_self", ...shape }] };
    const T = (key, v) => (key === "gridLabel" ? `L${v.layer}H${v.head}` : key);
    // a head without a place is at the decoder's self-attention when there is one, else the encoder's
    assert.deepEqual([...offHeads("1.0, cross:0.3", bart)], ["decoder_self:1.0", "cross:0.3"]);
    assert.deepEqual([...offHeads("1.0", bert)], ["encoder_self:1.0"]);
    assert.deepEqual([...offAt("1.0,cross:0.3,decoder_self:2.1", "decoder_self", bart)], ["1.0", "2.1"]);
    assert.deepEqual([...offAt("1.0", "cross", bart)], []);
    // the toy and a file turn no head off: none is marked
    assert.deepEqual([...offAt("1.0", "decoder_self", { ...bart, trained: false })], []);
    assert.deepEqual([...offAt("1.0", "decoder_self", { ...bart, fromFile: true })], []);
    assert.equal(offNames("1.0,cross:0.3", bart, T), "L2H1; place.cross: L1H4");
    // heads a model lacks (a layer or head past its count, a place it has not) and items that
    // are no head (not L.H, a place no model has), each told apart, a head written twice once
    const { has, lacks, malformed } = offSplit("1.0, 3.0, 0.4, cross:2.3, x, encoder_self:0.0, 1.0, foo:1.0, 1.0.0, -1.0", bert);
    assert.deepEqual(has, ["encoder_self:1.0", "encoder_self:0.0"]);
    assert.deepEqual(lacks, ["encoder_self:3.0", "encoder_self:0.4", "cross:2.3"]);
    assert.deepEqual(malformed, ["x", "foo:1.0", "1.0.0", "-1.0"]);
    // a typed spec keeps every item as typed, so a link opens with the field as it was left; bounded
    assert.equal(offTyped(" 1.3 , abc,, 2 .1 "), "1.3,abc,2.1");
    assert.equal(offTyped(Array(100).fill("1.0").join(",")).split(",").length, 64);
    assert.equal(offTyped("x".repeat(5000)).length, 24);
    assert.equal(offTyped(undefined), "");
    assert.equal(offTyped("가".repeat(30) + "😀"), "가".repeat(24), "a cut never splits a character");
    assert.equal(offTyped("😀".repeat(30)), "😀".repeat(24));
    // 01.0 is head 1.0, as the core reads it: marked, toggled and named as that head
    assert.deepEqual([...offAt("01.0", "decoder_self", bart)], ["1.0"]);
    assert.equal(toggleOff("01.0", { place: "decoder_self", layer: 1, head: 0 }, bart), "");
    // the widget turns off the heads written as heads and names only the items it leaves out
    const { settings, problems } = parseAttributes({ ablate: "1.0, x,1.3,y", text: "a" }, BASE);
    assert.equal(settings.off, "1.0,1.3");
    assert.deepEqual(problems.map((p) => [p.attribute, p.value]), [["ablate", "x,y"]]);
    const many = parseAttributes({ ablate: Array(66).fill("0.1").join(","), text: "a" }, BASE);
    assert.deepEqual(many.problems.map((p) => [p.attribute, p.value]), [["ablate", "0.1,0.1"]], "past 64 heads: the rest named");
    assert.equal(offKept("1.0, 5.0, cross:2.3, encoder_self:3.1", bart), "1.0,cross:2.3");
    assert.equal(headNames(["cross:2.3", "decoder_self:x"], bart, T), "place.cross: L3H4; place.decoder_self: “x”");
    // a model of one place: its heads unnamed by place, a head of a place it lacks named by it
    assert.equal(headNames(["encoder_self:2.3", "cross:0.1"], bert, T), "L3H4; place.cross: L1H2");
    // toggling writes the default place as a reader types it, and any other by name
    assert.equal(toggleOff("", { place: "decoder_self", layer: 1, head: 3 }, bart), "1.3");
    assert.equal(toggleOff("1.3", { place: "cross", layer: 0, head: 2 }, bart), "1.3,cross:0.2");
    assert.equal(toggleOff("1.3,cross:0.2", { place: "decoder_self", layer: 1, head: 3 }, bart), "cross:0.2");
    assert.equal(toggleOff("decoder_self:1.3", { place: "decoder_self", layer: 1, head: 3 }, bart), "", "the same head, however it was written");
    for (const spec of ["1.3,cross:0.2", "encoder_self:0.0"]) {
      const toggled = toggleOff(spec, { place: "encoder_self", layer: 2, head: 5 }, bart);
      assert.equal(offOf(toggled), toggled, "a toggled spec is one a link takes whole");
    }
  });

  it("load the same built-in models and toy presets", () => {
    const assets = new URL("https://blog.example/assets/headmap/");
    for (const name of ["trained", "induction"]) assert.deepEqual(widgetSource({ from: name }, 1, assets), sourceOf(name, assets));
    for (const preset of Object.keys(TOY_PRESETS)) {
      assert.deepEqual(widgetSource({ from: "toy", preset }, 9, assets), sourceOf("toy", assets, { preset, seed: 9, layers: TOY_PRESETS[preset] }));
    }
    const { settings } = parseAttributes({ model: "minilm" }, BASE);
    assert.equal(settings.model.from, "url", "MiniLM is the explorer's only: the widget reads the name as a folder of its own");
  });
});
