//! Explain: why a passage was or was not retrieved, through the contract adapter (what HTTP
//! and the bus call), on real stores with the model-free embedder.

use ragstream::contracts::explain::answer;
use ragstream::pipeline::query_handler;
use serde_json::{json, Value};

use crate::common::*;

fn project(mut d: ragstream::model::Document, project: &str) -> ragstream::model::Document {
    d.project_id = Some(project.into());
    d
}

async fn engine_with_projects(dir: &std::path::Path) -> ragstream::Engine {
    let e = hashing_engine(dir);
    let docs = corpus()
        .into_iter()
        .map(|d| {
            let p = if d.id == "tides" { "sea" } else { "land" };
            project(d, p)
        })
        .collect();
    e.write(&name("kb"), upserts(docs)).await.unwrap();
    e
}

/// As an operator who may see deleted chunks.
async fn explain(e: &ragstream::Engine, body: Value) -> (u16, Value) {
    let r = answer(e, &name("kb"), &body, true).await;
    (r.status, r.body)
}

fn target(v: &Value, i: usize) -> &Value {
    &v["targets"][i]
}

#[tokio::test]
async fn each_target_gets_a_verdict_that_matches_what_the_query_returned() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_projects(dir.path()).await;
    let (status, v) = explain(
        &e,
        json!({"request": {"query": "espresso coffee pressure", "top_k": 1,
                "retrieval_profile": "balanced"},
               "targets": [{"document_id": "coffee"}, {"document_id": "bread"},
                           {"document_id": "nobody"}, {"text": "FINELY  ground coffee"},
                           {"text": "a sentence nobody wrote"}]}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["search_method"], "hybrid", "{v}");
    assert_eq!(v["results"][0]["document_id"], "coffee", "{v}");
    // The returned document: ranked first, with both branches' positions.
    let coffee = target(&v, 0);
    assert_eq!(coffee["presence"], "in_version");
    assert!(
        coffee["verdict"]
            .as_str()
            .unwrap()
            .starts_with("ranked 1st"),
        "{coffee}"
    );
    let chunk = &coffee["chunks"][0];
    assert_eq!(chunk["rank"], 1);
    assert_eq!(chunk["keyword"]["rank"], 1, "{chunk}");
    assert_eq!(chunk["keyword"]["in_pool"], true);
    assert!(chunk["keyword"]["matched_terms"]
        .as_array()
        .unwrap()
        .contains(&json!("espresso")));
    // Each matched term's part of the BM25 score; the parts sum to the branch's score.
    let parts = chunk["keyword"]["term_scores"].as_array().unwrap();
    let terms: Vec<&Value> = parts.iter().map(|p| &p["term"]).collect();
    let matched: Vec<&Value> = chunk["keyword"]["matched_terms"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(terms, matched, "{chunk}");
    assert!(parts.iter().all(|p| p["score"].as_f64().unwrap() > 0.0));
    let sum: f64 = parts.iter().map(|p| p["score"].as_f64().unwrap()).sum();
    let bm25 = chunk["keyword"]["score"].as_f64().unwrap();
    assert!((sum - bm25).abs() < 1e-3 * bm25.max(1.0), "{sum} vs {bm25}");
    // The fused score of the first result is the score it was returned with.
    assert_eq!(chunk["fused_score"], v["results"][0]["score"], "{v}");
    // A document in the index that the query did not return, and why.
    let bread = target(&v, 1);
    assert_eq!(bread["presence"], "in_version");
    assert!(bread["chunks"][0]["rank"].is_null());
    let verdict = bread["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("not returned"), "{verdict}");
    assert!(
        verdict.contains("keyword: it holds none of the query's terms"),
        "{verdict}"
    );
    assert_eq!(bread["chunks"][0]["keyword"]["term_scores"], json!([]));
    // Never ingested.
    assert_eq!(target(&v, 2)["presence"], "not_found");
    assert!(target(&v, 2)["chunks"].as_array().unwrap().is_empty());
    // A snippet is found whatever its case and spacing, in the document that holds it.
    assert_eq!(target(&v, 3)["chunks"][0]["document_id"], "coffee", "{v}");
    assert_eq!(target(&v, 4)["presence"], "not_found");
    assert!(target(&v, 4)["verdict"]
        .as_str()
        .unwrap()
        .contains("no chunk holds this text"));
    // A graph query on an index without a graph: explained as the plain query, nothing added.
    let (status, g) = explain(
        &e,
        json!({"request": {"query": "espresso coffee pressure", "top_k": 1,
                "retrieval_profile": "balanced", "graph_depth": 1},
               "targets": [{"document_id": "coffee"}]}),
    )
    .await;
    assert_eq!(status, 200, "{g}");
    assert_eq!(g["keyword_expansion"], json!([]));
    assert_eq!(g["results"], v["results"]);
    assert_eq!(g["targets"][0]["verdict"], target(&v, 0)["verdict"]);
}

/// An explanation names the fusion the query ran with, and scales the keyword scores as that
/// fusion did.
#[tokio::test]
async fn an_explanation_scales_the_keyword_branch_as_the_query_fusion_did() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_projects(dir.path()).await;
    let explained = |fusion: &str| {
        let e = &e;
        let body = json!({"request": {"query": "espresso coffee pressure", "top_k": 1,
                "retrieval_profile": "balanced", "fusion": fusion},
               "targets": [{"document_id": "coffee"}]});
        async move {
            let (status, v) = explain(e, body).await;
            assert_eq!(status, 200, "{v}");
            v
        }
    };
    for (fusion, top_keyword) in [("contract", 1.0), ("min_max", 1.0), ("rrf", 1.0 / 61.0)] {
        let v = explained(fusion).await;
        assert_eq!(v["fusion"], fusion, "{v}");
        let chunk = &target(&v, 0)["chunks"][0];
        assert_eq!(chunk["keyword"]["rank"], 1, "{chunk}");
        assert_eq!(
            chunk["keyword"]["normalized"], top_keyword,
            "{fusion}: {chunk}"
        );
        assert_eq!(
            chunk["fused_score"], v["results"][0]["score"],
            "{fusion}: {v}"
        );
    }
}

/// For a hybrid query, each chunk's explanation lists the semantic weights that would return
/// it, and they are the weights at which the query does return it.
#[tokio::test]
async fn an_explanation_names_the_semantic_weights_that_would_return_a_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_projects(dir.path()).await;
    let documents = ["apollo", "bread", "rust", "tides", "coffee"];
    let targets: Vec<Value> = documents
        .iter()
        .map(|d| json!({"document_id": d}))
        .collect();
    let mut returned_elsewhere = 0;
    for query in [
        "moon oceans",
        "carbon dioxide pressure",
        "memory of the moon",
    ] {
        let ask = |weight: f64| {
            let (e, targets) = (&e, targets.clone());
            let body = json!({"request": {"query": query, "top_k": 1, "semantic_weight": weight},
                   "targets": targets});
            async move {
                let (status, v) = explain(e, body).await;
                assert_eq!(status, 200, "{v}");
                v
            }
        };
        // What the query returns at each weight.
        let mut returning: std::collections::HashMap<String, Vec<f64>> = Default::default();
        for tenths in 0..=10 {
            let weight = f64::from(tenths) / 10.0;
            let v = ask(weight).await;
            for r in v["results"].as_array().unwrap() {
                let chunk = r["chunk_id"].as_str().unwrap().to_string();
                returning.entry(chunk).or_default().push(weight);
            }
        }
        let v = ask(0.5).await;
        for (i, document) in documents.iter().enumerate() {
            let chunk = &target(&v, i)["chunks"][0];
            let id = chunk["chunk_id"].as_str().unwrap();
            let expected = returning.get(id).cloned().unwrap_or_default();
            assert_eq!(
                chunk["returned_at_semantic_weights"],
                json!(expected),
                "{query}, {document}: {chunk}"
            );
            let verdict = chunk["verdict"].as_str().unwrap();
            if chunk["rank"].is_null() && chunk["fused_score"].is_number() {
                if expected.is_empty() {
                    assert!(
                        verdict.contains("no semantic weight would return it"),
                        "{verdict}"
                    );
                } else {
                    returned_elsewhere += 1;
                    assert!(verdict.contains("a semantic weight of "), "{verdict}");
                }
            }
        }
    }
    assert!(
        returned_elsewhere > 0,
        "no chunk another weight returns: a weak test"
    );
}

