// The explorer's controls: the texts and examples, where attention is used and with which
// mask, the toy's settings, the colour range and the language. They ask the store for a change
// and for a new run or a redraw; the options they offer come from the model's own description.

import { TOY_PRESETS, clampTo, masksFor, placeOf } from "../settings.js";
import { el } from "../views/dom.js";

/** A trained model's own mask, or another one (a what-if); the untrained toy follows the paper. */
function tagFor(info, own) {
  if (own) return info.trained ? "trainedWith" : "asInPaper";
  return info.trained ? "whatIf" : "forComparison";
}
/** Below this width the settings start folded, so the heatmap is near the top of a phone. */
const NARROW = "(max-width: 860px)";

/** What the notice above the view says of a model: how its weights came to be. */
function noticeOf(info, choice = "") {
  if (info.fromFile) return "fileNotice";
  if (!info.trained) return "untrained";
  if (choice === "trained") return "trainedModel";
  if (choice === "induction") return "inductionModel";
  return choice?.startsWith("kept:") ? "pageTrainedModel" : "realModel";
}

export class Controls {
  constructor(app) {
    this.app = app;
    this.examples = [];
  }

  bind() {
    const { app } = this;
    const { $ } = app;
    const state = app.state; // as the link gave it, for the fields' first values
    const text = (id, key, row) => {
      $(id).value = state[key];
      $(id).addEventListener("input", () => {
        const linkProblem = app.state.linkProblem;
        // the reader's own text now: the link's notice goes; the heatmap shows the sentence being typed
        app.set({ [key]: $(id).value, ...(linkProblem && { linkProblem: false }), ...(row !== null && { row }) });
        if (linkProblem) this.linkNotice(false);
        app.recompute({ delay: 150 });
      });
    };
    text("text", "text", 0);
    text("text2", "text2", 1);
    text("target", "target", null);
    $("scale").checked = state.scale;
    $("scale").addEventListener("change", () => this.set({ scale: $("scale").checked }));
    $("preset").value = state.preset;
    $("preset").addEventListener("change", () => {
      const preset = $("preset").value;
      $("layers").value = TOY_PRESETS[preset];
      app.set({ preset, layers: TOY_PRESETS[preset] });
      app.chooseModel("toy");
    });
    $("layers").value = state.layers;
    $("layers").addEventListener("change", () => {
      const n = clampTo("layers", $("layers").value, 1);
      $("layers").value = n;
      app.set({ layers: n });
      app.chooseModel("toy");
    });
    $("seed").value = state.seed;
    $("seed").addEventListener("change", () => {
      app.set({ seed: clampTo("seed", $("seed").value, 0) });
      $("seed").value = app.state.seed;
      app.chooseModel("toy");
    });
    $("norm").checked = state.norm;
    $("norm").addEventListener("change", () => {
      app.set({ norm: $("norm").checked });
      app.render();
    });
    $("range").value = state.range;
    $("range").addEventListener("change", () => {
      app.set({ range: $("range").value });
      app.render();
    });
    $("lang").addEventListener("click", () => app.setLang(app.lang === "ko" ? "en" : "ko"));
    $("generate").addEventListener("click", () => this.generate());
    $("settings").open = !matchMedia(NARROW).matches;
  }

  /** Changes settings that need a new run: a step the back button returns from. */
  set(changes) {
    this.app.set(changes, { step: true });
    this.app.recompute();
  }

  setExamples(examples) {
    this.examples = examples;
    this.renderExamples();
  }

  renderExamples() {
    const { app } = this;
    const languages = app.model?.languages;
    const examples = languages ? this.examples.filter((ex) => languages.includes(ex.lang)) : this.examples;
    const buttons = examples.map((ex) =>
      el("button", {
        type: "button",
        lang: ex.lang,
        title: ex.note[app.lang] ?? ex.note.en,
        "data-example": ex.id,
        text: ex.text,
        onclick: () => this.pick(ex),
      }),
    );
    app.$("example-buttons").replaceChildren(...buttons);
  }

  /** An example goes into the first sentence and is shown at once; a model that can write its own target translates it. */
  async pick(ex) {
    const { app } = this;
    app.$("text").value = ex.text;
    app.set({ text: ex.text, row: 0 }, { step: true });
    const info = app.model?.info;
    if (info?.canGenerate && placeOf(app.state, info) !== "encoder_self") return this.generate();
    return app.recompute();
  }

  /** The model's own greedy output for the sentence, as the target. */
  async generate() {
    const { app } = this;
    app.busy(true);
    try {
      const text = await app.client.call("generate", { key: app.model.key, text: app.state.text });
      app.$("target").value = text;
      app.set({ target: text });
      await app.recompute();
    } catch (e) {
      app.probe.errors.push(e.message);
      app.showStatus(app.errorText(e), "error");
    } finally {
      app.busy(false);
    }
  }

