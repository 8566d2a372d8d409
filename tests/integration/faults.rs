//! Faults from outside the process: the disk fills up under a live daemon (writes fail
//! clearly, readiness says why, nothing acknowledged is lost, ingestion resumes when space
//! returns); the broker goes down and comes back; files of an index are cut short on disk;
//! a process is killed inside compaction, a vector-index build or a reembed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::daemon::{curl, start_daemon_at};

/// A tmpfs of a given size, unmounted when dropped. Mounting needs root (the test machines
/// and CI run as root); anything else is a failure that says so, not a silent skip.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    fn mount(path: &Path, megabytes: u32) -> Tmpfs {
        std::fs::create_dir_all(path).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(path)
            .status()
            .expect("mount runs");
        assert!(
            status.success(),
            "mounting a tmpfs needs root: this test simulates a full disk with one"
        );
        Tmpfs {
            path: path.to_path_buf(),
        }
    }

    fn resize(&self, megabytes: u32) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={megabytes}m")])
            .arg(&self.path)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_full_disk_fails_readiness_loses_nothing_acknowledged_and_ingestion_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let disk = Tmpfs::mount(&data, 8);
    let d = start_daemon_at(&data, &[]);
    let stats = || curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1;
    let readyz = || curl(&[&format!("{}/readyz", d.http)]);

    // Write until the disk is full and a request is refused or readiness says so.
    let mut acknowledged: Vec<String> = Vec::new();
    let mut refused_batch = 0;
    let started = Instant::now();
    let refusal: Value = loop {
        let batch: Vec<Value> = (0..20)
            .map(|i| {
                let id = format!("doc-{:05}", acknowledged.len() + i);
                json!({"id": id, "text": format!("{id} {}", "filler text for a full disk ".repeat(100))})
            })
            .collect();
        let ids: Vec<String> = batch
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect();
        let body = json!({"documents": batch}).to_string();
        let (status, v) = curl(&[
            "-X",
            "POST",
            "-d",
            &body,
            &format!("{}/v1/indexes/kb/documents", d.http),
        ]);
        // The embedded broker keeps its messages on the same disk: once it is full, a
        // request is refused (503) rather than acknowledged.
        if status == 503 {
            assert_eq!(v["error"]["code"], "bus_unavailable", "{v}");
            refused_batch = ids.len();
            break v;
        }
        assert_eq!(status, 202, "{v}");
        acknowledged.extend(ids);
        let (status, v) = readyz();
        if status == 503 {
            break v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the disk never filled: {} documents, {}",
            acknowledged.len(),
            stats()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let message = refusal["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot be written")
            || message.contains("commits to index kb fail")
            || message.contains("events were accepted"),
        "{refusal}"
    );
    if refused_batch == 0 {
        assert!(
            stats()["documents"].as_u64().unwrap_or(0) < acknowledged.len() as u64,
            "some acknowledged documents wait for space"
        );
    }

    // Space returns: readiness recovers, and every acknowledged document arrives once.
    disk.resize(256);
    let want = acknowledged.len() as u64;
    wait_until("ready again", Duration::from_secs(120), || {
        readyz().0 == 200
    });
    wait_until(
        "every acknowledged document",
        Duration::from_secs(180),
        || stats()["documents"].as_u64() >= Some(want),
    );
    let s = stats();
    // Part of a refused request may have reached the broker: at most that many more.
    assert!(
        s["documents"].as_u64().unwrap() <= want + refused_batch as u64,
        "{s}"
    );
    assert_eq!(s["keyword_chunks"], s["chunks"], "{s}");
    assert_eq!(s["deleted_documents"], 0, "{s}");
    drop(d);
}

/// Commands for the broker thread (librdkafka's mock cluster is not `Send`).
enum BrokerCommand {
    Down,
    Up,
}

