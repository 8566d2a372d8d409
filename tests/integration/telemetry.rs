//! Operability: `GET /metrics` on a running daemon shows what it did — documents and chunks
//! indexed, commit latency per store, the index version, dead letters by reason, queries by
//! contract and transport, errors by code — and `promtool check metrics` accepts it.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::common::{assert_succeeded, succeeded};
use crate::daemon::{curl, kcat_consume, kcat_produce, start_daemon_with, upsert, wait_for};

pub fn scrape(http: &str) -> String {
    let out = Command::new("curl")
        .args(["-s", &format!("{http}/metrics")])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The value of the sample `name{labels}` (labels exactly as rendered), if present.
pub fn sample(text: &str, series: &str) -> Option<f64> {
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

/// A rate or an alert over a counter must see its first event, so every series whose labels
/// are known at start-up exists, at zero, before anything happened.
#[test]
fn every_known_series_is_at_zero_before_its_first_event() {
    let d = start_daemon_with(&[]);
    let text = scrape(&d.http);
    for series in [
        r#"ragstream_query_errors_total{code="storage_unavailable",contract="002",transport="http"}"#,
        r#"ragstream_query_errors_total{code="InputError",contract="003",transport="bus"}"#,
        r#"ragstream_query_duration_seconds_count{contract="004",transport="bus"}"#,
        r#"ragstream_search_duration_seconds_count{method="keyword"}"#,
        r#"ragstream_dead_letters_total{reason="bad_json"}"#,
        r#"ragstream_dead_letters_parked_total{reason="bad_json"}"#,
        r#"ragstream_graph_extraction_failures_total{reason="malformed"}"#,
        r#"ragstream_graph_extraction_failures_total{reason="refused"}"#,
        r#"ragstream_documents_indexed_total{index="default",op="delete"}"#,
        r#"ragstream_checkpoint_resets_total{index="default"}"#,
        r#"ragstream_commit_duration_seconds_count{index="default",store="keyword"}"#,
        r#"ragstream_embedding_cache_lookups_total{result="miss"}"#,
        r#"ragstream_actor_restarts_total{pipeline="ingest"}"#,
        r#"ragstream_index_resident_vector_bytes{index="default"}"#,
    ] {
        assert_eq!(sample(&text, series), Some(0.0), "{series} in:\n{text}");
    }
    // The embedder's own series, whatever its id. It has embedded once: the start-up probe.
    for (family, count) in [
        ("ragstream_embedder_circuit_opened_total{embedder=", " 0"),
        ("ragstream_embed_duration_seconds_count{embedder=", " 1"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(family) && l.ends_with(count)),
            "{family} in:\n{text}"
        );
    }
    // Maintenance may already have run: the series exists, at whatever count.
    assert!(sample(
        &text,
        r#"ragstream_maintenance_runs_total{index="default"}"#
    )
    .is_some());
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
    let stats = curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1;
    assert_eq!(
        sample(&text, r#"ragstream_index_rows{index="kb"}"#),
        stats["keyword_chunks"].as_f64(),
        "{text}"
    );
    assert!(sample(&text, r#"ragstream_index_fragments{index="kb"}"#).unwrap() >= 1.0);
    // Too small for resident vectors: the dashboard still charts 0, not a missing series.
    wait_for("kb's resident vector bytes at 0", || {
        sample(
            &scrape(&d.http),
            r#"ragstream_index_resident_vector_bytes{index="kb"}"#,
        ) == Some(0.0)
    });
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
    assert_succeeded("promtool check metrics", &out);
}

/// A free port on 127.0.0.1 (bound, then released for the server to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every `expr` in a Grafana dashboard, wherever panels nest.
fn dashboard_exprs(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("expr", serde_json::Value::String(e)) => out.push(e.clone()),
                    _ => dashboard_exprs(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| dashboard_exprs(i, out)),
        _ => {}
    }
}

/// The shipped dashboards and rules, proven on a real Prometheus scraping a working daemon:
/// every dashboard expression parses and returns data, and every recording and alerting rule
/// evaluates without error.
#[test]
fn dashboards_and_rules_work_on_a_real_prometheus() {
    // Read at run time: a test binary reused from another clone (a shared target directory
    // keeps it fresh) would otherwise look in that clone, which may be gone.
    let repo = std::path::PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()),
    );
    let d = start_daemon_with(&[]);
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let target = d.http.trim_start_matches("http://");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {}\n\
             scrape_configs:\n  - job_name: ragstream\n    static_configs:\n      - targets: ['{target}']\n",
            repo.join("deploy/prometheus/rules.yml").display()
        ),
    )
    .unwrap();
    /// Stops the server however the test ends.
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _prometheus = Kill(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus (Debian package prometheus, installed by scripts/setup)"),
    );
    let api = format!("http://127.0.0.1:{port}/api/v1");

    // A workload: documents (one poison), queries over HTTP (one bad) and over the bus.
    let docs: Vec<String> = (0..20)
        .map(|i| {
            upsert(
                &format!("doc-{i}"),
                &format!("Document {i} about volcanoes and lava flows."),
            )
        })
        .chain(["{not json".to_string()])
        .collect();
    kcat_produce(&d.bootstrap, "ragstream.documents", &[], &docs);
    wait_for("documents indexed", || {
        curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["documents"] == 20
    });
    let query = json!({"retrieval": {"index": "kb", "query": "lava", "top_k": 3}}).to_string();
    let started = std::time::Instant::now();
    let mut round = 0;
    // Queries for long enough that 1-minute rates have two samples on either side.
    while started.elapsed() < std::time::Duration::from_secs(12) {
        curl(&[
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "-d",
            &query,
            &format!("{}/v1/retrieve", d.http),
        ]);
        curl(&[
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "-d",
            "{}",
            &format!("{}/v1/retrieve", d.http),
        ]);
        kcat_produce(
            &d.bootstrap,
            "ragstream.queries",
            &[
                "-H",
                "reply-to=ragstream.replies",
                "-H",
                &format!("correlation-id=p-{round}"),
            ],
            std::slice::from_ref(&query),
        );
        round += 1;
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    // More documents late, so that ingestion rates are non-zero at the end too.
    let late: Vec<String> = (20..30)
        .map(|i| {
            upsert(
                &format!("doc-{i}"),
                &format!("Late document {i} about glaciers."),
            )
        })
        .collect();
    kcat_produce(&d.bootstrap, "ragstream.documents", &[], &late);
    wait_for("late documents indexed", || {
        curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["documents"] == 30
    });
    std::thread::sleep(std::time::Duration::from_secs(4));

    let mut exprs = Vec::new();
    for file in std::fs::read_dir(repo.join("dashboards")).unwrap() {
        let path = file.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            dashboard_exprs(&v, &mut exprs);
        }
    }
    assert!(
        exprs.len() >= 20,
        "dashboards hold {} expressions",
        exprs.len()
    );
    // Grafana's variables as Grafana would fill them for this one scrape job.
    let exprs: Vec<String> = exprs
        .iter()
        .map(|e| {
            e.replace("$__rate_interval", "1m")
                .replace("$__range", "5m")
                .replace("$job", "ragstream")
                .replace("$instance", ".*")
                .replace("$index", ".*")
        })
        .collect();
    assert!(
        exprs.iter().all(|e| !e.contains('$')),
        "a dashboard variable this test does not fill: {exprs:#?}"
    );
    let mut empty = Vec::new();
    for e in &exprs {
        let (status, body) = curl(&[
            "-s",
            "--data-urlencode",
            &format!("query={e}"),
            &format!("{api}/query"),
        ]);
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("success")),
            "{e}: {body}"
        );
        if body["data"]["result"]
            .as_array()
            .is_none_or(|r| r.is_empty())
        {
            empty.push(e.clone());
        }
    }
    assert!(
        empty.is_empty(),
        "dashboard expressions without data: {empty:#?}"
    );

    // Every rule loaded and evaluated cleanly.
    let all_clean = |rules: &serde_json::Value| {
        let groups = rules["data"]["groups"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        !groups.is_empty()
            && groups.iter().all(|g| {
                g["rules"].as_array().is_some_and(|rs| {
                    !rs.is_empty()
                        && rs.iter().all(|r| {
                            r["health"] == "ok" && r["lastError"].as_str().unwrap_or("").is_empty()
                        })
                })
            })
    };
    let started = std::time::Instant::now();
    loop {
        let rules = curl(&[&format!("{api}/rules")]).1;
        if all_clean(&rules) {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(90),
            "rules not all evaluated cleanly: {rules:#}"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    succeeded(
        Command::new("promtool")
            .args(["check", "rules"])
            .arg(repo.join("deploy/prometheus/rules.yml")),
    );
}
