//! The promises an adversarial operator tried to break, each kept by a regression test
//! against a live daemon: acknowledged writes survive a restart on the embedded broker,
//! one oversize dead letter does not stop ingestion, bus writes are checked like HTTP
//! writes, replies only go to reply topics, one process owns a data directory, and the
//! health probes tell the truth.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::daemon::{
    curl, kcat_consume, kcat_count, kcat_produce, post_json, serve_command, start_daemon_at,
    start_daemon_with, upsert, wait_for,
};

fn stats(http: &str, index: &str, auth: &[&str]) -> Value {
    let mut args: Vec<&str> = auth.to_vec();
    let url = format!("{http}/v1/indexes/{index}/stats");
    args.push(&url);
    curl(&args).1
}

fn post_documents(http: &str, index: &str, ids: &[&str], auth: &[&str]) -> (u16, Value) {
    let docs: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "text": format!("Document {id} about restarts.")}))
        .collect();
    let body = json!({"documents": docs}).to_string();
    let url = format!("{http}/v1/indexes/{index}/documents");
    let mut args = vec![
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "-d",
        &body,
    ];
    args.extend_from_slice(auth);
    args.push(&url);
    curl(&args)
}

/// Dead letters on the topic now, as `headers\tpayload` lines.
fn dead_letters(bootstrap: &str) -> Vec<String> {
    let n = kcat_count(bootstrap, "ragstream.dlq");
    if n == 0 {
        return Vec::new();
    }
    kcat_consume(bootstrap, "ragstream.dlq", n)
}

#[test]
fn acknowledged_writes_after_a_restart_on_the_embedded_broker_are_indexed() {
    let dir = tempfile::tempdir().unwrap();
    // Ten documents per run, so that both partitions get some in each run: the old bug
    // skipped a new run's events below the old run's offsets, partition by partition.
    let first: Vec<String> = (0..10).map(|i| format!("a{i}")).collect();
    let second: Vec<String> = (0..10).map(|i| format!("b{i}")).collect();
    let d = start_daemon_at(dir.path(), &[]);
    let (status, body) = post_documents(&d.http, "kb", &ids(&first), &[]);
    assert_eq!(status, 202, "{body}");
    wait_for("the first ten documents", || {
        stats(&d.http, "kb", &[])["documents"] == 10
    });
    assert!(d.terminate().success());

    // A new process on the same data directory: the embedded broker keeps its log, and
    // the stored checkpoints go on from where the first run stopped.
    let d = start_daemon_at(dir.path(), &[]);
    let (status, body) = post_documents(&d.http, "kb", &ids(&second), &[]);
    assert_eq!(status, 202, "{body}");
    wait_for("all twenty documents", || {
        stats(&d.http, "kb", &[])["documents"] == 20
    });
    let (_, health) = curl(&[&format!("{}/healthz", d.http)]);
    assert_eq!(health["status"], "ok", "{health}");
}

#[test]
fn a_second_daemon_on_the_same_data_directory_refuses_to_start_and_names_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let first = start_daemon_at(dir.path(), &[]);
    let second = serve_command(dir.path(), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("in use"), "{err}");
    assert!(err.contains(&format!("pid {}", first.pid())), "{err}");
    // The first is untouched.
    let (status, _) = post_documents(&first.http, "kb", &["x"], &[]);
    assert_eq!(status, 202);
    wait_for("the first daemon still ingests", || {
        stats(&first.http, "kb", &[])["documents"] == 1
    });
}

#[test]
fn an_unusable_data_directory_stops_start_up_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let out = serve_command(&file.join("data"), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not usable"), "{err}");
    assert!(err.contains("cannot create"), "{err}");
}

