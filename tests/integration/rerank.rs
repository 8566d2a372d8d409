//! The reranker in contract 002 queries, against a TEI-style `/rerank` server on 127.0.0.1:
//! its scores decide the order and become `score_detail.rerank`; `reranker_applied` is true
//! only when it really ran; a failing reranker leaves the fused ranking and the query answers.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use actix_web::{web, App, HttpResponse, HttpServer};
use ragstream::contracts::Contract;
use ragstream::retrieval::rerank::{RerankApi, RerankerConfig};
use serde_json::{json, Value};

use crate::common::{answer, config, corpus, engine_with, name, upserts};

/// Scores a text 1.0 when it mentions coffee, else 0.5 / (1 + position): a reranker with
/// opinions of its own that no fusion would produce.
struct Server {
    failing: AtomicBool,
    calls: AtomicUsize,
}

async fn rerank(state: web::Data<Server>, body: web::Json<Value>) -> HttpResponse {
    state.calls.fetch_add(1, Ordering::SeqCst);
    if state.failing.load(Ordering::SeqCst) {
        return HttpResponse::InternalServerError().body("model crashed");
    }
    let texts = body["texts"].as_array().cloned().unwrap_or_default();
    let scores: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let coffee = t.as_str().unwrap_or("").to_lowercase().contains("coffee");
            let score = if coffee { 1.0 } else { 0.5 / (1.0 + i as f64) };
            json!({"index": i, "score": score})
        })
        .rev()
        .collect();
    HttpResponse::Ok().json(scores)
}

fn start() -> (String, Arc<Server>) {
    let state = Arc::new(Server {
        failing: AtomicBool::new(false),
        calls: AtomicUsize::new(0),
    });
    let shared = web::Data::from(state.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(shared.clone())
            .route("/rerank", web::post().to(rerank))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let addr = server.addrs()[0];
    tokio::spawn(server.run());
    (format!("http://{addr}"), state)
}

/// An engine whose reranker is the server at `url` (10 candidates), with the corpus in `kb`.
async fn engine_with_reranker(url: String) -> (ragstream::Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.reranker = RerankerConfig {
        enabled: true,
        api: RerankApi::Tei,
        url,
        candidates: 10,
        ..Default::default()
    };
    let e = engine_with(c);
    e.write(&name("kb"), upserts(corpus())).await.unwrap();
    (e, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_reranker_orders_002_results_and_debug_says_so() {
    let (url, server) = start();
    let (e, _dir) = engine_with_reranker(url).await;
    let ask = |body: Value| {
        let e = &e;
        async move {
            answer(
                e,
                Contract::C002,
                Some(name("kb")),
                body.to_string().as_bytes(),
            )
            .await
        }
    };
    let q = json!({"query": "Moon tides astronauts coffee", "top_k": 3, "debug": true});

    let r = ask(q.clone()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["reranker_applied"], true);
    let top = &r.body["results"][0];
    assert_eq!(top["document_id"], "coffee", "{}", r.body);
    assert_eq!(top["score_detail"]["rerank"], 1.0);
    assert_eq!(top["score"], 1.0);
    assert_eq!(server.calls.load(Ordering::SeqCst), 1);

    // The request may opt out; then the reranker is not called.
    let mut off = q.clone();
    off["rerank"] = json!(false);
    let r = ask(off).await;
    assert_eq!(r.body["reranker_applied"], false);
    assert!(r.body["results"][0]["score_detail"]["rerank"].is_null());
    assert_eq!(server.calls.load(Ordering::SeqCst), 1);

    // A failing reranker: the fused ranking, flagged as not reranked, and no error.
    server.failing.store(true, Ordering::SeqCst);
    let r = ask(q).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["reranker_applied"], false);
    assert_eq!(server.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn without_a_reranker_nothing_claims_to_have_reranked() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine_with(config(dir.path()));
    e.write(&name("kb"), upserts(corpus())).await.unwrap();
    let r = answer(
        &e,
        Contract::C002,
        Some(name("kb")),
        json!({"query": "coffee", "debug": true})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!(r.body["reranker_applied"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_shows_where_the_reranker_put_each_chunk() {
    let (url, _server) = start();
    let (e, _dir) = engine_with_reranker(url).await;
    let body = json!({"request": {"query": "Moon tides astronauts coffee", "top_k": 1},
        "targets": [{"document_id": "coffee"}, {"document_id": "tides"}, {"document_id": "apollo"}]});
    let r = ragstream::contracts::explain::answer(&e, &name("kb"), &body, false).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let chunk = |i: usize| &r.body["targets"][i]["chunks"][0];
    // Coffee: the reranker's first, whatever its fused rank.
    let coffee = chunk(0);
    assert_eq!(coffee["rank"], 1, "{coffee}");
    assert_eq!(coffee["rerank"]["rank"], 1);
    assert_eq!(coffee["rerank"]["score"], 1.0);
    let verdict = coffee["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("ranked 1st: reranker score 1.0000 (fused rank"),
        "{verdict}"
    );
    // The others: scored 0.5 / fused rank by this reranker, and not returned.
    for i in [1, 2] {
        let c = chunk(i);
        let rerank = &c["rerank"];
        let fused_rank = rerank["fused_rank"].as_u64().unwrap();
        assert_eq!(c["fused_rank"], fused_rank, "{c}");
        assert_eq!(
            rerank["score"].as_f64().unwrap(),
            0.5 / fused_rank as f64,
            "{c}"
        );
        assert!(rerank["rank"].as_u64().unwrap() >= 2);
        assert_eq!(rerank["candidates"], 5, "{c}");
        let verdict = c["verdict"].as_str().unwrap();
        assert!(
            verdict.starts_with("not returned: the reranker put it"),
            "{verdict}"
        );
    }
}
