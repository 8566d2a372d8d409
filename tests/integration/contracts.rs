//! The contract adapters through the one entry point every transport calls
//! (`contracts::answer`): response shapes, the contracts' own rules, and the same question
//! answered alike through each contract where their parameters mean the same.

use ragstream::contracts::Contract;
use ragstream::pipeline::query_handler;
use ragstream::Engine;
use serde_json::{json, Value};

use crate::common::{answer, bus_headers, config, corpus, engine_with, name, upserts};

async fn engine_with_corpus(
    dir: &std::path::Path,
    tenant_scoped: bool,
    override_ok: bool,
) -> Engine {
    let mut c = config(dir);
    c.contracts.default_index = "kb".into();
    c.contracts.tenant_scoped = tenant_scoped;
    c.contracts.visibility_override_allowed = override_ok;
    let e = engine_with(c);
    e.write(&name("kb"), upserts(corpus())).await.unwrap();
    e
}

async fn ask(e: &Engine, contract: Contract, body: Value) -> (u16, Value) {
    let r = answer(e, contract, None, body.to_string().as_bytes()).await;
    (r.status, r.body)
}

fn doc_ids(items: &[Value], pointer: &str) -> Vec<String> {
    items
        .iter()
        .map(|i| {
            i.pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn c001_always_has_results_kg_and_rewrite_terms_and_validates_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_corpus(dir.path(), false, false).await;
    let (status, body) = ask(
        &e,
        Contract::C001,
        json!({"query": "moon astronauts", "top_k": 2}),
    )
    .await;
    assert_eq!(status, 200);
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["results", "kg", "rewrite_terms"]);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(results[0]["content"].as_str().unwrap().contains("Moon"));
    assert_eq!(results[0]["metadata"]["collection"], "kb");
    assert_eq!(results[0]["metadata"]["title"], "Apollo program");
    assert!(
        results[0].get("component_type").is_none(),
        "fast mode: chunk hits only"
    );
    assert_eq!(body["kg"], json!([]));
    assert_eq!(body["rewrite_terms"], json!([]));

    let (_, default_k) = ask(&e, Contract::C001, json!({"query": "the"})).await;
    assert!(default_k["results"].as_array().unwrap().len() <= 5);
    let (status, err) = ask(&e, Contract::C001, json!({"query": "x", "top_k": 51})).await;
    assert_eq!(
        (status, err["error"]["field"].as_str()),
        (400, Some("top_k"))
    );

    // An index nobody wrote to: the contract's empty state, not an error.
    let r = answer(
        &e,
        Contract::C001,
        Some(name("empty")),
        br#"{"query": "x"}"#,
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        json!({"results": [], "kg": [], "rewrite_terms": []})
    );
}

#[tokio::test]
async fn c003_answers_the_contract_example_with_every_meta_field_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_corpus(dir.path(), false, true).await;
    let (status, body) = ask(
        &e,
        Contract::C003,
        json!({
            "query": "How do tides follow the Moon?",
            "process": " Review ", "doc_class": "policy",
            "visibility": "all", "visibility_override_allowed": true,
            "hybrid": {"alpha": 0.55, "min_sim": 0.0, "top_k": 3, "vec_limit": 10,
                       "lex_limit": 8, "diversify_strength": 0.4}
        }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let meta = body["meta"].as_object().unwrap();
    let keys: Vec<&str> = meta.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "routing",
            "took_ms",
            "alpha",
            "min_sim",
            "top_k_effective",
            "matches_returned",
            "max_candidates_effective",
            "vector_candidates",
            "lexical_candidates",
            "deleted_matches_blocked",
            "visibility_effective",
            "diversify_strength"
        ]
    );
    assert_eq!(
        meta["routing"]["process"], "review",
        "normalised: trimmed, lower-cased"
    );
    assert_eq!(meta["routing"]["workflow_id"], Value::Null);
    assert_eq!(meta["alpha"], 0.55);
    assert_eq!(meta["top_k_effective"], 3);
    assert_eq!(meta["max_candidates_effective"], 10);
    assert_eq!(meta["visibility_effective"], "all");
    assert_eq!(meta["diversify_strength"], 0.4);
    let matches = body["matches"].as_array().unwrap();
    assert_eq!(meta["matches_returned"], matches.len());
    assert!(!matches.is_empty() && matches.len() <= 3);
    assert_eq!(
        meta["vector_candidates"], 5,
        "the whole five-chunk corpus fits the pool"
    );
    let m = &matches[0];
    for key in ["id", "text", "score", "source", "hash", "citation", "meta"] {
        assert!(m.get(key).is_some(), "{key} missing from {m}");
    }
    assert_eq!(m["id"], "tides");
    assert_eq!(m["meta"]["document_id"], "tides");
    assert_eq!(m["hash"].as_str().unwrap().len(), 64);
    let scores: Vec<f64> = matches
        .iter()
        .map(|m| m["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[tokio::test]
async fn c003_empty_results_min_sim_visibility_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_corpus(dir.path(), false, false).await;
    // min_sim 1.0: nothing scores that high → NotFoundError (the router is not tenant-scoped).
    let (status, body) = ask(
        &e,
        Contract::C003,
        json!({"query": "moon", "hybrid": {"min_sim": 1.0}}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "NotFoundError");
    assert_eq!(body["error"]["message"], "No matching documents");

    // Asking for deleted without the override: active is enforced, not an error.
    let (status, body) = ask(
        &e,
        Contract::C003,
        json!({"query": "bread yeast", "visibility": "deleted", "hybrid": {}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["meta"]["visibility_effective"], "active");

    let (status, body) = ask(
        &e,
        Contract::C003,
        json!({"query": "x", "hybrid": {"foo": 1}}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "InputError");
    assert_eq!(body["error"]["message"], "Unknown hybrid parameter(s): foo");

    // Tenant-scoped: the same empty result is a normal answer.
    let dir2 = tempfile::tempdir().unwrap();
    let scoped = engine_with_corpus(dir2.path(), true, true).await;
    let (status, body) = ask(
        &scoped,
        Contract::C003,
        json!({"query": "moon", "visibility": "deleted", "hybrid": {}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["matches"], json!([]));
    assert_eq!(body["meta"]["visibility_effective"], "deleted");
}

/// The corpus in index `kb`, the contracts' default index, with a contract 004 retriever
/// `kb_hybrid` configured as hybrid α 0.5, top 3.
async fn engine_with_kb(dir: &std::path::Path) -> Engine {
    let mut c = config(dir);
    c.contracts.default_index = "kb".into();
    c.retrievers.insert(
        "kb_hybrid".into(),
        ragstream::retrieval::retrievers::RetrieverConfig {
            index: Some("kb".into()),
            method: Some(ragstream::retrieval::SearchMethod::Hybrid),
            alpha: Some(0.5),
            top_k: 3,
            filters: Default::default(),
            composite: vec![],
            fusion: Default::default(),
            weights: vec![],
        },
    );
    let e = engine_with(c);
    e.write(&name("kb"), upserts(corpus())).await.unwrap();
    e
}

/// Ids and scores of a list of answers.
fn ranked(items: &Value, id: &str) -> Vec<(String, f64)> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let text = i.pointer(id).and_then(Value::as_str).unwrap_or("?");
            (text.to_string(), i["score"].as_f64().unwrap())
        })
        .collect()
}

/// An index's fusion reaches every contract that states none (001 to 004); contract 000 keeps
/// its own rule whatever the index says.
#[tokio::test]
async fn an_index_fusion_reaches_every_contract_but_000() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_kb(dir.path()).await;
    let q = "gravitational pull of the Moon on oceans";
    let c000 = |alpha: f64| {
        let e = &e;
        async move {
            let (status, body) = ask(
                e,
                Contract::C000,
                json!({"retrieval": {"index": "kb", "query": q,
                "search_method": "hybrid", "hybrid_alpha": alpha, "top_k": 3}}),
            )
            .await;
            assert_eq!(status, 200, "{body}");
            ranked(&body["retrieval_calls"][0]["results"], "/text")
        }
    };
    let c002 = |weight: f64, fusion: &str| {
        let e = &e;
        let body = json!({"query": q, "semantic_weight": weight, "top_k": 3, "fusion": fusion});
        async move {
            let r = answer(
                e,
                Contract::C002,
                Some(name("kb")),
                body.to_string().as_bytes(),
            )
            .await;
            assert_eq!(r.status, 200, "{}", r.body);
            ranked(&r.body["results"], "/text")
        }
    };
    let c003 = || {
        let e = &e;
        async move {
            let (status, body) = ask(
                e,
                Contract::C003,
                json!({"query": q, "hybrid": {"alpha": 0.7, "min_sim": 0.0,
                "diversify_strength": 0.0, "top_k": 3, "vec_limit": 10, "lex_limit": 10}}),
            )
            .await;
            assert_eq!(status, 200, "{body}");
            ranked(&body["matches"], "/text")
        }
    };
    let c004 = || {
        let e = &e;
        async move {
            let body = json!({"query": q}).to_string();
            let r =
                ragstream::contracts::c004_retriever::answer(e, "kb_hybrid", body.as_bytes()).await;
            assert_eq!(r.status, 200, "{}", r.body);
            ranked(&r.body, "/content")
        }
    };
    let c001 = || {
        let e = &e;
        async move {
            let (status, body) = ask(e, Contract::C001, json!({"query": q, "top_k": 3})).await;
            assert_eq!(status, 200, "{body}");
            doc_ids(body["results"].as_array().unwrap(), "/content")
        }
    };
    let texts = |ranked: &[(String, f64)]| -> Vec<String> {
        ranked.iter().map(|(text, _)| text.clone()).collect()
    };
    let (c000_before, c003_before, c004_before) = (c000(0.5).await, c003().await, c004().await);
    assert_eq!(c004_before, c002(0.5, "contract").await);
    assert_eq!(c003_before, c002(0.7, "contract").await);

    let r = ragstream::contracts::c002_retrieval_api::settings(
        &e,
        &name("kb"),
        &json!({"fusion": "min_max"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(c000(0.5).await, c000_before, "contract 000's rule stays");
    let scaled = c002(0.5, "min_max").await;
    assert_ne!(scaled, c004_before, "min-max scaling moves the scores");
    assert_eq!(c004().await, scaled);
    assert_eq!(c001().await, texts(&scaled), "001 is hybrid α 0.5");
    let scaled = c002(0.7, "min_max").await;
    assert_ne!(scaled, c003_before, "min-max scaling moves the scores");
    assert_eq!(c003().await, scaled);
}

#[tokio::test]
async fn the_same_question_gives_the_same_chunks_through_all_five_contracts() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_kb(dir.path()).await;
    let q = "gravitational pull of the Moon on oceans";
    let (_, c000) = ask(
        &e,
        Contract::C000,
        json!({"retrieval": {"index": "kb", "query": q,
        "search_method": "hybrid", "hybrid_alpha": 0.5, "top_k": 3}}),
    )
    .await;
    let (_, c001) = ask(&e, Contract::C001, json!({"query": q, "top_k": 3})).await;
    let from_000 = doc_ids(
        c000["retrieval_calls"][0]["results"].as_array().unwrap(),
        "/text",
    );
    let from_001 = doc_ids(c001["results"].as_array().unwrap(), "/content");
    assert_eq!(
        from_000, from_001,
        "001 is hybrid α 0.5 over the same pools"
    );
    // 002 at semantic weight 0.5, and a 004 retriever configured as hybrid α 0.5.
    let c002 = answer(
        &e,
        Contract::C002,
        Some(name("kb")),
        json!({"query": q, "semantic_weight": 0.5, "top_k": 3})
            .to_string()
            .as_bytes(),
    )
    .await
    .body;
    assert_eq!(
        from_000,
        doc_ids(c002["results"].as_array().unwrap(), "/text")
    );
    let c004 = ragstream::contracts::c004_retriever::answer(
        &e,
        "kb_hybrid",
        json!({"query": q}).to_string().as_bytes(),
    )
    .await
    .body;
    assert_eq!(from_000, doc_ids(c004.as_array().unwrap(), "/content"));

    // 003 with the cut-offs off and 000's pools means the same as 000 at α 0.7.
    let (_, c000) = ask(
        &e,
        Contract::C000,
        json!({"retrieval": {"index": "kb", "query": q,
        "search_method": "hybrid", "hybrid_alpha": 0.7, "top_k": 3}}),
    )
    .await;
    let (_, c003) = ask(
        &e,
        Contract::C003,
        json!({"query": q, "hybrid": {"alpha": 0.7,
        "min_sim": 0.0, "diversify_strength": 0.0, "top_k": 3, "vec_limit": 10, "lex_limit": 10}}),
    )
    .await;
    assert_eq!(
        doc_ids(
            c000["retrieval_calls"][0]["results"].as_array().unwrap(),
            "/text"
        ),
        doc_ids(c003["matches"].as_array().unwrap(), "/text")
    );
}

#[tokio::test]
async fn the_bus_picks_the_contract_from_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_corpus(dir.path(), false, false).await;
    let body = br#"{"query": "espresso coffee", "top_k": 1}"#;
    let r = query_handler::answer(&e, &bus_headers(Some("001"), None), Some(body)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["results"][0]["metadata"]["title"], "Coffee brewing");
    assert!(r.index_version.is_some());
    let r =
        query_handler::answer(&e, &bus_headers(Some("001"), Some("Bad Name")), Some(body)).await;
    assert_eq!(
        (r.status, r.body["error"]["field"].as_str()),
        (400, Some("headers.index"))
    );
    let r = query_handler::answer(&e, &bus_headers(Some("042"), None), Some(body)).await;
    assert_eq!(r.body["error"]["code"], "unknown_contract");
    let r = query_handler::answer(&e, &bus_headers(None, None), Some(b"{not json")).await;
    assert_eq!(
        r.status, 400,
        "000 by default, and a bad body is a structured error"
    );
}

fn located(
    id: &str,
    path: &str,
    updated: &str,
    project: &str,
    tags: &[&str],
    text: &str,
) -> ragstream::model::Document {
    let mut d = crate::common::doc(id, id, text);
    d.source_path = Some(path.into());
    d.updated_at = Some(updated.into());
    d.project_id = Some(project.into());
    d.tags = tags.iter().map(|t| t.to_string()).collect();
    d
}

async fn engine_with_repo(dir: &std::path::Path) -> Engine {
    let e = engine_with(config(dir));
    let docs = vec![
        located(
            "writer",
            "src/index/writer.rs",
            "2024-05-01T12:00:00+02:00",
            "core",
            &["rust"],
            "The writer plans a batch, embeds it and commits one Lance version.",
        ),
        located(
            "reader",
            "src/index/reader.rs",
            "2024-06-01T00:00:00Z",
            "core",
            &["rust", "query"],
            "The reader opens a pinned snapshot of the index for a query.",
        ),
        located(
            "guide",
            "docs/guide.md",
            "2023-01-01T00:00:00Z",
            "docs",
            &["manual"],
            "How to run the daemon and query the index from a client.",
        ),
        located(
            "trap",
            "src/x' OR 1=1 --/a.rs",
            "2025-01-01T00:00:00Z",
            "other",
            &["rust"],
            "A document whose path holds SQL and regex metacharacters: .* index query",
        ),
    ];
    e.write(&name("repo"), upserts(docs)).await.unwrap();
    e
}

async fn query_002(e: &Engine, body: Value) -> (u16, Value) {
    let r = answer(
        e,
        Contract::C002,
        Some(name("repo")),
        body.to_string().as_bytes(),
    )
    .await;
    (r.status, r.body)
}

#[tokio::test]
async fn c002_profiles_resolve_by_precedence_and_debug_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_repo(dir.path()).await;
    let (status, body) =
        query_002(&e, json!({"query": "src/index/writer.rs", "debug": true})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["retrieval_profile_effective"], "exact");
    assert_eq!(body["semantic_weight_effective"], 0.2);
    assert!(body["auto_signals_detected"]
        .as_array()
        .unwrap()
        .contains(&json!("file_path")));
    assert_eq!(body["reranker_applied"], false);
    for key in [
        "query_id",
        "index_version",
        "latency_ms",
        "results",
        "documents",
        "lexical_candidates",
        "semantic_candidates",
        "filters_applied",
    ] {
        assert!(body.get(key).is_some(), "{key}");
    }
    let first = &body["results"][0];
    assert_eq!(first["document_id"], "writer");
    assert_eq!(first["source_uri"], "src/index/writer.rs");
    let d = &first["score_detail"];
    let fused = 0.2 * d["semantic"].as_f64().unwrap() + 0.8 * d["lexical"].as_f64().unwrap();
    assert!((fused - d["final"].as_f64().unwrap()).abs() < 1e-9, "{d}");
    assert_eq!(body["documents"][0]["document_id"], "writer");

    // Every query term is searched by default: nothing dropped.
    assert_eq!(body["keyword_terms_dropped"], json!([]));

    // Without debug, no debug keys.
    let (_, plain) = query_002(&e, json!({"query": "how do I run the daemon"})).await;
    assert!(plain.get("retrieval_profile_effective").is_none());

    // Index defaults apply when the request says nothing; the request beats them.
    let r = ragstream::contracts::c002_retrieval_api::settings(
        &e,
        &name("repo"),
        &json!({"default_retrieval_profile": "semantic"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let (_, body) = query_002(&e, json!({"query": "src/index/writer.rs", "debug": true})).await;
    assert_eq!(body["retrieval_profile_effective"], "semantic");
    let (_, body) = query_002(
        &e,
        json!({"query": "src/index/writer.rs", "debug": true,
        "retrieval_profile": "balanced", "semantic_weight": 0.35}),
    )
    .await;
    assert_eq!(body["semantic_weight_effective"], 0.35);
    let r = ragstream::contracts::c002_retrieval_api::settings(
        &e,
        &name("repo"),
        &json!({"default_semantic_weight": 3}),
    )
    .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn c002_filters_are_pushed_into_both_branches_and_hostile_values_stay_values() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_repo(dir.path()).await;
    let ids = |body: &Value| -> Vec<String> {
        let mut v = doc_ids(body["results"].as_array().unwrap(), "/document_id");
        v.dedup();
        v
    };
    let (_, body) = query_002(
        &e,
        json!({"query": "index query", "top_k": 10,
        "filters": {"path_prefix": "src/index/"}}),
    )
    .await;
    let mut got = ids(&body);
    got.sort();
    assert_eq!(got, ["reader", "writer"]);
    let (_, body) = query_002(
        &e,
        json!({"query": "index query", "top_k": 10,
        "filters": {"updated_after": "2024-05-01T11:00:00+02:00"}}),
    )
    .await;
    let mut got = ids(&body);
    got.sort();
    assert_eq!(
        got,
        ["reader", "trap", "writer"],
        "10:00Z is after 09:00Z; the guide is older"
    );
    let (_, body) = query_002(
        &e,
        json!({"query": "index query", "top_k": 10,
        "filters": {"project_id": "core", "tags": ["query"]}}),
    )
    .await;
    assert_eq!(ids(&body), ["reader"]);
    // Keyword-only (weight 0) and semantic-only (weight 1) runs honour the same filters.
    for w in [0.0, 1.0] {
        let (_, body) = query_002(
            &e,
            json!({"query": "index query", "top_k": 10, "semantic_weight": w,
            "filters": {"path_prefix": "docs/"}}),
        )
        .await;
        assert_eq!(ids(&body), ["guide"], "weight {w}");
    }
    for hostile in ["src/x' OR 1=1 --", ".*", "src/x' OR 1=1 --/a.rs"] {
        let (status, body) = query_002(
            &e,
            json!({"query": "index query", "top_k": 10,
            "filters": {"path_prefix": hostile}}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let got = ids(&body);
        assert!(got.iter().all(|id| id == "trap"), "{hostile}: {got:?}");
        assert_eq!(got.is_empty(), hostile == ".*", "{hostile}: {got:?}");
    }
}

#[tokio::test]
async fn c002_hydrate_returns_full_chunks_with_stitched_neighbours() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.chunking.max_tokens = 12;
    c.chunking.overlap_tokens = 3;
    let e = engine_with(c);
    // No sentence breaks: the chunker packs words, so neighbours overlap by 3 tokens.
    let long = "alpha one two three four five bravo six seven eight nine ten \
                Charlie eleven twelve thirteen fourteen delta fifteen sixteen seventeen eighteen \
                echo nineteen twenty";
    e.write(
        &name("kb"),
        upserts(vec![crate::common::doc("long", "Long", long)]),
    )
    .await
    .unwrap();
    let q = answer(
        &e,
        Contract::C002,
        Some(name("kb")),
        json!({"query": "Charlie thirteen", "top_k": 1, "semantic_weight": 0.0})
            .to_string()
            .as_bytes(),
    )
    .await
    .body;
    let id = q["results"][0]["chunk_id"].as_str().unwrap().to_string();
    let r = ragstream::contracts::hydrate::hydrate(
        &e,
        &name("kb"),
        &json!({"chunk_ids": [id, id, "missing"], "window": 5}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let chunks = r.body["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 1, "asked twice, answered once");
    assert_eq!(r.body["not_found"], json!(["missing"]));
    let c0 = &chunks[0];
    assert!(c0["text"].as_str().unwrap().contains("Charlie"));
    assert_eq!(c0["metadata"]["document_id"], "long");
    let before = c0["context"]["before"].as_array().unwrap().len();
    let after = c0["context"]["after"].as_array().unwrap().len();
    assert!(before + after >= 1, "{c0}");
    assert_eq!(
        c0["context"]["stitched_text"], long,
        "neighbours stitched, overlap removed"
    );
    assert_eq!(c0["breadcrumb"], "Long");
    assert!(r.body.get("sections").is_none(), "sections are opt-in");

    // Section grouping: two chunks of one section give that section once, whole.
    let ids: Vec<String> = std::iter::once(c0["chunk_id"].clone())
        .chain(
            c0["context"]["before"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["chunk_id"].clone()),
        )
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let r = ragstream::contracts::hydrate::hydrate(
        &e,
        &name("kb"),
        &json!({"chunk_ids": ids, "window": 0, "sections": true}),
    )
    .await;
    let sections = r.body["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 1, "{}", r.body);
    assert_eq!(sections[0]["document_id"], "long");
    assert_eq!(
        sections[0]["chunk_ids"].as_array().unwrap().len(),
        ids.len()
    );
    assert_eq!(sections[0]["stitched_text"], long);
    let r = ragstream::contracts::hydrate::hydrate(
        &e,
        &name("kb"),
        &json!({"chunk_ids": ["x"], "sections": "yes"}),
    )
    .await;
    assert_eq!(
        (r.status, r.body["error"]["field"].as_str()),
        (400, Some("sections"))
    );

    let r =
        ragstream::contracts::hydrate::hydrate(&e, &name("kb"), &json!({"chunk_ids": []})).await;
    assert_eq!(
        (r.status, r.body["error"]["field"].as_str()),
        (400, Some("chunk_ids"))
    );
    let r = ragstream::contracts::hydrate::hydrate(
        &e,
        &name("kb"),
        &json!({"chunk_ids": ["x"], "window": 9}),
    )
    .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn c003_parents_carry_their_sections_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.contracts.default_index = "kb".into();
    let e = engine_with(c);
    let text = "# Policies\n\n## Notice periods\n\nThe notice period is three months for every \
                employee.\n\n## Holidays\n\nEmployees receive thirty days of paid leave.";
    e.write(
        &name("kb"),
        upserts(vec![crate::common::doc("handbook", "Handbook", text)]),
    )
    .await
    .unwrap();
    let (status, body) = ask(
        &e,
        Contract::C003,
        json!({"query": "notice period three months", "hybrid": {"top_k": 1, "min_sim": 0.0}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let m = &body["matches"][0];
    let parents = m["meta"]["parents"].as_array().unwrap();
    assert_eq!(parents.len(), 2, "{m}");
    assert_eq!(parents[0]["heading"], "Policies");
    assert_eq!(parents[1]["heading"], "Notice periods");
    let outer = parents[0]["content"].as_str().unwrap();
    let inner = parents[1]["content"].as_str().unwrap();
    assert!(
        outer.contains("three months") && outer.contains("thirty days"),
        "{outer}"
    );
    assert!(
        inner.contains("three months") && !inner.contains("thirty days"),
        "{inner}"
    );
    assert_eq!(m["meta"]["parent_ids"][1], parents[1]["id"]);
}

#[tokio::test]
async fn c002_auto_starts_from_the_index_calibrated_centre() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_repo(dir.path()).await;
    let statement = json!({"query": "vitamin d deficiency raises the risk of hip fracture in older adults", "debug": true});
    let before = query_002(&e, statement.clone()).await.1;
    assert_eq!(before["semantic_weight_effective"], 0.65, "{before}");
    let r = ragstream::contracts::c002_retrieval_api::settings(
        &e,
        &name("repo"),
        &json!({"auto_semantic_center": 0.8}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["settings"]["auto_semantic_center"], 0.8);
    assert_eq!(r.body["auto_center_in_force"], 0.8);
    let after = query_002(&e, statement).await.1;
    assert_eq!(after["semantic_weight_effective"], 0.8);
    assert_eq!(after["retrieval_profile_effective"], "semantic");
    let code = query_002(&e, json!({"query": "src/index/writer.rs", "debug": true}))
        .await
        .1;
    assert!(
        code["semantic_weight_effective"].as_f64().unwrap() < 0.8,
        "signals still count"
    );
    for bad in [json!(0.1), json!(0.9), json!("high")] {
        let r = ragstream::contracts::c002_retrieval_api::settings(
            &e,
            &name("repo"),
            &json!({"auto_semantic_center": bad}),
        )
        .await;
        assert_eq!(
            (r.status, r.body["error"]["field"].as_str()),
            (400, Some("auto_semantic_center")),
            "{bad}"
        );
    }
}

/// How hybrid scales its branches: the request's `fusion`, else the index's, else contract
/// 000's way (similarity as is, keyword scores min-max scaled). Bad values are refused by name.
#[tokio::test]
async fn c002_fusion_comes_from_the_request_then_the_index_then_contract_000() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_repo(dir.path()).await;
    let query = |fusion: Option<&str>| {
        let mut body = json!({"query": "query the index writer", "top_k": 20, "debug": true});
        if let Some(f) = fusion {
            body["fusion"] = json!(f);
        }
        let e = &e;
        async move {
            let (status, body) = query_002(e, body).await;
            assert_eq!(status, 200, "{body}");
            body
        }
    };
    let best = |body: &Value, key: &str| {
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["score_detail"][key].as_f64().unwrap())
            .fold(f64::MIN, f64::max)
    };
    let contract = query(None).await;
    assert_eq!(contract["fusion_effective"], "contract", "{contract}");
    assert!(best(&contract, "semantic") < 1.0, "the similarity as is");
    assert_eq!(
        best(&contract, "lexical"),
        1.0,
        "keyword scores min-max scaled"
    );

    let settings = |body: Value| {
        let e = &e;
        async move {
            let index = name("repo");
            ragstream::contracts::c002_retrieval_api::settings(e, &index, &body).await
        }
    };
    let r = settings(json!({"fusion": "min_max"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["settings"]["fusion"], "min_max");
    assert_eq!(r.body["fusion_in_force"], "min_max");
    let scaled = query(None).await;
    assert_eq!(scaled["fusion_effective"], "min_max", "{scaled}");
    assert_eq!(
        best(&scaled, "semantic"),
        1.0,
        "the similarity min-max scaled too"
    );

    let own = query(Some("contract")).await;
    assert_eq!(
        own["fusion_effective"], "contract",
        "the request beats the index"
    );
    assert_eq!(own["results"], contract["results"]);
    let rrf = query(Some("rrf")).await;
    assert_eq!(best(&rrf, "semantic"), 1.0 / 61.0, "{rrf}");

    for bad in [json!("softmax"), json!(1), json!(["min_max"])] {
        let (status, body) = query_002(&e, json!({"query": "index", "fusion": bad.clone()})).await;
        assert_eq!(
            (status, body["error"]["field"].as_str()),
            (400, Some("fusion")),
            "{bad}: {body}"
        );
        let r = settings(json!({"fusion": bad.clone()})).await;
        assert_eq!(
            (r.status, r.body["error"]["field"].as_str()),
            (400, Some("fusion")),
            "{bad}: {}",
            r.body
        );
    }
    let cleared = settings(json!({})).await;
    assert!(
        cleared.body["settings"]["fusion"].is_null(),
        "{}",
        cleared.body
    );
    assert_eq!(query(None).await["fusion_effective"], "contract");
}

/// An index embedded with all-MiniLM-L6-v2 starts `auto` from the centre measured for that
/// model, not balanced; a passage runs at balanced, or at a passage weight set by hand; a
/// centre set by hand still wins.
#[tokio::test]
async fn c002_auto_starts_from_the_models_measured_centre_and_runs_passages_balanced() {
    use ragstream::embedding::{measured_auto_center, MiniLmEmbedder, MINILM_ID};
    let dir = tempfile::tempdir().unwrap();
    let model = MiniLmEmbedder::load(&crate::common::model_dir(), 8, 256)
        .expect("run scripts/setup to fetch the model");
    let e = Engine::new(config(dir.path()), std::sync::Arc::new(model));
    e.write(
        &name("repo"),
        upserts(vec![crate::common::doc(
            "a",
            "Bones",
            "Vitamin D helps the body absorb calcium.",
        )]),
    )
    .await
    .unwrap();
    let measured = measured_auto_center(MINILM_ID).unwrap();
    let statement = "vitamin d deficiency raises the risk of hip fracture in older adults";
    let (status, plain) = query_002(&e, json!({"query": statement, "debug": true})).await;
    assert_eq!(status, 200, "{plain}");
    assert_eq!(plain["semantic_weight_effective"], measured, "{plain}");
    let passage = [statement; 4].join(". ");
    let long = query_002(&e, json!({"query": passage, "debug": true}))
        .await
        .1;
    assert_eq!(long["semantic_weight_effective"], 0.5, "{long}");
    assert_eq!(long["retrieval_profile_effective"], "balanced");
    assert!(
        long["auto_signals_detected"]
            .as_array()
            .unwrap()
            .contains(&json!("passage_query")),
        "{long}"
    );
    let settings = |body: Value| {
        let e = &e;
        async move {
            let r =
                ragstream::contracts::c002_retrieval_api::settings(e, &name("repo"), &body).await;
            assert_eq!(r.status, 200, "{}", r.body);
            r.body
        }
    };
    let unset = settings(json!({})).await;
    assert!(
        unset["settings"]["auto_semantic_center"].is_null(),
        "{unset}"
    );
    assert_eq!(
        unset["auto_center_in_force"], measured,
        "the model's centre"
    );
    let r = settings(json!({"auto_semantic_center": 0.3})).await;
    assert_eq!(r["auto_center_in_force"], 0.3, "{r}");
    let by_hand = query_002(&e, json!({"query": statement, "debug": true}))
        .await
        .1;
    assert_eq!(
        by_hand["semantic_weight_effective"], 0.5,
        "0.3 plus two semantic signals"
    );
    // A passage weight of its own: passages move, sentences do not.
    let r = settings(json!({"auto_passage_weight": 0.3})).await;
    assert_eq!(r["settings"]["auto_passage_weight"], 0.3, "{r}");
    let long = query_002(&e, json!({"query": passage, "debug": true}))
        .await
        .1;
    assert_eq!(long["semantic_weight_effective"], 0.3, "{long}");
    assert_eq!(long["retrieval_profile_effective"], "exact");
    let plain = query_002(&e, json!({"query": statement, "debug": true}))
        .await
        .1;
    assert_eq!(plain["semantic_weight_effective"], measured, "{plain}");
}

/// `index.keyword.max_query_terms` is an opt-in approximation: when it leaves terms out, the
/// debug output names them.
#[tokio::test]
async fn c002_debug_names_the_keyword_terms_an_opt_in_limit_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.keyword.max_query_terms = 2;
    let e = engine_with(c);
    e.write(
        &name("repo"),
        upserts(vec![
            crate::common::doc("a", "", "ocean waves ocean tides"),
            crate::common::doc("b", "", "ocean currents and a lighthouse"),
            crate::common::doc("c", "", "ocean storms near the harbour"),
        ]),
    )
    .await
    .unwrap();
    let (status, body) = query_002(
        &e,
        json!({"query": "ocean lighthouse harbour", "debug": true, "retrieval_profile": "exact"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["keyword_terms_dropped"],
        json!(["ocean"]),
        "the most common term goes"
    );
}
