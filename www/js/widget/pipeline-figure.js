// The widget's view="pipeline": the shapes from the sentence to the heads' outputs, with the
// chosen layer's heads as thumbnails. Loaded on first use with the view it draws.

import { el } from "../views/dom.js";
import { drawPipeline } from "../views/pipeline.js";
import { cssSize } from "../views/sizes.js";

/** Draws the pipeline at `sel` in the frame's stage, with the thumbnails of `v` (the run's view at `dpr` device pixels per CSS pixel). */
export function pipelineFigure(figure, { place, sel }, v, dpr) {
  const { modelInfo, lang, parts } = figure.host;
  const canvases = v.thumbs.slice(sel.layer * place.heads, (sel.layer + 1) * place.heads).map((bitmap) => {
    const c = el("canvas", { width: bitmap.width, height: bitmap.height });
    cssSize(c, bitmap.width / dpr, bitmap.height / dpr);
    c.getContext("bitmaprenderer").transferFromImageBitmap(bitmap);
    return c;
  });
  v.thumbs.slice(0, sel.layer * place.heads).concat(v.thumbs.slice((sel.layer + 1) * place.heads)).forEach((b) => b.close());
  const dK = modelInfo.places.find((p) => p.place === sel.place).dK;
  const container = el("div");
  drawPipeline(container, { n: place.tq, m: place.tk, dModel: modelInfo.dModel, heads: place.heads, dK, scale: place.scale }, lang, canvases);
  parts.stage.replaceChildren(container);
  figure.shown = { ...sel, pipeline: true };
  parts.legend.hidden = true;
  parts.readout.hidden = true;
  parts.table.replaceChildren();
}
