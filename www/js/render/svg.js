// One head's heatmap as an SVG document, for saving from the page: viridis cells, masked cells
// hatched, PAD query rows faded, token labels on both axes, a title and a colour bar. Pure:
// text in, text out; every label is escaped.

import { VIRIDIS, lutIndex } from "./colormap.js";
import { truncateLabel } from "./layout.js";
import { formatWeight } from "./heatmap.js";

/** Above this many cells the cells are one embedded image, not one rectangle each. */
export const MAX_RECTS = 128 * 128;

export function escapeXml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "\ufffd");
}

function rgb(value, max) {
  const i = lutIndex(value, max) * 3;
  return `rgb(${VIRIDIS[i]},${VIRIDIS[i + 1]},${VIRIDIS[i + 2]})`;
}

/**
 * map: { title, weights [Tq x Tk], tq, tk, queries, keys (labels), allowed [Tq x Tk],
 * queryValid, max, maskedLabel, image? (a PNG data URL of the cells, used above MAX_RECTS) }.
 */
export function heatmapSvg(map) {
  const { tq, tk, weights, allowed, queryValid, max = 1 } = map;
  const font = 12;
  const cell = Math.min(36, Math.max(2, 720 / Math.max(tq, tk)));
  const step = cell >= font * 1.2 ? 1 : Math.ceil((font * 1.2) / cell);
  const short = (labels) => labels.map((l) => truncateLabel(l, 14));
  const queries = short(map.queries);
  const keys = short(map.keys);
  const widest = (labels) => labels.reduce((m, l) => Math.max(m, [...l].length), 1);
  const left = widest(queries) * font * 0.75 + 14;
  const top = widest(keys) * font * 0.65 + 40;
  const width = Math.ceil(left + cell * tk + 30);
  const height = Math.ceil(top + cell * tq + 70);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" shape-rendering="crispEdges" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Noto Sans CJK KR, Noto Sans KR, Noto Sans, sans-serif" font-size="${font}">`,
    `<defs><pattern id="masked" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="7" height="7" fill="#ececec"/><rect width="2" height="7" fill="#969696"/></pattern></defs>`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="600">${escapeXml(map.title)}</text>`,
  ];
  if (tq * tk > MAX_RECTS && map.image) {
    out.push(`<image x="${left}" y="${top}" width="${cell * tk}" height="${cell * tq}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${escapeXml(map.image)}"/>`);
  } else {
    for (let i = 0; i < tq; i++) {
      const fade = queryValid && !queryValid[i] ? ` fill-opacity="0.4"` : "";
      for (let j = 0; j < tk; j++) {
        const k = i * tk + j;
        const fill = allowed[k] ? rgb(weights[k], max) : "url(#masked)";
        out.push(`<rect x="${(left + j * cell).toFixed(2)}" y="${(top + i * cell).toFixed(2)}" width="${cell.toFixed(2)}" height="${cell.toFixed(2)}" fill="${fill}"${fade}><title>${formatWeight(weights[k])}</title></rect>`);
      }
    }
  }
  queries.forEach((label, i) => {
    if (i % step === 0) out.push(`<text x="${(left - 6).toFixed(2)}" y="${(top + (i + 0.5) * cell).toFixed(2)}" text-anchor="end" dominant-baseline="middle">${escapeXml(label)}</text>`);
  });
  keys.forEach((label, j) => {
    if (j % step === 0) out.push(`<text transform="translate(${(left + (j + 0.5) * cell).toFixed(2)},${(top - 6).toFixed(2)}) rotate(-60)">${escapeXml(label)}</text>`);
  });
  const ly = top + cell * tq + 24;
  for (let k = 0; k < 50; k++) out.push(`<rect x="${(left + k * 4).toFixed(1)}" y="${ly.toFixed(1)}" width="4.2" height="10" fill="${rgb(k / 49, 1)}"/>`);
  out.push(`<text x="${left.toFixed(1)}" y="${(ly + 24).toFixed(1)}">0</text><text x="${(left + 200).toFixed(1)}" y="${(ly + 24).toFixed(1)}" text-anchor="end">${formatWeight(max)}</text>`);
  out.push(`<rect x="${(left + 220).toFixed(1)}" y="${ly.toFixed(1)}" width="14" height="10" fill="url(#masked)"/><text x="${(left + 238).toFixed(1)}" y="${(ly + 9).toFixed(1)}">${escapeXml(map.maskedLabel ?? "masked")}</text>`);
  out.push("</svg>\n");
  return out.join("\n");
}
