// headmap's embeddable widget: one script tag gives a page the <attention-heatmap> element.
//
//   <script type="module" src="/assets/headmap/headmap.js"></script>
//   <attention-heatmap text="동물이 길을 건너지 않았다. 그것은 너무 피곤했다." mask="causal"></attention-heatmap>
//
// Everything else (the worker, the wasm, the models) is found next to this file.

import { AttentionHeatmap, defineAttentionHeatmap } from "./js/widget/element.js";

defineAttentionHeatmap(new URL("./", import.meta.url));

export { AttentionHeatmap };
