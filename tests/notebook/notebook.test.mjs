// A notebook executed by a real kernel (nbclient, the venv's ipykernel, headmap from the built
// wheel): its figures, put in a page as a notebook front end puts them, draw in headmap's
// Chromium and answer the pointer; the page saved from the notebook draws under its own CSP,
// from a server and from disk.
import assert from "node:assert/strict";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { launchChromium } from "../../scripts/browser.mjs";
import { serve } from "../../scripts/serve.mjs";
import { inkedPixels, jupyterHome, needVenv, python, readoutFollowsPointer, ROOT, SHOTS, waitDrawn, watchFigures } from "./common.mjs";

let home;
let run;
let server;
let base;
let browser;

before(async () => {
  needVenv();
  await mkdir(SHOTS, { recursive: true });
  home = await jupyterHome("headmap-nbclient-");
  run = JSON.parse(await python([join(ROOT, "tests", "notebook", "notebook.py"), home.root], { env: home.env, cwd: home.root }));
  // a notebook's page sends no CSP of its own; /slow/ sends page.html as a big export arrives
  server = await serve(home.root, 0, { headers: {}, routes: { "/slow/": slowly } });
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (server) await new Promise((ok) => server.close(ok));
  if (home) await rm(home.dir, { recursive: true, force: true });
});

/** page.html up to the second figure's element, then, 700 ms later, the rest: the parser meets
 * that element (already defined by the first figure's script) before its data and script, as it
 * does in an exported notebook of many figures whose megabytes arrive over time. */
async function slowly(req, res, rest) {
  if (rest !== "page.html") {
    res.writeHead(404, { "content-type": "text/plain" });
    return res.end("not found");
  }
  const page = await readFile(join(home.root, "page.html"), "utf8");
  const cut = page.indexOf("</attention-heatmap>", page.indexOf("<attention-heatmap", page.indexOf("<attention-heatmap") + 1));
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.write(page.slice(0, cut));
  await new Promise((ok) => setTimeout(ok, 700));
  res.end(page.slice(cut));
}

async function open(url, { width = 1000, height = 900 } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, locale: "en-US" });
  const page = await context.newPage();
  await watchFigures(page);
  await page.goto(url);
  return page;
}

test("the kernel ran every cell with headmap from the installed wheel, one figure a cell", () => {
  assert.deepEqual(run.errors, [], "no cell raised");
  assert.deepEqual(run.figures.map((f) => [f.label, f.count]), run.figures.map((f) => [f.label, 1]), "each cell displayed one figure");
  assert.match(run.headmap, /site-packages\/headmap\/__init__\.py$/, "the kernel imported the wheel, not the checkout");
  console.log(`[notebook] nbclient: kernel start and ${run.figures.length + 1} cells ${run.seconds.toFixed(2)} s`);
  for (const f of run.figures) console.log(`[notebook] cell "${f.label}": ran in ${(f.seconds * 1000).toFixed(0)} ms, output ${(f.size / 1024).toFixed(0)} KiB`);
});

const HEATMAPS = ["heatmap", "causal decoder heatmap", "cross heatmap", "padded encoder row"];

test("each cell's figure, alone in a page, draws with no console error", async (t) => {
  for (const [n, { label }] of run.figures.entries()) {
    await t.test(label, async () => {
      const page = await open(`${base}figure-${n}.html`);
      const at = await waitDrawn(page, 0);
      console.log(`[notebook] "${label}": from the page's navigation to its render ${at.toFixed(0)} ms`);
      assert.ok(await inkedPixels(page, 0) > 100, "its canvas has ink");
      if (HEATMAPS.includes(label)) {
        const [a, b] = await readoutFollowsPointer(page, 0, "heatmap");
        console.log(`[notebook] "${label}" read-out: "${a}" then "${b}"`);
      }
      await page.locator("attention-heatmap").first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `notebook-${label.replace(/[^a-z]+/g, "-")}-1000-en.png`) });
      assert.deepEqual(page.consoleErrors, [], "no console error");
      await page.context().close();
    });
  }
});

test("a query that saw nothing (all its weights 0) is drawn as PAD, not refused", async () => {
  const page = await open(`${base}fully-masked.html`);
  await waitDrawn(page, 0);
  assert.deepEqual(page.consoleErrors, [], "no console error");
  await page.context().close();
});

test("every figure draws in one page, as an exported notebook holds them", async () => {
  const page = await open(`${base}page.html`);
  for (const n of run.figures.keys()) await waitDrawn(page, n);
  assert.deepEqual(page.consoleErrors, [], "no console error (the second script finds the element defined)");
  await page.context().close();
});

test("a figure whose element arrives before its data waits for the data instead of loading a model", async () => {
  const page = await open(`${base}slow/page.html`);
  const models = [];
  page.on("request", (r) => /\/models\//.test(r.url()) && models.push(r.url()));
  await waitDrawn(page, 0);
  await waitDrawn(page, 1);
  assert.deepEqual(models, [], "no model was asked for");
  assert.deepEqual(page.consoleErrors, [], "no console error");
  await page.context().close();
});

async function drawsSaved(url) {
  const saved = await readFile(join(home.root, "saved.html"), "utf8");
  assert.match(saved, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
  const page = await open(url);
  await waitDrawn(page, 0);
  assert.ok(await inkedPixels(page, 0) > 100, `${url}: the lines view has ink`);
  assert.deepEqual(await page.evaluate(() => globalThis.__csp), [], `${url}: no CSP violation`);
  assert.deepEqual(page.consoleErrors, [], `${url}: no console error`);
  await page.context().close();
}

test("the page saved from the notebook draws under its own strict CSP from a server", () => drawsSaved(`${base}saved.html`));

test("the page saved from the notebook draws when opened from disk", () => drawsSaved(pathToFileURL(join(home.root, "saved.html")).href));
