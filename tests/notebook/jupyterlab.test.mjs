// A real JupyterLab (from PyPI, in the test venv) on a free localhost port with a token and a
// temp root: a reader opens a notebook, runs a cell that calls headmap.show, and the figure
// draws in the output and answers the pointer, on a laptop and on a phone's width.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launchChromium } from "../../scripts/browser.mjs";
import { freePort, inkedPixels, jupyterHome, needVenv, python, readoutFollowsPointer, ROOT, SHOTS, VENV, waitDrawn, waitInked, watchFigures } from "./common.mjs";

const TOKEN = randomBytes(16).toString("hex");
let home;
let lab;
let labLog = "";
let base;
let browser;

/** The notebook the reader opens: the setup cell and the cell that shows the figure. */
async function writeNotebook(path) {
  const cells = JSON.parse(await python([join(ROOT, "tests", "notebook", "notebook.py"), "--cells"]));
  const cell = (source) => ({ cell_type: "code", execution_count: null, metadata: {}, outputs: [], source });
  const nb = {
    nbformat: 4, nbformat_minor: 5,
    metadata: { kernelspec: { name: "python3", display_name: "Python 3 (ipykernel)", language: "python" } },
    cells: [cell(cells.setup), cell(cells.show), cell(cells.big)],
  };
  await writeFile(path, JSON.stringify(nb));
}

