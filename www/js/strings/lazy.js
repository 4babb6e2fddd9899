// The catalogue as the widget's bundle has it (scripts/build/dist.mjs puts this module in place of
// index.js and errors.js for the widget): empty until `loadLanguage(lang)` fetches the one
// language a page needs, and without error words until `loadErrors()` fetches them when a
// widget first has an error to say (with them, the words for an attribute it could not use). A
// blog reader downloads one language and, mostly, no errors.

export const STRINGS = { en: {}, ko: {} };
export const ERRORS_KO = {};
export const ERRORS_EN = {};
export const HINTS = { en: {}, ko: {} };
export const WORDS_KO = {};
export const PATTERNS_KO = [];

const loading = {};

/** Fetches the words of `lang` ("en" or "ko") once; resolves when they are in place. */
export function loadLanguage(lang) {
  loading[lang] ??= (lang === "ko" ? import("./ko.js") : import("./en.js")).then((words) => {
    Object.assign(STRINGS[lang], words.KO ?? words.EN);
  });
  // a failed fetch is tried again at the next update, not remembered
  loading[lang].catch(() => delete loading[lang]);
  return loading[lang];
}

/** Fetches the error words of both languages once; resolves when they are in place. */
export function loadErrors() {
  loading.errors ??= import("./errors.js").then((errors) => {
    for (const lang of ["en", "ko"]) {
      Object.assign(HINTS[lang], errors.HINTS[lang]);
      Object.assign(STRINGS[lang], errors.PROBLEMS[lang]);
    }
    Object.assign(ERRORS_EN, errors.ERRORS_EN);
    Object.assign(ERRORS_KO, errors.ERRORS_KO);
    Object.assign(WORDS_KO, errors.WORDS_KO);
    PATTERNS_KO.push(...errors.PATTERNS_KO);
  });
  loading.errors.catch(() => delete loading.errors);
  return loading.errors;
}
