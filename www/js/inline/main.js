// The widget as one classic script with its worker and wasm inside: what a notebook's figure
// (headmap.show in Python) and a file saved from it carry, so they need no network and no
// files beside them. Each time it runs it defines <attention-heatmap> once per page, then gives
// the element next to it the file of weights next to it:
//
//   <div>
//     <attention-heatmap view="lines"></attention-heatmap>
//     <script type="application/vnd.headmap+safetensors" data-encoding="deflate;base64">…</script>
//     <script>…this bundle…</script>
//   </div>
//
// Built by scripts/build/inline.mjs into dist/headmap-inline.js.

import { WORKER_SOURCE } from "headmap:worker-source";
import { DATA_TYPE } from "../widget/file-source.js";
import { defineAttentionHeatmap } from "../widget/element.js";

const script = document.currentScript;
if (!customElements.get("attention-heatmap")) {
  const worker = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
  defineAttentionHeatmap(document.baseURI, worker);
}
const host = script?.parentElement;
const element = host?.querySelector("attention-heatmap");
const data = host?.querySelector(`script[type="${DATA_TYPE}"]`);
if (element && data) element.data = data;
