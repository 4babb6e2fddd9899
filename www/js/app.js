// The explorer page: reads the controls and the URL, asks the worker for attention, and hands
// the numbers to the views. Nothing here touches wasm.

import { AttentionClient } from "./client.js";
import { browserLang, t as translate } from "./i18n.js";
import { drawLegend, formatWeight, paintHeatmap } from "./render/heatmap.js";
import { maxEntropy, visibleCounts } from "./stats.js";
import { validModelId } from "./model-files.js";
import { MASKS, decodeState, encodeState, modelRequestFor, requestFor } from "./state.js";
import { el, sizeCanvas } from "./views/dom.js";
import { HeadGrid } from "./views/head-grid.js";
import { HeatmapView } from "./views/heatmap-view.js";
import { MixingView } from "./views/mixing.js";
import { drawSteps } from "./views/steps.js";
import { drawTable } from "./views/table.js";

const $ = (id) => document.getElementById(id);
const PRESET_LAYERS = { small: 2, base: 6 };
const TRACE_LIMIT = 1024; // tokens: beyond this the step matrices would cost too much memory

const state = decodeState(location.search);
let lang = state.lang ?? browserLang();
const T = (key) => translate(lang, key);

const client = new AttentionClient();
let result = null; // the newest compute: { meta, config, weights, entropies, allowed, ms }
let modelInfo = null; // the loaded real model's { modelType, kinds, encoderDecoder, maxTokens }; null for the toy
let trace = null; // the step trace of the shown head, when it matches `shown`
let shown = null; // { row, layer, head, weights, tq, tk, ... } of the main heatmap
let debounce = 0; // typing waits for a pause before recomputing
let resizeTimer = 0;
let renderToken = 0;
let resultId = 0; // counts computes, so views drawn from an older result are redrawn
let gridKey = ""; // what the head grid was last drawn from
let renderSeq = 0; // counts renders: one that awaited the worker gives way to a newer one

// Exposed for the browser tests and the benchmark script.
const probe = (globalThis.__headmap = { ready: false, renders: 0, timings: {}, errors: [] });

const heatmap = new HeatmapView($("heatmap"), $("overlay"), { onHover: showReadout });
const grid = new HeadGrid($("grid"), {
  label: (layer, head) => `${T("layer")} ${layer + 1}, ${T("head")} ${head + 1}`,
  onSelect: async (layer, head, { focus = false } = {}) => {
    state.layer = layer;
    state.head = head;
    await render();
    if (focus) grid.focusSelected();
  },
});
const mixing = new MixingView($("mixing"), client, T);

function applyLanguage() {
  document.documentElement.lang = lang;
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = T(node.dataset.i18n);
  $("notice").textContent = modelInfo ? T("realModel") : T("untrained");
  document.title = T("title");
  $("lang").textContent = T("lang");
  $("lang").lang = lang === "ko" ? "en" : "ko";
  buildMaskOptions();
  mixing.render();
}

function buildMaskOptions() {
  const options = MASKS.map((mask) => {
    const kind = maskAvailability(mask);
    const suffix = kind === "what-if" ? ` (${T("whatIf")})` : kind === "absent" ? ` (${T("notInModel")})` : "";
    return el(
      "label",
      { class: kind === "absent" ? "mask-option unavailable" : "mask-option" },
      el("input", { type: "radio", name: "mask", value: mask, checked: state.mask === mask, disabled: kind === "absent", onchange: () => set({ mask }) }),
      el("span", { text: `${T(`mask.${mask}`)}${suffix}` }),
      el("small", { text: T(`mask.${mask}.hint`) }),
    );
  });
  $("mask-options").replaceChildren(...options);
}

/**
 * "trained" for a place the model has, "what-if" for a self-attention mask an encoder-only or
 * decoder-only model can be run with although it was not trained with it, "absent" otherwise.
 */
function maskAvailability(mask) {
  if (!modelInfo || modelInfo.kinds.includes(mask)) return "trained";
  if (!modelInfo.encoderDecoder && mask !== "cross") return "what-if";
  return "absent";
}

