//! Hostile bodies and path segments against a live daemon, on every route it serves: no
//! answer is a 5xx, every 4xx is in the JSON error shape, and the daemon is still healthy
//! at the end. Seeded: a failure names its seed, route and body.

use std::time::Duration;

use hostile_input::Hostile;
use ragstream::http::openapi::ROUTES;
use serde_json::{json, Value};

use crate::daemon::{curl, kcat_produce, start_daemon_with, upsert, wait_for};

/// Requests per route (each route's valid body broken a different way each time).
const PER_ROUTE: usize = 120;

/// A body each route accepts, for the generator to break.
fn valid_body(path: &str) -> Value {
    match path {
        "/v1/retrieve" => json!({"retrieval": {"index": "kb", "query": "moon", "top_k": 3}}),
        p if p.ends_with("/documents") => {
            json!({"documents": [{"id": "d", "text": "Some text."}], "deletes": ["e"]})
        }
        p if p.ends_with("/hydrate") => json!({"chunk_ids": ["x"]}),
        p if p.ends_with("/settings") => json!({"default_retrieval_profile": "exact"}),
        p if p.contains("/ai/rag/query") => json!({"query": "moon", "hybrid": {"alpha": 0.5}}),
        p if p.contains("/retrievers/") => json!({"query": "moon", "messages": []}),
        _ => json!({"query": "moon", "top_k": 3}),
    }
}

#[test]
fn hostile_requests_on_every_route_get_structured_4xx_never_5xx() {
    let d = start_daemon_with(&[]);
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[upsert("tides", "The moon pulls the tides.")],
    );
    wait_for("one document", || {
        curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["documents"] == 1
    });
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .http_status_as_error(false)
        .build()
        .into();
    let seed = 36;
    let mut hostile = Hostile::new(seed);
    let mut sent = 0;
    for route in ROUTES {
        if route.path == "/metrics" {
            continue; // scrapes Kafka for lag: slow, and takes no input
        }
        for _ in 0..PER_ROUTE {
            let mut path = route.path.to_string();
            for name in ["{index}", "{name}", "{id}"] {
                if path.contains(name) {
                    let segment = hostile.path_segment();
                    path = path.replace(name, &segment);
                }
            }
            let url = format!("{}{path}", d.http);
            let body = hostile.body(&valid_body(route.path));
            let mut response = match route.method {
                "GET" => agent.get(&url).call(),
                "DELETE" => agent.delete(&url).call(),
                "PUT" => agent
                    .put(&url)
                    .header("content-type", "application/json")
                    .send(&body[..]),
                _ => agent
                    .post(&url)
                    .header("content-type", "application/json")
                    .send(&body[..]),
            }
            .unwrap_or_else(|e| panic!("seed {seed}: {} {path}: {e}", route.method));
            sent += 1;
            let status = response.status().as_u16();
            let text = response.body_mut().read_to_string().unwrap_or_default();
            let shown = String::from_utf8_lossy(&body)
                .chars()
                .take(300)
                .collect::<String>();
            assert!(
                status < 500,
                "seed {seed}: {} {path} answered {status} {text} to {shown}",
                route.method
            );
            if status >= 400 {
                let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                assert!(
                    v["error"]["code"].is_string(),
                    "seed {seed}: {} {path} answered {status} outside the error shape: {text:?} to {shown}",
                    route.method
                );
            }
        }
    }
    assert!(sent > 1000, "{sent}");
    let (status, health) = curl(&[&format!("{}/healthz", d.http)]);
    assert_eq!(status, 200, "{health}");
}
