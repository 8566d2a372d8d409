//! Operability: `GET /metrics` on a running daemon shows what it did — documents and chunks
//! indexed, commit latency per store, the index version, dead letters by reason, queries by
//! contract and transport, errors by code — and `promtool check metrics` accepts it.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::daemon::{curl, kcat_consume, kcat_produce, start_daemon_with, upsert, wait_for};

fn scrape(http: &str) -> String {
    let out = Command::new("curl")
        .args(["-s", &format!("{http}/metrics")])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The value of the sample `name{labels}` (labels exactly as rendered), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

fn total_of(text: &str, prefix: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn metrics_show_ingestion_queries_errors_and_dead_letters() {
    let d = start_daemon_with(&[]);
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[
            upsert("volcano", "Magma erupts from volcanoes as lava."),
            upsert("glacier", "Glaciers carve valleys out of rock."),
            "{not json".to_string(),
        ],
    );
    wait_for("two documents indexed", || {
        sample(
            &scrape(&d.http),
            r#"ragstream_documents_indexed_total{index="kb",op="upsert"}"#,
        ) == Some(2.0)
    });
    let text = scrape(&d.http);
    assert!(
        sample(&text, r#"ragstream_chunks_indexed_total{index="kb"}"#).unwrap() >= 2.0,
        "{text}"
    );
    let version = curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["index_version"]
        .as_f64()
        .unwrap();
    assert_eq!(
        sample(&text, r#"ragstream_index_version{index="kb"}"#),
        Some(version)
    );
    for store in ["lance", "keyword"] {
        let count =
            format!(r#"ragstream_commit_duration_seconds_count{{index="kb",store="{store}"}}"#);
        assert!(sample(&text, &count).unwrap() >= 1.0, "{store}: {text}");
    }
    assert_eq!(
        sample(&text, r#"ragstream_dead_letters_total{reason="bad_json"}"#),
        Some(1.0),
        "{text}"
    );
    let total = |prefix: &str| total_of(&text, prefix);
    assert_eq!(total("ragstream_messages_consumed_total{"), 3.0, "{text}");
    assert!(total("ragstream_batch_events_count{") >= 1.0);
    assert_eq!(
        sample(&text, r#"ragstream_freshness_seconds_count{index="kb"}"#),
        Some(2.0),
        "one observation per indexed event"
    );
    assert!(
        sample(
            &text,
            r#"ragstream_embed_duration_seconds_count{embedder="hashing"}"#
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert!(text.contains(r#"ragstream_actor_mailbox_depth{actor="chunker"}"#));
    wait_for("no consumer lag", || {
        total_of(&scrape(&d.http), "ragstream_consumer_lag_messages{") == 0.0
            && scrape(&d.http).contains("ragstream_consumer_lag_messages{")
    });

    // Queries: two over HTTP (one bad), one over the bus.
    let query =
        json!({"retrieval": {"index": "kb", "query": "magma lava", "top_k": 1}}).to_string();
    let post = |body: &str| {
        curl(&[
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "-d",
            body,
            &format!("{}/v1/retrieve", d.http),
        ])
    };
    assert_eq!(post(&query).0, 200);
    assert_eq!(post(r#"{"retrieval": {"index": "kb"}}"#).0, 400);
    kcat_produce(
        &d.bootstrap,
        "ragstream.queries",
        &[
            "-H",
            "reply-to=ragstream.replies",
            "-H",
            "correlation-id=m-1",
        ],
        &[query],
    );
    kcat_consume(&d.bootstrap, "ragstream.replies", 1);
    let text = scrape(&d.http);
    assert_eq!(
        sample(
            &text,
            r#"ragstream_query_duration_seconds_count{contract="000",transport="http"}"#
        ),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            r#"ragstream_query_duration_seconds_count{contract="000",transport="bus"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"ragstream_query_errors_total{code="invalid_request",contract="000",transport="http"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert!(
        sample(
            &text,
            r#"ragstream_search_duration_seconds_count{method="semantic"}"#
        )
        .unwrap()
            >= 2.0
    );

    // The exposition passes Prometheus' own linter.
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus, installed by scripts/setup)");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
