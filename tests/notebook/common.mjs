// What the notebook tests share: the test venv's Python (made by scripts/test-python), a
// Jupyter kept away from the user's own settings, and how a figure is watched, hovered and read
// in the page. Run by scripts/test-python, after the venv and the wheel exist.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const SHOTS = join(ROOT, "artifacts", "screenshots");
export const VENV = process.env.HEADMAP_TEST_VENV ?? join(ROOT, ".venv-test");
export const PYTHON = join(VENV, "bin", "python");

export function needVenv() {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/test-python (it makes the venv and installs the wheel)`);
}

/** A temp folder and an environment whose Jupyter reads and writes only inside it. */
export async function jupyterHome(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const env = { ...process.env, PYTHONNOUSERSITE: "1", PYTHONPATH: "" };
  for (const [name, sub] of [["JUPYTER_CONFIG_DIR", "config"], ["JUPYTER_DATA_DIR", "data"], ["JUPYTER_RUNTIME_DIR", "runtime"], ["IPYTHONDIR", "ipython"], ["JUPYTERLAB_SETTINGS_DIR", "lab-settings"], ["JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"]]) {
    env[name] = join(dir, sub);
    await mkdir(env[name], { recursive: true });
  }
  await mkdir(join(dir, "root"));
  return { dir, root: join(dir, "root"), env };
}

/** Runs `args` with the venv's Python; resolves to its stdout, rejects with its stderr. */
export function python(args, options = {}) {
  return new Promise((ok, fail) => {
    const child = spawn(PYTHON, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? ok(out) : fail(new Error(`${PYTHON} ${args.join(" ")} exited ${code}:\n${err}`))));
  });
}

/** Before any page script: records every <attention-heatmap>'s load/render/error (with the
 * time) and every CSP violation. Figures are told apart by their order in the document. */
export async function watchFigures(page) {
  page.consoleErrors = [];
  page.on("console", (m) => m.type() === "error" && page.consoleErrors.push(m.text()));
  page.on("pageerror", (e) => page.consoleErrors.push(e.message));
  await page.addInitScript(() => {
    globalThis.__figures = [];
    globalThis.__csp = [];
    addEventListener("securitypolicyviolation", (e) => globalThis.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    for (const type of ["load", "render", "error"]) {
      document.addEventListener(type, (e) => {
        if (e.target?.localName !== "attention-heatmap") return;
        const index = [...document.querySelectorAll("attention-heatmap")].indexOf(e.target);
        globalThis.__figures.push({ index, type, at: performance.now(), detail: type === "error" ? JSON.stringify(e.detail) : undefined });
      }, true);
    }
  });
}

/** Waits for figure `index`'s first render; fails on its error event. Resolves to its time. */
export async function waitDrawn(page, index = 0, timeout = 120000) {
  const figure = page.locator("attention-heatmap").nth(index);
  await figure.scrollIntoViewIfNeeded({ timeout }); // the widget draws once scrolled into view
  await page.waitForFunction((i) => globalThis.__figures.some((e) => e.index === i && (e.type === "render" || e.type === "error")), index, { timeout });
  const events = await page.evaluate((i) => globalThis.__figures.filter((e) => e.index === i), index);
  const error = events.find((e) => e.type === "error");
  assert.equal(error, undefined, `figure ${index} fired error: ${error?.detail}`);
  return events.find((e) => e.type === "render").at;
}

/** How many pixels of figure `index`'s main canvas are neither transparent nor white. */
export function inkedPixels(page, index = 0) {
  return page.locator("attention-heatmap").nth(index).evaluate((host) => {
    const canvases = [...host.shadowRoot.querySelectorAll("canvas")];
    const canvas = host.shadowRoot.querySelector("canvas.heatmap, canvas.lines") ?? canvases.sort((a, b) => b.width * b.height - a.width * a.height)[0];
    if (!canvas || !canvas.width) return 0;
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let inked = 0;
    for (let k = 0; k < data.length; k += 4) if (data[k + 3] > 0 && (data[k] < 245 || data[k + 1] < 245 || data[k + 2] < 245)) inked++;
    return inked;
  });
}

/** Waits until figure `index`'s main canvas has more than `least` inked pixels (it is drawn
 * again after the page lays out anew, at a time no fixed wait knows); resolves to the count. */
export async function waitInked(page, index, least, what, timeout = 60000) {
  const until = Date.now() + timeout;
  let inked = await inkedPixels(page, index);
  while (inked <= least && Date.now() < until) {
    await new Promise((ok) => setTimeout(ok, 100));
    inked = await inkedPixels(page, index);
  }
  assert.ok(inked > least, `${what}: ${inked} inked pixels after ${timeout / 1000} s`);
  return inked;
}

/** Moves the pointer to fractions (fx, fy) of figure `index`'s `canvas.<kind>`; resolves to
 * the read-out's text afterwards. */
export async function pointAt(page, index, kind, fx, fy) {
  const canvas = page.locator("attention-heatmap").nth(index).locator(`canvas.${kind}`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  assert.ok(box && box.width > 20 && box.height > 20, `figure ${index}'s canvas.${kind} is laid out: ${JSON.stringify(box)}`);
  await page.mouse.move(box.x + fx * box.width, box.y + fy * box.height, { steps: 4 });
  await page.waitForTimeout(150); // a frame for the read-out
  return page.locator("attention-heatmap").nth(index).evaluate((host) => host.shadowRoot.querySelector(".readout")?.textContent ?? null);
}

/** The read-out follows the pointer over figure `index`'s heatmap: two cells, two texts. */
export async function readoutFollowsPointer(page, index = 0, kind = "heatmap") {
  const before = await page.locator("attention-heatmap").nth(index).evaluate((host) => host.shadowRoot.querySelector(".readout")?.textContent ?? null);
  assert.notEqual(before, null, `figure ${index} has a .readout in its shadow root`);
  const first = await pointAt(page, index, kind, 0.55, 0.45);
  const second = await pointAt(page, index, kind, 0.8, 0.75);
  assert.notEqual(first, before, `the read-out changed when the pointer came over figure ${index}: ${first}`);
  assert.notEqual(second, first, `the read-out followed the pointer to another cell: ${second}`);
  return [first, second];
}

/** A free port on 127.0.0.1 (the OS picks; a moment later the server takes it). */
export async function freePort() {
  const { createServer } = await import("node:net");
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}
