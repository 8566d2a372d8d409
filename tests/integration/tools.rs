//! Every benchmark and script the rest of the suite does not run, on a tiny input: a tool
//! nobody runs rots (compare-lancedb passed a flag its peer no longer took for weeks).
//! Each test checks that the tool finishes and that its report says what it measured.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::cli::ragstream_bench as bench;
use crate::common::succeeded;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A BEIR corpus of `documents` short documents on four topics, and two queries.
fn tiny_beir(dir: &Path, documents: usize) -> (PathBuf, PathBuf) {
    let topics = [
        "Glaciers retreat in warm summers",
        "Volcanic ash cools the climate",
        "Coral reefs bleach in hot water",
        "Rivers carry sediment to deltas",
    ];
    let corpus = dir.join("corpus.jsonl");
    let lines: Vec<String> = (0..documents)
        .map(|i| {
            serde_json::json!({
                "_id": format!("d{i}"),
                "title": topics[i % 4],
                "text": format!("{}. Sample {i} was measured twice by the survey team. ", topics[i % 4]).repeat(4),
            })
            .to_string()
        })
        .collect();
    std::fs::write(&corpus, lines.join("\n")).unwrap();
    let queries = dir.join("queries.jsonl");
    std::fs::write(
        &queries,
        "{\"_id\":\"q1\",\"text\":\"why do glaciers retreat\"}\n{\"_id\":\"q2\",\"text\":\"coral bleaching in hot water\"}\n",
    )
    .unwrap();
    (corpus, queries)
}

fn report(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn bench_embed_times_both_local_embedders() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, _) = tiny_beir(dir.path(), 8);
    let out = dir.path().join("embed.json");
    succeeded(
        bench(&dir.path().join("data"))
            .args([
                "embed",
                "--transformer-chunks",
                "2",
                "--static-chunks",
                "16",
            ])
            .arg("--corpus")
            .arg(&corpus)
            .arg("--out")
            .arg(&out),
    );
    let r = report(&out);
    assert!(r["gemm_gflops"].as_f64().unwrap() > 0.0, "{r}");
    let rows = r["rows"].as_array().unwrap();
    // Each embedder at two chunk lengths.
    assert_eq!(rows.len(), 4, "{r}");
    for row in rows {
        assert!(row["chunks_per_second"].as_f64().unwrap() > 0.0, "{row}");
    }
    let transformer = rows.iter().filter(|r| r["gflop_per_chunk"].is_number());
    assert_eq!(
        transformer.count(),
        2,
        "only the transformer counts FLOPs: {r}"
    );

    let bad = bench(&dir.path().join("data"))
        .args(["embed", "--static-chunks", "0"])
        .arg("--corpus")
        .arg(&corpus)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--static-chunks"));
}

#[test]
fn bench_pipeline_measures_kafka_and_http_ingest_on_the_embedded_broker() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, _) = tiny_beir(dir.path(), 40);
    let out = dir.path().join("pipeline.json");
    succeeded(
        bench(&dir.path().join("data"))
            .args([
                "pipeline",
                "--documents",
                "30",
                "--freshness-documents",
                "5",
            ])
            .args(["--rate", "20", "--queries", "5", "--http-documents", "20"])
            .arg("--corpus")
            .arg(&corpus)
            .arg("--out")
            .arg(&out),
    );
    let r = report(&out);
    assert_eq!(r["documents"], 30, "{r}");
    assert!(r["documents_per_second"].as_f64().unwrap() > 0.0, "{r}");
    assert!(
        r["broker"].as_str().unwrap().contains("embedded"),
        "the default mode's broker: {r}"
    );
    assert_eq!(r["freshness"]["count"], 5, "{r}");
    assert_eq!(r["http_query"]["count"], 5, "{r}");
    assert_eq!(r["bus_query"]["count"], 5, "{r}");
    assert_eq!(r["http_ingest"]["documents"], 20, "{r}");
    assert!(r["http_ingest"]["http_to_kafka_ratio"].as_f64().unwrap() > 0.0);
}

