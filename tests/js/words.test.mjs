// Every word a Korean reader meets is Korean: every error code of both sides (the core's in
// src/error.rs, the page's in errors.js) has Korean words, and no Korean string holds a Latin
// word that is not a name, a piece of code or a file name.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";

import { JS_CODES } from "../../www/js/errors.js";
import { TRAIN } from "../../www/js/strings/train.js";
import { EXPLORER_STRINGS } from "../../www/js/explorer/strings.js";
import { ERRORS_KO, STRINGS, errorText } from "../../www/js/i18n.js";
import { HINTS } from "../../www/js/strings/errors.js";
import { FIND } from "../../www/js/strings/find.js";
import { GENERATE } from "../../www/js/strings/generate.js";
import { VIEW_WORDS } from "../../www/js/strings/views.js";
import { QK } from "../../www/js/strings/qk.js";

/** Names a Korean sentence writes in Latin letters: models, families, formats, the product. */
const NAMES = new Set([
  "headmap", "MiniLM", "English", "BERT", "RoBERTa", "XLM-R", "DistilBERT", "ELECTRA", "GPT-2", "GPT-Neo", "GPT-NeoX", "Llama", "Qwen2", "Mistral",
  "BART", "Marian", "T5", "Kobayashi", "RoPE", "CSP", "JSON", "CSV", "PNG", "SVG", "URL", "MB", "Helsinki-NLP/opus-mt-ko-en", "trusted-types", "http", "https",
  "Olsson", "transformers", "nat", // a paper's author, a library, a unit
  "AttentionViz", "Yeh", "t-SNE", // a tool, its paper's author, a projection
]);
/** Attribute names and values an author writes, quoted as such: code, not words. */
const VALUES = new Set(["trained", "induction", "small", "base", "all", "none", "padding", "causal", "cross", "ablate", "step"]);

/** The Latin words of `text` that are none of the above. */
function foreignWords(text) {
  const out = [];
  const plain = text.replace(/\{\w+\}/g, " "); // values filled in later are not the template's words
  for (const token of plain.split(/[\s,;:()[\]|·—–…“”‘’"'.!?]+|(?<=[가-힣])(?=[A-Za-z])|(?<=[A-Za-z])(?=[가-힣])/)) {
    if (!/[A-Za-z]/.test(token)) continue;
    const word = token.replace(/^[^\w]+|[^\wᵀ₀-₉-]+$/g, "");
    const code = /[_\d/=<>ᵀ²³·]/.test(word) || /^[A-Z]+$/.test(word) || /^[a-zA-Z]$/.test(word); // d_model, QKᵀ, W_Q, PAD, Q
    const file = /^(config|tokenizer|model|vocab|source|headmap|safetensors|spm|json|txt|index)$/.test(word); // pieces of config.json, source.spm, …
    if (code || file || NAMES.has(word) || VALUES.has(word)) continue;
    out.push(word);
  }
  return out;
}

describe("words", () => {
  it("give every error code of both sides Korean words", async () => {
    const source = await readFile(new URL("../../src/error.rs", import.meta.url), "utf8");
    const variants = (block) => [...block.matchAll(/^\s{4}([A-Z]\w+)\s*[{,]/gm)].map((m) => m[1].replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase()));
    const core = variants(source.slice(source.indexOf("pub enum Error"), source.indexOf("pub enum FileProblem"))).filter((c) => c !== "file");
    const files = variants(source.slice(source.indexOf("pub enum FileProblem"), source.indexOf("pub type Result"))).map((c) => `file.${c}`);
    const codes = [...core, ...files, ...JS_CODES];
    assert.ok(JS_CODES.length >= 15, `${JS_CODES.length} codes of the page's own`);
    assert.deepEqual(codes.filter((c) => !(c in ERRORS_KO)), [], "every code has a Korean template");
    // and the page never says "unknown error" to a Korean reader for one of its own
    for (const code of JS_CODES) assert.doesNotMatch(errorText("ko", { code, message: "x", details: {} }), /알 수 없는 오류/, code);
  });

  it("make every code the page's JavaScript throws one that errors.js lists", async () => {
    const { readdir } = await import("node:fs/promises");
    const found = new Set();
    const walk = async (dir) => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory()) await walk(path);
        else if (path.endsWith(".js")) for (const m of (await readFile(path, "utf8")).matchAll(/coded\([^;]*?,\s*"(\w+)"/gs)) found.add(m[1]);
      }
    };
    await walk(new URL("../../www/js", import.meta.url).pathname);
    assert.ok(found.size >= 10, `${found.size} codes thrown`);
    assert.deepEqual([...found].filter((c) => !JS_CODES.includes(c)), []);
  });

  it("write Korean in every Korean string: Latin only for names, code and file names", () => {
    const catalogue = {
      ...STRINGS.ko,
      ...EXPLORER_STRINGS.ko,
      ...FIND.ko,
      ...TRAIN.ko,
      ...GENERATE.ko,
      ...VIEW_WORDS.ko,
      ...QK.ko,
      ...Object.fromEntries(Object.entries(ERRORS_KO).map(([k, v]) => [`error.${k}`, v])),
      ...Object.fromEntries(Object.entries(HINTS.ko).map(([k, v]) => [`hint.${k}`, v])),
    };
    assert.ok(Object.keys(catalogue).length > 250);
    const foreign = Object.entries(catalogue).flatMap(([key, text]) => foreignWords(text).map((w) => `${key}: ${w}`));
    assert.deepEqual(foreign, []);
  });

  it("say in Korean which files are missing, the Marian alternative included", async () => {
    const { checkFiles } = await import("../../www/js/model-files.js");
    let error;
    try {
      checkFiles({ config: new Uint8Array(1), weights: new Uint8Array(1) }, "the chosen files");
    } catch (e) {
      error = e;
    }
    assert.equal(error.code, "files_missing");
    assert.match(error.message, /missing tokenizer\.json \(or source\.spm \+ vocab\.json\)/, "English as before");
    const ko = errorText("ko", error);
    assert.equal(ko, "고른 파일에 tokenizer.json이(가) 없습니다. 마리안 모델이면 tokenizer.json 대신 source.spm과 vocab.json을 주세요. 모델 폴더 전체나 모든 파일을 고르세요.");
    assert.deepEqual(foreignWords(ko), []);
  });

  it("catch the words a reader met", () => {
    assert.deepEqual(foreignWords("누가, 누구에게, 무엇을 — head마다 다른 관계를 볼 수 있다."), ["head"]);
    assert.deepEqual(foreignWords("고른 파일에 tokenizer.json (or source.spm + vocab.json)이(가) 없습니다"), ["or"]);
    assert.deepEqual(foreignWords("{model} 모델은 {read}만 읽었습니다. d_model, QKᵀ, config.json, PAD."), []);
  });
});
