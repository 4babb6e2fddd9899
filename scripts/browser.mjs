// Debian's Chromium, headless, driven by Playwright: shared by the browser tests and the page
// benchmark. Never downloads a browser.
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

export function launchChromium() {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: run scripts/setup`);
  // Playwright gives every launch a fresh, empty profile of its own.
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
}
