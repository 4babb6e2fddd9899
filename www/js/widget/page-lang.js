// The language a widget without its own `lang` speaks: its page's, followed as the page changes.

import { browserLang } from "../i18n.js";

/** The page's widgets that follow its language, each with what to do when a `lang` in the page changes. */
const following = new Map();
new MutationObserver(() => {
  for (const told of following.values()) told();
}).observe(document.documentElement, { attributeFilter: ["lang"], subtree: true });

/** The language of the page around `element`: its nearest `lang`, else the browser's. */
export function pageLang(element) {
  const lang = (element.closest("[lang]")?.getAttribute("lang") ?? document.documentElement.lang ?? "").toLowerCase();
  return lang.startsWith("ko") ? "ko" : lang.startsWith("en") ? "en" : browserLang();
}

/** Calls `told()` whenever a `lang` attribute anywhere in the page changes, until `unfollow(element)`. */
export function follow(element, told) {
  following.set(element, told);
}

export function unfollow(element) {
  following.delete(element);
}
