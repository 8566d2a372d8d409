//! The command line as a user runs it.

use std::process::Command;

use serde_json::Value;

use crate::common::succeeded;

/// The `ragstream` binary on data directory `data`, with the hashing embedder.
pub fn ragstream(data: &std::path::Path) -> Command {
    on_data(Command::new(env!("CARGO_BIN_EXE_ragstream")), data)
}

/// The benchmarks' and evaluation's own binary, on a data directory.
pub fn ragstream_bench(data: &std::path::Path) -> Command {
    on_data(Command::new(ragstream_bench_path()), data)
}

/// Where `ragstream-bench` is. It belongs to the workspace's other package
/// (crates/ragstream-tools), whose binaries cargo does not build for this package's tests:
/// `scripts/test` builds it first, into the same target directory as this test binary.
pub fn ragstream_bench_path() -> std::path::PathBuf {
    let test = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/integration-… → target/<profile>/ragstream-bench
    let path = test
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary sits in target/<profile>/deps")
        .join("ragstream-bench");
    assert!(
        path.exists(),
        "{} is missing: build it first with `cargo build -p ragstream-tools` (scripts/test does)",
        path.display()
    );
    path
}

fn on_data(mut cmd: Command, data: &std::path::Path) -> Command {
    cmd.env("RAGSTREAM_STORAGE_DATA_DIR", data)
        .env("RAGSTREAM_MODEL_EMBEDDER", "hashing")
        .env_remove("RAGSTREAM_FAILPOINT");
    cmd
}

#[test]
fn ingest_then_query_json_is_the_contract_000_response() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"id":"a","title":"Hybrid retrieval","text":"Hybrid retrieval blends semantic recall with lexical precision.","uri":"https://example.com/a"}"#,
            "\n",
            r#"{"_id":"b","title":"BEIR doc","text":"A corpus line in BEIR format about something else."}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = succeeded(
        ragstream(&data)
            .args(["ingest", "--index", "kb"])
            .arg(&file),
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["upserted"], 2);

    let out = succeeded(ragstream(&data).args([
        "query",
        "--index",
        "kb",
        "How does HYBRID retrieval work?",
        "--method",
        "hybrid",
        "--normalize",
        "--json",
    ]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let call = &v["retrieval_calls"][0];
    assert_eq!(call["index"], "kb");
    assert_eq!(call["query"], "how does hybrid retrieval work");
    assert_eq!(call["top_k"], 5);
    assert_eq!(call["search_method"], "hybrid");
    assert_eq!(call["query_preprocessing"], "normalize");
    assert_eq!(call["hybrid_alpha"], 0.5);
    assert_eq!(call["result_count"], 2);
    assert!(call["index_version"].as_u64().unwrap() >= 1);
    let top = &call["results"][0];
    assert_eq!(top["metadata"]["document_id"], "a");
    assert_eq!(top["metadata"]["uri"], "https://example.com/a");
    assert_eq!(top["score_kind"], "hybrid_score");
    assert_eq!(top["relevance_kind"], "hybrid_score");
    assert_eq!(top["score"], top["relevance_score"]);
    assert!(top["relevance_components"]["semantic_score"].is_number());
    assert!(top["relevance_components"]["keyword_score"].is_number());

    let out = ragstream(&data)
        .args(["index", "stats", "kb"])
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["documents"], 2);
}

