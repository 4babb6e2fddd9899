// The explorer's panels' number fields, read as typed: a whole number in its range, else an
// error that names the panel's setting, its value and what it must be (worded in Korean from
// strings/errors.js by its code).

import { coded } from "../errors.js";

/**
 * The whole number typed in `input` (`setting` on the `panel`'s form: "training", "writing"),
 * within [lo, hi]; `empty`, when given, stands for a blank field. Else a coded error: `code`.
 */
export function wholeField(input, { panel, code, setting, range: [lo, hi], empty }) {
  const raw = input.value.trim();
  if (raw === "" && empty !== undefined) return empty;
  const n = Number(raw);
  if (raw === "" || !Number.isInteger(n) || n < lo || n > hi) {
    throw coded(`the ${panel} setting ${setting} is ${raw || "empty"}: it must be ${lo} to ${hi}`, code, { setting, value: raw || "—", expected: `${lo} to ${hi}` });
  }
  return n;
}
