// The inspector: a query form, its results with per-signal score bars, a result's chunk in its
// document, "why — or why not" explanations, and a comparison of two versions. It only calls
// the daemon's own JSON routes; every text it shows is set as text, never parsed as HTML.

const $ = (id) => document.getElementById(id);

/// An element with attributes and children (strings become text nodes).
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const fmt = (x) => (typeof x === "number" ? x.toFixed(4) : "—");

/// The token lives for this tab only.
const tokenInput = $("token");
tokenInput.value = sessionStorage.getItem("ragstream.token") || "";
tokenInput.addEventListener("change", () => {
  sessionStorage.setItem("ragstream.token", tokenInput.value.trim());
  loadIndexes();
});

class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(`${status} ${e.code || "error"}: ${e.message || "the daemon gave no reason"}` +
      (e.field ? ` (field ${e.field})` : ""));
    this.status = status;
  }
}

/// Calls a route of the daemon; the answer's JSON, or an ApiError with its structured error.
async function api(method, path, body) {
  const headers = { accept: "application/json" };
  const token = tokenInput.value.trim();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = null;
  try { json = await res.json(); } catch { /* an empty or non-JSON body */ }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

function showError(e) {
  const el = $("error");
  el.textContent = e ? String(e.message || e) : "";
  el.hidden = !e;
}

/// Runs an action, showing its error (and clearing the last one) where the user looks.
async function guarded(button, action) {
  showError(null);
  button.disabled = true;
  try { await action(); } catch (e) { showError(e); } finally { button.disabled = false; }
}

// ---- indexes ------------------------------------------------------------------------------

let indexes = [];

async function loadIndexes() {
  try {
    indexes = (await api("GET", "/v1/indexes")).indexes || [];
    showError(null);
  } catch (e) {
    indexes = [];
    showError(e);
  }
  const select = $("index");
  const previous = select.value || link.get("index");
  select.replaceChildren(...indexes.map((i) => h("option", { value: i.index }, i.index)));
  if (indexes.some((i) => i.index === previous)) select.value = previous;
  describeIndex();
  if (indexes.length) followLink();
}

function currentIndex() {
  return indexes.find((i) => i.index === $("index").value);
}

function describeIndex() {
  const i = currentIndex();
  const info = $("index-info");
  if (!i) { info.textContent = "No index to inspect yet."; return; }
  if (i.error) { info.textContent = `${i.index}: ${i.error.message}`; return; }
  info.textContent = `${i.documents} documents, ${i.chunks} chunks, embedder ${i.embedder}; ` +
    `versions ${i.oldest_version}–${i.index_version} (${i.retained_versions} kept).`;
  $("from-version").value ||= i.oldest_version;
  $("to-version").value ||= i.index_version;
}

$("index").addEventListener("change", describeIndex);
$("contract").addEventListener("change", () => {
  const c000 = $("contract").value === "000";
  document.querySelectorAll(".c000").forEach((el) => { el.hidden = !c000; });
  document.querySelectorAll(".c002").forEach((el) => { el.hidden = c000; });
});

// ---- queries ------------------------------------------------------------------------------

const numberOrUndefined = (id) => ($(id).value === "" ? undefined : Number($(id).value));

/// The query as the chosen contract takes it, pinned to `version` when one is given.
function queryRequest(version) {
  const query = $("query").value;
  const top_k = numberOrUndefined("top-k");
  const alpha = numberOrUndefined("alpha");
  if ($("contract").value === "000") {
    return { retrieval: {
      index: $("index").value, query, top_k, search_method: $("method").value,
      hybrid_alpha: $("method").value === "hybrid" ? alpha : undefined, index_version: version,
    } };
  }
  return {
    query, top_k, debug: true, index_version: version,
    retrieval_profile: $("profile").value || undefined, semantic_weight: alpha,
  };
}

/// One row per result, whatever the contract: id, document, text and the signals' scores.
function normalise(answer) {
  if (answer.retrieval_calls) {
    const call = answer.retrieval_calls[0];
    return { version: call.index_version, latency: call.latency_ms, rows: call.results.map((r) => ({
      chunk_id: r.id, document_id: r.metadata.document_id, title: r.metadata.title, text: r.text,
      signals: { semantic: r.relevance_components?.semantic_score, keyword: r.relevance_components?.keyword_score,
        final: r.score },
    })) };
  }
  return { version: answer.index_version, latency: answer.latency_ms, debug: answer,
    rows: answer.results.map((r) => ({
      chunk_id: r.chunk_id, document_id: r.document_id, title: r.title, text: r.text,
      signals: { semantic: r.score_detail.semantic, keyword: r.score_detail.lexical,
        rerank: r.score_detail.rerank, final: r.score },
    })) };
}

function route() {
  const index = encodeURIComponent($("index").value);
  return $("contract").value === "000" ? "/v1/retrieve" : `/v1/indexes/${index}/query`;
}

let lastVersion = null;

async function search() {
  const answer = normalise(await api("POST", route(), queryRequest(numberOrUndefined("version"))));
  lastVersion = answer.version;
  const d = answer.debug;
  $("results-meta").textContent = `version ${answer.version}, ${answer.rows.length} results, ` +
    `${typeof answer.latency === "number" ? answer.latency.toFixed(1) : "—"} ms` + (d && d.semantic_weight_effective !== undefined
      ? `, semantic weight ${d.semantic_weight_effective} (${d.retrieval_profile_effective})` : "");
  $("results").replaceChildren(...answer.rows.map(resultRow));
  $("results-panel").hidden = false;
  setLink(null);
}

function bar(name, value) {
  const width = typeof value === "number" ? Math.max(0, Math.min(1, value)) * 100 : 0;
  const fill = h("span", { class: "fill" });
  // Set through the CSSOM: the page's content security policy refuses inline style attributes.
  fill.style.width = `${width.toFixed(1)}%`;
  return h("div", { class: `signal ${name}`, "data-signal": name, "data-value": value },
    h("span", { class: "name" }, name),
    h("span", { class: "track" }, fill),
    h("span", { class: "value" }, fmt(value)));
}

function resultRow(r) {
  return h("li", { class: "result", "data-chunk-id": r.chunk_id },
    h("div", { class: "head" },
      h("strong", {}, r.title || r.document_id), " ",
      h("code", {}, r.document_id),
      h("button", { type: "button", class: "open", onclick: (e) => guarded(e.target, () => openChunk(r.chunk_id)) }, "Open"),
      h("button", { type: "button", class: "why", onclick: (e) => guarded(e.target, () => explain({ chunk_id: r.chunk_id })) }, "Why here?")),
    h("p", { class: "text" }, (r.text || "").length > 400 ? `${r.text.slice(0, 400)}…` : r.text),
    h("div", { class: "signals" }, ["semantic", "keyword", "rerank", "final"]
      .filter((s) => s !== "rerank" || typeof r.signals.rerank === "number")
      .map((s) => bar(s, r.signals[s]))));
}

$("query-form").addEventListener("submit", (e) => {
  e.preventDefault();
  guarded($("search"), search);
});

// ---- a chunk in its document --------------------------------------------------------------

async function openChunk(chunkId) {
  const index = encodeURIComponent($("index").value);
  const answer = await api("POST", `/v1/indexes/${index}/hydrate`,
    { chunk_ids: [chunkId], window: 2, index_version: lastVersion ?? undefined });
  const c = answer.chunks[0];
  if (!c) throw new Error(`chunk ${chunkId} is not in version ${answer.index_version}`);
  $("chunk-meta").textContent = `${c.breadcrumb || c.document_id}, chunk ${c.chunk_index}` +
    (c.source_uri ? `, ${c.source_uri}` : "");
  $("chunk").replaceChildren(
    ...c.context.before.map((n) => h("p", { class: "neighbour" }, n.text)),
    h("p", { class: "focus", "data-chunk-id": c.chunk_id }, c.text),
    ...c.context.after.map((n) => h("p", { class: "neighbour" }, n.text)));
  $("chunk-panel").hidden = false;
}

// ---- why, or why not ----------------------------------------------------------------------

async function explain(target) {
  const index = encodeURIComponent($("index").value);
  const answer = await api("POST", `/v1/indexes/${index}/explain`, {
    contract: $("contract").value, request: queryRequest(lastVersion ?? numberOrUndefined("version")),
    targets: [target],
  });
  $("explanation").replaceChildren(
    h("p", { class: "muted" }, `Version ${answer.index_version}, ${answer.search_method}` +
      (answer.hybrid_alpha !== null && answer.hybrid_alpha !== undefined ? `, semantic weight ${answer.hybrid_alpha}` : "") +
      `; pools: semantic ${answer.pools.semantic ?? "—"}, keyword ${answer.pools.keyword ?? "—"}; ` +
      `last result's score ${fmt(answer.last_returned_score)}` +
      (answer.keyword_terms_dropped.length ? `; terms dropped: ${answer.keyword_terms_dropped.join(", ")}` : "") +
      (answer.keyword_expansion?.length ? `; terms the graph added: ${answer.keyword_expansion.join(", ")}` : "")),
    ...answer.targets.map(targetView));
  setLink(target);
  $("why-panel").scrollIntoView({ block: "nearest" });
}

function branchCell(b) {
  if (!b) return h("td", {}, "did not run");
  if (b.matched_terms && b.matched_terms.length === 0) return h("td", {}, "holds no query term");
  const place = b.rank ? `rank ${b.rank}` : `beyond ${b.depth}`;
  const terms = b.term_scores
    ? b.term_scores.map((t) => `${t.term} ${fmt(t.score)}`).join(", ")
    : (b.matched_terms || []).join(", ");
  return h("td", {},
    `${place}, score ${fmt(b.score)}`, b.normalized !== null && b.normalized !== undefined ? ` (scaled ${fmt(b.normalized)})` : "",
    h("br"), b.in_pool ? `in the pool of ${b.pool}` : `outside the pool of ${b.pool}`,
    b.matched_terms ? h("div", { class: "terms" }, `terms: ${terms}`) : null);
}

/// Ascending weights a tenth apart read as ranges ("0.0–0.2 or 0.8"), as the verdict reads them.
function weightRanges(weights) {
  const runs = [];
  for (const w of weights) {
    const last = runs[runs.length - 1];
    if (last && Math.abs((w - last[1]) * 10 - 1) < 1e-6) last[1] = w;
    else runs.push([w, w]);
  }
  return runs.map(([a, b]) => (a === b ? a.toFixed(1) : `${a.toFixed(1)}–${b.toFixed(1)}`)).join(" or ");
}

/// Which semantic weights, 0 to 1 by tenths, would return the chunk: a strip of eleven marks
/// and the ranges in words. "—" where the explanation has none (no hybrid, or a reranker).
function weightsCell(weights) {
  if (!Array.isArray(weights)) return h("td", { class: "weights" }, "—");
  const on = new Set(weights.map((w) => Math.round(w * 10)));
  const strip = h("span", { class: "strip" }, [...Array(11).keys()].map((i) =>
    h("span", { class: on.has(i) ? "on" : null, title: (i / 10).toFixed(1) })));
  return h("td", { class: "weights" }, strip, h("div", {}, weights.length ? weightRanges(weights) : "none"));
}

function targetView(t) {
  const [kind, value] = Object.entries(t.target)[0];
  return h("article", { class: "target", "data-presence": t.presence },
    h("h3", {}, `${kind.replace("_", " ")} `, h("code", {}, value), ` — ${t.presence.replace("_", " ")}`),
    h("p", { class: "verdict" }, t.verdict),
    t.chunks.length ? h("table", {},
      h("thead", {}, h("tr", {}, ["chunk", "rank", "semantic", "keyword", "fused", "returned at weights", "verdict"].map((c) => h("th", {}, c)))),
      h("tbody", {}, t.chunks.map((c) => h("tr", { "data-chunk-id": c.chunk_id },
        h("td", {}, h("code", {}, `${c.document_id} #${c.chunk_index}`)),
        h("td", {}, c.rank ?? "—"),
        branchCell(c.semantic), branchCell(c.keyword),
        h("td", {}, fmt(c.fused_score)),
        weightsCell(c.returned_at_semantic_weights),
        h("td", {}, c.verdict))))) : null);
}

$("why-form").addEventListener("submit", (e) => {
  e.preventDefault();
  guarded($("why"), () => explain({ [$("why-kind").value]: $("why-target").value.trim() }));
});

// ---- two versions -------------------------------------------------------------------------

async function compare() {
  const index = encodeURIComponent($("index").value);
  const request = queryRequest(undefined);
  if (request.retrieval) delete request.retrieval.index_version;
  const answer = await api("POST", `/v1/indexes/${index}/diff`, {
    contract: $("contract").value, request,
    from_version: numberOrUndefined("from-version"), to_version: numberOrUndefined("to-version"),
  });
  const column = (title, changes) => h("div", { class: "column", "data-kind": title },
    h("h3", {}, `${title} (${changes.length})`),
    h("ul", {}, changes.map((c) => h("li", {},
      h("code", {}, c.document_id), ` ${c.from_rank ?? "—"} → ${c.to_rank ?? "—"}, ${c.cause}`))));
  const w = answer.writes;
  $("comparison").replaceChildren(
    h("p", { class: "muted" }, `Version ${answer.from_version} → ${answer.to_version}: ` +
      `${answer.unchanged} unchanged; documents added ${w.added.length}, upserted ${w.upserted.length}, deleted ${w.deleted.length}.`),
    h("div", { class: "columns" },
      column("entered", answer.entered), column("left", answer.left), column("moved", answer.moved)));
}

$("diff-form").addEventListener("submit", (e) => {
  e.preventDefault();
  guarded($("diff"), compare);
});

// ---- links --------------------------------------------------------------------------------

/// The form fields a link carries, by their name in the link.
const LINKED = { index: "index", version: "version", contract: "contract", profile: "profile",
  method: "method", alpha: "alpha", k: "top-k", q: "query" };

/// The link the page was opened with; followed once, when the indexes are listed (after the
/// token, when one is needed).
let link = new URLSearchParams(location.hash.slice(1));

/// Puts the query on the screen (and the target explained, if any) into the page's address,
/// so that the link opens the same view: a link to share, or to keep with a bug report.
function setLink(target) {
  const params = new URLSearchParams();
  for (const [name, id] of Object.entries(LINKED)) if ($(id).value !== "") params.set(name, $(id).value);
  // Pinned to the version that answered: the link shows the same answer for as long as the
  // version is kept.
  if (lastVersion !== null) params.set("version", lastVersion);
  if (target) {
    const [kind, value] = Object.entries(target)[0];
    params.set("why", kind);
    params.set("target", value);
  }
  history.replaceState(null, "", `#${params}`);
}

/// Fills the form from the link and runs its query, then its explanation.
function followLink() {
  const params = link;
  link = new URLSearchParams();
  if (!params.get("q")) return;
  if (params.has("index") && !indexes.some((i) => i.index === params.get("index"))) {
    showError(new Error(`The link's index ${params.get("index")} is not among the indexes this token may read.`));
    return;
  }
  for (const [name, id] of Object.entries(LINKED)) if (params.has(name)) $(id).value = params.get(name);
  $("contract").dispatchEvent(new Event("change"));
  describeIndex();
  const kind = params.get("why");
  const target = params.get("target");
  guarded($("search"), async () => {
    await search();
    if (["document_id", "chunk_id", "text"].includes(kind) && target) {
      $("why-kind").value = kind;
      $("why-target").value = target;
      await explain({ [kind]: target });
    }
  });
}

// A link pasted into an open page: followed like one the page was opened with.
window.addEventListener("hashchange", () => {
  link = new URLSearchParams(location.hash.slice(1));
  if (indexes.length) followLink();
});

loadIndexes();
