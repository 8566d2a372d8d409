//! HTTP embedding providers against a real server on 127.0.0.1: request shapes per API,
//! batching, 429 with Retry-After, 5xx, timeouts, an outage, wrong dimensions; and the daemon
//! riding out an outage without losing or duplicating a document.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::daemon::{
    curl, kcat_consume, kcat_count, kcat_produce, start_daemon_with, upsert, wait_for, Daemon,
};
use crate::fake_provider::{expected, FakeProvider, Reply};
use ragstream::embedding::http::{BreakerState, HttpEmbedder, ProviderApi, ProviderConfig};
use ragstream::embedding::{EmbedError, Embedder};

const DIMS: usize = 16;

fn config(p: &FakeProvider, api: ProviderApi) -> ProviderConfig {
    let mut c = ProviderConfig::new(api, &p.url, "test-model", DIMS);
    c.max_batch = 4;
    c.max_in_flight = 2;
    c.timeout_ms = 2_000;
    c.retry_base_ms = 20;
    c.retry_max_ms = 200;
    c.max_retries = 3;
    c
}

/// Runs a blocking embed call off the async workers (the server runs on them).
async fn embed(e: &Arc<HttpEmbedder>, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
    let e = e.clone();
    let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        e.embed(&refs)
    })
    .await
    .unwrap()
}

fn assert_close(got: &[Vec<f32>], want: &[Vec<f32>]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.len(), w.len());
        for (a, b) in g.iter().zip(w) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }
}

const APIS: [ProviderApi; 3] = [ProviderApi::Openai, ProviderApi::Tei, ProviderApi::Ollama];

