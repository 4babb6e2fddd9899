// Tiny DOM helpers. Text goes in with textContent only: user text and model tokens are
// never parsed as HTML. No style attribute either: sizes go through sizes.js.

import { cssSize } from "./sizes.js";

/** An element with attributes and children (strings become text nodes). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) node.append(c);
  return node;
}

/** Offers `blob` to save as `name`, from a link put in `root` for the moment of the click. */
export function offer(blob, name, root = document.body) {
  const a = el("a", { href: URL.createObjectURL(blob), download: name });
  root.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/** Sizes `canvas` to `width` x `height` CSS pixels at the device's pixel ratio. */
export function sizeCanvas(canvas, width, height) {
  const dpr = Math.min(globalThis.devicePixelRatio || 1, 3);
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(height * dpr));
  cssSize(canvas, width, height);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, dpr };
}
