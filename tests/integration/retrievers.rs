//! Contract 004: named retrievers and the invariants R1–R11, through the adapter every
//! transport calls.

use std::collections::BTreeMap;
use std::sync::Arc;

use ragstream::contracts::c004_retriever::answer;
use ragstream::embedding::{Embedder, HashingEmbedder};
use ragstream::retrieval::retrievers::{Fusion, RetrieverConfig};
use ragstream::retrieval::SearchMethod;
use ragstream::Engine;
use serde_json::{json, Value};

use crate::common::{config, corpus, name, upserts};

fn leaf(index: &str, method: SearchMethod, top_k: usize) -> RetrieverConfig {
    RetrieverConfig {
        index: Some(index.into()),
        method: Some(method),
        alpha: None,
        top_k,
        filters: Default::default(),
        composite: vec![],
        fusion: Fusion::MinMax,
        weights: vec![],
    }
}

fn composite(children: &[&str], fusion: Fusion, weights: Vec<f64>) -> RetrieverConfig {
    RetrieverConfig {
        index: None,
        method: None,
        alpha: None,
        top_k: 4,
        filters: Default::default(),
        composite: children.iter().map(|c| c.to_string()).collect(),
        fusion,
        weights,
    }
}

async fn setup(dir: &std::path::Path) -> Engine {
    // An index built with another model, so that searching it fails (R4).
    Engine::new(
        config(dir),
        Arc::new(HashingEmbedder::new(64)) as Arc<dyn Embedder>,
    )
    .write(&name("other"), upserts(corpus()))
    .await
    .unwrap();
    let mut c = config(dir);
    let mut r = BTreeMap::new();
    r.insert("kw".to_string(), leaf("kb", SearchMethod::Keyword, 3));
    r.insert("sem".to_string(), leaf("kb", SearchMethod::Semantic, 3));
    r.insert("hyb".to_string(), leaf("kb", SearchMethod::Hybrid, 5));
    r.insert(
        "fresh".to_string(),
        leaf("nothing-yet", SearchMethod::Hybrid, 5),
    );
    r.insert(
        "broken".to_string(),
        leaf("other", SearchMethod::Semantic, 5),
    );
    r.insert(
        "fused".to_string(),
        composite(&["kw", "sem"], Fusion::MinMax, vec![0.7, 0.3]),
    );
    r.insert(
        "rrf".to_string(),
        composite(&["kw", "sem"], Fusion::Rrf, vec![]),
    );
    r.insert(
        "nested".to_string(),
        composite(&["fused", "hyb"], Fusion::MinMax, vec![]),
    );
    c.retrievers = r;
    let e = Engine::new(c, Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>);
    e.write(&name("kb"), upserts(corpus())).await.unwrap();
    e
}

async fn call(e: &Engine, retriever: &str, body: Value) -> (u16, Value) {
    let r = answer(e, retriever, body.to_string().as_bytes()).await;
    (r.status, r.body)
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

fn assert_scored_descending(v: &Value) {
    let docs = v.as_array().unwrap();
    let scores: Vec<f64> = docs
        .iter()
        .map(|d| d["score"].as_f64().expect("R6: every document has a score"))
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "R6: descending {scores:?}"
    );
}

#[tokio::test]
async fn r1_r5_r6_r7_read_only_stable_ids_descending_scores_one_scale() {
    let dir = tempfile::tempdir().unwrap();
    let e = setup(dir.path()).await;
    let before = e.stats(&name("kb")).await.unwrap().index_version;
    for r in ["kw", "sem", "hyb", "fused", "rrf", "nested"] {
        let (status, first) = call(&e, r, json!({"query": "moon ocean tides"})).await;
        assert_eq!(status, 200, "{r}: {first}");
        assert!(!first.as_array().unwrap().is_empty(), "{r}");
        assert_scored_descending(&first);
        let (_, again) = call(&e, r, json!({"query": "moon ocean tides"})).await;
        assert_eq!(first, again, "{r}: R1/R5 same answer, same ids");
        for d in first.as_array().unwrap() {
            assert!(d["content"].is_string() && d["metadata"].is_object(), "{d}");
        }
    }
    assert_eq!(
        e.stats(&name("kb")).await.unwrap().index_version,
        before,
        "R1: nothing written"
    );
    // R7: semantic and fused scores live in [0, 1] on every call.
    for r in ["sem", "hyb", "fused", "nested"] {
        let (_, v) = call(&e, r, json!({"query": "bread dough yeast"})).await;
        assert!(
            v.as_array()
                .unwrap()
                .iter()
                .all(|d| (0.0..=1.0).contains(&d["score"].as_f64().unwrap())),
            "{r}: {v}"
        );
    }
}

