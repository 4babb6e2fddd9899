// The query–key picture file (www/js/qk-file.js), as a crafted file would test it: the file
// Python writes reads back number for number; every field a drawing relies on is checked, and a
// file that fails says which, never a NaN point or a half-read picture.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import { errorText } from "../../www/js/error-text.js";
import { readQkPicture } from "../../www/js/qk-file.js";

const BYTES = readFileSync(new URL("../fixtures/qk/picture-tiny-ko-en.json", import.meta.url));
const DOC = JSON.parse(BYTES);
const encode = (doc) => new TextEncoder().encode(JSON.stringify(doc));
/** Latin words a Korean refusal may hold: the file's name, formats, JSON's field names and the values a crafted file puts in them. */
const KEPT = new Set(["x", "json", "headmap", "qk", "qk_picture", "UTF-8", "JSON", "format", "version", "heads", "layer", "head", "label", "kind", "text", "null", "true", "word", "lines", "sentences", "queries", "keys", "queryPositions", "keyPositions"]);

/** The refusal as a Korean reader reads it has no English word in it; null when it has none. */
const koreanOnly = (e) => {
  const ko = errorText("ko", e);
  const english = (ko.match(/[A-Za-z][\w-]*/g) ?? []).filter((w) => !KEPT.has(w));
  return english.length ? `the Korean refusal has “${english.join(", ")}” in it: ${ko}` : null;
};
const changed = (change) => {
  const copy = structuredClone(DOC);
  change(copy);
  return encode(copy);
};

