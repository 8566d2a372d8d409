//! Tenancy and bearer tokens: who may read, write and administer which index, over the
//! contract layer, the bus and HTTP; refusals never reveal whether an index exists.

use ragstream::auth::{Caller, Scope, TokenConfig};
use ragstream::contracts::{self, Contract, Reply, Target};
use ragstream::index::DocumentOp;
use ragstream::pipeline::query_handler::{self, RequestHeaders};
use ragstream::retrieval::retrievers::RetrieverConfig;
use ragstream::Engine;
use serde_json::{json, Value};

use crate::common::{config, corpus, engine_with, name, upserts};
use crate::daemon::{curl, start_daemon_with, wait_for};

fn token(name: &str, tenant: &str, indexes: &[&str], scopes: &[Scope]) -> TokenConfig {
    TokenConfig {
        name: name.into(),
        token: Some(format!("secret-{name}")),
        token_env: None,
        tenant: tenant.into(),
        indexes: indexes.iter().map(|s| s.to_string()).collect(),
        scopes: scopes.to_vec(),
    }
}

/// Two tenants: acme owns `acme_*`, beta owns `beta`. The configuration's own override flag
/// is on, to show that with authentication on only the token's scope counts.
async fn engine(dir: &std::path::Path) -> Engine {
    let mut c = config(dir);
    c.contracts.default_index = "acme_docs".into();
    c.contracts.tenant_scoped = true;
    c.contracts.visibility_override_allowed = true;
    c.auth.tokens = vec![
        token("acme-reader", "acme", &["acme_*"], &[Scope::Read]),
        token(
            "acme-auditor",
            "acme",
            &["acme_*"],
            &[Scope::Read, Scope::VisibilityOverride],
        ),
        token("beta-reader", "beta", &["beta"], &[Scope::Read]),
    ];
    let leaf = |index: &str| RetrieverConfig {
        index: Some(index.into()),
        method: None,
        alpha: None,
        top_k: 3,
        filters: Default::default(),
        composite: vec![],
        fusion: Default::default(),
        weights: vec![],
    };
    c.retrievers.insert("acme_leaf".into(), leaf("acme_docs"));
    c.retrievers.insert("beta_leaf".into(), leaf("beta"));
    c.retrievers.insert(
        "both".into(),
        RetrieverConfig {
            index: None,
            composite: vec!["acme_leaf".into(), "beta_leaf".into()],
            ..leaf("x")
        },
    );
    let e = engine_with(c);
    e.write(&name("acme_docs"), upserts(corpus()))
        .await
        .unwrap();
    e.write(&name("beta"), upserts(corpus())).await.unwrap();
    e
}

fn caller(e: &Engine, secret: &str) -> Caller {
    e.auth()
        .authenticate(Some(&format!("Bearer {secret}")))
        .unwrap()
}

async fn ask(e: &Engine, who: &Caller, contract: Contract, target: Target, body: Value) -> Reply {
    contracts::answer(e, who, contract, target, body.to_string().as_bytes()).await
}

fn on(index: &str) -> Target {
    Target::index(Some(name(index)))
}

