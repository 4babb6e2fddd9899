// Saving what the explorer shows: the shown heatmap as PNG or SVG (title, tokens and colour bar
// included), and the whole run's weights as JSON or CSV, written by the core as the command
// line writes them.

import { drawLegend } from "../render/heatmap.js";
import { heatmapSvg } from "../render/svg.js";
import { offer } from "../views/dom.js";
import { cssSizeOf } from "../views/sizes.js";

/** Above this many bytes of weights a run is not saved from the page (the file would be gigabytes). */
export const MAX_EXPORT_BYTES = 64 * 1024 * 1024;

/** Offers `blob` to the reader as a file called `name`. */
export function download(blob, name) {
  offer(blob, name);
}

/** `text` broken into lines no wider than `width` on `ctx` (at spaces; a long word stands alone). */
function wrap(ctx, text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    const next = line ? `${line} ${word}` : word;
    if (line && ctx.measureText(next).width > width) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  return [...lines, line];
}

export class Exporter {
  constructor(app) {
    this.app = app;
  }

  bind() {
    for (const button of document.querySelectorAll("[data-export]")) {
      button.addEventListener("click", () => this.save(button.dataset.export));
    }
  }

  applyLanguage() {}

  /** "explorer-encoder_self-l1-h2" and so on, for file names. */
  baseName() {
    const s = this.app.shown;
    return `headmap-${this.app.model.info.architecture}-${s.place.place}-l${s.layer + 1}-h${s.head + 1}`;
  }

  title() {
    const { app } = this;
    const s = app.shown;
    const whatIf = s.place.whatIf ? ` · ${app.T("whatIf")}: ${app.T(`mask.${s.place.mask}`)}` : "";
    return `${app.model.name} · ${app.T(`place.${s.place.place}`)} · ${app.T("layer")} ${s.layer + 1} · ${app.T("head")} ${s.head + 1}${whatIf}`;
  }

  async save(format) {
    const { app } = this;
    const status = app.$("export-status");
    if (!app.shown) return;
    status.textContent = "";
    try {
      if (format === "png") return await this.png();
      if (format === "svg") return this.svg();
      const s = app.shown;
      const bytes = s.result.info.places.reduce((sum, p) => sum + p.cost.weightBytes * p.batch, 0);
      if (bytes > MAX_EXPORT_BYTES) {
        status.textContent = app.T("exportTooLarge", { megabytes: Math.round(bytes / 1048576) });
        return;
      }
      const text = await app.client.call("exportRun", { run: s.result.id, format });
      const type = format === "csv" ? "text/csv" : "application/json";
      download(new Blob([text], { type }), `${this.baseName()}.${format}`);
    } catch (e) {
      app.probe.errors.push(e.message);
      status.textContent = app.errorText(e);
    }
  }

  /** The heatmap canvas as it is drawn, with a title above and the colour bar below. */
  async png() {
    const { app } = this;
    const source = app.$("heatmap");
    const { width: cssW, height: cssH } = cssSizeOf(source);
    const dpr = source.width / cssW;
    const width = Math.max(cssW, 280);
    const canvas = document.createElement("canvas");
    const ctx = canvas.getContext("2d");
    const font = "600 14px system-ui, 'Noto Sans CJK KR', sans-serif";
    ctx.font = font;
    const lines = wrap(ctx, this.title(), width - 16);
    const header = 10 + lines.length * 20;
    const footer = 44;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round((cssH + header + footer) * dpr);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    // everything below is in CSS pixels; drawLegend puts its colours in device pixels itself
    ctx.scale(dpr, dpr);
    ctx.fillStyle = "#1d2230";
    ctx.font = font;
    ctx.textBaseline = "middle";
    lines.forEach((line, k) => ctx.fillText(line, 8, 15 + k * 20));
    ctx.drawImage(source, 0, header, cssW, cssH);
    drawLegend(ctx, { x: 8, y: cssH + header + 8, width: 200, height: 12, max: app.shown.max, dpr });
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
    download(blob, `${this.baseName()}.png`);
  }

  svg() {
    const { app } = this;
    const s = app.shown;
    const map = {
      title: this.title(),
      weights: s.weights,
      tq: s.tq,
      tk: s.tk,
      queries: s.labels.queries,
      keys: s.labels.keys,
      allowed: s.allowed,
      queryValid: s.tokens.queryValid,
      max: s.max,
      maskedLabel: app.T("masked"),
    };
    if (s.tq * s.tk > 128 * 128) map.image = this.cellsImage();
    download(new Blob([heatmapSvg(map)], { type: "image/svg+xml" }), `${this.baseName()}.svg`);
  }

  /** The plot's cells (without labels) as a PNG data URL, for an SVG of a large heatmap. */
  cellsImage() {
    const s = this.app.shown;
    const source = this.app.$("heatmap");
    const dpr = source.width / cssSizeOf(source).width;
    const { left, top, plotWidth, plotHeight } = s.layout;
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(plotWidth * dpr);
    canvas.height = Math.round(plotHeight * dpr);
    canvas.getContext("2d").drawImage(source, left * dpr, top * dpr, canvas.width, canvas.height, 0, 0, canvas.width, canvas.height);
    return canvas.toDataURL("image/png");
  }
}