#[test]
fn bench_fuzz_is_seeded_and_finds_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let out = dir.path().join(name);
        succeeded(
            bench(&dir.path().join("data"))
                .args(["fuzz", "--cases", "150", "--seed", "7"])
                .arg("--out")
                .arg(&out),
        );
        report(&out)
    };
    let (a, b) = (run("a.json"), run("b.json"));
    let parsers = a["parsers"].as_object().unwrap();
    assert!(parsers.len() >= 6, "events, five contracts, config: {a}");
    for (name, p) in parsers {
        assert_eq!(p["cases"], 150, "{name}: {p}");
        assert_eq!(
            (p["panics"].as_u64(), p["bad_refusals"].as_u64()),
            (Some(0), Some(0))
        );
        assert!(
            p["refused"].as_u64().unwrap() > 0,
            "hostile inputs refused: {name}: {p}"
        );
        // The same seed gives the same inputs, so the same verdicts.
        for count in ["accepted", "refused"] {
            assert_eq!(p[count], b["parsers"][name][count], "{name}.{count}");
        }
    }
}

#[test]
fn bench_graph_compares_fast_and_graph_mode() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, queries) = tiny_beir(dir.path(), 24);
    let out = dir.path().join("graph.json");
    succeeded(
        bench(&dir.path().join("data"))
            .args(["graph", "--documents", "24", "--triples-per-document", "3"])
            .args(["--query-count", "2", "--rounds", "2"])
            .arg("--corpus")
            .arg(&corpus)
            .arg("--queries")
            .arg(&queries)
            .arg("--out")
            .arg(&out),
    );
    let r = report(&out);
    assert_eq!(r["documents"], 24, "{r}");
    assert!(r["triples"].as_u64().unwrap() > 0, "{r}");
    assert!(r["entities"].as_u64().unwrap() > 0, "{r}");
    assert!(r["queries_linking"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["fast_mode"]["count"], r["graph_mode"]["count"], "{r}");
    assert_eq!(r["fast_mode"]["count"], 4, "two queries, two rounds: {r}");
}

#[test]
fn bench_telemetry_exports_every_trace_while_timing_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, queries) = tiny_beir(dir.path(), 30);
    let out = dir.path().join("telemetry.json");
    succeeded(
        bench(&dir.path().join("data"))
            .args(["telemetry", "--documents", "30", "--query-count", "3"])
            .args(["--rounds", "2"])
            .arg("--corpus")
            .arg(&corpus)
            .arg("--queries")
            .arg(&queries)
            .arg("--out")
            .arg(&out),
    );
    let r = report(&out);
    assert_eq!(r["off"]["count"], r["on"]["count"], "{r}");
    assert_eq!(
        r["on"]["count"], 4,
        "both queries the file has, two rounds: {r}"
    );
    assert!(r["export_requests"].as_u64().unwrap() > 0, "{r}");
    assert!(r["spans_exported_bytes"].as_u64().unwrap() > 0, "{r}");
}

