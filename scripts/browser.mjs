// Debian's Chromium, headless, driven by Playwright: shared by the browser tests and the page
// benchmark. Never downloads a browser.
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

/**
 * How long a page action or wait may take unless it says otherwise. Playwright's own 30 s is
 * less than a loaded two-core machine needs for a full-page screenshot of the article (its
 * widgets drawn at 320 px took longer beside a cargo build): a wait that fails should say what
 * it waited for, not that the machine was busy.
 */
export const ACTION_TIMEOUT_MS = 120000;

export async function launchChromium() {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: run scripts/setup`);
  // Playwright gives every launch a fresh, empty profile of its own.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  // every context, however made (browser.newPage makes one through newContext), waits as long
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    return context;
  };
  return browser;
}
