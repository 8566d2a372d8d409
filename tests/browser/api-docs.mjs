// Opens a live daemon's API reference page (/docs) in Debian's Chromium and prints what it
// rendered as one JSON object. The integration test
// `inspector::the_api_reference_renders_every_route_offline` starts the daemon and asserts on it.
//
//   node tests/browser/api-docs.mjs BASE_URL
//
// Every wait is for a condition, with Playwright's deadline (browser.mjs).

import { launch, newReport, watchedPage } from "./browser.mjs";

const [base] = process.argv.slice(2);

const browser = await launch();
const report = newReport();
try {
  const page = await watchedPage(browser, base, report, { viewport: { width: 1200, height: 900 } });

  await page.goto(`${base}/docs`);
  await page.waitForSelector(".opblock");
  report.title = await page.textContent(".info .title");
  report.operations = await page.$$eval(".opblock-summary", (blocks) => blocks.map((b) =>
    `${b.querySelector(".opblock-summary-method").textContent} ${b.querySelector(".opblock-summary-path").getAttribute("data-path")}`));
  report.authorize_button = await page.isVisible(".btn.authorize");

  // The first operation (contract 000's POST) opened: its request body is described.
  await page.click(".opblock-summary-control >> nth=0");
  await page.waitForSelector(".opblock.is-open .opblock-section-request-body");
  report.opened_shows_request_body = await page.isVisible(".opblock.is-open .opblock-section-request-body");
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