/// `scripts/compare-lancedb` end to end on a small index with the suite's own bench binary:
/// its peer installs, both sides index and search the same rows, and the report has both.
#[test]
fn compare_lancedb_runs_both_sides_on_a_small_index() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("compare.json");
    succeeded(
        Command::new(repo().join("scripts/compare-lancedb"))
            .arg("600")
            .env("QUERIES", "20")
            .env("BIN", crate::cli::ragstream_bench_path())
            .env("OUT", &out)
            .env("TMPDIR", dir.path()),
    );
    let r = report(&out);
    assert!(r["chunks"].as_u64().unwrap() >= 600, "{r}");
    for side in ["ragstream", "lancedb"] {
        assert!(
            r[side]["chunks_per_second"].as_f64().unwrap() > 0.0,
            "{side}: {r}"
        );
        assert!(
            r[side]["hybrid_p50_ms"].as_f64().unwrap() > 0.0,
            "{side}: {r}"
        );
        let recall = r[side]["ann_recall_at_10"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&recall), "{side}: {r}");
    }
    assert!(
        r["ratios"]["hybrid_p99_ragstream_over_lancedb"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// `scripts/two_stage_hamming.py` replays the resident search's stages on an index the
/// scale bench wrote: each variant's recall is a fraction, and what runs finds its rows.
#[test]
fn two_stage_hamming_replays_the_resident_search_on_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (corpus, queries) = tiny_beir(dir.path(), 40);
    succeeded(
        bench(&data)
            .args(["scale", "--chunks", "300", "--query-count", "2"])
            .args(["--recall-queries", "2"])
            .arg("--corpus")
            .arg(&corpus)
            .arg("--queries")
            .arg(&queries)
            .arg("--data-dir")
            .arg(&data),
    );
    let python = succeeded(&mut Command::new(repo().join("scripts/lancedb-venv")));
    let python = String::from_utf8(python.stdout).unwrap();
    let out = succeeded(
        Command::new(python.trim())
            .arg(repo().join("scripts/two_stage_hamming.py"))
            .arg(data.join("indexes/scale"))
            .arg("20"),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let recalls: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split("recall@10 ").nth(1))
        .map(|r| r.trim().parse().unwrap())
        .collect();
    assert_eq!(recalls.len(), 9, "what runs and eight variants: {text}");
    assert!(recalls.iter().all(|r| (0.0..=1.0).contains(r)), "{text}");
    // On a few hundred rows the sign stages keep every row, so what runs loses only to the
    // byte codes' shortlist (the tiny corpus's near-duplicate chunks tie often).
    assert!(recalls[0] >= 0.5, "{text}");
}

/// `scripts/e5-provider` serves a second model as an OpenAI-compatible provider: it installs
/// itself, refuses a text without e5's mark, and ragstream indexes and finds documents
/// through it with the prefixes configured.
#[test]
fn e5_provider_serves_ragstream_as_an_openai_provider() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut server = Command::new(repo().join("scripts/e5-provider"))
        .arg("0")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stdout = server.stdout.take().unwrap();
    let server = Kill(server);
    // The first line comes once the model is loaded (after an install on first use); the
    // read ends early if the script exits.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(600))
        .expect("the provider printed its address");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_string();

    let (status, body) = crate::daemon::post_json(
        &format!("{url}/v1/embeddings"),
        &serde_json::json!({"input": ["no mark here"]}),
    );
    assert_eq!(status, 400, "{body}");
    let (status, body) = crate::daemon::post_json(
        &format!("{url}/v1/embeddings"),
        &serde_json::json!({"input": ["query: tides", "passage: the moon pulls the sea"]}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"][1]["embedding"].as_array().unwrap().len(), 384);

    let config = dir.path().join("ragstream.toml");
    std::fs::write(
        &config,
        format!(
            "[model]\nembedder = \"e5\"\n\n[embedders.e5]\nprovider = \"openai\"\nurl = \"{url}\"\n\
             model = \"multilingual-e5-small-q4\"\ndimensions = 384\nquery_prefix = \"query: \"\n\
             document_prefix = \"passage: \"\nmax_batch = 16\nmax_in_flight = 1\n"
        ),
    )
    .unwrap();
    let docs = dir.path().join("docs.jsonl");
    std::fs::write(
        &docs,
        concat!(
            r#"{"id":"tides","text":"The moon's gravity pulls the oceans and makes the tides rise and fall twice a day."}"#,
            "\n",
            r#"{"id":"bread","text":"Sourdough bread rises slowly because wild yeast ferments the dough overnight."}"#,
            "\n"
        ),
    )
    .unwrap();
    let ragstream = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ragstream"));
        cmd.env("RAGSTREAM_CONFIG", &config)
            .env("RAGSTREAM_STORAGE_DATA_DIR", dir.path().join("data"))
            .env_remove("RAGSTREAM_MODEL_EMBEDDER")
            .args(args);
        cmd
    };
    succeeded(ragstream(&["ingest", "--index", "e5"]).arg(&docs));
    let out = succeeded(&mut ragstream(&[
        "query",
        "--index",
        "e5",
        "why does the sea go up and down",
        "--method",
        "semantic",
        "--json",
    ]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &v["retrieval_calls"][0]["results"][0];
    assert_eq!(first["metadata"]["document_id"], "tides", "{v}");
    drop(server);
}
