// The explorer's "find heads" and rollout panels. Every head of the place on show is coloured by
// a score, or by the weight it moves from tokens the reader taps to other tokens they tap; a
// model with a vocabulary runs the induction probe; rollout follows the sentence through the
// layers. The core computes every number (in the worker); the views are the widget's too.

import { lutFor } from "../render/colormap.js";
import { FUSIONS, POSITIONAL, SCORES } from "../find-names.js";
import { offAt } from "../settings.js";
import { AtlasView, formatValue, scoreAt, topHeads, unitOf } from "../views/atlas.js";
import { el } from "../views/dom.js";
import { RolloutView } from "../views/rollout-view.js";

/** Positions from a link's "3,4", those of the row's tokens (`valid`: no PAD) it names. */
const positions = (text, valid) => [...new Set(text.split(",").filter(Boolean).map(Number))].filter((p) => valid[p]).sort((a, b) => a - b);

/** The most tokens a side's selection keeps (what a link holds). */
const MAX_CHOSEN = 64;

export class Finder {
  /** `onSelect(layer, head)` opens a head in the main view. */
  constructor(app, { onSelect }) {
    this.app = app;
    const $ = app.$;
    const T = (key, values) => app.T(key, values);
    this.atlas = new AtlasView($("atlas"), { T, onSelect });
    this.probeAtlas = new AtlasView($("probe-atlas"), { T, onSelect });
    this.rollout = new RolloutView($("rollout"), { T });
    this.scores = { key: "", value: null }; // every score of the row on show
    this.rolled = { key: "", value: null }; // its rollout
    this.probed = null; // the last induction probe's result, for its model
    this.seq = 0;
  }

  bind() {
    const { app } = this;
    const $ = app.$;
    $("find-score").addEventListener("change", () => {
      const find = $("find-score").value;
      app.set(find !== "mass" ? { find, from: "", to: "" } : { find });
      this.render();
    });
    $("find-clear").addEventListener("click", () => {
      app.set({ from: "", to: "", find: app.state.find === "mass" ? "previous_token" : app.state.find });
      this.render();
    });
    $("find-probe").addEventListener("click", () => this.runProbe());
    $("rollout-fusion").addEventListener("change", () => {
      app.set({ fusion: $("rollout-fusion").value });
      this.render();
    });
    $("rollout-layer").addEventListener("change", () => this.render());
  }

  applyLanguage() {
    const { app } = this;
    const $ = app.$;
    const options = (select, values, prefix) => {
      const chosen = select.value;
      select.replaceChildren(...values.map((v) => el("option", { value: v, text: app.T(`${prefix}.${v}`) })));
      if (chosen) select.value = chosen;
    };
    options($("find-score"), [...SCORES, "mass"], "score");
    options($("rollout-fusion"), FUSIONS, "fusion");
    for (const option of $("rollout-layer").options) option.textContent = `${app.T("layer")} ${Number(option.value) + 1}`;
    if (this.probed) this.showProbe(this.probed);
  }

  afterModelChange() {
    if (this.probed) this.app.client.free(this.probed.id);
    this.probed = null;
    this.app.$("probe-out").hidden = true;
  }

  /** Nothing to show: what spoke of the last sentence goes (its tokens, scores and rollout). */
  clear() {
    const $ = this.app.$;
    this.seq += 1;
    this.scores = { key: "", value: null };
    this.rolled = { key: "", value: null };
    for (const id of ["find-queries", "find-keys", "rollout"]) $(id).replaceChildren();
    this.atlas = new AtlasView($("atlas"), { T: this.atlas.T, onSelect: this.atlas.onSelect });
    this.rollout = new RolloutView($("rollout"), { T: this.rollout.T });
    for (const id of ["find-note", "rollout-note", "find-clear"]) $(id).hidden = true;
  }

  /** Draws both panels for what the main view shows (`viewer.shown`). */
  async render() {
    const { app } = this;
    const shown = app.shown;
    if (!shown) return;
    const $ = app.$;
    const seq = ++this.seq;
    const place = shown.place.place;
    const sel = { place, row: shown.row };
    const { layers, heads, tq, tk } = shown.place;
    const cross = place === "cross";
    $("find-probe").hidden = app.model.choice === "toy";
    // the tokens to tap: both sides of the row
    const from = positions(app.state.from, shown.tokens.queryValid);
    const to = positions(app.state.to, shown.tokens.keyValid);
    this.chips($("find-queries"), shown.labels.queries, shown.tokens.queryValid, from, "from");
    this.chips($("find-keys"), shown.labels.keys, shown.tokens.keyValid, to, "to");
    const mass = from.length > 0 && to.length > 0;
    // "chosen tokens" with a side not chosen yet: the hint says what to tap, and no map is drawn
    const waiting = app.state.find === "mass" && !mass;
    const score = mass || waiting ? "mass" : scoreAt(place, app.state.find);
    $("find-score").value = score;
    for (const option of $("find-score").options) option.disabled = cross && POSITIONAL.has(option.value);
    $("find-clear").hidden = !(from.length || to.length);
    const note = (id, text) => {
      $(id).hidden = !text;
      $(id).textContent = text ?? "";
    };
    const width = Math.max(240, ($("find").clientWidth || 600) - 30);
    const look = { lut: lutFor("viridis"), selected: { layer: shown.layer, head: shown.head }, width, layers, heads };
    if (waiting) {
      note("find-note", app.T("find.selectHint"));
      $("atlas").hidden = true;
      await this.drawRollout(seq, shown, sel, width);
      return;
    }
    $("atlas").hidden = false;
    try {
      const key = `${shown.result.id}|${place}|${shown.row}`;
      let values;
      let name;
      if (mass) {
        values = await app.client.call("mass", { run: shown.result.id, sel, queries: from, keys: to });
        name = app.T("find.massName", { from: from.map((i) => shown.labels.queries[i]).join(" "), to: to.map((j) => shown.labels.keys[j]).join(" ") });
      } else {
        if (this.scores.key !== key) this.scores = { key, value: await app.client.call("scores", { run: shown.result.id, sel }) };
        values = this.scores.value.scores[score];
        name = app.T(`score.${score}`);
      }
      if (seq !== this.seq) return;
      note("find-note", null);
      const off = offAt(app.state.off, place, app.model.info);
      this.atlas.draw({ ...look, values, name, unit: unitOf(score), off });
      app.probe.find = { score, name, values: Array.from(values), top: topHeads(values, layers, heads, 5), geometry: this.atlas.geometry, off: [...off] };
    } catch (e) {
      if (seq !== this.seq) return;
      note("find-note", app.errorText(e));
      $("atlas").replaceChildren();
      this.atlas = new AtlasView($("atlas"), { T: (k, v) => app.T(k, v), onSelect: this.atlas.onSelect });
    }
    await this.drawRollout(seq, shown, sel, width);
  }