/// A one-broker mock cluster on its own thread, with the daemon's topics; the returned
/// sender takes the broker down and up. The cluster ends when the sender is dropped.
fn mock_cluster() -> (String, std::sync::mpsc::Sender<BrokerCommand>) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (tx, rx) = std::sync::mpsc::channel::<BrokerCommand>();
    std::thread::spawn(move || {
        let cluster = rdkafka::mocking::MockCluster::new(1).unwrap();
        for (topic, partitions) in [
            ("ragstream.documents", 2),
            ("ragstream.queries", 2),
            ("ragstream.dlq", 1),
            ("ragstream.replies", 1),
            ("ragstream.versions", 1),
        ] {
            cluster.create_topic(topic, partitions, 1).unwrap();
        }
        ready_tx.send(cluster.bootstrap_servers()).unwrap();
        for command in rx {
            match command {
                BrokerCommand::Down => cluster.broker_down(1).unwrap(),
                BrokerCommand::Up => cluster.broker_up(1).unwrap(),
            }
        }
    });
    (ready_rx.recv().unwrap(), tx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_going_down_and_coming_back_loses_and_duplicates_nothing() {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let dir = tempfile::tempdir().unwrap();
    let (bootstrap, broker) = mock_cluster();
    let mut config = crate::common::config(dir.path());
    config.kafka.brokers = bootstrap.clone();
    config.kafka.partitions = 2;
    config.http.bind = "127.0.0.1:0".into();
    let engine = std::sync::Arc::new(crate::common::engine_with(config.clone()));
    let daemon = ragstream::daemon::Daemon::start(config, engine.clone())
        .await
        .unwrap();
    let producer: FutureProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("message.timeout.ms", "120000")
        .create()
        .unwrap();
    let produce = |range: std::ops::Range<usize>| {
        let producer = producer.clone();
        async move {
            for i in range {
                let id = format!("doc-{i:03}");
                let event = json!({"schema_version": 1, "op": "upsert", "index": "kb",
                    "document": {"id": id, "text": format!("Document {i} survives an outage.")}})
                .to_string();
                let key = format!("kb/{id}");
                producer
                    .send(
                        FutureRecord::to("ragstream.documents")
                            .key(&key)
                            .payload(&event),
                        Duration::from_secs(120),
                    )
                    .await
                    .map_err(|(e, _)| e)
                    .unwrap();
            }
        }
    };
    let kb = crate::common::name("kb");
    let documents = || async { engine.stats(&kb).await.map(|s| s.documents).unwrap_or(0) };
    let wait_documents = |want: usize, limit: Duration| async move {
        let start = Instant::now();
        while documents().await != want {
            assert!(
                start.elapsed() < limit,
                "timed out waiting for {want} documents"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    produce(0..50).await;
    wait_documents(50, Duration::from_secs(60)).await;

    // The outage: events produced meanwhile wait in the producer, then arrive.
    broker.send(BrokerCommand::Down).unwrap();
    let during = tokio::spawn(produce(50..100));
    tokio::time::sleep(Duration::from_secs(3)).await; // the outage's length, not a wait
    broker.send(BrokerCommand::Up).unwrap();
    during.await.unwrap();
    wait_documents(100, Duration::from_secs(120)).await;
    let stats = engine.stats(&kb).await.unwrap();
    assert_eq!(stats.documents, 100);
    assert_eq!(stats.chunks, 100, "each document once");
    assert_eq!(stats.keyword_chunks as usize, stats.chunks);
    daemon.shutdown().await;
}

/// `ragstream` on `data` with the model-free embedder, as a user runs it.
fn cli(data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ragstream"));
    cmd.env("RAGSTREAM_STORAGE_DATA_DIR", data)
        .env("RAGSTREAM_MODEL_EMBEDDER", "hashing")
        .env_remove("RAGSTREAM_FAILPOINT");
    cmd
}

/// The JSON a command prints; the command must succeed.
fn json_of(cmd: &mut Command) -> Value {
    serde_json::from_slice(&crate::common::succeeded(cmd).stdout).unwrap()
}

/// Ingests `docs` into index `kb` with one `ragstream ingest` (one commit).
fn ingest(data: &Path, docs: &[ragstream::model::Document], file: &Path) {
    ingest_by(cli(data), docs, file)
}

/// [`ingest`] with `cmd`, a `ragstream` command set up by the caller.
fn ingest_by(mut cmd: Command, docs: &[ragstream::model::Document], file: &Path) {
    let lines: Vec<String> = docs
        .iter()
        .map(|d| serde_json::to_string(d).unwrap())
        .collect();
    std::fs::write(file, lines.join("\n")).unwrap();
    json_of(cmd.args(["ingest", "--index", "kb"]).arg(file));
}

/// Asserts that `kb` holds `documents` documents and a keyword entry for each of its chunks:
/// nothing lost, nothing twice, the keyword store level with Lance.
fn assert_whole(data: &Path, documents: usize) {
    let s = stats(data);
    assert_eq!(s["documents"], documents, "{s}");
    assert_eq!(s["keyword_chunks"], s["chunks"], "{s}");
}

/// The document of keyword search's best hit in `kb` for the corpus's bread text.
fn keyword_top(data: &Path) -> Value {
    top(data, "hashing", "keyword", "yeast ferments sugar")
}

/// Runs `cmd` with the crash point `point` set: it must abort there.
fn crash_at(cmd: &mut Command, point: &str) {
    let crashed = cmd.env("RAGSTREAM_FAILPOINT", point).output().unwrap();
    assert!(!crashed.status.success(), "the failpoint must fire");
    assert!(String::from_utf8_lossy(&crashed.stderr).contains(point));
}

fn stats(data: &Path) -> Value {
    json_of(cli(data).args(["index", "stats", "kb"]))
}

/// A keyword segment cut short on disk (a torn copy, a bad sector): the index still opens,
/// the damaged store is set aside, and keyword search answers again from a store rebuilt
/// from Lance, the source of truth.
#[test]
fn a_truncated_keyword_segment_is_set_aside_and_rebuilt_from_lance() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    ingest(
        &data,
        &crate::common::corpus(),
        &dir.path().join("docs.jsonl"),
    );
    let keyword = data.join("indexes/kb/keyword");
    let mut cut = 0;
    for entry in std::fs::read_dir(&keyword).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "term" || e == "idx") {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(f.metadata().unwrap().len() / 2).unwrap();
            cut += 1;
        }
    }
    assert!(cut > 0, "no segment files to damage");

    assert_eq!(keyword_top(&data), "bread");
    let aside: Vec<String> = std::fs::read_dir(data.join("indexes/kb"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("keyword.damaged-"))
        .collect();
    assert_eq!(aside.len(), 1, "the damaged store is kept for inspection");
    let s = stats(&data);
    assert_eq!(s["keyword_chunks"], s["chunks"], "{s}");
}

/// Killed between compaction's Lance commit and its keyword commit: the next process opens
/// the index whole (every document, the keyword store equal to Lance, keyword search
/// answering), and a second pass compacts what is left.
#[test]
fn a_crash_inside_compaction_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Three ingests: three small fragments for compaction to merge.
    let corpus = crate::common::corpus();
    for (i, part) in corpus.chunks(2).enumerate() {
        ingest(&data, part, &dir.path().join(format!("docs-{i}.jsonl")));
    }
    let maintain = || {
        let mut cmd = cli(&data);
        cmd.args(["index", "maintain", "kb"]).env(
            "RAGSTREAM_INDEX__MAINTENANCE__COMPACTION_MIN_FRAGMENTS",
            "2",
        );
        cmd
    };
    crash_at(&mut maintain(), "after-compaction-commit");

    assert_whole(&data, corpus.len());
    assert_eq!(keyword_top(&data), "bread");
    json_of(&mut maintain());
    assert_whole(&data, corpus.len());
}

/// Killed between the Lance commit that takes keyword merges and its keyword commit: the
/// next process opens the index whole, its keyword store brought up to Lance with the merged
/// segments, and a second pass finds nothing left to take.
#[test]
fn a_crash_while_taking_keyword_merges_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let merging = || {
        let mut cmd = cli(&data);
        cmd.env("RAGSTREAM_INDEX__KEYWORD__MERGE_MIN_SEGMENTS", "2");
        cmd
    };
    // Three ingests, a keyword segment each. Each process waits for its merges before it
    // exits, so the last commit's merge has ended, and the newest version does not hold it.
    let corpus = crate::common::corpus();
    for (i, part) in corpus.chunks(2).enumerate() {
        let file = dir.path().join(format!("docs-{i}.jsonl"));
        ingest_by(merging(), part, &file);
    }
    let maintain = || {
        let mut cmd = merging();
        cmd.args(["index", "maintain", "kb"]);
        cmd
    };
    crash_at(&mut maintain(), "after-keyword-merges-commit");

    assert_whole(&data, corpus.len());
    assert_eq!(keyword_top(&data), "bread");
    let report = json_of(&mut maintain());
    assert_eq!(report["keyword_merges_adopted"], false, "{report}");
    assert_eq!(report["keyword_segments"], 1, "{report}");
    assert_whole(&data, corpus.len());
}

