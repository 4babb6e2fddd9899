// Starts the static server (with its Content-Security-Policy) and Debian's Chromium for a
// browser test file, and collects the page's console errors and CSP violations. Screenshots
// go to artifacts/screenshots/.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "../../scripts/browser.mjs";
import { CSP, EXPLORER, serve } from "../../scripts/serve.mjs";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const SHOTS = join(ROOT, "artifacts", "screenshots");
export const FIXTURES = join(ROOT, "tests", "fixtures", "hf");

/**
 * A stand-in for the Hub on the page's own origin (the only place besides the Hub a page
 * fetches models from): `/hub-mock/headmap-tests/tiny-{name}/resolve/main/{file}` serves
 * tests/fixtures/hf/{name}/{file}. `requests` lists what was asked.
 */
export function mockHub() {
  const requests = [];
  const handler = async (req, res, rest) => {
    requests.push(`/${rest}`);
    const m = `/${rest}`.match(/^\/headmap-tests\/tiny-([\w-]+)\/resolve\/main\/([\w.-]+)$/);
    try {
      if (!m || m[2].startsWith("reference")) throw new Error("no such file");
      const body = await readFile(join(FIXTURES, m[1], m[2]));
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
      res.end(body);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Entry not found");
    }
  };
  return { handler, requests, path: "/hub-mock" };
}

/** What a careful blog sends: no inline script or style, wasm allowed, Trusted Types enforced. */
export const BLOG_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types headmap",
].join("; ");

