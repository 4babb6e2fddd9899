// An error as the reader should read it: the core's or the page's coded errors (errors.js)
// worded in the reader's language from the templates in strings/errors.js.

import { fill } from "./korean.js";
import { STRINGS } from "./strings/index.js";
import { ERRORS_EN, ERRORS_KO, HINTS, PATTERNS_KO, WORDS_KO } from "./strings/errors.js";

/**
 * An error as the reader should read it: the core's own message in English; in Korean the
 * template of its code, with its details filled in and the names in them translated.
 */
export function errorText(lang, error) {
  const text = wordError(lang, error);
  // a hint may depend on where the error came from (`variant`: a fetch from the Hub, a folder, a file)
  const hints = HINTS[lang] ?? {};
  const hint = hints[`${error?.code}.${error?.details?.variant}`] ?? hints[error?.code] ?? "";
  // a sentence, then what to do about it (a file name keeps its case: "config.json: …")
  const first = text.split(/[\s:]/)[0];
  const sentence = first.includes(".") ? text : text.charAt(0).toUpperCase() + text.slice(1);
  const ended = /[.!?。]$/.test(sentence) ? sentence : `${sentence}.`;
  return hint ? `${ended} ${hint}` : ended;
}

/**
 * A place's or mask's name as a sentence uses it ("the padding mask"), or null for other
 * values. `details` tell which a list or a value is: `unknown_name` names its `setting`.
 */
function nameOf(lang, code, key, value, details = {}) {
  const listed = code === "unknown_name" && (key === "value" || key === "expected") && ["mask", "place"].includes(details.setting) ? details.setting : null;
  const kind = listed ?? (key === "mask" || (code === "mask_not_for_place" && key === "expected") ? "mask" : key === "place" || key === "have" ? "place" : key === "score" ? "score" : null);
  const name = kind && STRINGS[lang][`${kind}.${value}`];
  if (!name) return null;
  return lang === "en" ? name.charAt(0).toLowerCase() + name.slice(1) : name;
}

function wordError(lang, error) {
  const code = error?.code;
  // the words of the page's language could not be loaded (the widget's bundle fetches them)
  if (lang === "ko" && !Object.keys(ERRORS_KO).length) return error?.message ?? String(error);
  if (lang !== "ko") {
    const template = ERRORS_EN[code];
    if (!template || !error?.details) return error?.message ?? String(error);
    const values = {};
    for (const [k, v] of Object.entries(error.details)) {
      const word = (x) => nameOf("en", code, k, x, error.details) ?? x;
      if (k === "expected" && Array.isArray(v)) {
        const masks = v.map(word).map((name) => (name === "no mask" ? name : `the ${name}`));
        values[k] = masks.length > 1 ? `${masks.slice(0, -1).join(", ")} or ${masks.at(-1)}` : masks.join("");
      } else values[k] = Array.isArray(v) ? v.map(word).join(", ") : word(v);
    }
    return fill(template, shownLayer(values, error.details));
  }
  // a file's problem is nested: { code: "file", file, problem: { problem: "wrong_shape", … } }
  const { problem = null, ...rest } = error?.details ?? {};
  const details = problem && typeof problem === "object" ? { ...rest, ...problem } : rest;
  const key = code === "file" && problem ? `file.${problem.problem}` : code;
  // an error may say more in some cases (`variant`): its own template, where there is one
  const template = ERRORS_KO[`${key}.${details.variant}`] ?? ERRORS_KO[key];
  if (!template) return fill(STRINGS.ko.unknownError, { code: code ?? "?" });
  const values = {};
  for (const [k, v] of Object.entries(details)) {
    const word = (x) => nameOf("ko", code, k, x, details) ?? WORDS_KO[x] ?? patterned(x);
    values[k] = Array.isArray(v) ? (v.every((x) => typeof x === "number") ? `[${v.join(", ")}]` : v.map(word).join(", ")) : word(v);
  }
  return fill(template, shownLayer(values, details));
}

/** `values` with `layerShown`, a layer of `details` counted from 1 as the page's labels count it (the core counts from 0). */
function shownLayer(values, details) {
  return typeof details.layer === "number" ? { ...values, layerShown: details.layer + 1 } : values;
}

/** `value` in Korean by the first of PATTERNS_KO it matches, else as it is. */
function patterned(value) {
  const found = typeof value === "string" && PATTERNS_KO.find(([pattern]) => pattern.test(value));
  return found ? value.replace(found[0], found[1]) : value;
}
