// A query–key picture of a corpus computed elsewhere — `headmap.corpus.qk_picture` in Python,
// or `headmap.ray.qk_picture` on a cluster: every head of a layer over a sample of sentences,
// placed on axes made from every token of the whole corpus — read from its JSON file (format
// "headmap.qk") and checked to the last number before the query–key view draws it. The
// explorer's panel opens one with its file button, the widget with view="qk" and src=.

import { coded } from "./errors.js";

/** The format name and version this page reads. */
export const QK_FORMAT = "headmap.qk";
export const QK_VERSION = 1;
/** The most bytes of a picture file: several hundred thousand points. */
export const MAX_QK_BYTES = 64 << 20;
/** The most heads and points a picture may have. */
const MAX_HEADS = 1024;
const MAX_POINTS = 1_000_000;
const KINDS = new Set(["word", "continuation", "part", "special", "unknown", "pad"]);

/**
 * The picture in `bytes` of the file `name`: { modelType, place, layer, head, heads, lines,
 * sentences, pictures, corpus: { texts, erred, queries, keys } }, laid out as the core's
 * queryKeys result, so QkView.show draws it; a coded `bad_qk_file` naming what is wrong, else.
 */
export function readQkPicture(bytes, name) {
  const bad = (problem) => coded(`${name} is not a query–key picture headmap can draw: ${problem}`, "bad_qk_file", { file: name, why: problem });
  if (bytes.byteLength > MAX_QK_BYTES) throw coded(`${name} is too large: a picture file has at most ${MAX_QK_BYTES >> 20} MB`, "qk_file_too_large", { file: name, megabytes: MAX_QK_BYTES >> 20 });
  let doc;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw bad("it is not UTF-8 JSON");
  }
  if (!isObject(doc) || doc.format !== QK_FORMAT) throw bad(`its format is not "${QK_FORMAT}" (headmap.corpus.qk_picture writes one)`);
  if (doc.version !== QK_VERSION) throw bad(`version ${JSON.stringify(doc.version) ?? "missing"}: this page reads version ${QK_VERSION}`);
  const count = (value, what, max = Number.MAX_SAFE_INTEGER) => {
    if (!Number.isInteger(value) || value < 0 || value > max) throw bad(`${what} is not a whole number from 0 to ${max}`);
    return value;
  };
  const text = (value, what) => {
    if (typeof value !== "string") throw bad(`${what} is not text`);
    return value;
  };
  const heads = count(doc.heads, "heads", MAX_HEADS);
  if (heads < 1) throw bad("it has no head");
  const layer = count(doc.layer, "layer", 10_000);
  const head = count(doc.head, "head", heads - 1);
  const { lines, sentences } = doc;
  if (!Array.isArray(lines) || !Array.isArray(sentences) || lines.length !== sentences.length || !sentences.length) {
    throw bad("its lines and sentences are not two lists of the same length, at least one");
  }
  const token = (t, where) => {
    if (!isObject(t) || !KINDS.has(t.kind)) throw bad(`${where} is not a token (label, kind, text)`);
    return { label: text(t.label, `${where}'s label`), kind: t.kind, text: text(t.text, `${where}'s text`) };
  };
  let queries = 0;
  let keys = 0;
  const read = sentences.map((s, i) => {
    if (!isObject(s)) throw bad(`sentence ${i + 1} is not an object`);
    const sides = {};
    for (const [side, positionsKey] of [["queries", "queryPositions"], ["keys", "keyPositions"]]) {
      const tokens = s[side];
      const positions = s[positionsKey];
      if (!Array.isArray(tokens) || !Array.isArray(positions) || tokens.length !== positions.length) {
        throw bad(`sentence ${i + 1}'s ${side} and ${positionsKey} differ in length`);
      }
      sides[side] = tokens.map((t, j) => token(t, `sentence ${i + 1}'s ${side} ${j + 1}`));
      sides[positionsKey] = positions.map((p) => count(p, `a position in sentence ${i + 1}`, MAX_POINTS));
    }
    queries += sides.queries.length;
    keys += sides.keys.length;
    text(lines[i], `line ${i + 1}`);
    return sides;
  });
  if (queries + keys > MAX_POINTS) throw bad(`it has ${queries + keys} points: at most ${MAX_POINTS}`);
  if (!Array.isArray(doc.pictures) || doc.pictures.length !== heads) throw bad(`it has not one picture for each of its ${heads} heads`);
  const pictures = doc.pictures.map((p, h) => {
    const where = `head ${h + 1}'s picture`;
    if (!isObject(p) || p.queries !== queries || p.keys !== keys) throw bad(`${where} does not have the sentences' ${queries} queries and ${keys} keys`);
    return {
      queries,
      keys,
      coords: numbers(p.coords, 2 * (queries + keys), `${where}'s coordinates`, bad),
      norms: numbers(p.norms, queries + keys, `${where}'s lengths`, bad, 0),
      explained: numbers(p.explained, null, `${where}'s explained shares`, bad),
      correlation: correlationOf(p.correlation, where, bad),
      scale: numbers([p.scale], 1, `${where}'s scale`, bad)[0],
    };
  });
  const corpus = isObject(doc.corpus) ? doc.corpus : {};
  return {
    fromFile: true,
    modelType: typeof doc.model_type === "string" ? doc.model_type : "",
    place: typeof doc.place === "string" ? doc.place : "",
    layer,
    head,
    heads,
    lines: lines.slice(),
    sentences: read,
    pictures,
    corpus: {
      texts: count(corpus.texts ?? read.length, "the corpus's texts"),
      erred: count(corpus.erred ?? 0, "the corpus's errors"),
      queries: count(corpus.queries ?? queries, "the corpus's queries"),
      keys: count(corpus.keys ?? keys, "the corpus's keys"),
    },
  };
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * `values` as a Float32Array of `length` finite numbers (any length up to 8 when null), none
 * below `least`: a number past what a 32-bit float holds would be read as infinity.
 */
function numbers(values, length, what, bad, least = -Infinity) {
  if (!Array.isArray(values) || (length === null ? values.length > 8 : values.length !== length)) {
    throw bad(`${what} are not ${length ?? "a few"} numbers`);
  }
  const out = new Float32Array(values.length);
  values.forEach((v, i) => {
    if (typeof v !== "number" || !Number.isFinite(v)) throw bad(`${what} have a value that is not a finite number at ${i}`);
    if (!Number.isFinite(Math.fround(v))) throw bad(`${what} have a value past what a 32-bit float holds at ${i}`);
    if (v < least) throw bad(`${what} have a value below ${least} at ${i}`);
    out[i] = v;
  });
  return out;
}

function correlationOf(values, where, bad) {
  if (!Array.isArray(values) || values.length !== 2 || values.some((v) => v !== null && (typeof v !== "number" || !Number.isFinite(v)))) {
    throw bad(`${where}'s correlations are not two numbers (or null)`);
  }
  return values.slice();
}