function bindControls() {
  const text = (id, key) => {
    $(id).value = state[key];
    $(id).addEventListener("input", () => {
      state[key] = $(id).value;
      clearTimeout(debounce);
      debounce = setTimeout(recompute, 150);
    });
  };
  text("text", "text");
  text("text2", "text2");
  text("target", "target");
  $("scale").checked = state.scale;
  $("scale").addEventListener("change", () => set({ scale: $("scale").checked }));
  $("preset").value = state.preset;
  $("preset").addEventListener("change", () => {
    const preset = $("preset").value;
    $("layers").value = PRESET_LAYERS[preset];
    set({ preset, layers: PRESET_LAYERS[preset] });
  });
  $("layers").value = state.layers;
  $("layers").addEventListener("change", () => {
    const n = Math.min(12, Math.max(1, Math.round(Number($("layers").value) || 1)));
    $("layers").value = n;
    set({ layers: n });
  });
  $("seed").value = state.seed;
  $("seed").addEventListener("change", () => set({ seed: Math.max(0, Math.round(Number($("seed").value) || 0)) }));
  $("range").value = state.range;
  $("range").addEventListener("change", () => {
    state.range = $("range").value;
    render();
  });
  $("layer").addEventListener("change", () => {
    state.layer = Number($("layer").value);
    render();
  });
  $("head").addEventListener("change", () => {
    state.head = Number($("head").value);
    render();
  });
  $("lang").addEventListener("click", () => {
    lang = lang === "ko" ? "en" : "ko";
    state.lang = lang;
    applyLanguage();
    syncUrl();
    render();
  });
  $("table-details").addEventListener("toggle", () => render());
  $("model").value = state.model.startsWith("hub:") ? "hub" : state.model;
  $("hub-id").value = state.model.startsWith("hub:") ? state.model.slice(4) : "";
  $("model").addEventListener("change", () => {
    const choice = $("model").value;
    $("hub-field").hidden = choice !== "hub";
    $("local-field").hidden = choice !== "local";
    if (choice === "toy" || choice === "minilm") chooseModel(choice);
  });
  $("hub-load").addEventListener("click", () => {
    const id = $("hub-id").value.trim();
    if (!validModelId(id)) return modelStatus(T("badModelId"), "error");
    chooseModel(`hub:${id}`);
  });
  $("generate").addEventListener("click", async () => {
    $("busy").hidden = false;
    try {
      const text = await client.generate(state.text);
      $("target").value = text;
      state.target = text;
      await recompute();
    } catch (e) {
      probe.errors.push(e.message);
      showStatus(e.message, "error");
    } finally {
      $("busy").hidden = true;
    }
  });
  $("hub-id").addEventListener("keydown", (e) => e.key === "Enter" && $("hub-load").click());
  for (const input of [$("local-folder"), $("local-files")]) {
    input.addEventListener("change", async () => {
      const named = {};
      for (const file of input.files) named[file.webkitRelativePath || file.name] = new Uint8Array(await file.arrayBuffer());
      chooseModel("local", named);
    });
  }
  // Only a change of width moves the heatmap (its height follows from the width).
  let lastWidth = innerWidth;
  addEventListener("resize", () => {
    if (innerWidth === lastWidth) return;
    lastWidth = innerWidth;
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(render, 100);
  });
}

function modelStatus(message, kind = "info") {
  $("model-status").textContent = message;
  $("model-status").classList.toggle("error", kind === "error");
}

/**
 * Loads `choice` ("toy", "minilm", "hub:<id>" or "local" with `named` files), then recomputes.
 * A newly picked model starts on a mask it was trained with; `keepMask` (a shared URL) keeps
 * a what-if mask.
 */