#[test]
fn a_dead_letter_too_large_for_the_topic_is_shrunk_and_ingestion_goes_on() {
    // The producer's own limit (1 MB) is below what the pipeline accepts (3 MB): the dead
    // letter of a 1.15 MB message cannot be produced whole.
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        "[kafka]\nmax_message_bytes = 3000000\n\n[kafka.client]\n\"message.max.bytes\" = \"1000000\"\n",
    )
    .unwrap();
    let d = start_daemon_with(&[
        ("RAGSTREAM_CONFIG", file.path().to_str().unwrap()),
        ("RAGSTREAM_KAFKA_MAX_MESSAGE_BYTES", "3000000"),
    ]);
    let huge = json!({"schema_version": 1, "op": "upsert", "index": "kb",
        "document": {"id": "huge", "text": "word ".repeat(230_000)}})
    .to_string();
    assert!(huge.len() > 1_100_000);
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &["-X", "message.max.bytes=2000000"],
        &[huge],
    );
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[upsert("small", "A small document after the huge one.")],
    );
    wait_for("the small document", || {
        stats(&d.http, "kb", &[])["documents"] == 1
    });
    // Unkeyed, the two messages may sit in different partitions: wait for the letter too.
    wait_for("the dead letter", || dead_letters(&d.bootstrap).len() == 1);
    let letters = dead_letters(&d.bootstrap);
    assert_eq!(letters.len(), 1, "{letters:?}");
    let (headers, payload) = letters[0].split_once('\t').unwrap();
    assert!(headers.contains("error.code=schema_violation"), "{headers}");
    assert!(headers.contains("payload.omitted=true"), "{headers}");
    assert!(headers.contains("payload.sha256="), "{headers}");
    assert!(payload.is_empty(), "the payload stays in the source topic");
    let (status, health) = curl(&[&format!("{}/healthz", d.http)]);
    assert_eq!((status, &health["status"]), (200, &json!("ok")), "{health}");
}

const TENANTS: &str = r#"
[[auth.tokens]]
name = "a-writer"
token = "secret-a"
tenant = "a"
indexes = ["a_*"]
scopes = ["read", "write"]

[[auth.tokens]]
name = "b-writer"
token = "secret-b"
tenant = "b"
indexes = ["b_*"]
scopes = ["read", "write"]

[[auth.tokens]]
name = "scraper"
token = "secret-metrics"
tenant = "ops"
indexes = ["ops"]
scopes = ["metrics"]
"#;

#[test]
fn bus_writes_are_checked_against_the_tokens_and_their_key() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), TENANTS).unwrap();
    let d = start_daemon_with(&[("RAGSTREAM_CONFIG", file.path().to_str().unwrap())]);
    let event = |index: &str, id: &str| {
        json!({"schema_version": 1, "op": "upsert", "index": index,
            "document": {"id": id, "text": format!("Text of {id}.")}})
        .to_string()
    };
    let produce = |args: &[&str], line: String| {
        kcat_produce(&d.bootstrap, "ragstream.documents", args, &[line])
    };
    // No token; another tenant's token; a token of a made-up secret.
    produce(&[], event("b_kb", "no-token"));
    produce(
        &["-H", "authorization=Bearer secret-a"],
        event("b_kb", "wrong-tenant"),
    );
    produce(
        &["-H", "authorization=Bearer guessed"],
        event("b_kb", "guessed"),
    );
    // The key names another index than the body.
    produce(
        &["-H", "authorization=Bearer secret-b", "-K", "\t"],
        format!("other/p34\t{}", event("b_kb", "p34")),
    );
    // Allowed: tenant b's token, its own index, a matching key (and one without a key).
    produce(
        &["-H", "authorization=Bearer secret-b", "-K", "\t"],
        format!("b_kb/ok1\t{}", event("b_kb", "ok1")),
    );
    produce(
        &["-H", "authorization=Bearer secret-b"],
        event("b_kb", "ok2"),
    );
    let b = ["-H", "Authorization: Bearer secret-b"];
    wait_for("tenant b's two documents", || {
        stats(&d.http, "b_kb", &b)["documents"] == 2
    });
    wait_for("four dead letters", || {
        dead_letters(&d.bootstrap).len() == 4
    });
    // Unkeyed messages land on any partition: the letters' order is not the produce order.
    let mut codes: Vec<String> = dead_letters(&d.bootstrap)
        .iter()
        .map(|l| {
            l.split(',')
                .find_map(|h| h.strip_prefix("error.code="))
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    codes.sort();
    assert_eq!(
        codes,
        [
            "forbidden",
            "key_mismatch",
            "unauthenticated",
            "unauthenticated"
        ],
        "{codes:?}"
    );
    // HTTP ingestion carries the caller's token into the pipeline and is applied.
    let a = ["-H", "Authorization: Bearer secret-a"];
    let (status, body) = post_documents(&d.http, "a_kb", &["via-http"], &a);
    assert_eq!(status, 202, "{body}");
    wait_for("the HTTP document", || {
        stats(&d.http, "a_kb", &a)["documents"] == 1
    });

    // Metrics name every tenant's indexes: a token with the metrics scope is needed.
    let metrics = format!("{}/metrics", d.http);
    assert_eq!(curl(&[&metrics]).0, 401);
    let out = std::process::Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
        .args(["-H", "Authorization: Bearer secret-a", &metrics])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "403");
    let out = std::process::Command::new("curl")
        .args(["-s", "-H", "Authorization: Bearer secret-metrics", &metrics])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ragstream_dead_letters_total"), "{text}");
}