/// The best hit's document for `text` by `method`, asked with `embedder`.
fn top(data: &Path, embedder: &str, method: &str, text: &str) -> Value {
    let answer = json_of(
        cli(data)
            .env("RAGSTREAM_MODEL_EMBEDDER", embedder)
            .args(["query", "--index", "kb", text, "--method", method, "--json"]),
    );
    answer["retrieval_calls"][0]["results"][0]["metadata"]["document_id"].clone()
}

/// Killed between a vector-index build's commit and its bookkeeping: the next process opens
/// the index whole (every document, the keyword store equal to Lance), semantic search
/// answers through the committed index, and a second build succeeds.
#[test]
fn a_crash_inside_a_vector_index_build_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let docs: Vec<_> = (0..300)
        .map(|i| {
            crate::common::doc(
                &format!("d{i}"),
                "",
                &format!("Passage {i} on subject {} with item {}.", i % 17, i * 13),
            )
        })
        .collect();
    ingest(&data, &docs, &dir.path().join("docs.jsonl"));
    let rebuild = || {
        let mut cmd = cli(&data);
        cmd.args(["index", "rebuild-vectors", "kb"])
            .env("RAGSTREAM_INDEX__VECTOR__PARTITIONS", "2");
        cmd
    };
    crash_at(&mut rebuild(), "after-vector-index-commit");

    let s = stats(&data);
    assert_eq!(s["documents"], docs.len(), "{s}");
    assert_eq!(s["chunks"], docs.len(), "{s}");
    assert_eq!(s["keyword_chunks"], s["chunks"], "{s}");
    let wanted = "Passage 42 on subject 8 with item 546.";
    assert_eq!(top(&data, "hashing", "semantic", wanted), "d42");
    json_of(&mut rebuild());
    let s = stats(&data);
    assert_eq!(s["documents"], docs.len(), "{s}");
    assert_eq!(s["chunks"], docs.len(), "{s}");
    assert_eq!(top(&data, "hashing", "semantic", wanted), "d42");
}

