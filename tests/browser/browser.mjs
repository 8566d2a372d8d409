// What the browser scripts share: Debian's Chromium, launched for an offline machine, and
// pages that record what went wrong on them into one report.

import { chromium } from "playwright-core";

// Every wait is for a condition, with this deadline.
export const WAIT_MS = 20000;

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    // Offline machine: no background connections; root needs --no-sandbox.
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

// The lists every script reports, empty when nothing went wrong.
export function newReport() {
  return { page_errors: [], policy_violations: [], outside_requests: [] };
}

// A new page that adds its script errors, content security policy violations and requests
// to any origin but `base`'s to `report`.
export async function watchedPage(browser, base, report, options = {}) {
  const page = await browser.newPage(options);
  page.setDefaultTimeout(WAIT_MS);
  page.on("pageerror", (e) => report.page_errors.push(String(e)));
  page.on("console", (m) => {
    if (m.text().includes("Content Security Policy")) report.policy_violations.push(m.text());
  });
  const origin = new URL(base).origin;
  page.on("request", (r) => {
    if (new URL(r.url()).origin !== origin) report.outside_requests.push(r.url());
  });
  return page;
}
