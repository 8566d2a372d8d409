//! Tenant isolation over every route the daemon serves and every bus contract: tenant a's
//! token gets 403 on tenant b's index (the same answer whether that index exists or not),
//! no token gets 401, and b's own token is let through.

use ragstream::http::openapi::ROUTES;
use serde_json::{json, Value};

use crate::daemon::{curl, kcat_consume, kcat_produce, start_daemon_with, wait_for};

const CONFIG: &str = r#"
[contracts]
default_index = "b_kb"

[retrievers.b_leaf]
index = "b_kb"
top_k = 3

[[auth.tokens]]
name = "a"
token = "secret-a"
tenant = "a"
indexes = ["a_*"]
scopes = ["read", "write", "admin", "visibility_override"]

[[auth.tokens]]
name = "b"
token = "secret-b"
tenant = "b"
indexes = ["b_*"]
scopes = ["read", "write", "admin", "visibility_override"]
"#;

/// A body the route accepts, naming `index` where the body names one.
fn body(path: &str, index: &str) -> Value {
    match path {
        "/v1/retrieve" => json!({"retrieval": {"index": index, "query": "moon"}}),
        p if p.ends_with("/documents") => json!({"documents": [{"id": "n", "text": "New."}]}),
        p if p.ends_with("/hydrate") => json!({"chunk_ids": []}),
        p if p.ends_with("/settings") => json!({"default_retrieval_profile": "exact"}),
        p if p.contains("/ai/rag/query") => json!({"query": "moon", "hybrid": {}}),
        _ => json!({"query": "moon"}),
    }
}

fn call(method: &str, url: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
    let auth = token.map(|t| format!("Authorization: Bearer {t}"));
    let text = body.to_string();
    let mut args = vec!["-X", method];
    if let Some(a) = &auth {
        args.extend(["-H", a.as_str()]);
    }
    if method == "POST" || method == "PUT" {
        args.extend(["-d", text.as_str()]);
    }
    args.push(url);
    curl(&args)
}

#[test]
fn no_tenant_reaches_another_tenants_index_on_any_route_or_bus_contract() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), CONFIG).unwrap();
    let d = start_daemon_with(&[("RAGSTREAM_CONFIG", file.path().to_str().unwrap())]);
    let (status, v) = call(
        "POST",
        &format!("{}/v1/indexes/b_kb/documents", d.http),
        Some("secret-b"),
        &json!({"documents": [{"id": "d1", "text": "The moon pulls the tides."}]}),
    );
    assert_eq!(status, 202, "{v}");
    wait_for("tenant b's document", || {
        call(
            "GET",
            &format!("{}/v1/indexes/b_kb/stats", d.http),
            Some("secret-b"),
            &Value::Null,
        )
        .1["documents"]
            == 1
    });

    let mut checked = 0;
    for route in ROUTES {
        if ["/openapi.json", "/healthz", "/readyz", "/metrics"].contains(&route.path) {
            continue;
        }
        if route.path == "/v1/indexes" {
            // The list names only the indexes the caller may read.
            let names = |token: Option<&str>| {
                let (s, v) = call(
                    "GET",
                    &format!("{}/v1/indexes", d.http),
                    token,
                    &Value::Null,
                );
                assert_eq!(s, 200, "{v}");
                v["indexes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i["index"].as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
            };
            assert!(!names(Some("secret-a")).contains(&"b_kb".to_string()));
            assert!(names(Some("secret-b")).contains(&"b_kb".to_string()));
            let (s, b) = call("GET", &format!("{}/v1/indexes", d.http), None, &Value::Null);
            assert_eq!(s, 401, "{b}");
            checked += 1;
            continue;
        }
        let url = |index: &str| {
            let path = route
                .path
                .replace("{index}", index)
                .replace("{name}", "b_leaf")
                .replace("{id}", "d1");
            format!("{}{path}", d.http)
        };
        let (m, p) = (route.method, route.path);
        // Another tenant: 403, the same for an index that exists and one that does not.
        let (s1, b1) = call(m, &url("b_kb"), Some("secret-a"), &body(p, "b_kb"));
        assert_eq!(s1, 403, "{m} {p}: {b1}");
        if p.contains("{index}") || p == "/v1/retrieve" {
            let (s2, b2) = call(
                m,
                &url("b_missing"),
                Some("secret-a"),
                &body(p, "b_missing"),
            );
            assert_eq!(s2, 403, "{m} {p}: {b2}");
            assert_eq!(b1["error"]["code"], b2["error"]["code"], "{m} {p}");
        }
        // No token: 401.
        let (s, b) = call(m, &url("b_kb"), None, &body(p, "b_kb"));
        assert_eq!(s, 401, "{m} {p}: {b}");
        // The owner gets past authorisation (deleting the index waits until the end).
        if m == "DELETE" {
            checked += 1;
            continue;
        }
        let (s, b) = call(m, &url("b_kb"), Some("secret-b"), &body(p, "b_kb"));
        assert!(s != 401 && s != 403 && s < 500, "{m} {p}: {s} {b}");
        checked += 1;
    }
    assert!(checked >= 15, "{checked} routes");

    // The bus: every contract, tenant a's token on tenant b's index.
    let request = |contract: &str| match contract {
        "000" => json!({"retrieval": {"index": "b_kb", "query": "moon"}}),
        "003" => json!({"query": "moon", "hybrid": {}}),
        _ => json!({"query": "moon"}),
    };
    for contract in ["000", "001", "002", "003", "004"] {
        let mut headers = vec![
            "-H".to_string(),
            "reply-to=ragstream.replies".to_string(),
            "-H".to_string(),
            format!("correlation-id=c{contract}"),
            "-H".to_string(),
            format!("contract={contract}"),
            "-H".to_string(),
            "authorization=Bearer secret-a".to_string(),
            "-H".to_string(),
            "index=b_kb".to_string(),
        ];
        if contract == "004" {
            headers.extend(["-H".to_string(), "retriever=b_leaf".to_string()]);
        }
        let args: Vec<&str> = headers.iter().map(String::as_str).collect();
        kcat_produce(
            &d.bootstrap,
            "ragstream.queries",
            &args,
            &[request(contract).to_string()],
        );
    }
    let replies = kcat_consume(&d.bootstrap, "ragstream.replies", 5);
    assert_eq!(replies.len(), 5, "{replies:?}");
    for reply in &replies {
        assert!(reply.contains("status=403"), "{reply}");
        assert!(!reply.contains("moon pulls"), "{reply}");
    }

    // The owner, with the admin scope, deletes its index; it is gone at once.
    let index = format!("{}/v1/indexes/b_kb", d.http);
    let (s, v) = call("DELETE", &index, Some("secret-b"), &Value::Null);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["deleted"], true, "{v}");
    let (s, v) = call(
        "GET",
        &format!("{index}/stats"),
        Some("secret-b"),
        &Value::Null,
    );
    assert_eq!(s, 404, "{v}");
}