#[tokio::test]
async fn filters_deletes_and_versions_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_projects(dir.path()).await;
    let kb = name("kb");
    let before = e.index(&kb).await.unwrap().latest_version();

    // A filter that excludes the target: the field and the value the chunk holds.
    let (status, v) = explain(
        &e,
        json!({"request": {"query": "moon tides ocean", "filters": {"project_id": "land"}},
               "targets": [{"document_id": "tides"}]}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let miss = &target(&v, 0)["chunks"][0]["excluded_by_filter"];
    assert_eq!(miss, &json!({"field": "project_id", "value": "sea"}), "{v}");
    assert!(target(&v, 0)["verdict"]
        .as_str()
        .unwrap()
        .contains("excluded by the filter on project_id"));

    // Deleted after the version that held it; added after it.
    e.write(&kb, vec![delete("tides")]).await.unwrap();
    e.write(
        &kb,
        upserts(vec![doc("late", "Late", "Moon tides, written late.")]),
    )
    .await
    .unwrap();
    let body = |version: Option<u64>| {
        let mut request = json!({"query": "moon tides ocean", "top_k": 3});
        if let Some(v) = version {
            request["index_version"] = json!(v);
        }
        json!({"request": request, "targets": [{"document_id": "tides"}, {"document_id": "late"}]})
    };
    let (_, now) = explain(&e, body(None)).await;
    let tides = target(&now, 0);
    assert_eq!(tides["presence"], "in_version", "{now}");
    assert!(tides["chunks"][0]["deleted_at"].is_string(), "{tides}");
    assert!(
        tides["verdict"].as_str().unwrap().starts_with("deleted at"),
        "{tides}"
    );

    // A caller without the visibility-override scope learns only when it was deleted: no
    // chunk ids, text or metadata, and snippets of deleted text are not found.
    let hidden = answer(&e, &kb, &body(None), false).await.body;
    assert_eq!(target(&hidden, 0)["presence"], "deleted", "{hidden}");
    assert_eq!(target(&hidden, 0)["chunks"], json!([]), "{hidden}");
    assert!(target(&hidden, 0)["verdict"]
        .as_str()
        .unwrap()
        .starts_with("deleted at"));
    let snippet =
        json!({"request": {"query": "moon"}, "targets": [{"text": "gravitational pull"}]});
    let hidden = answer(&e, &kb, &snippet, false).await.body;
    assert_eq!(target(&hidden, 0)["presence"], "not_found", "{hidden}");

    let (_, then) = explain(&e, body(Some(before))).await;
    assert_eq!(then["index_version"], before);
    assert!(target(&then, 0)["verdict"]
        .as_str()
        .unwrap()
        .starts_with("ranked"));
    assert_eq!(target(&then, 1)["presence"], "ingested_later", "{then}");
    // A pinned version explains the same, byte for byte, after more writes.
    e.write(
        &kb,
        upserts(vec![doc("later", "Later", "Moon tides again.")]),
    )
    .await
    .unwrap();
    let (_, again) = explain(&e, body(Some(before))).await;
    assert_eq!(then.to_string(), again.to_string());
}

#[tokio::test]
async fn bad_requests_are_structured_errors_over_every_transport() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with_projects(dir.path()).await;
    for (body, field) in [
        (
            json!({"request": {"query": "q"}, "targets": [{"page": 1}]}),
            "targets[0]",
        ),
        (
            json!({"request": {"query": ""}, "targets": [{"chunk_id": "c"}]}),
            "request.query",
        ),
        (
            json!({"request": {"query": "q", "graph_depth": 4}, "targets": [{"chunk_id": "c"}]}),
            "request.graph_depth",
        ),
        (
            json!({"contract": "000", "request": {"retrieval": {"index": "other", "query": "q"}},
                   "targets": [{"chunk_id": "c"}]}),
            "request.retrieval.index",
        ),
    ] {
        let (status, v) = explain(&e, body.clone()).await;
        assert_eq!(status, 400, "{body}: {v}");
        assert_eq!(v["error"]["field"], field, "{body}: {v}");
    }
    // A version that does not exist.
    let (status, v) = explain(
        &e,
        json!({"request": {"query": "moon", "index_version": 999}, "targets": [{"chunk_id": "c"}]}),
    )
    .await;
    assert!((400..500).contains(&status), "{v}");
    assert!(v["error"]["code"].is_string(), "{v}");
    // The same request over the bus, with header `contract: explain`, in contract 000's shape.
    let body = json!({"contract": "000",
        "request": {"retrieval": {"index": "kb", "query": "espresso", "search_method": "keyword"}},
        "targets": [{"document_id": "coffee"}]})
    .to_string();
    let r = query_handler::answer(
        &e,
        &bus_headers(Some("explain"), Some("kb")),
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["search_method"], "keyword");
    assert!(r.body["targets"][0]["verdict"]
        .as_str()
        .unwrap()
        .starts_with("ranked 1st"));
    let r = query_handler::answer(&e, &bus_headers(Some("explain"), None), Some(b"{}")).await;
    assert_eq!(r.status, 400, "{}", r.body);
}
