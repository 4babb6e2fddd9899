// The page's words are tables of key → text. A key written twice in one table, or in two
// tables the page merges (the explorer's own over the shared ones, a panel's over both), keeps
// only the last text, silently: the training panel's notice once showed "The model shown stays
// {model}." that way. Each key is written once.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";

import { EXPLORER_STRINGS } from "../../www/js/explorer/strings.js";
import { FIND } from "../../www/js/strings/find.js";
import { GENERATE } from "../../www/js/strings/generate.js";
import { VIEW_WORDS } from "../../www/js/strings/views.js";
import { EN } from "../../www/js/strings/en.js";
import { PROBLEMS } from "../../www/js/strings/errors.js";
import { KO } from "../../www/js/strings/ko.js";
import { QK } from "../../www/js/strings/qk.js";
import { TRAIN } from "../../www/js/strings/train.js";

const FILES = ["explorer/strings.js", "strings/en.js", "strings/ko.js", "strings/errors.js", "strings/train.js", "strings/find.js", "strings/qk.js", "strings/generate.js", "strings/views.js"];

/** Keys written more than once inside one object literal of `source`, as "key (lines a, b)". */
function repeatedKeys(source) {
  const repeated = [];
  let seen = new Map();
  source.split("\n").forEach((line, i) => {
    // a table opens: `en: {`, `ko: {`, `export const X = {`
    if (/^\s*(\w+)\s*:\s*\{\s*$/.test(line) || /^export const \w+ = \{/.test(line)) seen = new Map();
    const m = line.match(/^\s{2,4}(?:"([^"]+)"|([A-Za-z_$][\w$]*)):\s/);
    if (!m) return;
    const key = m[1] ?? m[2];
    if (seen.has(key)) repeated.push(`${key} (lines ${seen.get(key) + 1}, ${i + 1})`);
    seen.set(key, i);
  });
  return repeated;
}

describe("the page's words", () => {
  it("write each key once in each table", async () => {
    for (const file of FILES) {
      const source = await readFile(new URL(`../../www/js/${file}`, import.meta.url), "utf8");
      assert.deepEqual(repeatedKeys(source), [], file);
    }
  });

  it("write each key in one of the tables the page merges", () => {
    for (const lang of ["en", "ko"]) {
      const tables = { shared: { en: EN, ko: KO }[lang], problems: PROBLEMS[lang], explorer: EXPLORER_STRINGS[lang], train: TRAIN[lang], find: FIND[lang], qk: QK[lang], generate: GENERATE[lang], views: VIEW_WORDS[lang] };
      const owner = new Map();
      const clashes = [];
      for (const [name, table] of Object.entries(tables)) {
        for (const key of Object.keys(table ?? {})) {
          if (owner.has(key)) clashes.push(`${key}: ${owner.get(key)} and ${name}`);
          owner.set(key, name);
        }
      }
      assert.deepEqual(clashes, [], lang);
    }
  });
});
