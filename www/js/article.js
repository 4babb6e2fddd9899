// The article page (article.html): its language, and a copy button on every snippet. The page
// holds each text in both languages; <html lang> picks the one shown (css/article.css). The
// language is the URL's ?lang=ko|en, else the browser's; switching keeps it in the URL and
// tells every widget. All text is set as text.

import { browserLang } from "./i18n.js";

const LANGS = ["ko", "en"];

const WORDS = {
  en: {
    title: "Attention, computed where you read it — headmap",
    other: "한국어",
    switchLabel: "읽기 언어를 한국어로 바꾸기",
    copy: "Copy",
    copyLabel: (what) => `Copy the snippet${what ? ` for ${what}` : ""}`,
    copied: "Copied",
    selected: "Selected",
  },
  ko: {
    title: "어텐션, 읽는 자리에서 계산하기 — headmap",
    other: "English",
    switchLabel: "Read this page in English",
    copy: "복사",
    copyLabel: (what) => `${what ? `${what} ` : ""}예시 코드 복사`,
    copied: "복사됨",
    selected: "선택됨",
  },
};

let lang = "en";

/** The language asked for in the URL, else the browser's. */
function initialLang() {
  const asked = new URLSearchParams(location.search).get("lang");
  return LANGS.includes(asked) ? asked : browserLang();
}

function setLang(next, { remember }) {
  lang = next;
  const w = WORDS[lang];
  document.documentElement.lang = lang;
  document.title = w.title;
  const other = lang === "ko" ? "en" : "ko";
  const button = document.getElementById("lang-switch");
  button.textContent = w.other;
  button.lang = other;
  button.setAttribute("aria-label", w.switchLabel);
  button.hidden = false;
  for (const widget of document.querySelectorAll("attention-heatmap")) widget.setAttribute("lang", lang);
  for (const a of document.querySelectorAll("a[data-explorer]")) a.href = `index.html?lang=${lang}`;
  for (const copy of document.querySelectorAll("button.copy")) labelCopy(copy);
  if (remember) {
    const url = new URL(location.href);
    url.searchParams.set("lang", lang);
    history.replaceState(history.state, "", url);
  }
}

// ---- copy buttons ---------------------------------------------------------------------------

function labelCopy(button, state = "") {
  const w = WORDS[lang];
  button.dataset.state = state;
  button.textContent = state === "done" ? w.copied : state === "selected" ? w.selected : w.copy;
  button.setAttribute("aria-label", w.copyLabel(button.dataset.what));
}

/** Copies the snippet's text; where the clipboard is refused, selects it for the reader. */
async function copySnippet(button, code) {
  let state = "done";
  try {
    await navigator.clipboard.writeText(code.textContent);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    state = "selected";
  }
  labelCopy(button, state);
  clearTimeout(button.timer);
  button.timer = setTimeout(() => labelCopy(button), 2500);
}

function addCopyButtons() {
  for (const pre of document.querySelectorAll("pre.snippet")) {
    const code = pre.querySelector("code") ?? pre;
    const attribute = pre.closest("[data-attribute]")?.dataset.attribute;
    const wrap = document.createElement("div");
    wrap.className = "snippet-wrap";
    pre.replaceWith(wrap);
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    if (attribute) button.dataset.what = attribute;
    button.addEventListener("click", () => copySnippet(button, code));
    wrap.append(pre, button);
    labelCopy(button);
  }
}

// ---- start ----------------------------------------------------------------------------------

addCopyButtons();
setLang(initialLang(), { remember: false });
document.getElementById("lang-switch").addEventListener("click", () => setLang(lang === "ko" ? "en" : "ko", { remember: true }));

// A link into the page (the contents, or a shared #section) lands on its section even while the
// widgets above it draw and grow: for a few seconds, a widget that changes height above the
// target brings the target back to the top, until the reader scrolls on their own.
function holdAnchor(id) {
  const target = id && document.getElementById(id);
  if (!target) return;
  let own = false;
  const stop = () => {
    own = true;
  };
  for (const type of ["wheel", "touchmove", "keydown", "pointerdown"]) addEventListener(type, stop, { once: true, passive: true });
  const realign = () => !own && target.scrollIntoView({ block: "start" });
  const widgets = new ResizeObserver(realign);
  for (const w of document.querySelectorAll("attention-heatmap")) widgets.observe(w);
  realign();
  setTimeout(() => widgets.disconnect(), 8000);
}
addEventListener("hashchange", () => holdAnchor(decodeURIComponent(location.hash.slice(1))));
if (location.hash) holdAnchor(decodeURIComponent(location.hash.slice(1)));