/// Once an index holds enough chunks, `ingest` calibrates `auto` on queries cut from the
/// index's own chunks and stores the centre; an ingest that does not double the index leaves
/// it; `index calibrate` without judged queries calibrates the same way on demand.
#[test]
fn ingest_calibrates_auto_on_the_index_own_queries_as_it_grows() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    let topics = ["glacier", "volcano", "reef", "desert", "tundra", "delta"];
    let document = |i: usize| {
        // About 350 words: two chunks at the default chunk size.
        let sentences: Vec<String> = (0..25)
            .map(|s| {
                format!(
                    "The {} survey {i} recorded sample {s} with readings near station {} and notes on weather.",
                    topics[(i + s) % topics.len()],
                    (i * 7 + s) % 50
                )
            })
            .collect();
        serde_json::json!({"id": format!("d{i}"), "title": format!("Field report {i}"), "text": sentences.join(" ")})
            .to_string()
    };
    let ingest = |range: std::ops::Range<usize>| {
        let lines: Vec<String> = range.map(document).collect();
        std::fs::write(&file, lines.join("\n")).unwrap();
        let out = succeeded(
            ragstream(&data)
                .args(["ingest", "--index", "kb"])
                .arg(&file),
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let info = || -> Value {
        serde_json::from_slice(&std::fs::read(data.join("indexes/kb/index.json")).unwrap()).unwrap()
    };
    let small = ingest(0..100);
    assert!(small["auto_calibrated_center"].is_null(), "{small}");
    assert!(info()["defaults"]["auto_semantic_center"].is_null());

    let grown = ingest(100..600);
    let center = grown["auto_calibrated_center"]
        .as_f64()
        .unwrap_or_else(|| panic!("{grown}"));
    assert!(
        ragstream::calibration::calibrate::CENTERS.contains(&center),
        "{grown}"
    );
    // The second chunk of each document is long enough to cut a passage from.
    let passage_weight = grown["auto_calibrated_passage_weight"]
        .as_f64()
        .unwrap_or_else(|| panic!("{grown}"));
    assert!(
        ragstream::calibration::calibrate::CENTERS.contains(&passage_weight),
        "{grown}"
    );
    let fusion = grown["auto_calibrated_fusion"].clone();
    assert!(
        ["contract", "min_max", "z_score"].contains(&fusion.as_str().unwrap_or_default()),
        "{grown}"
    );
    let defaults = &info()["defaults"];
    assert_eq!(defaults["auto_semantic_center"], center);
    assert_eq!(defaults["auto_passage_weight"], passage_weight);
    assert_eq!(defaults["fusion"], fusion);
    assert_eq!(defaults["auto_calibration"]["source"], "synthetic");
    let rows = defaults["auto_calibration"]["rows"].as_u64().unwrap();
    assert!(rows >= 1_000, "{defaults}");

    // Not doubled: no new calibration.
    let more = ingest(600..700);
    assert!(more["auto_calibrated_center"].is_null(), "{more}");

    // On demand, without judged queries: the index's own queries, stored.
    let out = succeeded(ragstream(&data).args(["index", "calibrate", "kb"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("on the index's own queries (stored)"),
        "{stdout}"
    );
    assert!(stdout.contains("<- stored"), "{stdout}");
    assert!(stdout.contains("passage weight"), "{stdout}");
    assert_eq!(
        info()["defaults"]["auto_calibration"]["source"],
        "synthetic"
    );
}

#[test]
fn ingest_waits_for_the_vector_index_build_its_commit_started() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    let lines: Vec<String> = (0..300)
        .map(|i| {
            serde_json::json!({"id": format!("d{i}"), "text": format!("document {i} about topic {}", i % 17)})
                .to_string()
        })
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = succeeded(
        ragstream(&data)
            .env("RAGSTREAM_INDEX__VECTOR__MIN_ROWS", "200")
            .args(["ingest", "--index", "kb"])
            .arg(&file),
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["chunks_written"], 300);
    // The build the last commit started finished before the process exited.
    assert_eq!(summary["vector_index_rows"], 300, "{summary}");
}

#[test]
fn rebuild_vectors_builds_the_index_with_the_configured_graph_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    let lines: Vec<String> = (0..120)
        .map(|i| {
            serde_json::json!({"id": format!("d{i}"), "text": format!("document {i} about topic {}", i % 11)})
                .to_string()
        })
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    succeeded(
        ragstream(&data)
            .args(["ingest", "--index", "kb"])
            .arg(&file),
    );
    let rebuild = || {
        let mut cmd = ragstream(&data);
        cmd.env("RAGSTREAM_INDEX__VECTOR__PARTITIONS", "2")
            .env("RAGSTREAM_INDEX__VECTOR__HNSW_M", "8")
            .env("RAGSTREAM_INDEX__VECTOR__HNSW_EF_CONSTRUCTION", "50");
        cmd
    };
    let out = succeeded(rebuild().args(["index", "rebuild-vectors", "kb"]));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["rows"], 120, "{report}");
    assert_eq!(report["settings"]["vector_hnsw_m"], 8, "{report}");
    assert_eq!(report["settings"]["vector_index_partitions"], 2, "{report}");
    let stats: Value =
        serde_json::from_slice(&succeeded(ragstream(&data).args(["index", "stats", "kb"])).stdout)
            .unwrap();
    assert_eq!(stats["index_version"], report["index_version"]);
    let list: Value =
        serde_json::from_slice(&succeeded(ragstream(&data).args(["index", "list"])).stdout)
            .unwrap();
    assert_eq!(list["indexes"].as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(
        list["indexes"][0], stats,
        "the list holds each index's stats"
    );

    // A missing index and a bad setting fail with their reason, and write nothing.
    let out = rebuild()
        .args(["index", "rebuild-vectors", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
    let out = rebuild()
        .env("RAGSTREAM_INDEX__VECTOR__HNSW_M", "1")
        .args(["index", "rebuild-vectors", "kb"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("index.vector.hnsw_m"));
}

#[test]
fn invalid_input_lines_are_reported_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    std::fs::write(
        &file,
        "{\"id\":\"ok\",\"text\":\"fine\"}\n{\"id\":\"\",\"text\":\"x\"}\nnot json\n",
    )
    .unwrap();
    let out = ragstream(&data)
        .args(["ingest", "--index", "kb"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(":2: id: must not be empty"), "{err}");
    assert!(err.contains(":3: not JSON"), "{err}");
    let out = ragstream(&data)
        .args(["index", "stats", "kb"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "no index may be created");
}

#[test]
fn query_errors_are_structured_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let out = ragstream(dir.path())
        .args([
            "query", "--index", "nope", "q", "--json", "--alpha", "2", "--method", "hybrid",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "invalid_request");
    assert_eq!(v["error"]["field"], "retrieval.hybrid_alpha");
    let out = ragstream(dir.path())
        .args(["query", "--index", "nope", "q", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "index_not_found");
}

#[test]
fn a_bad_config_file_stops_start_up_naming_file_key_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "[limits]\nmax_top_k = -3\n").unwrap();
    let out = ragstream(dir.path())
        .arg("--config")
        .arg(&cfg)
        .args(["index", "stats", "kb"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&cfg.display().to_string()) && err.contains("limits.max_top_k"),
        "{err}"
    );
}

#[test]
fn config_check_names_the_bad_key_and_config_show_hides_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[kafka]\npartitions = 0\n").unwrap();
    let out = ragstream(dir.path())
        .args(["config", "check"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kafka.partitions"), "{err}");

    let good = dir.path().join("good.toml");
    std::fs::write(
        &good,
        "[kafka]\npartitions = 2\n[kafka.client]\n\"sasl.password\" = \"hunter2\"\n\
         [[auth.tokens]]\nname = \"ops\"\ntoken = \"tok-123\"\ntenant = \"t\"\n\
         indexes = [\"*\"]\nscopes = [\"read\"]\n",
    )
    .unwrap();
    let out = succeeded(ragstream(dir.path()).args(["config", "check"]).arg(&good));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok"));
    let out = succeeded(
        ragstream(dir.path())
            .arg("--config")
            .arg(&good)
            .args(["config", "show"]),
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        !shown.contains("hunter2") && !shown.contains("tok-123"),
        "{shown}"
    );
    let table: toml::Value = toml::from_str(&shown).unwrap();
    assert_eq!(table["kafka"]["partitions"].as_integer(), Some(2));
    assert_eq!(
        table["kafka"]["client"]["sasl.password"].as_str(),
        Some("<redacted>")
    );
}

#[test]
fn a_missing_model_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = ragstream(dir.path())
        .env("RAGSTREAM_MODEL_EMBEDDER", "all-minilm-l6-v2")
        .env("RAGSTREAM_MODEL_DIR", dir.path().join("no-model"))
        .args(["query", "--index", "kb", "q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no-model") && err.contains("scripts/setup"),
        "{err}"
    );
}

#[test]
fn index_reembed_switches_the_model_and_queries_follow_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    std::fs::write(
        &file,
        r#"{"id":"pump","title":"Pump care","text":"Lubricate the pump bearings every month."}"#,
    )
    .unwrap();
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    ok(ragstream(&data)
        .args(["ingest", "--index", "kb"])
        .arg(&file)
        .output()
        .unwrap());

    // An unknown embedder is a usage error naming the flag.
    let out = ragstream(&data)
        .args(["index", "reembed", "kb", "--embedder", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--embedder nope"));

    let report = ok(ragstream(&data)
        .args(["index", "reembed", "kb", "--embedder", "static"])
        .output()
        .unwrap());
    assert_eq!(report["from"]["embedder"], "hashing");
    assert_eq!(report["to"]["embedder"], "all-minilm-l6-v2-static");
    assert_eq!(report["index_version"], 3);

    let query = |embedder: &str| {
        ragstream(&data)
            .env("RAGSTREAM_MODEL_EMBEDDER", embedder)
            .args(["query", "--index", "kb", "pump bearings", "--json"])
            .output()
            .unwrap()
    };
    let answer = ok(query("static"));
    assert_eq!(
        answer["retrieval_calls"][0]["results"][0]["metadata"]["document_id"],
        "pump"
    );
    let refused = query("hashing");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stdout).contains("embedder_mismatch"),
        "{}",
        String::from_utf8_lossy(&refused.stdout)
    );
}

#[test]
fn index_calibrate_stores_the_best_auto_centre_it_measured() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let docs = dir.path().join("corpus.jsonl");
    let queries = dir.path().join("queries.jsonl");
    let qrels = dir.path().join("qrels.tsv");
    let corpus = crate::common::corpus();
    let lines: Vec<String> = corpus
        .iter()
        .map(|d| serde_json::json!({"_id": d.id, "title": d.title, "text": d.text}).to_string())
        .collect();
    std::fs::write(&docs, lines.join("\n")).unwrap();
    std::fs::write(
        &queries,
        concat!(
            r#"{"_id":"q1","text":"astronauts landed on the Moon"}"#,
            "\n",
            r#"{"_id":"q2","text":"yeast makes dough rise"}"#,
            "\n",
            r#"{"_id":"q3","text":"an unjudged query"}"#,
        ),
    )
    .unwrap();
    std::fs::write(
        &qrels,
        "query-id\tcorpus-id\tscore\nq1\tapollo\t1\nq2\tbread\t1\n",
    )
    .unwrap();
    succeeded(
        ragstream(&data)
            .args(["ingest", "--index", "kb"])
            .arg(&docs),
    );

    let out = succeeded(
        ragstream(&data)
            .args(["index", "calibrate", "kb", "--queries"])
            .arg(&queries)
            .arg("--qrels")
            .arg(&qrels),
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(stdout.contains("on 2 sentence queries"), "{stdout}");
    // The stored centre is the best of the printed table (ties: nearest 0.5).
    let table: Vec<(f64, f64)> = stdout
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("centre ")?;
            let mut parts = l.split_whitespace();
            let centre: f64 = parts.next()?.parse().ok()?;
            let ndcg: f64 = parts.nth(1)?.parse().ok()?;
            Some((centre, ndcg))
        })
        .collect();
    assert_eq!(table.len(), 7, "{stdout}");
    let stored_line = |prefix: &str| {
        stdout
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(prefix) && l.contains("<- stored"))
            .unwrap_or_else(|| panic!("{stdout}"))
    };
    let stored: f64 = stored_line("centre ")["centre ".len()..][..3]
        .parse()
        .unwrap();
    assert_eq!(ragstream::calibration::calibrate::best(&table), stored);
    // Each fusion tried, the best stored (ties: contract 000's way, listed first).
    let fusions: Vec<(&str, f64)> = stdout
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let fusion = parts.next()?;
            ["contract", "min_max", "z_score"]
                .contains(&fusion)
                .then_some(())?;
            Some((fusion, parts.nth(1)?.parse().ok()?))
        })
        .collect();
    assert_eq!(fusions.len(), 3, "{stdout}");
    let best_fusion = fusions
        .iter()
        .copied()
        .reduce(|a, b| if b.1 > a.1 { b } else { a })
        .unwrap()
        .0;
    assert!(stored_line(best_fusion).contains(best_fusion), "{stdout}");
    let info: Value =
        serde_json::from_slice(&std::fs::read(data.join("indexes/kb/index.json")).unwrap())
            .unwrap();
    assert_eq!(info["defaults"]["auto_semantic_center"], stored);
    assert_eq!(info["defaults"]["fusion"], best_fusion);
    assert_eq!(info["defaults"]["auto_calibration"]["source"], "judged");

    // Judged queries that do not exist: a usage error, nothing stored.
    std::fs::write(&qrels, "qX\tapollo\t1\n").unwrap();
    let out = ragstream(&data)
        .args(["index", "calibrate", "kb", "--queries"])
        .arg(&queries)
        .arg("--qrels")
        .arg(&qrels)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("judged"));
}

