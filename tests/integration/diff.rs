//! Diff: one query at two versions, and the writes in between that moved its answers.

use ragstream::contracts::diff::answer;
use ragstream::pipeline::query_handler;
use serde_json::{json, Value};

use crate::common::*;

fn documents_of(changes: &Value) -> Vec<(String, String)> {
    changes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["document_id"].as_str().unwrap().to_string(),
                c["cause"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_diff_names_what_entered_and_left_and_the_write_that_caused_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = hashing_engine(dir.path());
    let kb = name("kb");
    e.write(&kb, upserts(corpus())).await.unwrap();
    let from = e.index(&kb).await.unwrap().latest_version();
    e.write(&kb, vec![delete("coffee")]).await.unwrap();
    e.write(
        &kb,
        upserts(vec![doc(
            "espresso",
            "Espresso",
            "An espresso is coffee brewed by forcing hot water through fine grounds.",
        )]),
    )
    .await
    .unwrap();
    let to = e.index(&kb).await.unwrap().latest_version();

    let body = json!({"request": {"query": "espresso coffee", "top_k": 2,
        "retrieval_profile": "exact"}, "from_version": from, "to_version": to});
    let r = answer(&e, &kb, &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v = &r.body;
    assert_eq!(
        (v["from_version"].as_u64(), v["to_version"].as_u64()),
        (Some(from), Some(to))
    );
    assert!(
        documents_of(&v["left"]).contains(&("coffee".into(), "deleted".into())),
        "{v}"
    );
    assert!(
        documents_of(&v["entered"]).contains(&("espresso".into(), "added".into())),
        "{v}"
    );
    assert_eq!(v["writes"]["deleted"], json!(["coffee"]), "{v}");
    assert_eq!(v["writes"]["added"], json!(["espresso"]), "{v}");
    // The same versions give the same diff, byte for byte.
    assert_eq!(answer(&e, &kb, &body).await.body.to_string(), v.to_string());
    // A version against itself: nothing entered, left or moved.
    let same = answer(
        &e,
        &kb,
        &json!({"request": {"query": "espresso coffee"}, "from_version": to, "to_version": to}),
    )
    .await;
    assert_eq!(same.status, 200, "{}", same.body);
    assert_eq!(same.body["entered"], json!([]));
    assert_eq!(same.body["left"], json!([]));
    assert_eq!(same.body["moved"], json!([]));

    // Over the bus, header `contract: diff`.
    let r = query_handler::answer(
        &e,
        &bus_headers(Some("diff"), Some("kb")),
        Some(body.to_string().as_bytes()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["writes"]["deleted"], json!(["coffee"]));
}

#[tokio::test]
async fn bad_diff_requests_are_structured_errors() {
    let dir = tempfile::tempdir().unwrap();
    let e = hashing_engine(dir.path());
    let kb = name("kb");
    e.write(&kb, upserts(corpus())).await.unwrap();
    for (body, field) in [
        (
            json!({"request": {"query": "moon"}, "to_version": 1}),
            "from_version",
        ),
        (
            json!({"request": {"query": "moon"}, "from_version": 0, "to_version": 1}),
            "from_version",
        ),
        (
            json!({"request": {"query": "moon", "index_version": 1}, "from_version": 1,
                "to_version": 1}),
            "request.index_version",
        ),
        (
            json!({"request": {"query": "moon", "graph_depth": 1}, "from_version": 1,
                "to_version": 1}),
            "request.graph_depth",
        ),
        (
            json!({"request": {"query": "moon"}, "from_version": 1, "to_version": 1, "x": 1}),
            "x",
        ),
    ] {
        let r = answer(&e, &kb, &body).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.body["error"]["field"], field, "{body}: {}", r.body);
    }
    // A version the index never had: a structured 4xx, not a 500.
    let r = answer(
        &e,
        &kb,
        &json!({"request": {"query": "moon"}, "from_version": 1, "to_version": 999}),
    )
    .await;
    assert!((400..500).contains(&r.status), "{}", r.body);
    assert!(r.body["error"]["code"].is_string(), "{}", r.body);
}