  async drawRollout(seq, shown, sel, width) {
    const { app } = this;
    const $ = app.$;
    const { layers, tq } = shown.place;
    const select = $("rollout-layer");
    if (select.options.length !== layers) {
      select.replaceChildren(...Array.from({ length: layers }, (_, l) => el("option", { value: String(l), text: `${app.T("layer")} ${l + 1}` })));
      select.value = String(layers - 1);
    }
    $("rollout-fusion").value = app.state.fusion;
    const say = (text) => {
      $("rollout-note").hidden = !text;
      $("rollout-note").textContent = text ?? "";
      $("rollout").hidden = Boolean(text);
    };
    if (sel.place === "cross") return say(app.T("rollout.cross"));
    try {
      const key = `${shown.result.id}|${sel.place}|${sel.row}|${app.state.fusion}`;
      if (this.rolled.key !== key) this.rolled = { key, value: await app.client.call("rollout", { run: shown.result.id, sel, fusion: app.state.fusion }) };
      if (seq !== this.seq) return;
      say(null);
      await this.rollout.draw({
        rollout: this.rolled.value,
        layer: Math.min(Number(select.value), layers - 1),
        t: tq,
        queries: shown.labels.queries,
        keys: shown.labels.keys,
        queryValid: shown.tokens.queryValid,
        keyValid: shown.tokens.keyValid,
        width: Math.min(width, 760),
      });
    } catch (e) {
      if (seq === this.seq) say(app.errorText(e));
    }
  }

  /** One toggle per token; the pressed ones are `chosen`, kept in the link as `side`. */
  chips(container, labels, valid, chosen, side) {
    const { app } = this;
    const buttons = labels.map((label, i) =>
      el("button", {
        type: "button",
        class: "chip",
        "aria-pressed": String(chosen.includes(i)),
        disabled: !valid[i],
        text: label,
        onclick: () => {
          const now = new Set(positions(app.state[side], valid));
          if (now.has(i)) now.delete(i);
          else if (now.size < MAX_CHOSEN) now.add(i);
          app.set({ [side]: [...now].sort((a, b) => a - b).join(","), find: "mass" });
          this.render();
        },
      }),
    );
    container.replaceChildren(...buttons);
  }

  async runProbe() {
    const { app } = this;
    const $ = app.$;
    const button = $("find-probe");
    button.disabled = true;
    app.busy(true);
    try {
      // the place on show when it is causal; else the model's causal place (an encoder–decoder's
      // decoder), or its encoder, which the probe says is not causal
      const shownPlace = app.shown?.place;
      // TransformerLens's 50 random tokens, fewer where the model reads fewer than 1 + 2 × 50
      const length = Math.min(50, Math.floor((app.model.info.maxTokens - 1) / 2));
      const result = await app.client.call("probe", { key: app.model.key, options: { place: shownPlace?.mask === "causal" ? shownPlace.place : undefined, length } });
      if (this.probed) app.client.free(this.probed.id);
      this.probed = result;
      this.showProbe(result);
    } catch (e) {
      $("probe-out").hidden = false;
      $("probe-text").textContent = app.errorText(e);
      $("probe-atlas").hidden = true;
    } finally {
      button.disabled = false;
      app.busy(false);
    }
  }

  showProbe({ probe, tokens }) {
    const { app } = this;
    const $ = app.$;
    const { layers, heads, induction, place, causal, length } = probe;
    const labels = tokens[place][0].queries.map((t) => t.label);
    const [best] = topHeads(induction, layers, heads, 1);
    const lines = [
      app.T("find.probeHint", { length }),
      app.T("find.probeResult", { n: labels.length, start: labels.slice(0, 8).join(" "), layer: best.layer + 1, head: best.head + 1, value: formatValue(best.value) }),
    ];
    if (!causal) lines.push(app.T("find.probeEncoder", { place: app.T(`place.${place}`) }));
    $("probe-out").hidden = false;
    $("probe-text").textContent = lines.join(" ");
    $("probe-atlas").hidden = false;
    const width = Math.max(240, ($("find").clientWidth || 600) - 30);
    this.probeAtlas.draw({ values: induction, layers, heads, name: app.T("find.probeName"), width, lut: lutFor("viridis"), selected: null });
    app.probe.induction = { best, length, causal, values: Array.from(induction) };
  }
}
