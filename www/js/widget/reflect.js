// Attributes mirrored by properties, as custom elements do (model-viewer's `src` and `src`):
// `el.layer = 2` sets `layer="2"`, and reading `el.texts` gives the list the attribute holds.

/** Properties that read as numbers, booleans or lists rather than strings. */
const TYPED = {
  layer: (v) => (v === null ? null : Number(v)),
  head: (v) => (v === null ? null : v === "all" ? "all" : Number(v)),
  seed: (v) => (v === null ? null : Number(v)),
  step: (v) => (v === null ? null : Number(v)),
  scale: (v) => v === null || !["false", "0", "off", "no"].includes(v.toLowerCase()),
  texts: (v) => (v === null ? null : v.trim().startsWith("[") ? JSON.parse(v) : v.split("\n").filter((s) => s.trim())),
  controls: (v) => (v === null ? null : v.split(/[\s,]+/).filter(Boolean)),
};
const WRITE = {
  texts: (v) => (Array.isArray(v) ? JSON.stringify(v) : String(v)),
  controls: (v) => (Array.isArray(v) ? v.join(" ") : String(v)),
};

/** Gives `element` (a class) a property for each attribute in `names` (kebab-case). */
export function reflectAttributes(element, names) {
  for (const name of names) {
    const prop = name.replace(/-(\w)/g, (_, c) => c.toUpperCase());
    Object.defineProperty(element.prototype, prop, {
      get() {
        const value = this.getAttribute(name);
        try {
          return TYPED[name] ? TYPED[name](value) : value;
        } catch {
          return null;
        }
      },
      set(value) {
        if (value === null || value === undefined) this.removeAttribute(name);
        else this.setAttribute(name, WRITE[name] ? WRITE[name](value) : String(value));
      },
      configurable: true,
      enumerable: true,
    });
  }
}
