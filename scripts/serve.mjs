// A static file server for www/ (and models/ under /models/), on 127.0.0.1 only. Used by `scripts/serve` and the browser
// tests. Usage: node scripts/serve.mjs [port]  (port 0 picks a free one and prints it)
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
};

/**
 * Serves `root` on 127.0.0.1:`port`; resolves to the server once it listens. `mounts` maps
 * URL prefixes to other folders ({ "/models/": "models" }); `cors` lets other origins fetch.
 */
export function serve(root, port = 0, { mounts = {}, cors = false } = {}) {
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, "http://127.0.0.1").pathname);
      const prefix = Object.keys(mounts).find((p) => path.startsWith(p));
      const base = resolve(prefix ? mounts[prefix] : root);
      let file = normalize(join(base, prefix ? path.slice(prefix.length) : path));
      if (file !== base && !file.startsWith(base + sep)) throw Object.assign(new Error("outside"), { code: "ENOENT" });
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      const headers = { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-cache" };
      if (cors) headers["access-control-allow-origin"] = "*";
      res.writeHead(200, headers);
      res.end(body);
    } catch (e) {
      const headers = { "content-type": "text/plain" };
      if (cors) headers["access-control-allow-origin"] = "*";
      res.writeHead(e.code === "ENOENT" || e.code === "ENOTDIR" ? 404 : 500, headers);
      res.end(e.code === "ENOENT" || e.code === "ENOTDIR" ? "not found" : "server error");
    }
  });
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => ok(server));
  });
}

/** The explorer's folders: www/ at the root, the default model under /models/. */
export const EXPLORER = {
  root: fileURLToPath(new URL("../www", import.meta.url)),
  mounts: { "/models/": fileURLToPath(new URL("../models", import.meta.url)) },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serve(EXPLORER.root, Number(process.argv[2] ?? 8080), { mounts: EXPLORER.mounts });
  console.log(`headmap explorer: http://127.0.0.1:${server.address().port}/`);
}