#[tokio::test]
async fn a_tenant_reads_its_own_indexes_and_nothing_of_another() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path()).await;
    let acme = caller(&e, "secret-acme-reader");
    let q001 = json!({"query": "moon", "top_k": 2});

    let own = ask(&e, &acme, Contract::C001, on("acme_docs"), q001.clone()).await;
    assert_eq!(own.status, 200, "{}", own.body);
    // Default index (acme_docs) through 001 and 003 too.
    let own = ask(&e, &acme, Contract::C001, Target::default(), q001.clone()).await;
    assert_eq!(own.status, 200);

    // Another tenant's index, an index that does not exist in it, and one outside every
    // tenant: the same refusal, so the answer says nothing about existence.
    let mut refusals = Vec::new();
    for index in ["beta", "beta2", "nobody"] {
        let r = ask(&e, &acme, Contract::C001, on(index), q001.clone()).await;
        assert_eq!(r.status, 403, "{index}: {}", r.body);
        assert_eq!(r.body["error"]["code"], "forbidden");
        refusals.push(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .replace(index, "?"),
        );
    }
    assert!(refusals.windows(2).all(|w| w[0] == w[1]), "{refusals:?}");

    // Every contract and every way of naming an index is checked: 000's body, 002's route,
    // 003's route, 004's retrievers (a composite over both tenants is refused whole), and
    // pinning an old version (time travel) changes nothing.
    let r = ask(
        &e,
        &acme,
        Contract::C000,
        Target::default(),
        json!({"retrieval": {"index": "beta", "query": "moon", "index_version": 1}}),
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
    for contract in [Contract::C002, Contract::C003] {
        let body = match contract {
            Contract::C002 => json!({"query": "moon"}),
            _ => json!({"query": "moon", "hybrid": {}}),
        };
        let r = ask(&e, &acme, contract, on("beta"), body).await;
        assert_eq!(r.status, 403, "{contract:?}");
    }
    let retriever = |n: &str| Target {
        index: None,
        retriever: Some(n.into()),
    };
    let body = json!({"query": "moon"});
    assert_eq!(
        ask(
            &e,
            &acme,
            Contract::C004,
            retriever("acme_leaf"),
            body.clone()
        )
        .await
        .status,
        200
    );
    assert_eq!(
        ask(
            &e,
            &acme,
            Contract::C004,
            retriever("beta_leaf"),
            body.clone()
        )
        .await
        .status,
        403
    );
    assert_eq!(
        ask(&e, &acme, Contract::C004, retriever("both"), body)
            .await
            .status,
        403
    );

    // beta's token sees beta only.
    let beta = caller(&e, "secret-beta-reader");
    let r = ask(&e, &beta, Contract::C001, on("beta"), q001.clone()).await;
    assert_eq!(r.status, 200);
    let r = ask(&e, &beta, Contract::C001, on("acme_docs"), q001).await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn the_bus_needs_a_token_and_hostile_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path()).await;
    let body = json!({"query": "moon", "top_k": 1}).to_string();
    let headers = |auth: Option<&str>, index: &str| RequestHeaders {
        contract: Some("001".into()),
        index: Some(index.into()),
        retriever: None,
        authorization: auth.map(str::to_string),
        deadline: None,
    };
    let ok = query_handler::answer(
        &e,
        &headers(Some("Bearer secret-acme-reader"), "acme_docs"),
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let long = format!("Bearer {}", "x".repeat(100_000));
    for bad in [
        None,
        Some(""),
        Some("Bearer"),
        Some("Bearer "),
        Some("secret-acme-reader"),
        Some("Basic secret-acme-reader"),
        Some("Bearer secret-acme-reader\0"),
        Some("Bearer secret-acme-reade"),
        Some("Bearer SECRET-ACME-READER"),
        Some(long.as_str()),
    ] {
        let r = query_handler::answer(&e, &headers(bad, "acme_docs"), Some(body.as_bytes())).await;
        assert_eq!(r.status, 401, "{bad:?}");
        assert_eq!(r.body["error"]["code"], "unauthenticated");
    }
    let r = query_handler::answer(
        &e,
        &headers(Some("Bearer secret-acme-reader"), "beta"),
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn only_a_token_with_the_override_scope_sees_deleted_documents() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path()).await;
    e.write(
        &name("acme_docs"),
        vec![DocumentOp::Delete {
            document_id: "apollo".into(),
        }],
    )
    .await
    .unwrap();
    let body = json!({
        "query": "Apollo astronauts Moon", "visibility": "deleted",
        "visibility_override_allowed": true, "hybrid": {"min_sim": 0.0},
    });
    let reader = caller(&e, "secret-acme-reader");
    let r = ask(&e, &reader, Contract::C003, Target::default(), body.clone()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["meta"]["visibility_effective"], "active",
        "the request's flag cannot grant what the token lacks"
    );
    let auditor = caller(&e, "secret-acme-auditor");
    let r = ask(&e, &auditor, Contract::C003, Target::default(), body).await;
    assert_eq!(r.body["meta"]["visibility_effective"], "deleted");
    assert_eq!(r.body["matches"][0]["id"], "apollo");
}

/// Over HTTP, with the daemon: 401 with `WWW-Authenticate`, 403 across tenants, scopes per
/// route (write for ingest and delete, admin for settings and rebuild), and the 002 index
/// management routes doing their work.
#[test]
fn http_routes_check_tokens_scopes_and_tenants() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        r#"
[[auth.tokens]]
name = "acme-admin"
token = "secret-admin"
tenant = "acme"
indexes = ["kb"]
scopes = ["read", "write", "admin"]

[[auth.tokens]]
name = "acme-writer"
token = "secret-writer"
tenant = "acme"
indexes = ["kb"]
scopes = ["read", "write"]

[[auth.tokens]]
name = "acme-reader"
token = "secret-reader"
tenant = "acme"
indexes = ["kb"]
scopes = ["read"]

