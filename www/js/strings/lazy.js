// The catalogue as the widget's bundle has it (scripts/dist.mjs puts this module in place of
// index.js and errors.js for the widget): empty until `loadLanguage(lang)` fetches the one
// language a page needs, its error words with it. A blog reader downloads one language.

export const STRINGS = { en: {}, ko: {} };
export const ERRORS_KO = {};
export const ERRORS_EN = {};
export const HINTS = { en: {}, ko: {} };
export const WORDS_KO = {};

const loading = {};

/** Fetches the words of `lang` ("en" or "ko") once; resolves when they are in place. */
export function loadLanguage(lang) {
  loading[lang] ??= Promise.all([lang === "ko" ? import("./ko.js") : import("./en.js"), import("./errors.js")]).then(([words, errors]) => {
    Object.assign(STRINGS[lang], words.KO ?? words.EN);
    Object.assign(HINTS[lang], errors.HINTS[lang]);
    Object.assign(ERRORS_EN, errors.ERRORS_EN);
    if (lang === "ko") {
      Object.assign(ERRORS_KO, errors.ERRORS_KO);
      Object.assign(WORDS_KO, errors.WORDS_KO);
    }
  });
  // a failed fetch is tried again at the next update, not remembered
  loading[lang].catch(() => delete loading[lang]);
  return loading[lang];
}
