// The catalogue of words the widget and the explorer share, by language.

import { EN } from "./en.js";
import { PROBLEMS } from "./errors.js";
import { KO } from "./ko.js";

/** The shared words with a widget's words for its attributes' problems (lazy in its bundle). */
export const STRINGS = { en: { ...EN, ...PROBLEMS.en }, ko: { ...KO, ...PROBLEMS.ko } };

/** Both languages are here already; the widget's bundle loads one at a time (lazy.js). */
export function loadLanguage() {
  return Promise.resolve();
}

/** The error words are here already; the widget's bundle loads them at its first error (lazy.js). */
export function loadErrors() {
  return Promise.resolve();
}
