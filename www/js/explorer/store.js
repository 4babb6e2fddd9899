// The explorer's state, with one owner: modules ask for a change with `set(patch)`, which
// refuses a count that is no whole number from settings.js's lowest, and each new run fits the
// layer, head and row to what it has (`fit`); whoever cares (the link, the notices)
// subscribes. Views get the state to draw and write nothing back. The page's probe for the
// browser tests and the benchmark (`globalThis.__headmap`) is made here, once.

import { RANGES } from "../settings.js";

/** Settings that are whole numbers, or null where the model's suggestion stands. */
const COUNTS = ["layer", "head", "row", "layers", "seed"];

export class Store {
  #state;
  #subscribers = [];

  constructor(initial) {
    this.#state = Object.freeze({ ...initial });
    /** What the page did, for the browser tests and the page benchmark: renders, timings, errors, … */
    this.probe = globalThis.__headmap = { ready: false, renders: 0, timings: {}, errors: [] };
  }

  /** The state now: a frozen object, replaced (not changed) by `set`. */
  get state() {
    return this.#state;
  }

  /** Calls `fn(state, { changed, step, clamped })` after every change. */
  subscribe(fn) {
    this.#subscribers.push(fn);
  }

  /**
   * Changes the settings in `patch`; a count that is no whole number from its lowest is refused
   * (a bug: the controls offer none). How high a layer or head may go is the model's, which
   * `fit` applies. `step`: a change the back button returns from.
   */
  set(patch, { step = false } = {}) {
    const next = { ...this.#state };
    for (const [key, value] of Object.entries(patch)) {
      if (COUNTS.includes(key) && value !== null && !(Number.isInteger(value) && value >= RANGES[key][0])) {
        throw new RangeError(`${key} ${value} is not a whole number from ${RANGES[key][0]}`);
      }
      next[key] = value;
    }
    this.#commit(next, { step });
  }

  /**
   * A run with `shape` ({ layers, heads, batch }) is to be shown: a layer or head past it (a
   * link's) is shown at the last one, and the subscribers are told (`clamped`: [[name, asked,
   * count]]); a row past its batch at the last row.
   */
  fit({ layers, heads, batch }) {
    const next = { ...this.#state };
    const clamped = [];
    for (const [name, count] of [["layer", layers], ["head", heads]]) {
      if ((next[name] ?? 0) >= count) {
        clamped.push([name, next[name], count]);
        next[name] = count - 1;
      }
    }
    next.row = Math.min(next.row, batch - 1);
    this.#commit(next, { clamped });
  }

  #commit(next, { step = false, clamped = [] }) {
    const changed = Object.keys(next).filter((key) => next[key] !== this.#state[key]);
    if (!changed.length && !step && !clamped.length) return;
    this.#state = Object.freeze(next);
    for (const fn of this.#subscribers) fn(this.#state, { changed, step, clamped });
  }
}