  applyLanguage() {
    const { app } = this;
    document.documentElement.lang = app.lang;
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = app.T(node.dataset.i18n);
    for (const node of document.querySelectorAll("[data-i18n-label]")) node.setAttribute("aria-label", app.T(node.dataset.i18nLabel));
    for (const node of document.querySelectorAll("[data-i18n-placeholder]")) node.setAttribute("placeholder", app.T(node.dataset.i18nPlaceholder));
    document.title = app.T("title");
    app.$("lang").textContent = app.T("lang");
    app.$("lang").lang = app.lang === "ko" ? "en" : "ko";
    app.$("hub-id").setAttribute("aria-label", app.T("model.hub"));
    if (this.examples) this.renderExamples(); // their notes are in the page's language
    this.refresh();
  }

  afterModelChange() {
    const { app } = this;
    const info = app.model.info;
    app.$("toy-settings").hidden = app.model.choice !== "toy";
    this.renderExamples();
    app.$("generate").hidden = !info.canGenerate;
    // a place the model lacks falls back to its first; a mask to the trained one
    if (!info.places.some((p) => p.place === app.state.place)) app.set({ place: null, mask: null });
    this.refresh();
  }

  /** The notice, the place and mask options and the fields the current model and place need. */
  refresh() {
    const { app } = this;
    const info = app.model?.info;
    const $ = app.$;
    $("notice").textContent = info ? app.T(noticeOf(info, app.model.choice)) : "";
    if (!info) return;
    const place = placeOf(app.state, info);
    this.fileFields(info, place);
    const decoderSide = info.encoderDecoder && place !== "encoder_self";
    $("text2-field").hidden = decoderSide || Boolean(info.fromFile);
    $("target-field").hidden = !decoderSide || Boolean(info.fromFile);
    $("text-label").textContent = app.T(info.places.some((p) => p.place === "encoder_self") ? "text" : "textDecoderOnly");
    this.placeOptions(info, place);
    this.maskOptions(info, place);
    const mask = app.state.mask ?? info.places.find((p) => p.place === place).mask;
    $("settings-summary").textContent = `${app.T(`place.${place}`)} · ${app.T(`mask.${mask}`)}`;
  }

  /** Weights from a file cannot be computed again: the text shows the file's tokens, read only. */
  fileFields(info, place) {
    const { app } = this;
    const $ = app.$;
    const fromFile = Boolean(info.fromFile);
    for (const id of ["text", "text2", "target"]) $(id).readOnly = fromFile;
    $("example-buttons").parentElement.hidden = fromFile;
    $("text").title = fromFile ? app.T("fileTokens") : "";
    if (fromFile) {
      const tokens = app.model.opened.tokens[place]?.[app.state.row ?? 0] ?? app.model.opened.tokens[place]?.[0];
      $("text").value = tokens ? tokens.queries.filter((_, i) => tokens.queryValid[i]).map((t) => t.label).join(" ") : "";
    } else if (this.showedFile) {
      // back to a model: its texts as they were
      for (const id of ["text", "text2", "target"]) $(id).value = app.state[id] ?? "";
    }
    this.showedFile = fromFile;
  }

  placeOptions(info, current) {
    const { app } = this;
    const options = ["encoder_self", "decoder_self", "cross"].map((place) => {
      const there = info.places.some((p) => p.place === place);
      return el(
        "label",
        { class: there ? "option" : "option unavailable" },
        el("input", {
          type: "radio",
          name: "place",
          value: place,
          checked: place === current,
          disabled: !there,
          // another place opens on the head the model suggests for it, if any
          onchange: () => this.set({ place, mask: null, layer: null, head: null }),
        }),
        el("span", {}, app.T(`place.${place}`), ...(there ? [] : [el("span", { class: "tag", text: `(${app.T("notInModel")})` })])),
        el("small", { text: app.T(`place.${place}.hint`) }),
      );
    });
    app.$("place-options").replaceChildren(...options);
  }

  /** The masks this place can run with; the trained one first, the others labelled what-if. */
  maskOptions(info, place) {
    const { app } = this;
    const modelPlace = info.places.find((p) => p.place === place);
    const trained = modelPlace.mask;
    // the masks the model says this place takes (a test's stand-in info may not say)
    const masks = modelPlace.masks ?? masksFor(place);
    const ordered = [trained, ...masks.filter((m) => m !== trained)];
    const current = masks.includes(app.state.mask) ? app.state.mask : trained;
    const options = ordered.map((mask) =>
      el(
        "label",
        { class: "option" },
        el("input", {
          type: "radio",
          name: "mask",
          value: mask,
          checked: mask === current,
          // the place goes into the link with its mask, so the link names both
          onchange: () => this.set({ place, mask: mask === trained ? null : mask }),
        }),
        el(
          "span",
          {},
          app.T(`mask.${mask}`),
          el("span", { class: mask === trained ? "tag" : "tag what-if-tag", text: `(${app.T(tagFor(info, mask === trained))})` }),
        ),
        el("small", { text: app.T(`mask.${mask}.hint`) }),
      ),
    );
    app.$("mask-options").replaceChildren(...options);
  }

  /** Says when the texts were too long to go into the link, or the link's own could not be read. */
  /** What the link could not keep or open, said at the top of the view where a reader looks. */
  linkNotice(dropped) {
    const { app } = this;
    const text = dropped ? app.T("linkTooLong") : app.state.linkProblem ? app.T("linkUnreadable") : "";
    app.notices.set("link", text);
  }
}