#[test]
fn bus_replies_only_go_to_reply_topics() {
    let d = start_daemon_with(&[]);
    let before = kcat_count(&d.bootstrap, "ragstream.documents");
    let query = json!({"retrieval": {"index": "kb", "query": "x"}}).to_string();
    for topic in ["ragstream.documents", "ragstream.dlq", "made-up-topic"] {
        kcat_produce(
            &d.bootstrap,
            "ragstream.queries",
            &[
                "-H",
                &format!("reply-to={topic}"),
                "-H",
                &format!("correlation-id={topic}"),
            ],
            std::slice::from_ref(&query),
        );
    }
    // Allowed: a topic the default pattern ragstream.replies* matches.
    kcat_produce(
        &d.bootstrap,
        "ragstream.queries",
        &[
            "-H",
            "reply-to=ragstream.replies",
            "-H",
            "correlation-id=fine",
        ],
        &[query],
    );
    let replies = kcat_consume(&d.bootstrap, "ragstream.replies", 1);
    assert!(replies[0].contains("correlation-id=fine"), "{replies:?}");
    wait_for("three dead letters", || {
        dead_letters(&d.bootstrap).len() == 3
    });
    for letter in dead_letters(&d.bootstrap) {
        assert!(
            letter.contains("error.code=reply_topic_not_allowed"),
            "{letter}"
        );
    }
    assert_eq!(kcat_count(&d.bootstrap, "ragstream.documents"), before);
}

#[test]
fn reply_topics_are_legal_names_and_only_known_callers_have_them_created() {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), TENANTS).unwrap();
    let d = start_daemon_with(&[
        ("RAGSTREAM_CONFIG", file.path().to_str().unwrap()),
        ("RAGSTREAM_KAFKA_REPLY_TOPICS_CREATE_MAX", "1"),
    ]);
    let query = json!({"retrieval": {"index": "a_kb", "query": "x"}}).to_string();
    let ask = |reply_to: &str, token: Option<&str>| {
        let reply = format!("reply-to={reply_to}");
        let correlation = format!("correlation-id={}", reply_to.len());
        let bearer = token.map(|t| format!("authorization=Bearer {t}"));
        let mut args = vec!["-H", reply.as_str(), "-H", correlation.as_str()];
        if let Some(b) = &bearer {
            args.extend(["-H", b.as_str()]);
        }
        kcat_produce(
            &d.bootstrap,
            "ragstream.queries",
            &args,
            std::slice::from_ref(&query),
        );
    };
    // Names the pattern matches but no broker takes; a stranger's new topic; then a known
    // caller's first new topic (created, answered) and second (over the limit of one).
    let too_long = format!("ragstream.replies.{}", "x".repeat(240));
    ask("ragstream.replies/x", Some("secret-a"));
    ask(&too_long, Some("secret-a"));
    ask("ragstream.replies.stranger", None);
    ask("ragstream.replies.first", Some("secret-a"));
    wait_for("the known caller's reply", || {
        kcat_count(&d.bootstrap, "ragstream.replies.first") == 1
    });
    ask("ragstream.replies.second", Some("secret-a"));
    wait_for("four dead letters", || {
        dead_letters(&d.bootstrap).len() == 4
    });
    for letter in dead_letters(&d.bootstrap) {
        assert!(
            letter.contains("error.code=reply_topic_not_allowed"),
            "{letter}"
        );
    }
    // Listed sorted by name.
    let made: Vec<String> = crate::topics::topics(&d.bootstrap)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|t| t.starts_with("ragstream.replies"))
        .collect();
    assert_eq!(
        made,
        ["ragstream.replies", "ragstream.replies.first"],
        "{made:?}"
    );
}

