// The reader's language: the shared catalogue (strings/en.js, strings/ko.js) with a page's own
// words added, looked up and filled in. Korean grammar is in korean.js, errors in words in
// error-text.js; both are re-exported here for pages that need only this module.

import { fill } from "./korean.js";
import { STRINGS } from "./strings/index.js";

export { STRINGS, loadErrors, loadLanguage } from "./strings/index.js";
export { ERRORS_KO } from "./strings/errors.js";
export { fill, particles } from "./korean.js";
export { errorText } from "./error-text.js";

/** Adds a page's own strings ({ en: {…}, ko: {…} }) to the shared ones. */
export function addStrings(more) {
  for (const [lang, strings] of Object.entries(more)) Object.assign(STRINGS[lang], strings);
}

/** "ko" when the browser prefers Korean, else "en". */
export function browserLang(languages = globalThis.navigator?.languages ?? []) {
  return languages.some((l) => l.toLowerCase().startsWith("ko")) ? "ko" : "en";
}

/** The string `key` in `lang`, falling back to English, then to the key itself. */
export function t(lang, key) {
  return STRINGS[lang]?.[key] ?? STRINGS.en[key] ?? key;
}

const BYTE_UNITS = { en: ["KiB", "MiB", "GiB"], ko: ["키비바이트", "메비바이트", "기비바이트"] };

/** `bytes` in the largest binary unit that keeps at least 1 (KiB at least), as `lang` writes it. */
export function formatBytes(lang, bytes) {
  const units = BYTE_UNITS[lang] ?? BYTE_UNITS.en;
  let i = 0;
  let value = bytes / 1024;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  const number = value.toLocaleString(lang === "ko" ? "ko-KR" : "en-US", { maximumFractionDigits: 1 });
  return lang === "ko" ? `${number}${units[i]}` : `${number} ${units[i]}`;
}

/** `t(lang, key)` filled with `values`. */
export function tf(lang, key, values) {
  return fill(t(lang, key), values);
}
