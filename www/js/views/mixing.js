// Seed 000's worked example: weights mix the value vectors. The sum is computed by the
// wasm core (weightedSum), so the page and the tests check the same code.

import { el } from "./dom.js";

export const SEED_ROWS = [
  { token: "동물", weight: 0.7, v: [10, 0] },
  { token: "길", weight: 0.1, v: [0, 10] },
  { token: "그것", weight: 0.2, v: [5, 5] },
];

const fmt = (x) => (Math.abs(x - Math.round(x)) < 1e-4 ? String(Math.round(x)) : x.toFixed(2));
const vec = (v) => `[${Array.from(v, fmt).join(", ")}]`;

export class MixingView {
  constructor(container, client, t) {
    this.container = container;
    this.client = client;
    this.t = t;
    this.inputs = [];
  }

  render() {
    const t = this.t;
    this.inputs = SEED_ROWS.map((r) =>
      el("input", { type: "number", step: "0.05", min: "0", max: "1", value: String(r.weight), "aria-label": `${t("weight")} ${r.token}`, oninput: () => this.update() }),
    );
    this.cells = SEED_ROWS.map(() => el("td", { class: "num" }));
    const rows = SEED_ROWS.map((r, k) =>
      el("tr", {}, el("th", { scope: "row", text: r.token }), el("td", {}, this.inputs[k]), el("td", { class: "num", text: vec(r.v) }), this.cells[k]),
    );
    this.total = el("td", { class: "num total" });
    this.sumWeights = el("td", { class: "num" });
    this.container.replaceChildren(
      el(
        "table",
        { class: "mixing" },
        el("thead", {}, el("tr", {}, el("th", { text: t("key") }), el("th", { text: t("weight") }), el("th", { text: "V" }), el("th", { text: `${t("weight")} × V` }))),
        el("tbody", {}, ...rows),
        el("tfoot", {}, el("tr", {}, el("th", { scope: "row", text: "Σ" }), this.sumWeights, el("td", { text: "—" }), this.total)),
      ),
    );
    return this.update();
  }

  async update() {
    const weights = this.inputs.map((i) => Number(i.value) || 0);
    weights.forEach((w, k) => (this.cells[k].textContent = vec(SEED_ROWS[k].v.map((x) => w * x))));
    const sum = weights.reduce((a, b) => a + b, 0);
    this.sumWeights.textContent = fmt(sum);
    this.sumWeights.classList.toggle("warn", Math.abs(sum - 1) > 1e-6);
    try {
      const out = await this.client.weightedSum(weights, SEED_ROWS.flatMap((r) => r.v), 2);
      this.total.textContent = vec(out);
    } catch (e) {
      this.total.textContent = e.message;
    }
  }
}