/// Killed between a reembed's Lance commit and its bookkeeping: the next process finishes
/// the switch (the index belongs to the new model), every document is there once, and both
/// searches answer.
#[test]
fn a_crash_inside_a_reembed_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let corpus = crate::common::corpus();
    ingest(&data, &corpus, &dir.path().join("docs.jsonl"));
    crash_at(
        cli(&data).args(["index", "reembed", "kb", "--embedder", "static"]),
        "after-reembed-commit",
    );

    let s = json_of(
        cli(&data)
            .env("RAGSTREAM_MODEL_EMBEDDER", "static")
            .args(["index", "stats", "kb"]),
    );
    assert_eq!(s["documents"], corpus.len(), "{s}");
    assert_eq!(s["chunks"], corpus.len(), "{s}");
    assert_eq!(s["keyword_chunks"], s["chunks"], "{s}");
    assert_eq!(s["embedder"], "all-minilm-l6-v2-static", "{s}");
    assert_eq!(
        top(&data, "static", "semantic", "yeast ferments sugar in dough"),
        "bread"
    );
    assert_eq!(
        top(&data, "static", "keyword", "yeast ferments sugar"),
        "bread"
    );
}

/// The files of `dir` (one level) whose name ends with `ext`.
fn files_in(dir: &Path, ext: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect()
}

/// A Lance file cut short: Lance is the source of truth, so nothing is rebuilt, but every
/// read of the index answers `index_damaged` with what to do. (A manifest cut short makes
/// Lance panic while opening; the panic is caught, so the exit is the error's 1, not 101.)
#[test]
fn a_truncated_lance_file_is_a_clear_error() {
    for damaged in ["data", "manifest"] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        ingest(
            &data,
            &crate::common::corpus(),
            &dir.path().join("docs.jsonl"),
        );
        let lance = data.join("indexes/kb/chunks.lance");
        let files = match damaged {
            "data" => files_in(&lance.join("data"), ".lance"),
            _ => files_in(&lance.join("_versions"), ".manifest"),
        };
        assert!(!files.is_empty(), "no {damaged} files");
        for path in files {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(f.metadata().unwrap().len() / 2).unwrap();
        }
        let out = cli(&data)
            .args(["query", "--index", "kb", "yeast", "--json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{damaged}: {out:?}");
        let body: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{damaged}: {e}: {out:?}"));
        assert_eq!(body["error"]["code"], "index_damaged", "{damaged}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("index kb") && message.contains("restore"),
            "{damaged}: {message}"
        );
    }
}
