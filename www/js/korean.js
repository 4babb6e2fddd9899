// Korean grammar for filled-in templates: a particle depends on the word before it, and a
// template cannot know a value's last syllable in advance.

/**
 * `template` with each {name} replaced by `values[name]`, and the template's Korean particle
 * pairs fitted to the word before them: a value's last syllable, or the template's own text.
 * The values themselves are never touched (a reader's sentence may hold "이(가)" as typed).
 */
export function fill(template, values = {}) {
  const fitted = template.replace(VALUE_PAIR, (whole, name, quotes, pair) =>
    name in values ? `{${name}}${quotes}${fit(pair, finalConsonant(String(values[name]) + quotes))}` : whole,
  );
  return particles(fitted).replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

// A Korean particle depends on whether the word before it ends in a consonant (받침): 동물이,
// 마스크가. Templates write both forms, 이(가), and this picks one from the last syllable or
// digit as read aloud; after a Latin word the pair stays, as Korean writing does.
const PAIRS = { "은(는)": ["은", "는"], "이(가)": ["이", "가"], "을(를)": ["을", "를"], "과(와)": ["과", "와"], "(으)로": ["으로", "로"] };
const DIGIT_FINAL = { 0: 1, 1: 8, 2: 0, 3: 16, 4: 0, 5: 0, 6: 1, 7: 8, 8: 8, 9: 0 }; // 영/십/백…, 일, 이, 삼, 사, 오, 육, 칠, 팔, 구
const PAIR = "은\\(는\\)|이\\(가\\)|을\\(를\\)|과\\(와\\)|\\(으\\)로";
const CLOSERS = "’”)」』'\"";
/** A value, closing quotes, then a particle pair: `{key}’(으)로`. */
const VALUE_PAIR = new RegExp(`\\{(\\w+)\\}([${CLOSERS}]*)(${PAIR})`, "g");

/** The form of particle `pair` after a word whose final consonant is `final` (null: unknown). */
function fit(pair, final) {
  if (final === null) return pair;
  const [consonant, vowel] = PAIRS[pair];
  if (pair === "(으)로") return final === 0 || final === 8 ? vowel : consonant;
  return final === 0 ? vowel : consonant;
}

/** The final consonant of the last word before `end` in `text`: 0 none, 8 ㄹ, else another; null unknown. */
function finalConsonant(text, end = text.length) {
  let i = end - 1;
  while (i >= 0 && CLOSERS.includes(text[i])) i--; // look through closing quotes and brackets
  const c = text.codePointAt(i);
  if (c >= 0xac00 && c <= 0xd7a3) return (c - 0xac00) % 28;
  if (c >= 0x30 && c <= 0x39) return DIGIT_FINAL[c - 0x30];
  return null;
}

/** `text` with each paired particle, 이(가), replaced by the form its word takes. */
export function particles(text) {
  return text.replace(new RegExp(PAIR, "g"), (pair, at) => fit(pair, finalConsonant(text, at)));
}