#[tokio::test]
async fn r2_messages_are_context_and_ignored_r3_empty_is_success() {
    let dir = tempfile::tempdir().unwrap();
    let e = setup(dir.path()).await;
    let (_, plain) = call(&e, "hyb", json!({"query": "espresso"})).await;
    let (status, with_messages) = call(
        &e,
        "hyb",
        json!({"query": "espresso",
        "messages": [{"role": "user", "content": "tell me about rust"}, {"odd": 1}]}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(plain, with_messages, "R2");
    let (status, none) = call(&e, "kw", json!({"query": "zzzz qqqq"})).await;
    assert_eq!((status, none), (200, json!([])), "R3: no hits is []");
    let (status, fresh) = call(&e, "fresh", json!({"query": "anything"})).await;
    assert_eq!(
        (status, fresh),
        (200, json!([])),
        "R3: an index not written yet holds nothing"
    );
    let (status, blank) = call(&e, "hyb", json!({"query": ""})).await;
    assert_eq!((status, blank), (200, json!([])));
}

#[tokio::test]
async fn r4_errors_are_errors_and_r10_no_per_call_options() {
    let dir = tempfile::tempdir().unwrap();
    let e = setup(dir.path()).await;
    let (status, body) = call(&e, "broken", json!({"query": "moon"})).await;
    assert_eq!(
        status, 409,
        "R4: a failing backend is an error status: {body}"
    );
    assert_eq!(body["error"]["code"], "embedder_mismatch");
    let (status, body) = call(&e, "fused", json!({"query": "moon"})).await;
    assert_eq!(status, 200, "{body}");
    for extra in ["top_k", "filters", "threshold", "method"] {
        let (status, body) = call(&e, "hyb", json!({"query": "moon", extra: 3})).await;
        assert_eq!(
            (status, body["error"]["field"].as_str()),
            (400, Some(extra)),
            "R10"
        );
    }
    let (status, body) = call(&e, "nope", json!({"query": "moon"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("retriever_not_found"))
    );
    let (status, _) = call(&e, "hyb", json!({"messages": []})).await;
    assert_eq!(status, 400, "query is required");
}

#[tokio::test]
async fn r11_composites_fuse_children_and_keep_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let e = setup(dir.path()).await;
    let q = json!({"query": "gravitational pull moon"});
    let (_, kw) = call(&e, "kw", q.clone()).await;
    let (_, sem) = call(&e, "sem", q.clone()).await;
    let (_, fused) = call(&e, "fused", q.clone()).await;
    let mut union: Vec<String> = ids(&kw).into_iter().chain(ids(&sem)).collect();
    union.sort();
    union.dedup();
    let mut got = ids(&fused);
    assert!(got.len() <= 4, "the composite's own top_k");
    got.sort();
    assert!(
        got.iter().all(|id| union.contains(id)),
        "only children's documents"
    );
    // The best keyword hit (weight 0.7, scaled 1.0) leads the weighted min-max fusion.
    assert_eq!(ids(&fused)[0], ids(&kw)[0]);
    let (_, rrf) = call(&e, "rrf", q).await;
    assert_scored_descending(&rrf);
}

#[test]
fn bad_retriever_configs_are_start_up_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.toml");
    for (text, key) in [
        (
            "[retrievers.a]\ncomposite = [\"b\"]\n",
            "retrievers.a.composite",
        ),
        (
            "[retrievers.a]\ncomposite = [\"a\"]\n",
            "retrievers.a.composite",
        ),
        (
            "[retrievers.a]\nindex = \"kb\"\ntop_k = 0\n",
            "retrievers.a.top_k",
        ),
        ("[retrievers.a]\n", "retrievers.a"),
        (
            "[retrievers.a]\nindex = \"kb\"\nfilters = { tags = [] }\n",
            "retrievers.a.filters.tags",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let e = ragstream::config::Config::load_from(Some(&file), vec![]).unwrap_err();
        assert_eq!(e.key, key, "{text}");
    }
    std::fs::write(
        &file,
        "[retrievers.docs]\nindex = \"kb\"\nmethod = \"keyword\"\ntop_k = 3\n",
    )
    .unwrap();
    let c = ragstream::config::Config::load_from(Some(&file), vec![]).unwrap();
    assert_eq!(c.retrievers["docs"].method, Some(SearchMethod::Keyword));
}