const TEXTS: [&str; 10] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_api_gets_its_request_shape_in_batches_and_vectors_come_back_in_order() {
    std::env::set_var("FAKE_PROVIDER_API_KEY", "sekret");
    for api in APIS {
        let p = FakeProvider::start(api, DIMS);
        let mut c = config(&p, api);
        c.api_key_env = Some("FAKE_PROVIDER_API_KEY".into());
        let e = Arc::new(HttpEmbedder::new("fake", c).unwrap());
        let got = embed(&e, &TEXTS).await.unwrap();
        assert_close(&got, &expected(DIMS, &TEXTS));

        let seen = p.seen();
        assert_eq!(seen.len(), 3, "{api:?}: 10 texts in batches of 4");
        let mut sizes: Vec<usize> = p.texts().iter().map(Vec::len).collect();
        sizes.sort();
        assert_eq!(sizes, vec![2, 4, 4]);
        let mut all: Vec<String> = p.texts().concat();
        all.sort();
        let mut want: Vec<String> = TEXTS.iter().map(|t| t.to_string()).collect();
        want.sort();
        assert_eq!(all, want, "every text sent exactly once");
        for s in &seen {
            assert_eq!(s.path, api.path());
            assert_eq!(s.authorization.as_deref(), Some("Bearer sekret"));
            match api {
                ProviderApi::Openai => {
                    assert_eq!(s.body["model"], "test-model");
                    assert_eq!(s.body["encoding_format"], "float");
                }
                ProviderApi::Tei => assert_eq!(s.body["truncate"], true),
                ProviderApi::Ollama => assert_eq!(s.body["model"], "test-model"),
            }
        }
        assert_eq!(
            e.id(),
            match api {
                ProviderApi::Tei => "tei:test-model",
                ProviderApi::Openai => "openai:test-model",
                ProviderApi::Ollama => "ollama:test-model",
            }
        );
        assert_eq!(e.report()["requests"], 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_is_retried_after_the_providers_retry_after() {
    for api in APIS {
        let p = FakeProvider::start(api, DIMS);
        p.script([Reply::Status(429, Some("1"))]);
        let mut c = config(&p, api);
        c.max_batch = 16;
        c.retry_max_ms = 5_000;
        let e = Arc::new(HttpEmbedder::new("fake", c).unwrap());
        let got = embed(&e, &["one", "two"]).await.unwrap();
        assert_close(&got, &expected(DIMS, &["one", "two"]));
        let seen = p.seen();
        assert_eq!(seen.len(), 2);
        let waited = seen[1].at - seen[0].at;
        assert!(
            waited >= Duration::from_millis(950),
            "Retry-After: 1 honoured (waited {waited:?}, the backoff alone is at most 20 ms)"
        );
        assert_eq!(e.report()["rate_limited"], 1);
        assert_eq!(e.report()["retries"], 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried_until_the_provider_answers() {
    for api in APIS {
        let p = FakeProvider::start(api, DIMS);
        p.script([
            Reply::Status(500, None),
            Reply::Status(502, None),
            Reply::Status(503, None),
        ]);
        let mut c = config(&p, api);
        c.max_batch = 16;
        let e = Arc::new(HttpEmbedder::new("fake", c).unwrap());
        let got = embed(&e, &["x y"]).await.unwrap();
        assert_close(&got, &expected(DIMS, &["x y"]));
        assert_eq!(p.seen().len(), 4);
        assert_eq!(e.report()["transient_failures"], 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_times_out_is_retried() {
    for api in APIS {
        let p = FakeProvider::start(api, DIMS);
        p.script([Reply::Slow(Duration::from_secs(3))]);
        let mut c = config(&p, api);
        c.max_batch = 16;
        c.timeout_ms = 300;
        let e = Arc::new(HttpEmbedder::new("fake", c).unwrap());
        let started = Instant::now();
        let got = embed(&e, &["slow text"]).await.unwrap();
        assert_close(&got, &expected(DIMS, &["slow text"]));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "did not wait for the slow answer"
        );
        assert_eq!(p.seen().len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_beyond_the_retries_is_a_transient_error_and_opens_the_breaker() {
    for api in APIS {
        let p = FakeProvider::start(api, DIMS);
        p.down_for(Duration::from_secs(60));
        let mut c = config(&p, api);
        c.max_batch = 16;
        c.breaker_failures = 2;
        c.breaker_cooldown_ms = 60_000;
        let e = Arc::new(HttpEmbedder::new("fake", c).unwrap());
        let opened = ragstream::telemetry::metrics()
            .expect("recording is on by default")
            .embedder_circuit_opened_total
            .with_label_values(&[e.id()]);
        let before = opened.get();
        let err = embed(&e, &["a"]).await.unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert!(matches!(e.breaker_state(), BreakerState::Open { .. }));
        assert!(
            opened.get() > before,
            "the opening is counted in the metrics"
        );
        assert_eq!(
            p.seen().len(),
            2,
            "the open breaker stopped further requests"
        );
        // While open, calls fail fast without touching the provider.
        let err = embed(&e, &["b"]).await.unwrap_err();
        assert!(err.to_string().contains("circuit breaker open"), "{err}");
        assert_eq!(p.seen().len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_dimensions_bad_requests_and_garbage_are_permanent_and_not_retried() {
    for api in APIS {
        for (reply, needle) in [
            (Reply::Dimensions(DIMS + 1), "17-dimensional"),
            (Reply::Status(400, None), "HTTP 400"),
            (Reply::Status(401, None), "HTTP 401"),
            (Reply::NotJson, "not JSON"),
        ] {
            let p = FakeProvider::start(api, DIMS);
            p.script([reply]);
            let mut c = config(&p, api);
            c.max_batch = 16;
            let e = Arc::new(HttpEmbedder::new("fake", c).unwrap());
            let err = embed(&e, &["a", "b"]).await.unwrap_err();
            assert!(!err.is_transient(), "{err}");
            assert!(err.to_string().contains(needle), "{err}");
            assert_eq!(p.seen().len(), 1, "{needle}: not retried");
            assert_eq!(e.report()["permanent_failures"], 1);
        }
    }
}

#[test]
fn a_missing_credential_variable_is_a_start_up_error() {
    let mut c = ProviderConfig::new(ProviderApi::Openai, "http://127.0.0.1:9", "m", 8);
    c.api_key_env = Some("FAKE_PROVIDER_UNSET_KEY".into());
    let err = HttpEmbedder::new("remote", c).err().unwrap();
    assert!(err.to_string().contains("FAKE_PROVIDER_UNSET_KEY"), "{err}");
}

/// A config file for a daemon whose embedder is the fake provider.
fn daemon_config(dir: &std::path::Path, p: &FakeProvider) -> std::path::PathBuf {
    let path = dir.join("ragstream.toml");
    std::fs::write(
        &path,
        format!(
            "[model]\nembedder = \"fake\"\n\n[embedders.fake]\nprovider = \"openai\"\nurl = \"{}\"\n\
             model = \"m\"\ndimensions = {DIMS}\nmax_retries = 1\nretry_base_ms = 50\n\
             retry_max_ms = 200\nbreaker_failures = 3\nbreaker_cooldown_ms = 500\n",
            p.url
        ),
    )
    .unwrap();
    path
}

/// The same configuration for an engine in this process, its data under `dir`.
fn engine_config(dir: &std::path::Path, p: &FakeProvider) -> ragstream::config::Config {
    let mut c = ragstream::config::Config::load_from(Some(&daemon_config(dir, p)), vec![]).unwrap();
    c.storage.data_dir = dir.join("data");
    c
}

/// An engine on `c` with the test corpus written to its index `kb`.
async fn engine_with_corpus(
    c: ragstream::config::Config,
    embedder: Arc<dyn Embedder>,
) -> (ragstream::Engine, ragstream::model::IndexName) {
    let engine = ragstream::Engine::new(c, embedder);
    let kb = crate::common::name("kb");
    engine
        .write(&kb, crate::common::upserts(crate::common::corpus()))
        .await
        .unwrap();
    (engine, kb)
}

fn stats(d: &Daemon) -> serde_json::Value {
    curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_waits_out_a_provider_outage_and_indexes_every_document_once() {
    let p = FakeProvider::start(ProviderApi::Openai, DIMS);
    p.down_for(Duration::from_secs(3600));
    let dir = tempfile::tempdir().unwrap();
    let config = daemon_config(dir.path(), &p);
    let provider = p.clone();
    tokio::task::spawn_blocking(move || {
        let d = start_daemon_with(&[
            ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
            ("RAGSTREAM_MODEL_EMBEDDER", "fake"),
        ]);
        let docs: Vec<String> = (0..40)
            .map(|i| {
                upsert(
                    &format!("doc-{i}"),
                    &format!("document number {i} about topic {}", i % 7),
                )
            })
            .collect();
        kcat_produce(&d.bootstrap, "ragstream.documents", &[], &docs);
        // The breaker opens after 3 failures; its trials and the pipeline's waits go on.
        wait_for("repeated attempts during the outage", || {
            provider.seen().len() >= 5
        });
        let during = stats(&d);
        assert_eq!(
            during["documents"].as_u64().unwrap_or(0),
            0,
            "nothing indexed yet: {during}"
        );
        provider.up();
        wait_for("all 40 documents after the outage", || {
            stats(&d)["documents"] == 40
        });
        let s = stats(&d);
        assert_eq!(s["chunks"], 40, "one chunk per document, none twice: {s}");
        assert_eq!(s["keyword_chunks"], 40, "{s}");
        assert_eq!(
            kcat_count(&d.bootstrap, "ragstream.dlq"),
            0,
            "nothing dead-lettered for an outage"
        );
        let health = curl(&[&format!("{}/healthz", d.http)]).1;
        assert_eq!(
            health["pipeline"]["restarts"], 0,
            "waited, not crashed: {health}"
        );
        assert!(
            health["embedding"]["embedder"]["transient_failures"]
                .as_u64()
                .unwrap()
                >= 2,
            "{health}"
        );
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_a_provider_rejects_go_to_the_dlq_and_the_rest_are_indexed() {
    let p = FakeProvider::start(ProviderApi::Openai, DIMS);
    p.reject_texts_containing("POISON");
    let dir = tempfile::tempdir().unwrap();
    let config = daemon_config(dir.path(), &p);
    tokio::task::spawn_blocking(move || {
        let d = start_daemon_with(&[
            ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
            ("RAGSTREAM_MODEL_EMBEDDER", "fake"),
        ]);
        let docs = vec![
            upsert("good-1", "glaciers carve valleys"),
            upsert("bad", "this text holds a POISON marker"),
            upsert("good-2", "deserts receive little rain"),
        ];
        kcat_produce(&d.bootstrap, "ragstream.documents", &[], &docs);
        wait_for("the two good documents", || stats(&d)["documents"] == 2);
        let dead = kcat_consume(&d.bootstrap, "ragstream.dlq", 1).join("\n");
        assert!(dead.contains("error.code=embedding_rejected"), "{dead}");
        assert!(dead.contains("HTTP 400"), "{dead}");
        assert!(
            dead.contains("\"id\":\"bad\""),
            "the original event: {dead}"
        );
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_fails_fast_during_an_outage_instead_of_waiting_out_ingestion_retries() {
    let p = FakeProvider::start(ProviderApi::Openai, DIMS);
    let dir = tempfile::tempdir().unwrap();
    let mut c = engine_config(dir.path(), &p);
    c.embedders.get_mut("fake").unwrap().max_retries = 6;
    c.embedders.get_mut("fake").unwrap().breaker_failures = 100;
    let embedder = ragstream::embedders::configured(&c).unwrap();
    let (engine, kb) = engine_with_corpus(c, embedder).await;
    let before = p.seen().len();
    p.down_for(Duration::from_secs(60));
    let request = ragstream::retrieval::SearchRequest::new(
        "moon",
        ragstream::retrieval::SearchMethod::Hybrid,
        3,
    );
    let err = engine.search(&kb, &request).await.unwrap_err();
    assert!(
        matches!(err, ragstream::engine::EngineError::Embed(ref e) if e.is_transient()),
        "{err}"
    );
    assert_eq!(
        p.seen().len() - before,
        2,
        "one try and one retry, not ingestion's seven"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_and_queries_carry_their_own_prefixes_and_the_index_records_them() {
    let p = FakeProvider::start(ProviderApi::Openai, DIMS);
    let dir = tempfile::tempdir().unwrap();
    let mut c = engine_config(dir.path(), &p);
    let plain = c.clone();
    let fake = c.embedders.get_mut("fake").unwrap();
    fake.query_prefix = "query: ".into();
    fake.document_prefix = "passage: ".into();
    let embedder = ragstream::embedders::configured(&c).unwrap();
    assert_eq!(
        embedder.id(),
        r#"openai:m (query prefix "query: ", document prefix "passage: ")"#
    );
    let (engine, kb) = engine_with_corpus(c, embedder).await;
    let chunks = p.texts().concat();
    assert!(!chunks.is_empty());
    for text in &chunks {
        assert!(text.starts_with("passage: "), "{text:?}");
        assert!(!text.starts_with("passage: passage: "), "{text:?}");
    }
    let request = ragstream::retrieval::SearchRequest::new(
        "moon",
        ragstream::retrieval::SearchMethod::Semantic,
        3,
    );
    let found = engine.search(&kb, &request).await.unwrap();
    assert!(!found.hits.is_empty());
    assert_eq!(
        p.texts().concat()[chunks.len()..],
        ["query: moon".to_string()],
        "the query embeds once, with the query prefix"
    );
    drop(engine);

    // The same provider without the prefixes makes other vectors: the index says so.
    let embedder = ragstream::embedders::configured(&plain).unwrap();
    assert_eq!(embedder.id(), "openai:m");
    let engine = ragstream::Engine::new(plain, embedder);
    let err = engine.search(&kb, &request).await.unwrap_err();
    assert!(
        err.to_string().contains("document prefix"),
        "names the recorded embedder: {err}"
    );
}

/// `ragstream serve` with `config`, waited for until it exits: it must not start.
fn serve_until_it_exits(config: &std::path::Path) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut child = crate::daemon::serve_command(
        dir.path(),
        &[
            ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
            ("RAGSTREAM_MODEL_EMBEDDER", "fake"),
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!(
                "the daemon started: {:?}",
                child.wait_with_output().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_whose_provider_is_misconfigured_stops_at_start_up_with_the_providers_answer() {
    for (reply, needle) in [
        (Reply::Dimensions(DIMS + 1), "17-dimensional"),
        (Reply::Status(401, None), "HTTP 401"),
    ] {
        let p = FakeProvider::start(ProviderApi::Openai, DIMS);
        p.script([reply]);
        let dir = tempfile::tempdir().unwrap();
        let config = daemon_config(dir.path(), &p);
        let out = tokio::task::spawn_blocking(move || serve_until_it_exits(&config))
            .await
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
        assert!(err.contains("openai:m"), "names the embedder: {err}");
        assert_eq!(
            p.texts(),
            vec![vec!["ragstream start-up probe".to_string()]],
            "one probe, not retried"
        );
    }
}