/// `eval beir` on a small BEIR directory: every method scored on the test queries and on the
/// long-query variant, the centre `auto` ran from reported, and `--calibrate` measuring that
/// centre on the training queries.
#[test]
fn eval_beir_scores_every_method_and_reports_the_auto_centre_it_ran_from() {
    let dir = tempfile::tempdir().unwrap();
    let beir = dir.path().join("beir");
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    let corpus = [
        ("d1", "glacier ice melt in the alps"),
        ("d2", "volcano lava eruption on the island"),
        ("d3", "coral reef fish in warm water"),
        ("d4", "desert sand dune in the wind"),
        ("d5", "glacier ice moraine left behind"),
        ("d6", "volcano lava basalt cooling slowly"),
    ];
    let lines: Vec<String> = corpus
        .iter()
        .map(|(id, text)| serde_json::json!({"_id": id, "title": "", "text": text}).to_string())
        .collect();
    std::fs::write(beir.join("corpus.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(
        beir.join("queries.jsonl"),
        [
            r#"{"_id": "q1", "text": "glacier ice"}"#,
            r#"{"_id": "q2", "text": "volcano lava"}"#,
            r#"{"_id": "q3", "text": "coral reef"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    std::fs::write(
        beir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td5\t1\nq2\td2\t1\nq2\td6\t1\nq3\td3\t1\n",
    )
    .unwrap();
    std::fs::write(
        beir.join("qrels/train.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq4\td3\t1\nq4\td4\t1\n",
    )
    .unwrap();
    let eval = |data: &str, extra: &[&str]| -> Value {
        let out = succeeded(
            ragstream_bench(&dir.path().join(data))
                .args(["eval", "beir", "--json", "--long-queries", "--data"])
                .arg(&beir)
                .args(extra),
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let method = |report: &Value, name: &str| -> Value {
        report["methods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["method"] == name)
            .unwrap_or_else(|| panic!("no {name} in {report}"))
            .clone()
    };

    let reports = eval("plain", &[]);
    let [test, long, long_all] = reports.as_array().unwrap().as_slice() else {
        panic!("a report for the test queries and two for the long ones: {reports}");
    };
    assert_eq!(
        (
            test["queries"].as_str(),
            long["queries"].as_str(),
            long_all["queries"].as_str()
        ),
        (Some("test"), Some("long"), Some("long-all"))
    );
    for name in [
        "semantic",
        "keyword",
        "hybrid",
        "profile auto",
        "profile auto rrf",
    ] {
        let m = method(test, name);
        let ndcg = m["ndcg_at_10"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&ndcg), "{m}");
        assert_eq!(m["queries"], 3, "{m}");
    }
    // Each query's words name its relevant documents and no other.
    assert_eq!(method(test, "keyword")["ndcg_at_10"], 1.0);
    // The long variant: each cited document of a query citing two, judged by the other.
    assert_eq!(method(long, "keyword")["queries"], 4);
    // From every split: the training query citing d3 and d4 adds both.
    assert_eq!(method(long_all, "keyword")["queries"], 6);
    assert_eq!(
        test["auto_center"], 0.5,
        "hashing: no measured centre, not calibrated"
    );
    assert!(test["calibration"].is_null());

    let calibrated = eval("calibrated", &["--calibrate"]);
    assert_eq!(
        calibrated.as_array().unwrap().len(),
        2,
        "no variant from every split: calibration read the training judgments"
    );
    let report = &calibrated[0];
    let center = report["calibration"]["center"].as_f64().unwrap();
    assert!(
        ragstream::calibration::calibrate::CENTERS.contains(&center),
        "{report}"
    );
    assert_eq!(report["calibration"]["queries"], 1);
    assert_eq!(
        report["auto_center"], center,
        "auto ran from what was measured"
    );
    // The training split's long queries (d3 and d4) are a few words each here, not passages:
    // none to measure the passage weight on, so passages stay balanced.
    assert_eq!(report["calibration"]["passage_queries"], 0, "{report}");
    assert!(report["calibration"]["passage_weight"].is_null());
    assert_eq!(report["auto_passage_weight"], 0.5);

    // A training split that adds no long query: the variant from every split would be the
    // test split's, so it is scored once.
    std::fs::write(
        beir.join("qrels/train.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    )
    .unwrap();
    let reports = eval("train-adds-nothing", &[]);
    let queries: Vec<&str> = reports
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["queries"].as_str().unwrap())
        .collect();
    assert_eq!(queries, ["test", "long"]);
}

#[test]
fn log_format_is_text_or_json_and_anything_else_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("d.jsonl");
    std::fs::write(&file, r#"{"id":"a","text":"hello world"}"#).unwrap();
    // Creating an index logs at info level (the keyword index is built from Lance).
    let out = ragstream(&dir.path().join("data"))
        .args(["ingest", "--index", "kb"])
        .arg(&file)
        .env("RAGSTREAM_LOG", "ragstream=info")
        .env("RAGSTREAM_LOG_FORMAT", "json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let logged: Vec<Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        logged
            .iter()
            .any(|l| l["level"].is_string() && l["fields"].is_object()),
        "no JSON log line in {stderr}"
    );
    let out = ragstream(dir.path())
        .args(["index", "stats", "missing"])
        .env("RAGSTREAM_LOG_FORMAT", "xml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("RAGSTREAM_LOG_FORMAT"));
}

#[test]
fn bench_scale_with_a_steady_phase_then_export_maintain_and_tag() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (corpus, queries) = (
        dir.path().join("corpus.jsonl"),
        dir.path().join("queries.jsonl"),
    );
    let topics = [
        "glaciers retreat in warm summers",
        "volcanic ash cools the climate",
        "coral reefs bleach in hot water",
        "rivers carry sediment to deltas",
    ];
    let lines: Vec<String> = (0..40)
        .map(|i| serde_json::json!({"_id": format!("c{i}"), "text": format!("{}. Sample number {i} was measured twice. ", topics[i % 4]).repeat(3)}).to_string())
        .collect();
    std::fs::write(&corpus, lines.join("\n")).unwrap();
    std::fs::write(
        &queries,
        r#"{"_id":"q1","text":"why do glaciers retreat"}
{"_id":"q2","text":"coral bleaching"}"#,
    )
    .unwrap();
    let report = dir.path().join("scale.json");
    succeeded(
        ragstream_bench(&data)
            .env("RAGSTREAM_INDEX__MAINTENANCE__INTERVAL_MS", "1000")
            .args(["scale", "--chunks", "300", "--query-count", "20"])
            .args([
                "--steady-seconds",
                "3",
                "--steady-rate",
                "40",
                "--sweep",
                "10:2:100",
            ])
            .arg("--corpus")
            .arg(&corpus)
            .arg("--queries")
            .arg(&queries)
            .arg("--data-dir")
            .arg(&data)
            .arg("--out")
            .arg(&report),
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(r["chunks"].as_u64().unwrap() >= 300, "{r}");
    let methods: Vec<&str> = r["latency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["semantic", "keyword", "hybrid"]);
    assert!(r["latency"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["queries"] == 20 && m["p50_ms"].as_f64().unwrap() > 0.0));
    assert!(r["keyword_segments"].as_u64().unwrap() >= 1, "{r}");
    // Below the vector index's threshold the search is exact: recall 1 at every setting.
    assert_eq!(r["ann_recall_at_10"], 1.0);
    assert_eq!(r["sweep"][0]["recall_at_10"], 1.0);
    let steady = &r["steady"];
    // 3 s at 40 documents/s: every document due before the last batch (commits take time).
    let written = steady["documents"].as_u64().unwrap();
    assert!((60..=125).contains(&written), "{steady}");
    assert!(
        steady["freshness_p99_ms"].as_f64().unwrap() > 0.0,
        "{steady}"
    );
    assert!(steady["queries"].as_u64().unwrap() > 0, "{steady}");
    assert!(steady["versions_end"].as_u64().unwrap() >= 1, "{steady}");
    assert!(
        steady["keyword_segments_max"].as_u64().unwrap() >= 1,
        "{steady}"
    );
    // Measured quiet once ingestion stopped, over the index as it then was.
    assert!(r["chunks"].as_u64().unwrap() > written, "{r}");
    assert_eq!(steady["hybrid_quiet_after"]["queries"], 20, "{steady}");
    assert_eq!(steady["hybrid_quiet_after"]["method"], "hybrid", "{steady}");

    // Export: one vector per exported chunk, query vectors for the queries asked for.
    let export = dir.path().join("export");
    succeeded(
        ragstream_bench(&data)
            .args(["export", "--query-count", "3"])
            .env("RAGSTREAM_INDEX__VECTOR__EF", "123")
            .arg("--data-dir")
            .arg(&data)
            .arg("--queries")
            .arg(&queries)
            .arg("--out")
            .arg(&export),
    );
    let meta: Value =
        serde_json::from_slice(&std::fs::read(export.join("meta.json")).unwrap()).unwrap();
    let (chunks, dims) = (
        meta["chunks"].as_u64().unwrap(),
        meta["dimensions"].as_u64().unwrap(),
    );
    assert_eq!(chunks, r["chunks"].as_u64().unwrap(), "every live chunk");
    // The peer searches with the settings the index searches with (here a configured ef).
    assert_eq!(
        meta["vector_search"],
        serde_json::json!({"nprobes": 0, "refine_factor": 2, "ef": 123})
    );
    let lines = std::fs::read_to_string(export.join("chunks.jsonl"))
        .unwrap()
        .lines()
        .count() as u64;
    assert_eq!(lines, chunks);
    assert_eq!(
        std::fs::metadata(export.join("vectors.f32")).unwrap().len(),
        chunks * dims * 4
    );
    assert_eq!(
        std::fs::metadata(export.join("query_vectors.f32"))
            .unwrap()
            .len(),
        3 * dims * 4
    );

    // One maintenance pass and a tag, as an operator runs them.
    let out = succeeded(ragstream(&data).args(["index", "maintain", "scale"]));
    let pass: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(pass["index"], "scale");
    assert!(
        pass["fragments_after"].as_u64().unwrap() <= pass["fragments_before"].as_u64().unwrap()
    );
    let out = succeeded(ragstream(&data).args(["index", "tag", "scale", "golden"]));
    let tagged: Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = ragstream(&data)
        .args(["index", "stats", "scale"])
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stats["tags"]["golden"], tagged["index_version"]);
    let out = ragstream(&data)
        .args(["index", "tag", "scale", "later", "--version", "999999"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "a version that does not exist cannot be tagged"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("999999"));
}

#[test]
fn bench_keyword_compares_merge_policies_and_rejects_bad_settings() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (corpus, queries) = (
        dir.path().join("corpus.jsonl"),
        dir.path().join("queries.jsonl"),
    );
    let lines: Vec<String> = (0..20)
        .map(|i| serde_json::json!({"_id": format!("c{i}"), "text": format!("Sample number {i} was measured twice in the glacier. ").repeat(3)}).to_string())
        .collect();
    std::fs::write(&corpus, lines.join("\n")).unwrap();
    std::fs::write(&queries, r#"{"_id":"q1","text":"glacier sample"}"#).unwrap();
    let report = dir.path().join("keyword.json");
    let bench = |settings: &str| {
        let mut cmd = ragstream_bench(&data);
        cmd.args(["keyword", "--documents", "60", "--batch", "5"])
            .args(["--query-count", "1", "--settings", settings])
            .arg("--corpus")
            .arg(&corpus)
            .arg("--queries")
            .arg(&queries)
            .arg("--out")
            .arg(&report);
        cmd
    };
    // `--json`: the report on stdout (and no table); `--out`: the same report in the file.
    let out = succeeded(bench("16:2,16:0,16:2:0:3").arg("--json"));
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, r);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{r}");
    // Parts left out take the defaults; given ones are used.
    assert_eq!(rows[0]["merge_max_docs"], 100_000, "{r}");
    assert_eq!(rows[0]["max_query_terms"], 0, "{r}");
    assert_eq!(rows[2]["merge_max_docs"], 0, "{r}");
    assert_eq!(rows[2]["max_query_terms"], 3, "{r}");
    assert_eq!(rows[0]["commits"], 12);
    // Never merging leaves one segment per commit; the log policy merges them as they pile up.
    assert_eq!(rows[1]["merge_min_segments"], 0);
    assert_eq!(rows[1]["segments_end"], 12, "{r}");
    assert!(rows[0]["segments_end"].as_u64().unwrap() < 12, "{r}");
    assert!(rows
        .iter()
        .all(|row| row["commit_p50_ms"].as_f64().unwrap() > 0.0));

    for bad in ["14:8", "64:1", "64", "64:8:x", "64:8:1:2:3"] {
        let out = bench(bad).output().unwrap();
        assert!(!out.status.success(), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--settings"), "{bad}: {stderr}");
    }
}

#[test]
fn index_delete_removes_the_index_from_stats_and_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    std::fs::write(
        &file,
        r#"{"id":"a","text":"Glaciers retreat as the climate warms."}"#,
    )
    .unwrap();
    succeeded(
        ragstream(&data)
            .args(["ingest", "--index", "kb"])
            .arg(&file),
    );
    let out = succeeded(ragstream(&data).args(["index", "delete", "kb"]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["deleted"], true, "{v}");
    assert_eq!(v["directories_removed"], 1, "{v}");
    let stats = ragstream(&data)
        .args(["index", "stats", "kb"])
        .output()
        .unwrap();
    assert_eq!(stats.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&stats.stderr).contains("does not exist"),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let list = succeeded(ragstream(&data).args(["index", "list"]));
    let v: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(v["indexes"], serde_json::json!([]), "{v}");
    // A name that was never an index: a clear error, exit code 1.
    let again = ragstream(&data)
        .args(["index", "delete", "kb"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn explain_prints_why_each_target_was_or_was_not_returned() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("docs.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"id":"a","text":"Hybrid retrieval blends semantic recall with lexical precision."}"#,
            "\n",
            r#"{"id":"b","text":"Sourdough bread rises slowly overnight."}"#,
            "\n"
        ),
    )
    .unwrap();
    succeeded(
        ragstream(&data)
            .args(["ingest", "--index", "kb"])
            .arg(&file),
    );
    let out = succeeded(ragstream(&data).args([
        "explain",
        "--index",
        "kb",
        "hybrid retrieval",
        "--top-k",
        "1",
        "--document",
        "a",
        "--document",
        "b",
        "--snippet",
        "LEXICAL precision",
    ]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdict = |i: usize| v["targets"][i]["verdict"].as_str().unwrap().to_string();
    assert!(verdict(0).starts_with("ranked 1st"), "{v}");
    assert!(verdict(1).starts_with("not returned"), "{v}");
    assert_eq!(v["targets"][2]["chunks"][0]["document_id"], "a", "{v}");
    // No target: a usage error (exit code 2) that says what is missing.
    let none = ragstream(&data)
        .args(["explain", "--index", "kb", "hybrid retrieval"])
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("--document"));
}

/// The soak runs the daemon's binary beside the bench's (it ran the bench's own, which has no
/// `broker` or `serve`, since the bench became a binary of its own): a short one on a real
/// broker, restarted once, loses and duplicates nothing.
#[test]
fn bench_soak_runs_the_daemon_on_a_broker_and_counts_nothing_lost() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("soak.json");
    succeeded(
        ragstream_bench(&dir.path().join("data"))
            .args(["soak", "--minutes", "0.3", "--rate", "10"])
            .args(["--restart-every", "8", "--embedder", "hashing"])
            .arg("--out")
            .arg(&report),
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(r["documents_produced"].as_u64().unwrap() > 0, "{r}");
    assert!(r["restarts"].as_u64().unwrap() >= 1, "{r}");
    assert_eq!(
        (r["lost"].as_i64(), r["duplicated"].as_i64()),
        (Some(0), Some(0)),
        "{r}"
    );
}
