// Weights computed elsewhere, drawn by the widget: `src="fig.safetensors"` (or `.json`), the
// `data` property set from script, or the data a notebook's figure carries beside the element
// (headmap.show in Python). The file is the one `headmap attention --format json|safetensors`
// writes (docs/attention.schema.json); the core checks it in the worker and keeps it as a run
// with no model behind it, so every view that needs only weights and tokens draws it as usual.

import { coded } from "../errors.js";
import { selectionOf } from "./attributes.js";

/** Views that recompute from the model (a trace, the model's sizes, its vectors): not from a file. */
export const NEEDS_MODEL = ["steps", "mixing", "pipeline", "qk"];

/** The type of the script element a notebook's figure carries its file in. */
export const DATA_TYPE = "application/vnd.headmap+safetensors";

/** Refuses heads turned off (`ablate`) beside weights or a picture read from a file: no model runs again. */
export function refuseOff(settings) {
  if (settings.off) throw coded("a file of attention holds weights already computed: ablate cannot turn a head off in it", "file_heads_off", {});
}

/** Refuses a view that needs the model, by name. */
export function checkView(view) {
  if (NEEDS_MODEL.includes(view)) {
    throw coded(`the ${view} view needs the model that computed the weights: a file holds weights and tokens only`, "needs_model", { view });
  }
}

/**
 * What `data` (the property) holds, as the worker's openFile takes it: bytes of a file
 * (a Blob or File, an ArrayBuffer or a typed array), a JSON document (an object) or its text.
 */
export async function payloadOf(data) {
  if (data instanceof Blob) return { bytes: new Uint8Array(await data.arrayBuffer()) }; // a File too
  if (data instanceof ArrayBuffer) return { bytes: new Uint8Array(data.slice(0)) };
  if (ArrayBuffer.isView(data)) return { bytes: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)) };
  if (typeof data === "string") return { bytes: new TextEncoder().encode(data) };
  if (data && typeof data === "object") return { bytes: new TextEncoder().encode(JSON.stringify(data)) };
  throw coded("the data property takes a file's bytes, a JSON document or its text", "bad_data", {});
}

/** A notebook figure's file: base64 text, deflated when `data-encoding` says so (decoded in the worker). */
export function inlinePayload(script) {
  if (script.type !== DATA_TYPE) throw coded(`the data property takes a script element of type ${DATA_TYPE} only`, "bad_data", {});
  const encoding = script.dataset.encoding ?? "base64";
  return { base64: script.textContent.trim(), encoding: encoding.startsWith("deflate") ? "deflate" : "none" };
}

/** The file name errors say: the last part of a URL, or what the author or notebook gave. */
export function nameOf(url, fallback = "data") {
  if (!url) return fallback;
  try {
    return decodeURIComponent(new URL(url).pathname.split("/").filter(Boolean).pop() ?? fallback);
  } catch {
    return fallback;
  }
}

/**
 * Opens `data` (see payloadOf, or a notebook's script element) or `src` in `client`'s worker,
 * saying its name through `status(name)` meanwhile; resolves as the client's `openFile` does.
 */
export async function openSource(client, { data, src }, status) {
  const inline = data instanceof HTMLScriptElement;
  const name = src ? nameOf(src, "src") : inline ? "figure" : "data";
  status(name);
  // the worker fetches `src` itself: the page's thread never holds a large file's bytes
  const file = src ? { url: src } : inline ? inlinePayload(data) : await payloadOf(data);
  return client.call("openFile", { name, file });
}

/**
 * The element's file, opened when it is new (`model.sourceKey` names what is open) and narrowed
 * to the place shown (the views draw one at a time): { model, opened, result, sel }, or null
 * when a newer run superseded it. A view that needs the model, or heads to turn off, is refused first.
 */
export async function openFile({ client, settings: s, reader, data, version, model, opened, status, clamped }) {
  checkView(s.view);
  refuseOff(s);
  const sourceKey = data !== undefined ? `data:${version}` : `src:${s.src}`;
  if (model?.sourceKey !== sourceKey) {
    opened = await openSource(client, data !== undefined ? { data } : { src: s.src }, status);
    if (!opened) return null;
    model = { key: opened.key, info: opened.model, sourceKey };
    status(null);
  }
  const place = opened.info.places.find((p) => p.place === (reader.place ?? s.place)) ?? opened.info.places[0];
  const result = { ...opened, info: { ...opened.info, places: [place] } };
  return { model, opened, result, sel: selectionOf({ settings: s, reader, info: model.info, place, clamped }) };
}
