// The real-model package with its wasm inside (deflated, base64): the inline bundle's worker
// imports this in place of ../pkg/, ../pkg-hf/ and their threaded and relaxed-SIMD builds, so
// all are one instance, set up once.

import init from "../../pkg-hf/headmap.js";
import { WASM } from "headmap:wasm";

export * from "../../pkg-hf/headmap.js";

/** compute.js names the build that computes: here this one, whatever folder was asked for. */
export const INLINE = true;

let ready = null;

async function inflate(base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export default function setUp() {
  ready ??= inflate(WASM).then((bytes) => init({ module_or_path: bytes }));
  return ready;
}
