// The query–key picture drawn, pure: a head's points on a square canvas, coloured by query/key,
// by position or by kind of token, and the legend of that colouring. The view (qk-view.js)
// keeps the reader's choices and passes them in.

import { cssColorOf, VIRIDIS } from "../render/colormap.js";
import { sizeCanvas } from "./dom.js";
import { FONT } from "./heatmap-view.js";

export const COLOURINGS = ["role", "position", "kind"];
const ROLE_COLOURS = { query: "#1a9e77", key: "#d9467a" };
export const KINDS = ["word", "continuation", "part", "special", "unknown", "punctuation"];
const KIND_COLOURS = ["#4477aa", "#66ccee", "#228833", "#ee6677", "#aa3377", "#ccbb44"];
const PUNCTUATION = /^[\p{P}\p{S}]+$/u;

/** A token's kind as the picture colours it: punctuation apart from other words. */
export function kindOf(token) {
  const bare = token.label.replace(/^##|^▁|^Ġ/, "").trim();
  return (token.kind === "word" || token.kind === "continuation") && bare && PUNCTUATION.test(bare) ? "punctuation" : token.kind;
}

/** What a point's fill is under the colouring `how`. */
function fillOf(point, how) {
  // positions in 32 steps of colour, so a picture has few colours to fill
  if (how === "position") return cssColorOf(point.count > 1 ? Math.round((31 * point.index) / (point.count - 1)) / 31 : 0, 1, VIRIDIS);
  if (how === "kind") return KIND_COLOURS[KINDS.indexOf(kindOf(point.token))] ?? "#888";
  return ROLE_COLOURS[point.side];
}

/**
 * Draws picture `pic`'s points into `canvas` (`size` CSS pixels square), the same scale on
 * both axes, filled by the colouring `colour`; returns each point's place, Float32Array
 * [x, y, …].
 */
export function paintPoints(canvas, pic, points, size, { dot, colour, matches = [], selected = null, sized = false }) {
  const { ctx } = sizeCanvas(canvas, size, size);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, size, size);
  const c = pic.coords;
  const n = c.length / 2;
  let [minX, maxX, minY, maxY] = [Infinity, -Infinity, Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    minX = Math.min(minX, c[2 * i]);
    maxX = Math.max(maxX, c[2 * i]);
    minY = Math.min(minY, c[2 * i + 1]);
    maxY = Math.max(maxY, c[2 * i + 1]);
  }
  const pad = Math.max(4, dot * 3);
  const span = Math.max(maxX - minX, maxY - minY) || 1;
  const k = (size - 2 * pad) / span;
  const [ox, oy] = [(size - k * (maxX - minX)) / 2, (size - k * (maxY - minY)) / 2];
  const at = new Float32Array(2 * n);
  let meanNorm = 0;
  for (let i = 0; i < n; i++) meanNorm += pic.norms[i] / n;
  for (let i = 0; i < n; i++) {
    at[2 * i] = ox + k * (c[2 * i] - minX);
    at[2 * i + 1] = size - (oy + k * (c[2 * i + 1] - minY)); // up is +y
  }
  const lit = new Set(matches);
  ctx.globalAlpha = lit.size ? 0.25 : 0.8;
  // one path per colour: thousands of points in a few fills
  const groups = new Map();
  for (let i = 0; i < n; i++) {
    const fill = fillOf(points[i], colour);
    if (!groups.has(fill)) groups.set(fill, []);
    groups.get(fill).push(i);
  }
  for (const [fill, members] of groups) {
    ctx.beginPath();
    for (const i of members) {
      const r = sized ? Math.max(0.8, Math.min(3, pic.norms[i] / (meanNorm || 1))) * dot : dot;
      ctx.rect(at[2 * i] - r, at[2 * i + 1] - r, 2 * r, 2 * r);
    }
    ctx.fillStyle = fill;
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  for (const i of [...lit, ...(selected === null ? [] : [selected])]) {
    ctx.beginPath();
    ctx.arc(at[2 * i], at[2 * i + 1], dot + 3, 0, 2 * Math.PI);
    ctx.fillStyle = fillOf(points[i], colour);
    ctx.fill();
    ctx.lineWidth = i === selected ? 2.5 : 1.5;
    ctx.strokeStyle = "#111";
    ctx.stroke();
  }
  return at;
}

/** The legend of the colouring `how` into `canvas`, `width` CSS pixels wide, worded by `T`. */
export function drawLegend(canvas, width, how, T) {
  const entries =
    how === "role"
      ? [[ROLE_COLOURS.query, T("qk.query")], [ROLE_COLOURS.key, T("qk.key")]]
      : how === "kind"
        ? KINDS.map((k, i) => [KIND_COLOURS[i], T(`qk.kind.${k}`)])
        : null;
  const height = entries && width < 400 ? 40 : 22;
  const { ctx } = sizeCanvas(canvas, width, height);
  // on the plot's own white, whatever the page's background (a dark page left dark ink on dark)
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, width, height);
  ctx.font = `12px ${FONT}`;
  ctx.textBaseline = "middle";
  ctx.fillStyle = "#222";
  if (!entries) {
    const w = Math.min(160, width / 3);
    ctx.fillText(T("qk.first"), 0, 11);
    const x0 = ctx.measureText(T("qk.first")).width + 6;
    for (let x = 0; x < w; x++) {
      ctx.fillStyle = cssColorOf(x / (w - 1), 1, VIRIDIS);
      ctx.fillRect(x0 + x, 4, 1, 14);
    }
    ctx.fillStyle = "#222";
    ctx.fillText(T("qk.last"), x0 + w + 6, 11);
    return;
  }
  let [x, y] = [0, 11];
  for (const [colour, text] of entries) {
    const w = 14 + ctx.measureText(text).width + 14;
    if (x + w > width) [x, y] = [0, y + 18];
    ctx.fillStyle = colour;
    ctx.fillRect(x, y - 5, 10, 10);
    ctx.fillStyle = "#222";
    ctx.fillText(text, x + 14, y);
    x += w;
  }
}
