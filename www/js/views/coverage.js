// How much of a text a model read as words it knows, in words a reader understands. The core
// measures it per row (`coverage`: shares of unknown tokens and of words spelled out letter by
// letter); this module decides when it is worth saying and says it.

/** Below this share of tokens read as words, a note says the model does not read the text. */
export const READ_ENOUGH = 0.8;

/** The row's coverage as one figure: the side that read less (queries and keys may differ). */
export function rowCoverage(tokens) {
  const c = tokens.coverage;
  if (!c) return null;
  return c.queries.read <= c.keys.read ? c.queries : c.keys;
}

/**
 * The note for `tokens` read by a model called `model`, or null when it read the text well.
 * `reads` is what the model's card says it reads (words for `T`), when known; `script` false
 * for a model whose vocabulary is known to cover the text's script (its unknown tokens are
 * words it never learnt, not letters it cannot spell). A text in which the model read a word of
 * each script its unknown tokens are written in shows it covers them, whatever `script` says.
 */
export function coverageNote(tokens, T, model, reads = null, script = true) {
  const c = rowCoverage(tokens);
  if (!c || !c.tokens || c.read >= READ_ENOUGH) return null;
  const pct = (x) => `${Math.round(x * 100)}%`;
  const parts = [T("coverage.measure", { model, read: pct(c.read), unknown: pct(c.unknown), letters: pct(c.letters) })];
  if (script && c.unknown > 0.5 && !readsScriptOf(tokens)) parts.push(T("coverage.script"));
  if (reads) parts.push(T(reads));
  return parts.join(" ");
}

/** The scripts a letter of an unknown token is looked up in; a letter of any other counts as not read. */
const SCRIPTS = ["Latin", "Hangul", "Han", "Hiragana", "Katakana", "Cyrillic", "Greek", "Arabic", "Hebrew", "Thai", "Devanagari"].map((name) => new RegExp(`\\p{Script=${name}}`, "u"));

/**
 * Whether the model read, somewhere in `tokens`' row, a word or a word's continuation in every
 * script its unknown tokens and pieces of characters are written in: then it covers the
 * script, and lacks only the words. False when it read everything.
 */
export function readsScriptOf(tokens) {
  const all = [tokens.queries, tokens.keys].flat();
  const letters = (kinds) => [...all.filter((t) => kinds.includes(t.kind)).map((t) => t.text).join("")].filter((ch) => /\p{L}/u.test(ch));
  const scriptOf = (ch) => SCRIPTS.find((re) => re.test(ch));
  const read = new Set(letters(["word", "continuation"]).map(scriptOf));
  const unread = letters(["unknown", "part"]);
  return unread.length > 0 && unread.every((ch) => scriptOf(ch) !== undefined && read.has(scriptOf(ch)));
}