before(async () => {
  needVenv();
  await mkdir(SHOTS, { recursive: true });
  home = await jupyterHome("headmap-lab-");
  // no news, no update checks: the lab asks nothing of the network or of the reader
  const settings = join(home.env.JUPYTERLAB_SETTINGS_DIR, "@jupyterlab", "apputils-extension");
  await mkdir(settings, { recursive: true });
  await writeFile(join(settings, "notification.jupyterlab-settings"), JSON.stringify({ fetchNews: "false", checkForUpdates: false }));
  await writeNotebook(join(home.root, "figure.ipynb"));
  const port = await freePort();
  base = `http://127.0.0.1:${port}/`;
  lab = spawn(join(VENV, "bin", "jupyter-lab"), [
    "--no-browser", "--ServerApp.ip=127.0.0.1", `--ServerApp.port=${port}`, "--ServerApp.port_retries=0",
    `--IdentityProvider.token=${TOKEN}`, `--ServerApp.root_dir=${home.root}`, "--LabApp.news_url=None",
    ...(process.getuid?.() === 0 ? ["--allow-root"] : []), // CI containers run as root
  ], { env: home.env, cwd: home.root, stdio: ["ignore", "pipe", "pipe"] });
  lab.stdout.on("data", (d) => (labLog += d));
  lab.stderr.on("data", (d) => (labLog += d));
  const deadline = Date.now() + 90000;
  for (;;) {
    if (lab.exitCode !== null) throw new Error(`jupyter lab exited ${lab.exitCode}:\n${labLog}`);
    try {
      if ((await fetch(`${base}api/status?token=${TOKEN}`)).ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`jupyter lab did not answer within 90 s:\n${labLog}`);
    await new Promise((ok) => setTimeout(ok, 300));
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (lab && lab.exitCode === null) {
    // the server's own shutdown stops the kernels it started; a signal is the fallback
    await fetch(`${base}api/shutdown?token=${TOKEN}`, { method: "POST" }).catch(() => {});
    const exited = new Promise((ok) => lab.once("exit", ok));
    const timer = setTimeout(() => lab.kill("SIGTERM"), 10000);
    await exited;
    clearTimeout(timer);
  }
  if (home) await rm(home.dir, { recursive: true, force: true });
});

/** Opens the notebook, runs its cells in order; resolves to the ms from the figure cell's run to its render. */
async function runNotebook(page) {
  await page.goto(`${base}lab/tree/figure.ipynb?token=${TOKEN}`);
  const cells = page.locator(".jp-Notebook .jp-Cell");
  await cells.first().waitFor({ timeout: 90000 });
  // the kernel is up (the execution indicator says idle before there is a kernel at all)
  await page.locator(".jp-StatusBar-Widget", { hasText: /ipykernel\) \| Idle/ }).waitFor({ timeout: 90000 });
  await cells.nth(0).locator(".cm-content").click();
  await page.keyboard.press("Shift+Enter");
  await cells.nth(0).locator(".jp-InputPrompt", { hasText: "[1]:" }).waitFor({ timeout: 60000 });
  const printed = await cells.nth(0).locator(".jp-OutputArea-output").innerText();
  assert.match(printed, /site-packages\/headmap\/__init__\.py/, "the kernel imported the installed wheel");
  await cells.nth(1).locator(".cm-content").click();
  const ran = await page.evaluate(() => performance.now());
  await page.keyboard.press("Shift+Enter");
  const drawn = await waitDrawn(page, 0);
  return drawn - ran;
}

/** Console errors that come from the figure (JupyterLab's own are reported, not failed). */
const figureErrors = (errors) => errors.filter((e) => /headmap|attention-heatmap|safetensors|wasm|worker|decompress|blob:/i.test(e));

test("headmap.show draws in JupyterLab's output and the read-out follows the pointer", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
  const page = await context.newPage();
  await watchFigures(page);
  const ms = await runNotebook(page).catch(async (e) => {
    await page.screenshot({ path: join(SHOTS, "notebook-jupyterlab-failed.png") }); // what the reader saw
    throw new Error(`${e.message}\nconsole: ${JSON.stringify(page.consoleErrors)}\nlab: ${labLog.slice(-3000)}`);
  });
  console.log(`[jupyterlab] from Shift+Enter on the cell to the figure's render: ${ms.toFixed(0)} ms`);
  assert.ok(await inkedPixels(page, 0) > 500, "the heatmap's canvas has ink");
  const [a, b] = await readoutFollowsPointer(page, 0, "heatmap");
  console.log(`[jupyterlab] read-out: "${a}" then "${b}"`);
  await page.screenshot({ path: join(SHOTS, "notebook-jupyterlab-1280-en.png") });

  // a phone's width: the file browser folded away, as a reader would
  await page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator("attention-heatmap").first().scrollIntoViewIfNeeded();
  await waitInked(page, 0, 500, "still drawn at 390 px"); // once the lab and the figure lay out again
  await page.screenshot({ path: join(SHOTS, "notebook-jupyterlab-390-en.png") });

  // speed, printed: BERT-base's 12 x 12 heads at 512 tokens, from Shift+Enter to the render
  await page.setViewportSize({ width: 1280, height: 900 });
  const big = page.locator(".jp-Notebook .jp-Cell").nth(2);
  await big.locator(".cm-content").click();
  const ran = await page.evaluate(() => performance.now());
  await page.keyboard.press("Shift+Enter");
  await big.locator(".jp-InputPrompt", { hasText: "[3]:" }).waitFor({ timeout: 300000 });
  const replied = await page.evaluate(() => performance.now());
  const drawn = await waitDrawn(page, 1, 300000);
  const kernel = await big.locator(".jp-OutputArea-output", { hasText: "headmap.show took" }).innerText();
  console.log(`[jupyterlab] 12 x 12 x 512 x 512: in the kernel ${kernel.trim()}; the cell done ${((replied - ran) / 1000).toFixed(1)} s and the figure's render ${((drawn - ran) / 1000).toFixed(1)} s after Shift+Enter`);
  await page.screenshot({ path: join(SHOTS, "notebook-jupyterlab-512-1280-en.png") });

  if (page.consoleErrors.length) console.log(`[jupyterlab] console errors (JupyterLab's): ${JSON.stringify(page.consoleErrors)}`);
  assert.deepEqual(figureErrors(page.consoleErrors), [], "no console error from the figure");
  await context.close();
});
