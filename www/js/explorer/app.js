// The explorer page: state from the link, one model at a time, a run per edit, and the views
// that draw it. Concerns live in their own modules (model picking, controls, the view,
// saving); the state lives in the store (store.js), which every module asks for a change and
// the link follows; this one runs the model and draws. Nothing here touches wasm: the worker
// owns the weights and hands back what a view draws.

import { AttentionClient } from "../client.js";
import { addStrings, browserLang, errorText, tf } from "../i18n.js";
import { predictsFromRun } from "../settings.js";
import { decodeState, encodeState, requestFor } from "../state.js";
import { adoptSizes } from "../views/sizes.js";
import { Controls } from "./controls.js";
import { Exporter } from "./export.js";
import { Finder } from "./find.js";
import { Generator } from "./generate.js";
import { ModelPicker } from "./model-picker.js";
import { Predictor } from "./predict.js";
import { QueryKeys } from "./qk.js";
import { EXPLORER_STRINGS } from "./strings.js";
import { Store } from "./store.js";
import { TimelinePanel } from "./timeline.js";
import { Training } from "./train.js";
import { Viewer } from "./viewer.js";

addStrings(EXPLORER_STRINGS);
adoptSizes(document);

const $ = (id) => document.getElementById(id);

const store = new Store(await decodeState(location.search, location.hash));
const readerLang = browserLang();

/**
 * Everything the explorer's modules share. The state is the store's, changed only through
 * `set`; the model and the run on show are the page's own, set where they are loaded and run.
 */
const app = {
  store,
  get state() {
    return store.state;
  },
  set: (patch, options) => store.set(patch, options),
  /** The page's language: the link's, else the browser's. */
  get lang() {
    return store.state.lang ?? readerLang;
  },
  client: new AttentionClient(new URL("../worker.js", import.meta.url)),
  /** The loaded model: { key, info, choice, name }; null until the first one loads. */
  model: null,
  /** The newest run: { id, info, tokens, ms }; null when there is nothing to show. */
  result: null,
  probe: store.probe,
  $,
  T: (key, values) => tf(app.lang, key, values),
  /** A model's architecture as the reader calls it ("toy" is 토이 in Korean). */
  architecture: (info) => (info.architecture === "toy" ? tf(app.lang, "arch.toy") : info.architecture),
  /** An error as the reader should read it, in the page's language. */
  errorText: (e) => errorText(app.lang, e),
  recompute,
  render: () => viewer.render(store.state),
  /** What the main heatmap shows, for read-outs, finding heads and saving; null when nothing is. */
  get shown() {
    return viewer.shown;
  },
  get finder() {
    return finder;
  },
  get qk() {
    return qk;
  },
  get timeline() {
    return timeline;
  },
  chooseModel: (choice, options) => picker.choose(choice, options),
  /** Opens head `head` of layer `layer` in the main view. */
  openHead: (layer, head, place) => openHead(layer, head, place),
  /**
   * A tap on a head in the grid or the find-heads map: it turns the head off (or back on)
   * when the reader asked taps to, and answers whether it did.
   */
  tapTurnsOff: (layer, head) => predictor.tapTurnsOff(layer, head),
  /** What the shown head writes across the layers, when that part of the page is open. */
  drawFlow: () => predictor.drawFlow(),
  setLang,
  showStatus,
  busy,
  /** Things the page changed or could not do that the reader should know, by topic, at the top of the view. */
  notices: {
    texts: new Map(),
    set(topic, text) {
      if (text) this.texts.set(topic, text);
      else this.texts.delete(topic);
      const box = $("link-notice");
      box.textContent = [...this.texts.values()].join(" ");
      box.hidden = !this.texts.size;
    },
  },
};

const viewer = new Viewer(app);
/**
 * Opens head `head` of layer `layer` in the main view, as a tap in the grid does; at `place`
 * when given and another than the one on show (a patching map's), with the run for it: a
 * head elsewhere is opened, never turned off, whatever "a tap turns a head off" says.
 */
const openHead = (layer, head, place = null) => {
  if (place && place !== app.shown?.place.place) {
    store.set({ place, mask: null, layer, head }, { step: true });
    app.notices.set("clamp", null);
    recompute().then(() => $("heatmap").scrollIntoView({ block: "nearest" }));
    return;
  }
  if (app.tapTurnsOff(layer, head)) return;
  store.set({ layer, head });
  app.notices.set("clamp", null);
  app.render();
  $("heatmap").scrollIntoView({ block: "nearest" });
};
const finder = new Finder(app, { onSelect: openHead });
/**
 * Opens a corpus sentence (a query–key point) in the main view, its head shown and the token lit
 * on its side. An encoder–decoder's decoder reads what the corpus ran: the line's target, else
 * the line itself.
 */
async function openSentence(line, { place, layer, head, position, side }) {
  const [text, target] = line.split("\t");
  const decoder = app.model?.info.encoderDecoder ? { target: target?.trim() ? target : text } : {};
  store.set({ text, layer, head, place, row: 0, ...decoder }, { step: true });
  $("text").value = text;
  if (decoder.target !== undefined) $("target").value = decoder.target;
  await recompute();
  viewer.heatmap.show({ axis: side === "key" ? "key" : "query", index: position });
  $("heatmap").scrollIntoView({ block: "nearest" });
}
const qk = new QueryKeys(app, { onOpen: openSentence });
const predictor = new Predictor(app);
const generator = new Generator(app);
const training = new Training(app);
const timeline = new TimelinePanel(app);
const controls = new Controls(app);
const picker = new ModelPicker(app, { onLoaded: afterModelChange });
const exporter = new Exporter(app);