async function chooseModel(choice, named = null, { keepMask = false } = {}) {
  const progress = $("model-progress");
  if (choice === "toy") {
    modelInfo = null;
    state.model = "toy";
    modelStatus("");
    return afterModelChange();
  }
  const source =
    choice === "minilm"
      ? { from: "url", base: new URL("models/all-MiniLM-L6-v2/", location.href).href }
      : choice === "local"
        ? { from: "files", files: named }
        : { from: "hub", hub: state.hub, id: choice.slice(4) };
  const name = choice === "minilm" ? "all-MiniLM-L6-v2" : choice === "local" ? T("localName") : choice.slice(4);
  const loadStart = performance.now();
  progress.hidden = false;
  progress.removeAttribute("value");
  modelStatus(`${T("loading")} ${name}…`);
  $("busy").hidden = false;
  try {
    modelInfo = await client.loadModel(source, ({ file, loaded, total }) => {
      probe.progressEvents = (probe.progressEvents ?? 0) + 1;
      if (total) progress.value = loaded / total;
      modelStatus(`${T("loading")} ${name}: ${file} ${(loaded / 1048576).toFixed(1)}${total ? ` / ${(total / 1048576).toFixed(1)}` : ""} MiB`);
    });
    state.model = choice;
    probe.timings.modelLoadMs = performance.now() - loadStart;
    const availability = maskAvailability(state.mask);
    if (availability === "absent" || (availability === "what-if" && !keepMask)) state.mask = modelInfo.kinds[0];
    modelStatus(`${name} ${T("loaded")}: ${modelInfo.modelType}, ≤ ${modelInfo.maxTokens} tokens`);
    probe.model = modelInfo;
  } catch (e) {
    probe.errors.push(e.message);
    modelStatus(e.message, "error");
    modelInfo = null;
    state.model = "toy";
    $("model").value = "toy";
  } finally {
    progress.hidden = true;
    $("busy").hidden = true;
  }
  return afterModelChange();
}

function afterModelChange() {
  $("toy-settings").hidden = Boolean(modelInfo);
  $("what-if").hidden = true;
  $("generate").hidden = !modelInfo?.encoderDecoder;
  $("scale-field").hidden = Boolean(modelInfo);
  applyLanguage();
  return recompute();
}

/** Changes settings that need a new computation. */
function set(changes) {
  Object.assign(state, changes);
  recompute();
}

function syncUrl() {
  history.replaceState(null, "", encodeState(state) || location.pathname);
}

function showStatus(message, kind = "hint") {
  const status = $("status");
  status.hidden = !message;
  status.textContent = message ?? "";
  status.classList.toggle("error", kind === "error");
  $("heatmap-area").hidden = Boolean(message);
}

async function recompute() {
  syncUrl();
  const needsTarget = modelInfo ? modelInfo.encoderDecoder : state.mask === "cross";
  $("text2-field").hidden = needsTarget;
  $("target-field").hidden = !needsTarget;
  const missing = !state.text.trim() || (needsTarget && !state.target.trim());
  if (missing) {
    result = null;
    showStatus(T("emptyHint"));
    return;
  }
  $("busy").hidden = false;
  try {
    const whatIf = maskAvailability(state.mask) === "what-if";
    $("what-if").hidden = !whatIf;
    if (whatIf) $("what-if").textContent = T("whatIfNote").replace("{model}", modelInfo.modelType).replace("{mask}", T(`mask.${modelInfo.kinds[0]}`));
    const next = modelInfo
      ? await client.compute({ model: "hf" }, { ...modelRequestFor(state, modelInfo), ...(whatIf && { whatIf: state.mask }) }, state.mask)
      : await client.compute({ model: "toy", preset: state.preset, layers: state.layers, seed: state.seed }, requestFor(state));
    if (!next) return; // a newer request is on its way
    result = next;
    resultId += 1;
    probe.timings.computeMs = next.ms;
    if (next.wasmBytes) probe.timings.wasmBytes = next.wasmBytes;
    showStatus(null);
    render();
  } catch (e) {
    result = null;
    probe.errors.push(e.message);
    showStatus(e.message, "error");
  } finally {
    $("busy").hidden = true;
  }
}

function fillSelect(select, count, selected, label) {
  const options = Array.from({ length: count }, (_, k) => el("option", { value: k, text: `${label} ${k + 1}` }));
  select.replaceChildren(...options);
  select.value = String(selected);
}

