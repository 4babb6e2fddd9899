// docs/attention.schema.json describes the files headmap writes: the committed fixtures (the
// command line's JSON, and the metadata of its safetensors) pass it, and what the reader
// refuses for its form does not.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const schema = JSON.parse(readFileSync(join(ROOT, "docs", "attention.schema.json"), "utf8"));
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
const fixture = (name) => readFileSync(join(ROOT, "tests", "fixtures", "attention", name));

/** A safetensors file's header: 8 bytes of length, then JSON. */
function header(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  return JSON.parse(bytes.subarray(8, 8 + n).toString("utf8"));
}

describe("the attention file's schema", () => {
  it("passes the command line's JSON", () => {
    const doc = JSON.parse(fixture("tiny-ko-en.json").toString("utf8"));
    assert.ok(validate(doc), JSON.stringify(validate.errors));
    assert.equal(doc.format, "headmap.attention");
  });

  it("passes the metadata of the safetensors form, whose tensors are [L, H, Tq, Tk]", () => {
    for (const name of ["tiny-ko-en.safetensors", "tiny-ko-en.f32.safetensors"]) {
      const head = header(fixture(name));
      const doc = JSON.parse(head.__metadata__.headmap);
      assert.ok(validate(doc), `${name}: ${JSON.stringify(validate.errors)}`);
      const place = doc.rows[0].attention.encoder_self;
      assert.equal(place.weights, undefined, "the weights are tensors, not metadata");
      const tensor = head["rows.0.encoder_self"];
      assert.equal(tensor.dtype, name.includes("f32") ? "F32" : "F16");
      assert.deepEqual(tensor.shape.slice(2), [place.queries.length, place.keys.length]);
    }
  });

  it("fails what the reader refuses for its form", () => {
    const doc = JSON.parse(fixture("tiny-ko-en.json").toString("utf8"));
    const bad = [
      { ...doc, format: "other" },
      { ...doc, rows: [] },
      { rows: [{ attention: { nowhere: doc.rows[0].attention.encoder_self } }] },
      { rows: [{ attention: { encoder_self: { ...doc.rows[0].attention.encoder_self, mask: "diagonal" } } }] },
      { rows: [{ attention: { encoder_self: { ...doc.rows[0].attention.encoder_self, query_kinds: ["letter"] } } }] },
      { rows: [{ attention: { encoder_self: { keys: [] } } }] },
    ];
    for (const d of bad) assert.equal(validate(d), false, JSON.stringify(d).slice(0, 80));
  });
});