describe("a query–key picture file", () => {
  it("reads the file Python writes, every point and label", () => {
    const p = readQkPicture(BYTES, "p.json");
    assert.equal(p.heads, DOC.heads);
    assert.equal(p.fromFile, true);
    assert.deepEqual([p.layer, p.head, p.place, p.modelType], [DOC.layer, DOC.head, DOC.place, DOC.model_type]);
    assert.deepEqual(p.corpus, DOC.corpus);
    assert.deepEqual(p.lines, DOC.lines);
    const queries = DOC.sentences.reduce((n, s) => n + s.queries.length, 0);
    for (const [h, picture] of p.pictures.entries()) {
      assert.ok(picture.coords instanceof Float32Array);
      assert.equal(picture.coords.length, 2 * (picture.queries + picture.keys));
      assert.equal(picture.queries, queries);
      assert.deepEqual(Array.from(picture.coords), DOC.pictures[h].coords.map(Math.fround));
    }
    assert.deepEqual(p.sentences[0].queries, DOC.sentences[0].queries);
  });

  it("refuses what a drawing cannot trust, naming it", () => {
    const cases = [
      [new Uint8Array([0xff, 0xfe, 0x7b]), "it is not UTF-8 JSON"],
      [encode([1, 2]), 'its format is not "headmap.qk"'],
      [changed((d) => (d.version = "1")), 'version "1": this page reads version 1'],
      [changed((d) => delete d.version), "version missing: this page reads version 1"],
      [changed((d) => (d.heads = 0)), "it has no head"],
      [changed((d) => (d.heads = 2.5)), "heads is not a whole number"],
      [changed((d) => (d.head = d.heads)), `head is not a whole number from 0 to ${DOC.heads - 1}`],
      [changed((d) => (d.layer = -1)), "layer is not a whole number"],
      [changed((d) => (d.sentences = [])), "at least one"],
      [changed((d) => d.sentences[2].keyPositions.pop()), "sentence 3's keys and keyPositions differ in length"],
      [changed((d) => (d.sentences[0].queryPositions[0] = -4)), "a position in sentence 1"],
      [changed((d) => (d.sentences[1].keys[0].label = 7)), "sentence 2's keys 1's label is not text"],
      [changed((d) => (d.sentences[0].queries[1].kind = "script")), "sentence 1's queries 2 is not a token"],
      [changed((d) => (d.lines[4] = null)), "line 5 is not text"],
      [changed((d) => d.pictures.pop()), `it has not one picture for each of its ${DOC.heads} heads`],
      [changed((d) => (d.pictures[0].queries += 1)), "head 1's picture does not have the sentences'"],
      [changed((d) => (d.pictures[0].coords[0] = "1")), "head 1's picture's coordinates have a value that is not a finite number at 0"],
      [changed((d) => (d.pictures[3].coords[5] = 1e999)), "head 4's picture's coordinates have a value that is not a finite number at 5"],
      [changed((d) => (d.pictures[1].coords[2] = -1e39)), "head 2's picture's coordinates have a value past what a 32-bit float holds at 2"],
      [changed((d) => (d.pictures[0].norms[3] = -0.5)), "head 1's picture's lengths have a value below 0 at 3"],
      [changed((d) => (d.pictures[0].explained = Array(9).fill(0))), "explained shares are not a few numbers"],
      [changed((d) => (d.pictures[0].correlation = [0.5])), "correlations are not two numbers"],
      [changed((d) => (d.pictures[0].scale = null)), "scale have a value that is not a finite number"],
      [changed((d) => (d.corpus.texts = -1)), "the corpus's texts is not a whole number"],
    ];
    for (const [bytes, problem] of cases) {
      assert.throws(
        () => readQkPicture(bytes, "x.json"),
        (e) => {
          assert.equal(koreanOnly(e), null);
          return e.code === "bad_qk_file" && e.message.startsWith("x.json is not a query–key picture headmap can draw: ") && e.message.includes(problem);
        },
        problem,
      );
    }
  });

  it("refuses or reads 2,000 crafted files, and what it reads draws: finite, in a float's range", () => {
    // xorshift32 from a fixed seed: a failure names a case that fails again
    let seed = 0x9e3779b9;
    const next = (below) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % below;
    };
    const odd = [null, true, -1, 0, 1, 2.5, 1e39, -1e39, 3e38, 1e-46, 2 ** 53, "", "1", "word", [], [0, 0], {}, { label: "x", kind: "word", text: "x" }];
    const paths = [];
    const walk = (v, path) => {
      paths.push(path);
      if (Array.isArray(v)) v.slice(0, 4).forEach((c, i) => walk(c, [...path, i]));
      else if (v && typeof v === "object") for (const [k, c] of Object.entries(v)) walk(c, [...path, k]);
    };
    walk(DOC, []);
    let read = 0;
    for (let i = 0; i < 2000; i++) {
      const copy = structuredClone(DOC);
      const path = paths[1 + next(paths.length - 1)];
      const parent = path.slice(0, -1).reduce((v, k) => v[k], copy);
      const key = path.at(-1);
      const how = next(4);
      const list = Array.isArray(parent[key]) && parent[key].length > 0;
      let done;
      if (how === 0 && list) done = `cut to ${(parent[key].length = next(parent[key].length))}`;
      else if (how === 1 && list) done = `lengthened to ${parent[key].push(structuredClone(parent[key][0]))}`;
      else if (how === 2 && !Array.isArray(parent)) {
        delete parent[key];
        done = "taken out";
      }
      else done = `= ${JSON.stringify((parent[key] = structuredClone(odd[next(odd.length)])))}`;
      const name = `case ${i}: ${path.join(".")} ${done}`;
      let picture;
      try {
        picture = readQkPicture(encode(copy), "x.json");
      } catch (e) {
        assert.ok(["bad_qk_file", "qk_file_too_large"].includes(e.code), `${name}: ${e.message}`);
        assert.equal(koreanOnly(e), null, name);
        continue;
      }
      read++;
      for (const [h, p] of picture.pictures.entries()) {
        for (const field of ["coords", "norms", "explained"]) assert.ok(p[field].every(Number.isFinite), `${name}: head ${h}'s ${field}`);
        assert.ok(p.norms.every((v) => v >= 0), `${name}: head ${h}'s lengths`);
        assert.ok(Number.isFinite(p.scale), `${name}: head ${h}'s scale`);
        // the plot's scale (qk-plot.js): the points' span, finite
        const xs = p.coords.filter((_, j) => j % 2 === 0);
        const ys = p.coords.filter((_, j) => j % 2 === 1);
        const span = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys));
        assert.ok(Number.isFinite(span), `${name}: head ${h}'s span ${span}`);
      }
      assert.ok(picture.sentences.every((s) => s.queries.every((t) => typeof t.label === "string")), name);
    }
    assert.ok(read >= 100, `${read} of 2,000 read: the sweep drew almost nothing`);
  });

  it("refuses a file past the limit before reading it", () => {
    const big = { byteLength: (64 << 20) + 1 };
    assert.throws(() => readQkPicture(big, "big.json"), (e) => e.code === "qk_file_too_large" && e.message === "big.json is too large: a picture file has at most 64 MB");
  });
});
