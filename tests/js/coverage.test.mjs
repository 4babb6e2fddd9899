// The note on a text a model read badly (www/js/views/coverage.js): it says a vocabulary does not
// cover a script only when nothing in the text shows it does. A model opened from a folder is not
// known to the page, so its own tokens have to tell.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { coverageNote, readsScriptOf } from "../../www/js/views/coverage.js";

const token = (kind, text) => ({ label: kind === "unknown" ? "<unk>" : text, piece: text, kind, text });
const row = (tokens, read, unknown) => ({ queries: tokens, keys: tokens, coverage: { queries: { tokens: tokens.length, read, unknown, letters: 0 }, keys: { tokens: tokens.length, read, unknown, letters: 0 } } });
const T = (key, values) => (values ? `${key}(${Object.values(values).join(",")})` : key);

describe("the coverage note", () => {
  it("does not blame the script when the model read words written in it", () => {
    // the induction model: Hangul words it knows beside Hangul words it never learnt
    const induction = row([token("special", ""), token("word", "고양이"), token("unknown", "철학자"), token("unknown", "비행기"), token("unknown", "자동차")], 0.25, 0.75);
    assert.equal(readsScriptOf(induction), true);
    const note = coverageNote(induction, T, "a folder", null, true);
    assert.match(note, /^coverage\.measure/);
    assert.doesNotMatch(note, /coverage\.script/);
  });

  it("blames the script when the model read none of it as words", () => {
    // an English vocabulary: Hangul only as unknown tokens and pieces of syllables
    const english = row([token("special", ""), token("part", "동"), token("unknown", "물이"), token("unknown", "길을"), token("word", "the")], 0.2, 0.6);
    assert.equal(readsScriptOf(english), false);
    assert.match(coverageNote(english, T, "MiniLM", null, true), /coverage\.script/);
    // a script outside the list the page knows counts as not read
    assert.equal(readsScriptOf(row([token("word", "ሰላም"), token("unknown", "ዓለም")], 0.5, 0.5)), false);
    // nothing unknown: nothing to blame
    assert.equal(readsScriptOf(row([token("word", "고양이")], 1, 0)), false);
  });

  it("says nothing of scripts for a model known to cover them", () => {
    const trained = row([token("unknown", "철학자"), token("unknown", "비행기")], 0, 1);
    assert.doesNotMatch(coverageNote(trained, T, "headmap-tiny-ko-en", null, false), /coverage\.script/);
  });
});
