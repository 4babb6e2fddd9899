// Sizes and counts that only script knows (a canvas's CSS size at the device's pixel ratio, the
// number of grid columns, the room a widget holds) set through one constructable stylesheet,
// never a style attribute: a strict `style-src 'self'` allows it, and no markup carries inline
// styles. The document and every widget's shadow root adopt the same sheet (`adoptSizes`).

const sheet = typeof CSSStyleSheet === "function" ? new CSSStyleSheet() : null;
const made = new Set();

/** Adds the sheet to `root` (a document or a shadow root), once. */
export function adoptSizes(root) {
  if (sheet && !root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

/** Sets `node`'s `data-hm-{name}` to `value`, with a rule that gives it `css` (`{}` for the value). */
function rule(node, name, value, css) {
  const selector =
    name === "reserve" ? `:host([data-hm-reserve="${value}"])` : name === "pressed" ? `[data-hm-pressed="${value}"][aria-pressed="true"]` : `[data-hm-${name}="${value}"]`;
  const key = `${name}|${value}`;
  if (sheet && !made.has(key)) {
    made.add(key);
    sheet.insertRule(`${selector} { ${css} }`, sheet.cssRules.length);
  }
  node.setAttribute(`data-hm-${name}`, value);
}

const px = (n) => `${Math.round(n * 100) / 100}`;

/** Shows `node` (a canvas) at `width` x `height` CSS pixels, whatever its pixel size. */
export function cssSize(node, width, height) {
  rule(node, "size", `${px(width)}x${px(height)}`, `width: ${px(width)}px; height: ${px(height)}px;`);
}

/** The CSS size `cssSize` gave `node`: { width, height }, or null. */
export function cssSizeOf(node) {
  const m = node.getAttribute("data-hm-size")?.match(/^([\d.]+)x([\d.]+)$/);
  return m ? { width: Number(m[1]), height: Number(m[2]) } : null;
}

/** Sets the custom property `--{name}` of `node` to the number `value`. */
export function cssNumber(node, name, value) {
  rule(node, name, String(value), `--${name}: ${value};`);
}

/** A pressed toggle `node` takes `color` as its background (a head's colour in the lines view). */
export function pressedColor(node, color) {
  rule(node, "pressed", color.replace(/["\\]/g, ""), `background: ${color};`);
}

/** A widget's host holds `height` pixels of room until its figure arrives (null: none). */
export function reserveHeight(host, height) {
  if (height === null) host.removeAttribute("data-hm-reserve");
  else rule(host, "reserve", String(Math.round(height)), `min-height: ${Math.round(height)}px;`);
}