#[test]
fn a_stage_holding_a_batch_too_long_turns_healthz_unhealthy_until_it_moves() {
    let d = start_daemon_with(&[
        ("RAGSTREAM_MODEL_SIMULATED_LATENCY_MS", "5000"),
        ("RAGSTREAM_KAFKA_STALL_AFTER_MS", "1000"),
    ]);
    let healthz = format!("{}/healthz", d.http);
    assert_eq!(curl(&[&healthz]).0, 200);
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[upsert("slow", "Embedded slowly.")],
    );
    let started = Instant::now();
    let problem = loop {
        let (status, body) = curl(&[&healthz]);
        if status == 503 {
            break body;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never unhealthy: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(problem["status"], "unhealthy");
    let reason = problem["problems"][0]["reason"].as_str().unwrap();
    assert_eq!(problem["problems"][0]["part"], "pipeline.stalled");
    assert!(reason.contains("embedder"), "{reason}");
    wait_for("the slow document", || {
        stats(&d.http, "kb", &[])["documents"] == 1
    });
    wait_for("healthy again", || curl(&[&healthz]).0 == 200);
    // Readiness is about serving, and serving was fine throughout.
    assert_eq!(curl(&[&format!("{}/readyz", d.http)]).0, 200);
}

#[test]
fn deletes_follow_the_document_id_rule_on_http_and_the_bus() {
    let d = start_daemon_with(&[]);
    let long = "x".repeat(600);
    let documents = format!("{}/v1/indexes/kb/documents", d.http);
    let (status, v) = post_json(&documents, &json!({"deletes": [long]}));
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["field"], "deletes[0]");
    // A list that is not a list is refused, even beside a valid one (the route produces
    // only once everything is read, so a 400 means nothing was produced).
    for (body, field) in [
        (json!({"documents": "x", "deletes": ["a"]}), "documents"),
        (json!({"documents": {"id": "a", "text": "t"}}), "documents"),
        (
            json!({"documents": [{"id": "b", "text": "t"}], "deletes": "a"}),
            "deletes",
        ),
    ] {
        let (status, v) = post_json(&documents, &body);
        assert_eq!(status, 400, "{body}: {v}");
        assert_eq!(v["error"]["field"], field, "{body}: {v}");
        assert_eq!(v["error"]["code"], "invalid_request", "{v}");
    }
    let (status, v) = curl(&[
        "-X",
        "DELETE",
        &format!("{}/v1/indexes/kb/documents/{long}", d.http),
    ]);
    assert_eq!((status, &v["error"]["field"]), (400, &json!("id")), "{v}");
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[
            json!({"schema_version": 1, "op": "delete", "index": "kb", "document_id": "a\u{0}b"})
                .to_string(),
        ],
    );
    wait_for("the dead letter", || dead_letters(&d.bootstrap).len() == 1);
    assert!(dead_letters(&d.bootstrap)[0].contains("error.code=schema_violation"));
}

/// Every contract bounds its query by `limits.max_query_bytes`, in its own error shape.
#[tokio::test]
async fn every_contract_refuses_a_query_over_the_byte_limit() {
    use ragstream::contracts::Contract;
    use ragstream::retrieval::retrievers::RetrieverConfig;
    let dir = tempfile::tempdir().unwrap();
    let mut c = crate::common::config(dir.path());
    c.limits.max_query_bytes = 100;
    c.contracts.default_index = "kb".into();
    c.retrievers
        .insert("kb_leaf".into(), RetrieverConfig::leaf("kb", 3));
    let e = crate::common::engine_with(c);
    e.write(
        &crate::common::name("kb"),
        crate::common::upserts(crate::common::corpus()),
    )
    .await
    .unwrap();
    let long = "moon ".repeat(21); // 105 bytes
    let ask = |contract, body: Value, retriever: Option<&str>| {
        let body = body.to_string();
        let retriever: Option<String> = retriever.map(str::to_string);
        let e = &e;
        async move {
            ragstream::contracts::answer(
                e,
                &ragstream::auth::Caller::unrestricted(),
                contract,
                ragstream::contracts::Target {
                    index: Some(crate::common::name("kb")),
                    retriever,
                },
                body.as_bytes(),
            )
            .await
        }
    };
    let cases = [
        (
            Contract::C000,
            json!({"retrieval": {"index": "kb", "query": long}}),
            None,
        ),
        (Contract::C001, json!({"query": long}), None),
        (Contract::C002, json!({"query": long}), None),
        (Contract::C003, json!({"query": long, "hybrid": {}}), None),
        (Contract::C004, json!({"query": long}), Some("kb_leaf")),
    ];
    for (contract, body, retriever) in cases {
        let reply = ask(contract, body, retriever).await;
        assert_eq!(reply.status, 400, "{contract:?}: {}", reply.body);
        let message = reply.body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("100 bytes"),
            "{contract:?}: {}",
            reply.body
        );
        // The same query at the limit is answered.
        let short = "moon ".repeat(20);
        let ok = match contract {
            Contract::C000 => json!({"retrieval": {"index": "kb", "query": short}}),
            Contract::C003 => json!({"query": short, "hybrid": {}}),
            _ => json!({"query": short}),
        };
        let reply = ask(contract, ok, retriever).await;
        assert_eq!(reply.status, 200, "{contract:?}: {}", reply.body);
    }
}