async function render() {
  if (!result) return;
  const seq = ++renderSeq;
  const t0 = performance.now();
  const { meta, weights, allowed } = result;
  state.layer = Math.min(state.layer, meta.layers - 1);
  state.head = Math.min(state.head, meta.heads - 1);
  state.row = Math.min(state.row, meta.batch - 1);
  syncUrl();
  fillSelect($("layer"), meta.layers, state.layer, T("layer"));
  fillSelect($("head"), meta.heads, state.head, T("head"));
  renderRowTabs(meta);

  const { row, layer, head } = state;
  const { tq, tk } = meta;
  const size = tq * tk;
  const w = weights[row][layer].subarray(head * size, (head + 1) * size);
  const mask = allowed[row];
  const max = state.range === "one" ? 1 : result.maxima[row][layer][head] || 1;
  const entropies = result.entropies[row][layer].subarray(head * tq, (head + 1) * tq);
  const entropyMax = entropyMaxima(row);
  shown = { row, layer, head, weights: w, tq, tk, mask, entropies, entropyMax, queries: meta.queries[row], keys: meta.keys[row], queryValid: meta.queryValid[row] };

  const area = $("heatmap-area").getBoundingClientRect();
  const width = Math.max(320, Math.min(area.width || 800, 1100) - 16);
  const kind = modelInfo ? state.mask : undefined;
  await heatmap.draw({
    weights: w,
    tq,
    tk,
    queries: meta.queries[row],
    keys: meta.keys[row],
    allowed: mask,
    queryValid: meta.queryValid[row],
    keyValid: meta.keyValid[row],
    max,
    entropies,
    entropyMax,
    width,
    height: Math.min(width, 760),
  }, (h, w) => client.pooled(row, layer, head, h, w, kind));
  if (seq !== renderSeq) return; // a newer render started while this one waited for pooling
  drawLegendRow(max);
  const key = `${resultId}|${row}|${state.range}|${lang}`;
  if (key !== gridKey) {
    grid.draw({
      weights: weights[row],
      maxima: result.maxima[row],
      heads: meta.heads,
      tq,
      tk,
      allowed: mask,
      queryValid: meta.queryValid[row],
      selected: { layer, head },
      range: state.range,
    });
    gridKey = key;
  } else {
    grid.select(layer, head);
  }
  const c = meta.cost;
  const shape = modelInfo
    ? `${modelInfo.modelType}, ${meta.layers} layers × ${meta.heads} heads`
    : `d_model ${result.config.d_model}, h ${result.config.heads}, d_k ${result.config.d_k}`;
  $("cost").textContent = `${T("cost")}: QKᵀ ${c.score_macs.toLocaleString()} MACs (= h·n²·d/h over ${meta.layers} layers), ${c.flops.toLocaleString()} FLOPs, ${(c.weight_bytes / 1024).toFixed(1)} KiB of weights · ${shape}`;
  if ($("table-details").open) {
    drawTable($("table"), { weights: w, tq, tk, queries: meta.queries[row], keys: meta.keys[row], allowed: mask }, T);
  }
  showReadout(null);

  const drawMs = performance.now() - t0;
  probe.timings.drawMs = drawMs;
  probe.renders += 1;
  if (!probe.ready) {
    performance.mark("headmap:first-heatmap");
    probe.timings.firstHeatmapMs = performance.now();
  }
  probe.ready = true;
  probe.meta = meta;
  probe.layout = heatmap.layout;
  probe.state = { ...state };
  loadTrace();
}

// The most entropy each query row can have: log2 of how many keys it may see. Per batch row,
// the same for every layer and head, so kept until the next compute.
let maxima = { key: "", values: [] };
function entropyMaxima(row) {
  const key = `${resultId}|${row}`;
  if (maxima.key !== key) {
    const { tq, tk } = result.meta;
    maxima = { key, values: Array.from(visibleCounts(result.allowed[row], tq, tk), maxEntropy) };
  }
  return maxima.values;
}

function renderRowTabs(meta) {
  const tabs = [];
  if (meta.batch > 1) {
    for (let b = 0; b < meta.batch; b++) {
      tabs.push(
        el("button", {
          type: "button",
          "aria-pressed": String(b === state.row),
          text: `${T("sentence")} ${b + 1}`,
          onclick: () => {
            state.row = b;
            render();
          },
        }),
      );
    }
  }
  $("rows").replaceChildren(...tabs);
}

