// Seed 000's worked example: weights mix the value vectors. The sum is computed by the wasm
// core (weightedSum), so the page and the tests check the same code. The table starts from
// the article's 0.7 / 0.1 / 0.2 over V = [10, 0], [0, 10], [5, 5] (giving [8, 2]), is
// editable, and can be filled from a real head: one query's weights over its keys' V rows.

import { addStrings, errorText, loadErrors, tf } from "../i18n.js";
import { VIEW_WORDS } from "../strings/views.js";
import { el } from "./dom.js";

addStrings(VIEW_WORDS); // the words come with the view

export const SEED_ROWS = [
  { token: "동물", weight: 0.7, v: [10, 0] },
  { token: "길", weight: 0.1, v: [0, 10] },
  { token: "그것", weight: 0.2, v: [5, 5] },
];

/** How many value dimensions a row of the table shows before "…". */
const SHOWN = 4;

const fmt = (x) => (Math.abs(x - Math.round(x)) < 1e-4 ? String(Math.round(x)) : x.toFixed(2));
const vec = (v) => {
  const shown = Array.from(v).slice(0, SHOWN).map(fmt);
  return `[${shown.join(", ")}${v.length > SHOWN ? ", …" : ""}]`;
};

/**
 * Whether `weights` can be softmax weights: none negative, none past 1 or not a number (a
 * share of one: `1e39` or `abc` is refused, not turned into Infinity or 0), and a sum of 1.
 */
export function checkWeights(weights) {
  const sum = weights.reduce((a, b) => a + b, 0);
  const outside = weights.some((w) => !Number.isFinite(w) || w > 1);
  return { negative: weights.some((w) => w < 0), outside, sum, sumsToOne: Math.abs(sum - 1) < 1e-3 };
}

export class MixingView {
  /** `client.call("weightedSum", …)` does the arithmetic; `lang` picks the words. */
  constructor(container, client, lang) {
    this.container = container;
    this.client = client;
    this.lang = lang;
    this.rows = SEED_ROWS;
    this.caption = null;
  }

  setLang(lang) {
    this.lang = lang;
    this.render();
  }

  /** Back to the article's example. */
  seed() {
    this.rows = SEED_ROWS;
    this.caption = null;
    return this.render();
  }

  /**
   * One query of a real head: `keys` its key tokens' labels, `weights` its row of weights,
   * `v` the head's V (Tk x dV, row-major), `query` the query's label. Masked keys (weight 0)
   * are left out.
   */
  fromHead({ keys, weights, v, dV, query }) {
    this.rows = keys
      .map((token, j) => ({ token, weight: weights[j], v: Array.from(v.subarray(j * dV, (j + 1) * dV)) }))
      .filter((r) => r.weight > 0);
    this.caption = query;
    return this.render();
  }

  render() {
    const t = (key, values) => tf(this.lang, key, values);
    this.inputs = this.rows.map((r) =>
      el("input", {
        type: "number",
        step: "0.0001",
        min: "0",
        max: "1",
        value: String(Number(r.weight.toFixed(4))),
        "aria-label": t("mixingWeightLabel", { token: r.token }),
        oninput: () => this.update(),
      }),
    );
    this.cells = this.rows.map(() => el("td", { class: "num" }));
    const rows = this.rows.map((r, k) =>
      el("tr", {}, el("th", { scope: "row", text: r.token }), el("td", {}, this.inputs[k]), el("td", { class: "num", text: vec(r.v) }), this.cells[k]),
    );
    this.total = el("td", { class: "num total" });
    this.sumWeights = el("td", { class: "num" });
    this.warning = el("p", { class: "mixing-warning", role: "status" });
    const caption = this.caption === null ? [] : [el("caption", { text: t("mixing.fromHead", { query: this.caption }) })];
    this.container.replaceChildren(
      el(
        "div",
        { class: "table-scroll" },
        el(
          "table",
          { class: "mixing" },
          ...caption,
          el("thead", {}, el("tr", {}, el("th", { text: t("key") }), el("th", { text: t("weight") }), el("th", { text: "V" }), el("th", { text: `${t("weight")} × V` }))),
          el("tbody", {}, ...rows),
          el("tfoot", {}, el("tr", {}, el("th", { scope: "row", text: "Σ" }), this.sumWeights, el("td", { text: "—" }), this.total)),
        ),
      ),
      this.warning,
    );
    return this.update();
  }

  async update() {
    const t = (key, values) => tf(this.lang, key, values);
    // an empty box is 0; anything else must read as a number
    const weights = this.inputs.map((i) => (i.value.trim() === "" ? 0 : Number(i.value)));
    const { negative, outside, sum, sumsToOne } = checkWeights(weights);
    this.inputs.forEach((input, k) => input.setAttribute("aria-invalid", String(!(weights[k] >= 0 && weights[k] <= 1))));
    if (negative || outside) {
      // a share below 0, past 1 or not a number means nothing: refuse it rather than compute a number
      this.sumWeights.textContent = "—";
      this.sumWeights.classList.add("warn");
      this.cells.forEach((c) => (c.textContent = "—"));
      this.total.textContent = "—";
      delete this.total.dataset.value;
      this.warning.textContent = t(negative ? "mixing.negative" : "mixing.outside");
      this.warning.classList.add("warn");
      return;
    }
    this.sumWeights.textContent = fmt(sum);
    this.sumWeights.classList.toggle("warn", !sumsToOne);
    this.warning.textContent = sumsToOne ? "" : t("mixing.notOne", { sum: fmt(sum) });
    this.warning.classList.toggle("warn", !sumsToOne);
    weights.forEach((w, k) => (this.cells[k].textContent = vec(this.rows[k].v.map((x) => w * x))));
    const dV = this.rows[0]?.v.length ?? 0;
    try {
      const out = await this.client.call("weightedSum", { weights, v: this.rows.flatMap((r) => r.v), dV });
      this.total.textContent = vec(out);
      this.total.dataset.value = JSON.stringify(Array.from(out));
    } catch (e) {
      await loadErrors().catch(() => {}); // the widget fetches its error words at its first error
      this.total.textContent = errorText(this.lang, e);
    }
  }
}
