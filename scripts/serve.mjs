// A static file server for www/ (and the downloaded default model under /models/), on
// 127.0.0.1 only. Used by `scripts/serve` and the browser tests, so every test runs under the
// Content-Security-Policy a careful site would send.
// Usage: node scripts/serve.mjs [port]  (port 0 picks a free one and prints it)
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
};

/** The Hub's file hosts: a model id fetches from these, and nothing else leaves the page. */
export const HUB_HOSTS = ["https://huggingface.co", "https://*.huggingface.co", "https://*.hf.co"];

/** The policy every page is served with: no inline script, no other origin but the Hub. */
export const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  `connect-src 'self' ${HUB_HOSTS.join(" ")}`,
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join("; ");

/**
 * Cross-origin isolation: what lets a page share memory between threads (SharedArrayBuffer), so
 * the explorer and widgets run the threaded build. Every file here is same-origin; a model from
 * the Hub comes by CORS, which `require-corp` allows.
 */
export const ISOLATION = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };

/**
 * Serves `root` on 127.0.0.1:`port`; resolves to the server once it listens. `mounts` maps
 * URL prefixes to other folders ({ "/models/x/": "models/x" }); `routes` maps prefixes to
 * handlers `(req, res, rest)` (a test's stand-in for the Hub); `headers` are added to every
 * answer (the CSP and cross-origin isolation by default).
 */
export function serve(root, port = 0, { mounts = {}, routes = {}, headers = { "content-security-policy": CSP, ...ISOLATION } } = {}) {
  const server = createServer(async (req, res) => {
    let path;
    try {
      if (req.method !== "GET" && req.method !== "HEAD") return answer(res, 405, "method not allowed", headers);
      path = decodeURIComponent(new URL(req.url, "http://127.0.0.1").pathname);
      if (path.includes("\0")) throw new URIError("a NUL byte in the path");
    } catch {
      return answer(res, 400, "bad request", headers);
    }
    try {
      const route = Object.keys(routes).find((p) => path.startsWith(p));
      if (route) return await routes[route](req, res, path.slice(route.length));
      const prefix = Object.keys(mounts).find((p) => path.startsWith(p));
      const base = resolve(prefix ? mounts[prefix] : root);
      let file = normalize(join(base, prefix ? path.slice(prefix.length) : path));
      if (file !== base && !file.startsWith(base + sep)) return answer(res, 404, "not found", headers);
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      res.writeHead(200, { ...headers, "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-cache", "x-content-type-options": "nosniff" });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (e) {
      const missing = e.code === "ENOENT" || e.code === "ENOTDIR" || e.code === "EISDIR";
      answer(res, missing ? 404 : 500, missing ? "not found" : "server error", headers);
    }
  });
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => ok(server));
  });
}

function answer(res, status, text, headers) {
  res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8" });
  res.end(text);
}

/** The explorer's folders: www/ at the root, the downloaded default model under /models/. */
export const EXPLORER = {
  root: fileURLToPath(new URL("../www", import.meta.url)),
  mounts: { "/models/all-MiniLM-L6-v2/": fileURLToPath(new URL("../models/all-MiniLM-L6-v2", import.meta.url)) },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serve(EXPLORER.root, Number(process.argv[2] ?? 8080), { mounts: EXPLORER.mounts });
  console.log(`headmap explorer: http://127.0.0.1:${server.address().port}/`);
}
