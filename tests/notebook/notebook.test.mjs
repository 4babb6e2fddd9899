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
  server = await serve(home.root, 0, { headers: {} }); // a notebook's page sends no CSP of its own
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (server) await new Promise((ok) => server.close(ok));
  if (home) await rm(home.dir, { recursive: true, force: true });
});

async function open(url, { width = 1000, height = 900 } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, locale: "en-US" });
  const page = await context.newPage();
  await watchFigures(page);
  await page.goto(url);
  return page;
}

test("the kernel ran every cell with headmap from the installed wheel", () => {
  assert.deepEqual(run.errors, [], "no cell raised");
  assert.equal(run.figures, 2, "show() displayed one figure, the returned Figure another");
  assert.match(run.headmap, /site-packages\/headmap\/__init__\.py$/, "the kernel imported the wheel, not the checkout");
  console.log(`[notebook] nbclient: kernel start and 3 cells ${run.seconds.toFixed(2)} s; the figure cells ran in ${run.cells.slice(1).map((s) => `${(s * 1000).toFixed(0)} ms`).join(", ")}; figure HTML ${run.sizes.map((n) => `${(n / 1024).toFixed(0)} KiB`).join(", ")}`);
});

test("the notebook's figures draw, once each, and the read-out follows the pointer", async () => {
  const page = await open(`${base}page.html`);
  const first = await waitDrawn(page, 0);
  const second = await waitDrawn(page, 1);
  console.log(`[notebook] from the page's navigation to each figure's render: heatmap ${first.toFixed(0)} ms, lines ${second.toFixed(0)} ms`);
  assert.ok(await inkedPixels(page, 0) > 500, "the heatmap's canvas has ink");
  assert.ok(await inkedPixels(page, 1) > 100, "the lines' canvas has ink");
  const [a, b] = await readoutFollowsPointer(page, 0, "heatmap");
  console.log(`[notebook] read-out: "${a}" then "${b}"`);
  const renders = await page.evaluate(() => globalThis.__figures.filter((e) => e.type === "render").map((e) => e.index));
  assert.deepEqual([...new Set(renders)].sort(), [0, 1], "both figures drew (the second script found the element defined: no console error below)");
  await page.locator("attention-heatmap").first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SHOTS, "notebook-nbclient-1000-en.png") });
  assert.deepEqual(page.consoleErrors, [], "no console error");
  await page.context().close();
});

test("the page saved from the notebook draws under its own strict CSP, served and from disk", async () => {
  const saved = await readFile(join(home.root, "saved.html"), "utf8");
  assert.match(saved, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
  for (const url of [`${base}saved.html`, pathToFileURL(join(home.root, "saved.html")).href]) {
    const page = await open(url);
    await waitDrawn(page, 0);
    assert.ok(await inkedPixels(page, 0) > 100, `${url}: the lines view has ink`);
    assert.deepEqual(await page.evaluate(() => globalThis.__csp), [], `${url}: no CSP violation`);
    assert.deepEqual(page.consoleErrors, [], `${url}: no console error`);
    await page.context().close();
  }
});
