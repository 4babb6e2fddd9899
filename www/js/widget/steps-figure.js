// The widget's view="steps": every step of the chosen head (scores, scale, mask, softmax, the
// weighted values) below its heatmap, from the run's trace. Loaded on first use with the view
// it draws.

import { el } from "../views/dom.js";
import { STEPS_LIMIT, drawSteps } from "../views/steps.js";

/**
 * Draws into `container` the steps of `figure`'s head at `sel` of run `r`; `grouped`: the head
 * shares its keys and values with others (grouped-query attention).
 */
export async function stepsFigure(figure, r, sel, container, grouped) {
  const { T, client, lang } = figure.host;
  if (Math.max(figure.shown.tq, figure.shown.tk) > STEPS_LIMIT) {
    container.replaceChildren(el("p", { class: "step-note", text: T("stepsTooLong", { max: STEPS_LIMIT }) }));
    return;
  }
  const trace = await client.call("trace", { run: r.id, sel });
  if (r !== figure.run) return;
  figure.trace = trace;
  drawSteps(container, trace, lang, figure.shown.allowed, grouped);
}