/// A query that outlives `limits.query_timeout_ms` gets a structured timeout error (its
/// work abandoned), on every contract.
#[tokio::test]
async fn a_query_over_its_deadline_gets_a_timeout_error() {
    use ragstream::contracts::Contract;
    use ragstream::embedding::{Embedder, HashingEmbedder, Throttled};
    let dir = tempfile::tempdir().unwrap();
    let mut c = crate::common::config(dir.path());
    c.limits.query_timeout_ms = 100;
    c.contracts.default_index = "kb".into();
    // Every query embedding takes 3 s.
    let slow = Throttled::new(HashingEmbedder::new(384), Duration::from_secs(3));
    let e = ragstream::Engine::new(c, std::sync::Arc::new(slow) as std::sync::Arc<dyn Embedder>);
    e.write(
        &crate::common::name("kb"),
        crate::common::upserts(crate::common::corpus()),
    )
    .await
    .unwrap_or_else(|_| panic!("writes embed too: allowed, only slow"));
    for (contract, body) in [
        (
            Contract::C000,
            json!({"retrieval": {"index": "kb", "query": "moon", "search_method": "semantic"}}),
        ),
        (Contract::C002, json!({"query": "moon"})),
        (Contract::C003, json!({"query": "moon", "hybrid": {}})),
    ] {
        let started = Instant::now();
        let reply = crate::common::answer(
            &e,
            contract,
            Some(crate::common::name("kb")),
            body.to_string().as_bytes(),
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(2), "{contract:?}");
        assert_eq!(reply.status, 503, "{contract:?}: {}", reply.body);
        assert_eq!(
            reply.body["error"]["code"], "query_timeout",
            "{contract:?}: {}",
            reply.body
        );
    }
}

fn ids(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Found by `bench fuzz`: a `path_prefix` near the old 1,024-byte limit compiled to a
/// keyword-store automaton over tantivy's size limit and answered 500. The longest prefix
/// accepted now is searched; a longer one is a 400 naming the field.
#[tokio::test]
async fn the_longest_path_prefix_accepted_is_searched_and_a_longer_one_refused() {
    use ragstream::contracts::Contract;
    let dir = tempfile::tempdir().unwrap();
    let e = crate::common::hashing_engine(dir.path());
    e.write(
        &crate::common::name("kb"),
        crate::common::upserts(crate::common::corpus()),
    )
    .await
    .unwrap();
    let ask = |prefix: String| {
        let body =
            json!({"query": "moon", "semantic_weight": 0.0, "filters": {"path_prefix": prefix}})
                .to_string();
        let e = &e;
        async move {
            crate::common::answer(
                e,
                Contract::C002,
                Some(crate::common::name("kb")),
                body.as_bytes(),
            )
            .await
        }
    };
    for prefix in ["x".repeat(512), "é".repeat(256)] {
        let reply = ask(prefix).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let reply = ask("x".repeat(513)).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.body["error"]["field"], "filters.path_prefix");
}

/// A bus request read after its `deadline` header is answered `deadline_exceeded` without
/// being searched; a deadline still ahead changes nothing; a deadline that is not a time is
/// a structured error naming the header.
#[tokio::test]
async fn a_bus_request_past_its_deadline_is_answered_without_a_search() {
    use ragstream::pipeline::query_handler::answer;
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::common::hashing_engine(dir.path());
    let body = json!({"query": "moon", "top_k": 3}).to_string();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let with = |deadline: &str| {
        let mut h = crate::common::bus_headers(Some("002"), Some("nowhere"));
        h.deadline = Some(deadline.to_string());
        h
    };
    let past = answer(
        &engine,
        &with(&(now_ms - 5_000).to_string()),
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(past.status, 504, "{}", past.body);
    assert_eq!(past.body["error"]["code"], "deadline_exceeded");
    let past_rfc = answer(
        &engine,
        &with("2020-01-01T00:00:00Z"),
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(past_rfc.body["error"]["code"], "deadline_exceeded");
    // Ahead: the request is answered as without a deadline (this index does not exist).
    let ahead = answer(
        &engine,
        &with(&(now_ms + 60_000).to_string()),
        Some(body.as_bytes()),
    )
    .await;
    assert_eq!(
        ahead.body["error"]["code"], "index_not_found",
        "{}",
        ahead.body
    );
    let bad = answer(&engine, &with("soon"), Some(body.as_bytes())).await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.body["error"]["field"], "headers.deadline");
}