function drawLegendRow(max) {
  const { ctx, dpr } = sizeCanvas($("legend"), 240, 34);
  drawLegend(ctx, { x: 8, y: 2, width: 220, height: 12, max, dpr });
  const swatch = (id, paint) => {
    const canvas = $(id);
    const { ctx: c, dpr: d } = sizeCanvas(canvas, 28, 14);
    const w = Math.round(28 * d);
    const h = Math.round(14 * d);
    const image = c.createImageData(w, h);
    paint(image.data, w, h);
    c.putImageData(image, 0, 0);
  };
  swatch("swatch-masked", (px, w, h) => paintHeatmap(px, w, h, new Float32Array(1), 1, 1, Math.max(w, h), { allowed: new Uint8Array(1) }));
  swatch("swatch-pad", (px, w, h) => paintHeatmap(px, w, h, new Float32Array([0.6]), 1, 1, Math.max(w, h), { queryValid: [false] }));
}

async function loadTrace() {
  const token = ++renderToken;
  trace = null;
  const { row, layer, head, tq, tk } = shown;
  if (Math.max(tq, tk) > TRACE_LIMIT) {
    $("steps").replaceChildren(el("p", { class: "small-label", text: `> ${TRACE_LIMIT} tokens` }));
    return;
  }
  try {
    const next = await client.trace(row, layer, head, modelInfo ? state.mask : undefined);
    if (token !== renderToken) return;
    trace = next;
    drawSteps($("steps"), trace, T, shown.mask);
  } catch (e) {
    if (token === renderToken) $("steps").replaceChildren(el("p", { class: "small-label", text: e.message }));
  }
}

function showReadout(hit) {
  const out = $("readout");
  if (!shown || !hit) {
    out.textContent = T("readout");
    return;
  }
  const { tk, queries, keys, queryValid } = shown;
  if (hit.axis === "query") {
    out.textContent = `${T("query")} “${queries[hit.index]}” (#${hit.index + 1}) · ${T("entropy")} ${shown.entropies[hit.index].toFixed(2)} / ${shown.entropyMax[hit.index].toFixed(2)}`;
    return;
  }
  if (hit.axis === "key") {
    out.textContent = `${T("key")} “${keys[hit.index]}” (#${hit.index + 1})`;
    return;
  }
  const k = hit.i * tk + hit.j;
  const parts = [
    `${T("query")} “${queries[hit.i]}” (#${hit.i + 1})${queryValid[hit.i] ? "" : ` [${T("pad")}]`} → ${T("key")} “${keys[hit.j]}” (#${hit.j + 1})`,
    `${T("weight")} ${formatWeight(shown.weights[k])}${shown.mask[k] ? "" : ` (${T("masked")})`}`,
  ];
  if (trace) {
    parts.push(`${T("score")} ${formatWeight(trace.scores.data[k])}`);
    parts.push(`${T("scaled")} ${formatWeight(trace.scaled.data[k])}${shown.mask[k] ? "" : " → −∞"}`);
  }
  parts.push(`${T("entropy")} ${shown.entropies[hit.i].toFixed(2)}`);
  out.textContent = parts.join(" · ");
  out.dataset.weight = String(shown.weights[k]);
}

async function main() {
  bindControls();
  applyLanguage();
  try {
    const { examples } = await client.start();
    const buttons = examples.map((ex) =>
      el("button", {
        type: "button",
        lang: ex.lang,
        title: ex.note,
        "data-example": ex.id,
        text: ex.text,
        onclick: () => {
          $("text").value = ex.text;
          state.text = ex.text;
          recompute();
        },
      }),
    );
    $("example-buttons").replaceChildren(...buttons);
  } catch (e) {
    probe.errors.push(e.message);
    showStatus(e.message, "error");
    return;
  }
  if (state.model !== "toy") {
    $("hub-field").hidden = $("model").value !== "hub";
    await chooseModel(state.model, null, { keepMask: true });
  } else {
    await recompute();
  }
}

addEventListener("error", (e) => probe.errors.push(String(e.message)));
main();
