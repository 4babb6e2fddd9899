// The bytes of an attention file as the worker gets them: as they are, or as a notebook's
// figure carries them (base64 text of the file deflated). Decoded here, off the page's thread,
// and never past the size a page opens: a small deflated file cannot unfold into gigabytes.

import { coded } from "./errors.js";

/** The largest file a page opens, as the core counts it (src/import: MAX_FILE_BYTES). */
export const MAX_FILE_BYTES = 512 * 2 ** 20;

/** The core's refusal of a file past the page's limit, made where the page finds it first. */
export function tooLarge(name, bytes) {
  const megabytes = Math.floor(bytes / 2 ** 20);
  const problem = { problem: "too_large", megabytes, max: MAX_FILE_BYTES / 2 ** 20 };
  return coded(`${name}: ${megabytes} MB or more, more than the ${problem.max} MB a page opens`, "file", { file: name, problem });
}

function notAttention(name) {
  const problem = { problem: "not_attention" };
  return coded(`${name}: not a file of attention weights: its data is not base64 of a deflated file`, "file", { file: name, problem });
}

function fromBase64(name, text) {
  if (text.length > (MAX_FILE_BYTES * 4) / 3 + 4) throw tooLarge(name, (text.length * 3) / 4);
  try {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    throw notAttention(name);
  }
}

/** Every chunk of `stream`, stopping with a clear error past the page's limit. */
async function readAll(name, stream, failed) {
  const reader = stream.getReader();
  const parts = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_FILE_BYTES) {
        reader.cancel().catch(() => {});
        throw tooLarge(name, size);
      }
      parts.push(value);
    }
  } catch (e) {
    throw e.code ? e : failed(e);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Inflates `bytes` (zlib's deflate): a small file cannot unfold past the limit. */
function inflate(name, bytes) {
  return readAll(name, new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate")), () => notAttention(name));
}

/** Fetches a widget's `src` here, in the worker: the page's thread never holds the bytes. */
async function fetched(name, url) {
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw coded(`${url} could not be fetched (${e.message})`, "src_failed", { url });
  }
  if (!response.ok) throw coded(`${url} answered ${response.status}`, "src_status", { url, status: response.status });
  const length = Number(response.headers.get("content-length") ?? 0);
  if (length > MAX_FILE_BYTES) throw tooLarge(name, length);
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  return readAll(name, response.body, (e) => coded(`${url} could not be read (${e.message})`, "src_failed", { url }));
}

/** `{ bytes }`, `{ url }` or `{ base64, encoding: "deflate" | "none" }` as the file's bytes. */
export async function fileBytes(name, { bytes, url, base64, encoding = "none" }) {
  let data = url !== undefined ? await fetched(name, url) : base64 === undefined ? bytes : fromBase64(name, base64);
  if (!(data instanceof Uint8Array)) throw notAttention(name);
  if (encoding === "deflate") data = await inflate(name, data);
  if (data.length > MAX_FILE_BYTES) throw tooLarge(name, data.length);
  return data;
}
