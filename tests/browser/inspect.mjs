// Drives Debian's Chromium through the inspector page of a live daemon, as a user would, and
// prints what the rendered page showed as one JSON object. The integration test
// `inspector::the_inspector_page_works_in_a_real_browser` starts the daemon and asserts on it.
//
//   node tests/browser/inspect.mjs BASE_URL TOKEN SCREENSHOT_DIR SCENARIO_JSON
//
// SCENARIO_JSON: {"index", "query", "top_k", "missing_document", "from_version", "to_version"}.
// Every wait is for a condition, with Playwright's deadline (browser.mjs).

import { launch, newReport, watchedPage } from "./browser.mjs";

const [base, token, shots, scenarioJson] = process.argv.slice(2);
const scenario = JSON.parse(scenarioJson);

const browser = await launch();
const report = newReport();
try {
  const page = await watchedPage(browser, base, report, { viewport: { width: 1200, height: 900 } });

  // Without a token the index list is refused, and the page says why.
  await page.goto(`${base}/ui`);
  await page.waitForSelector("#error:not([hidden])");
  report.error_without_token = await page.textContent("#error");
  report.first_contentful_paint_ms = await page.evaluate(() =>
    performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null);

  // The token, typed once, lists the indexes it may read.
  await page.fill("#token", token);
  await page.press("#token", "Tab");
  await page.waitForSelector(`#index option[value="${scenario.index}"]`, { state: "attached" });
  await page.selectOption("#index", scenario.index);
  await page.waitForFunction(() => document.querySelector("#index-info").textContent.includes("documents"));
  report.index_info = await page.textContent("#index-info");
  report.error_after_token = await page.isVisible("#error");

  // A query: results with a bar per signal.
  await page.fill("#query", scenario.query);
  await page.fill("#top-k", String(scenario.top_k));
  await page.click("#search");
  await page.waitForSelector("#results li.result");
  report.results_meta = await page.textContent("#results-meta");
  report.results = await page.$$eval("#results li.result", (items) => items.map((li) => ({
    chunk_id: li.dataset.chunkId,
    document_id: li.querySelector(".head code").textContent,
    signals: Object.fromEntries([...li.querySelectorAll(".signal")].map((s) =>
      [s.dataset.signal, { value: Number(s.dataset.value), width: s.querySelector(".fill").style.width }])),
  })));

  // The first result in its document.
  await page.click("#results li.result:first-child button.open");
  await page.waitForSelector("#chunk .focus");
  report.opened_chunk = await page.getAttribute("#chunk .focus", "data-chunk-id");
  report.opened_neighbours = await page.locator("#chunk .neighbour").count();
  await page.screenshot({ path: `${shots}/inspector-results.png`, fullPage: true });

  // Why was the first result first? Then: why is the expected document missing?
  await page.click("#results li.result:first-child button.why");
  await page.waitForSelector("#explanation .target");
  report.why_first = await page.textContent("#explanation .target .verdict");
  await page.selectOption("#why-kind", "document_id");
  await page.fill("#why-target", scenario.missing_document);
  await page.click("#why");
  await page.waitForFunction((id) => [...document.querySelectorAll("#explanation .target h3 code")]
    .some((c) => c.textContent === id), scenario.missing_document);
  report.why_missing = {
    presence: await page.getAttribute("#explanation .target", "data-presence"),
    verdict: await page.textContent("#explanation .target .verdict"),
    chunk_rows: await page.locator("#explanation .target tbody tr").count(),
    cells: await page.$$eval("#explanation .target tbody tr:first-child td", (tds) => tds.map((td) => td.textContent)),
  };
  await page.locator("#why-panel").screenshot({ path: `${shots}/inspector-explain.png` });

  // The page's address now links to this view: opened in a new tab (which asks for the token
  // again), it shows the same results and explanation, pinned to the version that answered.
  report.link = await page.evaluate(() => location.hash);
  const linked = await watchedPage(browser, base, report);
  await linked.goto(`${base}/ui${report.link}`);
  await linked.fill("#token", token);
  await linked.press("#token", "Tab");
  await linked.waitForFunction((id) => [...document.querySelectorAll("#explanation .target h3 code")]
    .some((c) => c.textContent === id), scenario.missing_document);
  report.linked = {
    query: await linked.inputValue("#query"),
    version: await linked.inputValue("#version"),
    results: await linked.$$eval("#results li.result", (items) => items.map((li) => li.dataset.chunkId)),
    verdict: await linked.textContent("#explanation .target .verdict"),
  };
  await linked.close();

  // Two versions side by side.
  await page.fill("#from-version", String(scenario.from_version));
  await page.fill("#to-version", String(scenario.to_version));
  await page.click("#diff");
  await page.waitForSelector("#comparison .columns");
  report.diff = await page.$$eval("#comparison .column", (cols) => Object.fromEntries(cols.map((c) =>
    [c.dataset.kind, [...c.querySelectorAll("li")].map((li) => li.textContent)])));
  await page.locator("#diff-panel").screenshot({ path: `${shots}/inspector-diff.png` });

  // A pruned or unknown version is a structured error on the page, not a broken page.
  await page.fill("#version", "999999");
  await page.click("#search");
  await page.waitForSelector("#error:not([hidden])");
  report.error_for_unknown_version = await page.textContent("#error");
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