let debounce = 0;
let urlTimer = 0;
let lastError = null; // the error shown, reworded when the language changes

function busy(on) {
  $("busy").hidden = !on;
}

/** A hint (grey) or an error (red, announced) in place of the views of the text; `null` clears it. */
function showStatus(message, kind = "hint") {
  const status = $("status");
  status.hidden = !message;
  status.textContent = message ?? "";
  status.classList.toggle("error", kind === "error");
  status.setAttribute("role", kind === "error" ? "alert" : "status");
  // the views of the text give way to the message; the generate panel, with its own prompt, stays
  $("heatmap-area").hidden = Boolean(message);
  $("text-panels").hidden = Boolean(message);
}

/**
 * Writes the state into the link, a moment after the last change: the store's subscriber. A new
 * model, place, mask or example is a step the back button returns from (`step`); typing and
 * picking heads are not.
 */
function syncUrl({ step = false } = {}) {
  clearTimeout(urlTimer);
  pendingStep ||= step;
  urlTimer = setTimeout(async () => {
    const { search, hash, dropped } = await encodeState(store.state);
    const url = `${location.pathname}${search}${hash}`;
    if (pendingStep && url !== `${location.pathname}${location.search}${location.hash}`) history.pushState(null, "", url);
    else history.replaceState(null, "", url);
    pendingStep = false;
    controls.linkNotice(dropped);
  }, 120);
}
let pendingStep = false;
store.subscribe((state, { step, clamped }) => {
  syncUrl({ step });
  if (!clamped.length) return;
  // only what the link asked past the model's is said
  const said = clamped.map(([name, asked, count]) => app.T(`clamped.${name}Past`, { asked: asked + 1, count, shown: count }));
  app.notices.set("clamp", app.T("clampedNotice", { said: said.join(app.T("clampedAnd")) }));
});

// Back and forward land on another view's link: show that view.
addEventListener("popstate", () => location.reload());

/** Runs the model on the current state; typing waits for a pause (`delay` ms). */
function recompute({ delay = 0 } = {}) {
  clearTimeout(debounce);
  if (delay) {
    debounce = setTimeout(() => recompute(), delay);
    return Promise.resolve();
  }
  return run();
}

async function run() {
  syncUrl(); // a link's values the page could not take leave it at the first run
  if (!app.model) return;
  controls.refresh();
  if (app.model.info.fromFile) return showFile();
  const request = requestFor(store.state, app.model.info);
  if (predictsFromRun(request, app.model.info)) request.output = true; // the predictions come from this run
  // a text too long for the run to keep its weights: every head pooled to the grid's size as it runs
  const shown = app.model.info.places.find((p) => p.place === request.place);
  if (shown) request.thumbs = viewer.thumbPixels(shown.heads);
  const empty = request.texts.some((text) => !text.trim()) || (request.targets ?? []).some((text) => !text.trim());
  if (!request.texts[0].trim() || empty) {
    app.result = null;
    viewer.clear();
    showStatus(app.T(!request.texts[0].trim() ? "emptyHint" : "emptyTarget"));
    return;
  }
  busy(true);
  try {
    const next = await app.client.call("run", { key: app.model.key, request });
    if (!next) return; // a newer request is on its way
    lastError = null;
    app.result = { ...next, request };
    app.probe.timings.computeMs = next.ms;
    showStatus(null);
    store.fit(next.info.places[0]);
    await app.render();
    await predictor.update();
    generator.update();
  } catch (e) {
    app.result = null;
    viewer.clear();
    app.probe.errors.push(e.message);
    showStatus(app.errorText(e), "error");
    lastError = e;
  } finally {
    busy(false);
  }
}

/** Weights from a file: nothing to compute, only the place to show (the views draw one at a time). */
async function showFile() {
  const opened = app.model.opened;
  const place = opened.info.places.find((p) => p.place === store.state.place) ?? opened.info.places[0];
  app.result = { ...opened, info: { ...opened.info, places: [place] } };
  lastError = null;
  showStatus(null);
  store.fit(place);
  await app.render();
}

function afterModelChange() {
  controls.afterModelChange();
  viewer.afterModelChange();
  finder.afterModelChange();
  qk.afterModelChange();
  predictor.afterModelChange();
  generator.afterModelChange();
  timeline.afterModelChange();
  return recompute();
}

/** Switches the page's language: every label, the views, the errors. */
function setLang(lang) {
  store.set({ lang });
  controls.applyLanguage();
  picker.applyLanguage();
  exporter.applyLanguage();
  finder.applyLanguage();
  qk.applyLanguage();
  predictor.applyLanguage();
  generator.applyLanguage();
  training.applyLanguage();
  timeline.applyLanguage();
  viewer.applyLanguage();
  if (lastError) showStatus(app.errorText(lastError), "error");
  else if (!app.result) recompute();
}

async function main() {
  controls.bind();
  controls.applyLanguage();
  controls.linkNotice(false); // a link whose texts could not be read says so
  picker.applyLanguage();
  viewer.bind();
  finder.bind();
  finder.applyLanguage();
  qk.bind();
  qk.applyLanguage();
  predictor.bind();
  generator.bind();
  training.bind();
  training.applyLanguage();
  timeline.bind();
  exporter.bind();
  try {
    const { examples } = await app.client.call("start");
    controls.setExamples(examples);
  } catch (e) {
    app.probe.errors.push(e.message);
    showStatus(app.errorText(e), "error");
    return;
  }
  await picker.start(store.state.model);
}

addEventListener("error", (e) => app.probe.errors.push(String(e.message)));
addEventListener("unhandledrejection", (e) => app.probe.errors.push(String(e.reason?.message ?? e.reason)));
main();