[[auth.tokens]]
name = "other"
token = "secret-other"
tenant = "other"
indexes = ["other_*"]
scopes = ["read", "write", "admin"]
"#,
    )
    .unwrap();
    let d = start_daemon_with(&[("RAGSTREAM_CONFIG", file.path().to_str().unwrap())]);
    let url = |p: &str| format!("{}{p}", d.http);
    let bearer = |t: &str| format!("Authorization: Bearer {t}");
    let admin = bearer("secret-admin");
    let reader = bearer("secret-reader");
    let writer = bearer("secret-writer");
    let other = bearer("secret-other");

    // No token: 401 and the scheme to use.
    let out = std::process::Command::new("curl")
        .args(["-s", "-i", &url("/v1/indexes/kb/stats")])
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&out.stdout).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 401"), "{head}");
    assert!(head.contains("www-authenticate: bearer"), "{head}");

    // The OpenAPI document and health need no token.
    assert_eq!(curl(&[&url("/openapi.json")]).0, 200);
    assert_eq!(curl(&[&url("/healthz")]).0, 200);

    let docs = json!({"documents": [
        {"id": "a", "text": "Volcanoes erupt lava."},
        {"id": "b", "text": "Glaciers carve valleys."}
    ]})
    .to_string();
    let post = |auth: &str, path: &str, body: &str| {
        curl(&[
            "-X",
            "POST",
            "-H",
            auth,
            "-H",
            "content-type: application/json",
            "-d",
            body,
            &url(path),
        ])
    };
    assert_eq!(post(&reader, "/v1/indexes/kb/documents", &docs).0, 403);
    assert_eq!(post(&other, "/v1/indexes/kb/documents", &docs).0, 403);
    assert_eq!(post(&admin, "/v1/indexes/kb/documents", &docs).0, 202);
    let stats = || curl(&["-H", &reader, &url("/v1/indexes/kb/stats")]);
    wait_for("two documents", || stats().1["documents"] == 2);

    // Another tenant: the same 403 for kb (exists) and kb2 (does not).
    let (s1, b1) = curl(&["-H", &other, &url("/v1/indexes/kb/stats")]);
    let (s2, b2) = curl(&["-H", &other, &url("/v1/indexes/kb2/stats")]);
    assert_eq!((s1, s2), (403, 403));
    assert_eq!(b1["error"]["code"], b2["error"]["code"]);
    let q = json!({"query": "lava", "top_k": 1}).to_string();
    assert_eq!(post(&other, "/v1/indexes/kb/query", &q).0, 403);
    assert_eq!(post(&reader, "/v1/indexes/kb/query", &q).0, 200);

    // Delete through the pipeline (write scope).
    let delete = |auth: &str| {
        curl(&[
            "-X",
            "DELETE",
            "-H",
            auth,
            &url("/v1/indexes/kb/documents/a"),
        ])
    };
    assert_eq!(delete(&reader).0, 403);
    let (status, body) = delete(&admin);
    assert_eq!(status, 202, "{body}");
    wait_for("the delete", || {
        let s = stats().1;
        s["documents"] == 1 && s["deleted_documents"] == 1
    });

    // Status: the version, and no lag once everything produced is indexed.
    let (status, body) = curl(&["-H", &reader, &url("/v1/indexes/kb/status")]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["index_version"], stats().1["index_version"]);
    assert!(body["last_commit_at"].as_str().unwrap().contains('T'));
    wait_for("no indexing lag", || {
        curl(&["-H", &reader, &url("/v1/indexes/kb/status")]).1["indexing_lag"]["messages"] == 0
    });
    let partitions = body["indexing_lag"]["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 2, "{body}");

    // Rebuild and settings need admin.
    assert_eq!(post(&reader, "/v1/indexes/kb/rebuild", "").0, 403);
    let (status, body) = post(&admin, "/v1/indexes/kb/rebuild", "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["rebuilt_chunks"], stats().1["keyword_chunks"]);
    let settings = |auth: &str| {
        curl(&[
            "-X",
            "PUT",
            "-H",
            auth,
            "-H",
            "content-type: application/json",
            "-d",
            r#"{"default_retrieval_profile": "exact"}"#,
            &url("/v1/indexes/kb/settings"),
        ])
    };
    assert_eq!(settings(&reader).0, 403);
    assert_eq!(settings(&writer).0, 403);
    assert_eq!(settings(&admin).0, 200);
    // Writing documents is not administering the index: a write-only token cannot delete
    // it, and the index still answers after the attempt.
    assert_eq!(post(&writer, "/v1/indexes/kb/rebuild", "").0, 403);
    for auth in [&reader, &writer] {
        let (status, body) = curl(&["-X", "DELETE", "-H", auth, &url("/v1/indexes/kb")]);
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "forbidden", "{body}");
    }
    assert_eq!(stats().0, 200);
    // The keyword branch still answers after the rebuild.
    let (_, body) = post(
        &reader,
        "/v1/indexes/kb/query",
        &json!({"query": "glaciers valleys", "top_k": 1, "semantic_weight": 0.0}).to_string(),
    );
    assert_eq!(body["results"][0]["document_id"], "b", "{body}");
}
