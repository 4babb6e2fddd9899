// Which real-model build a page runs (www/js/compute.js): the relaxed-SIMD probe is a module
// that validates exactly where relaxed SIMD exists, and a twin that is missing or does not
// compile falls back to the plain build.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";

import { relaxedSimd } from "../../www/js/compute.js";

const MODULE = JSON.stringify(new URL("../../www/js/compute.js", import.meta.url).href);
// Node 20's V8 has relaxed SIMD behind this flag (on by default from Node 22)
const RELAXED = ["--experimental-wasm-relaxed-simd"];

/** `code` (a module body that prints) in a fresh Node with `flags`, compute.js imported as `c`. */
const inNode = (flags, code) =>
  execFileSync(process.execPath, [...flags, "--input-type=module", "-e", `import * as c from ${MODULE};\n${code}`], { encoding: "utf8" }).trim();

describe("the build a page runs", () => {
  it("finds relaxed SIMD only in an engine that has it", () => {
    assert.equal(inNode(RELAXED, "console.log(c.relaxedSimd())"), "true", "the probe is a valid module once relaxed SIMD is on");
    if (Number(process.versions.node.split(".")[0]) < 22) assert.equal(relaxedSimd(), false, "Node 20 has it off");
  });

  it("ships twins that need relaxed SIMD and plain builds that do not (after scripts/build/all)", () => {
    const wasm = (pkg) => {
      const path = new URL(`../../www/${pkg}/headmap_bg.wasm`, import.meta.url).pathname;
      if (!existsSync(path)) throw new Error(`${path} is missing: run scripts/build/all first`);
      return path;
    };
    const validates = (flags, pkg) =>
      inNode(flags, `import { readFileSync } from "node:fs"; console.log(WebAssembly.validate(readFileSync(${JSON.stringify(wasm(pkg))})))`);
    for (const pkg of ["pkg-hf", "pkg-hf-threads"]) assert.equal(validates([], pkg), "true", `${pkg} runs without relaxed SIMD`);
    for (const pkg of ["pkg-hf-relaxed", "pkg-hf-threads-relaxed"]) {
      assert.equal(validates(RELAXED, pkg), "true", `${pkg} runs with relaxed SIMD`);
      // where the engine has it off (Node 20 by default): proof the twin uses it
      if (!relaxedSimd()) assert.equal(validates([], pkg), "false", `${pkg} holds no relaxed SIMD instruction`);
    }
  });

  it("takes the relaxed twin where it starts, else the plain build", () => {
    const scenarios = `
      // a package as core.js imports it: default() starts its wasm, or fails to
      const pkg = (name, fails) => async () => ({ default: async () => (fails ? Promise.reject(new Error(name + " did not compile")) : { memory: name }) });
      const name = (p) => p.then((r) => r.name, (e) => "error: " + e.message);
      console.log(JSON.stringify([
        await name(c.started(["twin", pkg("twin")], ["plain", pkg("plain")])),
        await name(c.started(["twin", () => Promise.reject(new Error("404"))], ["plain", pkg("plain")])),
        await name(c.started(["twin", pkg("twin", true)], ["plain", pkg("plain")])),
        await name(c.started(["twin", pkg("twin", true)], ["plain", pkg("plain", true)])),
      ]));`;
    const [both, missing, broken, neither] = JSON.parse(inNode(RELAXED, scenarios));
    assert.equal(both, "twin", "relaxed SIMD and the twin: the twin");
    assert.equal(missing, "plain", "a host without the twin");
    assert.equal(broken, "plain", "a twin that does not compile");
    assert.equal(neither, "error: plain did not compile", "the plain build's own failure is the page's error");
    // where the engine has it off (Node 20 by default), never the twin
    if (!relaxedSimd()) assert.deepEqual(JSON.parse(inNode([], scenarios)).slice(0, 3), ["plain", "plain", "plain"]);
  });
});
