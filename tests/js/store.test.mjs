// The explorer's store: one owner of the state, changes through `set`, a new run fits the
// layer, head and row, and the page's probe is made once.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Store } from "../../www/js/explorer/store.js";
import { DEFAULTS } from "../../www/js/state.js";

const made = () => {
  const store = new Store({ ...DEFAULTS, layer: 5, head: 9, row: 1 });
  const told = [];
  store.subscribe((state, news) => told.push({ state, ...news }));
  return { store, told };
};

describe("the explorer's store", () => {
  it("hands out a frozen state, replaced by set", () => {
    const { store, told } = made();
    const before = store.state;
    assert.throws(() => {
      before.layer = 0;
    }, TypeError);
    store.set({ layer: 1, text: "a b" }, { step: true });
    assert.notEqual(store.state, before);
    assert.equal(before.layer, 5, "the old state stays as it was");
    assert.deepEqual([store.state.layer, store.state.text], [1, "a b"]);
    assert.equal(told.length, 1);
    assert.deepEqual([told[0].changed.sort(), told[0].step, told[0].state], [["layer", "text"], true, store.state]);
  });

  it("tells no one of a change that changes nothing, unless it is a step", () => {
    const { store, told } = made();
    store.set({ layer: 5 });
    assert.equal(told.length, 0);
    store.set({}, { step: true });
    assert.equal(told.length, 1);
  });

  it("refuses a count that is no whole number from its lowest", () => {
    const { store, told } = made();
    for (const patch of [{ head: -1 }, { row: 1.5 }, { seed: -1 }, { layers: 0 }, { layer: "3" }, { layer: Number.NaN }]) {
      assert.throws(() => store.set(patch), RangeError, JSON.stringify(patch));
    }
    assert.equal(told.length, 0, "a refused change changes nothing");
    store.set({ layer: null, head: 130, seed: 2 ** 31 - 1 });
    assert.equal(told.length, 1, "a model may have more heads than a link can name");
  });

  it("fits a link's layer, head and row to the run, saying which were past it", () => {
    const { store, told } = made();
    store.fit({ layers: 2, heads: 4, batch: 1 });
    assert.deepEqual([store.state.layer, store.state.head, store.state.row], [1, 3, 0]);
    assert.deepEqual(told.at(-1).clamped, [["layer", 5, 2], ["head", 9, 4]]);
    store.fit({ layers: 2, heads: 4, batch: 1 });
    assert.equal(told.length, 1, "a second fit finds nothing to change");
    store.set({ layer: null, head: null });
    store.fit({ layers: 1, heads: 1, batch: 2 });
    assert.equal(told.length, 2, "the suggestion (null) is never past the model");
    assert.deepEqual([store.state.layer, store.state.head], [null, null]);
  });

  it("makes the page's probe once, as globalThis.__headmap", () => {
    const { store } = made();
    assert.equal(globalThis.__headmap, store.probe);
    assert.deepEqual(store.probe, { ready: false, renders: 0, timings: {}, errors: [] });
  });
});
