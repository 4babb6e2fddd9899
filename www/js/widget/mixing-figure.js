// The widget's view="mixing": the article's weighted sum, editable, and the same table from the
// shown head for a chosen query. Loaded on first use with the view it draws.

import { el } from "../views/dom.js";
import { MixingView } from "../views/mixing.js";

/** The mixing table of `figure`'s head at `sel` of run `r`; returns its box. */
export function mixingFigure(figure, r, sel) {
  const { T, client, lang } = figure.host;
  const box = el("div", { class: "mixing-box" });
  const table = el("div", { class: "mixing" });
  const mixing = new MixingView(table, client, lang);
  const pick = el("select", { "aria-label": T("mixing.pick") });
  pick.append(el("option", { value: "", text: T("mixing.articleExample") }));
  figure.shown.labels.queries.forEach((q, i) => {
    if (figure.shown.tokens.queryValid[i]) pick.append(el("option", { value: String(i), text: T("mixing.fromHead", { query: q }) }));
  });
  pick.addEventListener("change", async () => {
    if (pick.value === "") return mixing.seed();
    try {
      figure.trace ??= await client.call("trace", { run: r.id, sel });
    } catch (e) {
      return figure.host.onError(e);
    }
    const i = Number(pick.value);
    const { tk, labels } = figure.shown;
    const { trace } = figure;
    mixing.fromHead({ keys: labels.keys, weights: trace.weights.data.subarray(i * tk, (i + 1) * tk), v: trace.v.data, dV: trace.v.cols, query: labels.queries[i] });
  });
  box.append(el("label", { class: "mix-pick" }, el("span", { text: T("mixing.pick") }), pick), table);
  mixing.render();
  return box;
}