/** A page of the harness `h` on `query` with CSP violations recorded, once it has drawn. */
export async function openExplorer(h, query = "", options = {}) {
  const page = await h.page(options);
  await page.addInitScript(() => {
    globalThis.__csp = [];
    addEventListener("securitypolicyviolation", (e) => globalThis.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(h.base + query);
  await waitForRender(page);
  return page;
}

export async function openHarness({ routes = {} } = {}) {
  if (!existsSync(join(ROOT, "www", "pkg", "headmap_bg.wasm"))) throw new Error("www/pkg is missing: run scripts/build/all");
  await mkdir(SHOTS, { recursive: true });
  const server = await serve(EXPLORER.root, 0, { mounts: EXPLORER.mounts, routes });
  let browser;
  try {
    browser = await launchChromium();
  } catch (e) {
    server.close();
    throw e;
  }
  const base = `http://127.0.0.1:${server.address().port}/`;
  return {
    base,
    browser,
    /** A page; `touch` gives a phone's touch screen. Console errors land in `page.consoleErrors`. */
    async page({ width = 1400, height = 1100, locale = "en-US", touch = false, scale = 1 } = {}) {
      const context = await browser.newContext({ viewport: { width, height }, locale, hasTouch: touch, isMobile: touch, deviceScaleFactor: scale, acceptDownloads: true });
      const page = await context.newPage();
      page.consoleErrors = [];
      page.on("console", (m) => m.type() === "error" && page.consoleErrors.push(m.text()));
      page.on("pageerror", (e) => page.consoleErrors.push(e.message));
      return page;
    },
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/**
 * The build an isolated page computes on in this browser (js/compute.js): threads, one per core
 * up to 8, where Chromium reports two cores or more (`taskset -c 0` leaves it one); one thread
 * otherwise, and the page says why. Tests of threads expect what the machine they run on allows.
 */
export async function isolatedBuild(page) {
  const cores = await page.evaluate(() => Math.min(8, navigator.hardwareConcurrency || 1));
  return cores >= 2
    ? { cores, compute: { build: "threads", threads: cores, package: "pkg-hf-threads-relaxed" }, plain: "pkg-hf-threads" }
    : { cores, compute: { build: "single", threads: 1, why: "one_core", package: "pkg-hf-relaxed" }, plain: "pkg-hf" };
}

/** The explorer's files served with its CSP but not cross-origin isolated (one thread). */
export function servePlain() {
  return serve(EXPLORER.root, 0, { mounts: EXPLORER.mounts, headers: { "content-security-policy": CSP } });
}

/** The file a click on `[data-export=<format>]` saves, as bytes. */
export async function savedExport(page, format = "json") {
  const [download] = await Promise.all([page.waitForEvent("download"), page.locator(`[data-export=${format}]`).click()]);
  return readFile(await download.path());
}

/** Waits until the page has drawn `count` heatmaps in all; fails at once on a new page error. */
export async function waitForRender(page, count = 1) {
  const errorsBefore = await page.evaluate(() => globalThis.__headmap?.errors.length ?? 0);
  await page.waitForFunction(
    ([n, e]) => globalThis.__headmap?.renders >= n || globalThis.__headmap?.errors.length > e,
    [count, errorsBefore],
    { timeout: 60000 },
  );
  const { renders, errors } = await page.evaluate(() => globalThis.__headmap);
  if (renders < count) throw new Error(`the page reported an error instead of drawing: ${errors.at(-1)}`);
}

/**
 * Waits for a render begun after `action` to be drawn: not one begun before it (a resize's, a
 * panel's), which draws the state it began with and can end after the action.
 */
export async function afterRender(page, action) {
  const [begun, errors] = await page.evaluate(() => [globalThis.__headmap.begun ?? 0, globalThis.__headmap.errors.length]);
  await action();
  await page.waitForFunction(([b, e]) => globalThis.__headmap.drawn > b || globalThis.__headmap.errors.length > e, [begun, errors], { timeout: 60000 });
  const { drawn, errors: now } = await page.evaluate(() => globalThis.__headmap);
  if (!(drawn > begun)) throw new Error(`the page reported an error instead of drawing: ${now.at(-1)}`);
}

/** The RGB of the main heatmap's canvas at the centre of cell (i, j). */
export async function cellColor(page, i, j) {
  return page.evaluate(([i, j]) => {
    const { layout } = globalThis.__headmap;
    const canvas = document.getElementById("heatmap");
    const dpr = canvas.width / parseFloat(canvas.dataset.hmSize); // "{width}x{height}" in CSS pixels
    const x = Math.floor((layout.left + (j + 0.5) * layout.cell) * dpr);
    const y = Math.floor((layout.top + (i + 0.5) * layout.cell) * dpr);
    // sample a 3x3 block: hatching alternates within a cell
    const data = canvas.getContext("2d").getImageData(x - 1, y - 1, 3, 3).data;
    const colors = new Set();
    for (let k = 0; k < data.length; k += 4) colors.add(`${data[k]},${data[k + 1]},${data[k + 2]}`);
    return [...colors];
  }, [i, j]);
}

/** The page position of the centre of cell (i, j) of the main heatmap. */
export async function cellPoint(page, i, j) {
  const { layout } = await page.evaluate(() => ({ layout: globalThis.__headmap.layout }));
  const box = await page.locator("#heatmap").boundingBox();
  return { x: box.x + layout.left + (j + 0.5) * layout.cell, y: box.y + layout.top + (i + 0.5) * layout.cell };
}

/** Moves the pointer over cell (i, j) of the main heatmap, scrolled into view first. */
export async function hoverCell(page, i, j) {
  await page.locator("#heatmap").scrollIntoViewIfNeeded();
  const { x, y } = await cellPoint(page, i, j);
  await page.mouse.move(x, y);
}

/**
 * A blog of widgets (tests/widget/) served under the strict blog CSP, the widget at
 * /assets/headmap/ and `mounts` beside it; `open(path, options)` gives a page that records
 * every widget's `load`, `render` and `error` events, every CSP violation and how many workers
 * the page started; `headers` are sent beside the CSP (cross-origin isolation, say). `browser` is there for a page of a test's own.
 */
export async function openBlog(mounts = {}, { headers = {} } = {}) {
  const dist = join(ROOT, "dist", "headmap");
  if (!existsSync(join(dist, "headmap.js"))) throw new Error("dist/headmap is missing: run scripts/build/all");
  for (const [at, dir] of Object.entries(mounts)) if (!existsSync(dir)) throw new Error(`${dir} (for ${at}) is missing: run scripts/setup`);
  const server = await serve(join(ROOT, "tests", "widget"), 0, { mounts: { "/assets/headmap/": dist, ...mounts }, headers: { "content-security-policy": BLOG_CSP, ...headers } });
  const base = `http://127.0.0.1:${server.address().port}/`;
  let browser;
  try {
    browser = await launchChromium();
  } catch (e) {
    server.close();
    throw e;
  }
  return {
    browser,
    async open(path, { width = 1000, height = 900, touch = false, locale = "ko-KR", javaScript = true } = {}) {
      const context = await browser.newContext({ viewport: { width, height }, locale, hasTouch: touch, isMobile: touch, javaScriptEnabled: javaScript, acceptDownloads: true });
      const page = await context.newPage();
      page.consoleErrors = [];
      page.on("console", (m) => m.type() === "error" && page.consoleErrors.push(m.text()));
      page.on("pageerror", (e) => page.consoleErrors.push(e.message));
      await page.addInitScript(() => {
        globalThis.__csp = [];
        globalThis.__events = [];
        globalThis.__workers = 0;
        const Native = globalThis.Worker;
        globalThis.Worker = class extends Native {
          constructor(...args) {
            super(...args);
            globalThis.__workers += 1;
          }
        };
        addEventListener("securitypolicyviolation", (e) => globalThis.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
        for (const type of ["load", "render", "error"]) {
          document.addEventListener(type, (e) => e.target?.localName === "attention-heatmap" && globalThis.__events.push({ id: e.target.id, type, detail: e.detail }), true);
        }
      });
      await page.goto(base + path);
      return page;
    },
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/** How many times widget `id` has drawn. */
export const renders = (page, id) => page.evaluate((i) => globalThis.__events.filter((e) => e.id === i && e.type === "render").length, id);

/** Waits for widget `id`'s next drawing after `before` of them; fails on its error. Resolves to the render's detail. */
export async function waitRender(page, id, before = 0) {
  await page.waitForFunction(([i, n]) => globalThis.__events.filter((e) => e.id === i && e.type === "render").length > n || globalThis.__events.some((e) => e.id === i && e.type === "error" && e.detail.code !== "attribute"), [id, before], { timeout: 90000 });
  const error = await page.evaluate((i) => globalThis.__events.find((e) => e.id === i && e.type === "error" && e.detail.code !== "attribute")?.detail, id);
  assert.equal(error, undefined, `${id} failed: ${JSON.stringify(error)}`);
  return page.evaluate((i) => globalThis.__events.filter((e) => e.id === i && e.type === "render").at(-1).detail, id);
}

/** `fn(element, arg)` run on widget `id` in the page. */
export const inShadow = (page, id, fn, arg) => page.locator(`#${id}`).evaluate(fn, arg);
