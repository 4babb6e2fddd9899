// What went wrong in a widget, said in the reader's language: the author's attributes that fell
// back to a default or were drawn otherwise, then the error of the last run, drawing or save.
// One `error` event per attribute problem when the set of them changes; never a throw.

import { errorText, loadErrors } from "../i18n.js";

/** An attribute problem as the author's console reads it, and the reader when words cannot load. */
const englishOf = (p) => p.message ?? `${p.attribute}="${p.value}": use ${p.expected}`;

export class Problems {
  /** `box`: () => the error element; `T`: words; `emit(detail)`: fires an `error` event. */
  constructor({ box, T, lang, emit }) {
    Object.assign(this, { box, T, lang, emit });
    this.attributes = []; // [{ attribute, value, expected, message?, key? and values?: its words, count?: a count it went past }]
    this.error = null;
    this.failing = null; // an error waiting for its words
    this.announced = "";
    this.worded = false; // the attributes' words are loaded with the error words, at the first problem
    this.unworded = false; // they could not be loaded: English until a later update brings them
    this.loading = null;
  }

  /** The attributes' problems of this update, and no error yet. */
  reset(attributes) {
    this.attributes = attributes;
    this.unworded = false; // words that could not come are asked for again
    this.failing = null;
    this.error = null;
    this.show();
  }

  /** Resolves once the attributes' problems are said in words (or in English, if the words cannot come). */
  words() {
    return this.loading ?? Promise.resolve();
  }

  /** One more attribute problem. */
  add(problem) {
    this.attributes = [...this.attributes, problem];
    this.show();
  }

  /** Attribute `name`'s `value` is past the model's `count`: the last one is drawn, and said. */
  clamped(name, value, count) {
    this.add({ attribute: name, value: String(value), expected: `0–${count - 1}`, count, message: `${name}="${value}": the model has ${count}, so ${count - 1} is shown` });
  }

  /**
   * Shows `e` below the attributes' problems and fires the `error` event, once the error words
   * are there (a widget fetches them at its first error; if they cannot come, the core's English
   * message is shown). An error cleared or replaced meanwhile is not shown.
   */
  fail(e) {
    this.failing = e;
    const said = () => {
      if (this.failing !== e) return;
      this.error = e;
      this.show();
      this.emit({ message: e?.message ?? String(e), code: e?.code ?? "error", ...(e?.details ? { details: e.details } : {}) });
    };
    loadErrors().then(said, said);
  }

  clearError() {
    this.failing = null;
    this.error = null;
    this.show();
  }

  /** The error box: one line per attribute problem (once their words are here), then the error. */
  show() {
    const box = this.box();
    if (!box) return;
    if (this.attributes.length && !this.worded && !this.loading) {
      this.loading = loadErrors().then(
        () => Object.assign(this, { worded: true, unworded: false, loading: null }).show(),
        () => Object.assign(this, { unworded: true, loading: null }).show(),
      );
    }
    const said = (p) => (p.count ? this.#clampedText(p) : p.key ? this.T(p.key, p.values) : this.#attributeText(p));
    const lines = this.worded ? this.attributes.map(said) : this.unworded ? this.attributes.map(englishOf) : [];
    if (this.error) lines.push(errorText(this.lang(), this.error));
    // each on its own line (the style keeps line breaks)
    box.textContent = lines.join("\n");
    box.hidden = !lines.length;
  }

  /** An `error` event per attribute problem, when the set of problems changed. */
  announce() {
    const described = JSON.stringify(this.attributes);
    if (described === this.announced) return;
    this.announced = described;
    for (const p of this.attributes) {
      this.emit({ message: englishOf(p), code: "attribute", attribute: p.attribute, value: p.value, expected: p.expected });
    }
  }

  /** An attribute past the model's count, said in the reader's language: the last one is drawn. */
  #clampedText({ attribute, value, count }) {
    const { T } = this;
    const what = T(`clamped.${attribute}`);
    return T("clamped", { attribute, value, count: T("clamped.count", { n: count, what }), range: `0–${count - 1}`, shown: T("clamped.shown", { what, max: count - 1 }) });
  }

  /** An attribute that fell back to its default, said in the reader's language. */
  #attributeText({ attribute, value, expected }) {
    const shown = [...String(value)].length > 40 ? `${[...String(value)].slice(0, 40).join("")}…` : String(value);
    const key = `expected.${attribute}`;
    const words = this.T(key);
    return this.T("badAttribute", { attribute, value: shown, expected: words === key ? expected : words });
  }
}
