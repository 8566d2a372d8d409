//! Exactly once under SIGKILL: a daemon ingesting 12,000 documents from a separate
//! `ragstream broker` process is killed at 20 varied moments and restarted; at the end every
//! document is indexed exactly once and Lance and tantivy agree. And a daemon killed right
//! after it dead-lettered a message loses and duplicates nothing either.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{hashing_engine, name};

const DOCUMENTS: usize = 12_000;
const KILLS: usize = 20;

fn spawn(
    args: &[&str],
    data: &std::path::Path,
    bootstrap: Option<&str>,
) -> (Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
    spawn_at(args, data, bootstrap, None)
}

/// As [`spawn`], aborting at `failpoint` when one is given.
fn spawn_at(
    args: &[&str],
    data: &std::path::Path,
    bootstrap: Option<&str>,
    failpoint: Option<&str>,
) -> (Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ragstream"));
    cmd.args(args)
        .env("RAGSTREAM_STORAGE_DATA_DIR", data)
        .env("RAGSTREAM_MODEL_EMBEDDER", "hashing")
        .env("RAGSTREAM_HTTP_BIND", "127.0.0.1:0")
        .env("RAGSTREAM_KAFKA_BATCH_MAX_DOCUMENTS", "50")
        .env("RAGSTREAM_LOG", "error")
        .env_remove("RAGSTREAM_FAILPOINT")
        .stdout(Stdio::piped());
    if let Some(b) = bootstrap {
        cmd.env("RAGSTREAM_KAFKA_BROKERS", b);
    }
    if let Some(f) = failpoint {
        cmd.env("RAGSTREAM_FAILPOINT", f);
    }
    let mut child = cmd.spawn().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

/// A child's stdout, line by line.
pub type Lines = std::io::Lines<BufReader<std::process::ChildStdout>>;

pub fn wait_line(lines: &mut Lines, prefix: &str) -> String {
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix(prefix) {
            return rest.to_string();
        }
    }
    panic!("process exited before printing {prefix}");
}

pub fn stats(http: &str) -> serde_json::Value {
    let out = Command::new("curl")
        .args(["-s", &format!("{http}/v1/indexes/kb/stats")])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
}

#[tokio::test]
async fn sigkill_at_random_moments_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (broker_data, data) = (dir.path().join("broker"), dir.path().join("data"));
    let (mut broker, mut broker_out) = spawn(&["broker"], &broker_data, None);
    let bootstrap = wait_line(&mut broker_out, "kafka bootstrap: ");
    std::thread::spawn(move || for _ in broker_out {});

    let mut kcat = Command::new(crate::common::kcat_program())
        .args([
            "-P",
            "-b",
            &bootstrap,
            "-t",
            "ragstream.documents",
            "-K",
            "\t",
        ])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = kcat.stdin.take().unwrap();
    for i in 0..DOCUMENTS {
        let id = format!("doc-{i:05}");
        let event = serde_json::json!({"schema_version": 1, "op": "upsert", "index": "kb",
            "document": {"id": id, "title": format!("Document {i}"),
                "text": format!("Paragraph one of document {i} about topic {}.\n\nParagraph two mentions number {}.", i % 97, i * 7)}});
        writeln!(stdin, "kb/{id}\t{event}").unwrap();
    }
    drop(stdin);
    assert!(kcat.wait().unwrap().success());

    // Each round waits until the restarted daemon has committed something new (it has
    // rejoined the group and is ingesting), then kills it a pseudo-random moment later: in
    // the middle of batching, embedding or committing.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut indexed = 0u64;
    for round in 0..KILLS {
        let (mut daemon, mut out) = spawn(&["serve"], &data, Some(&bootstrap));
        let http = wait_line(&mut out, "http: ");
        std::thread::spawn(move || for _ in out {});
        let resumed = Instant::now();
        while indexed < DOCUMENTS as u64
            && stats(&http)["documents"].as_u64().unwrap_or(0) <= indexed
            && resumed.elapsed() < Duration::from_secs(30)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Short enough that twenty rounds land before the backlog is drained.
        let delay = Duration::from_millis(seed % 300);
        std::thread::sleep(delay);
        let before_kill = stats(&http)["documents"].as_u64().unwrap_or(indexed);
        daemon.kill().unwrap(); // SIGKILL
        daemon.wait().unwrap();
        eprintln!(
            "round {round}: killed {delay:?} after progress, {before_kill} documents indexed"
        );
        indexed = indexed.max(before_kill);
    }
    assert!(
        indexed < DOCUMENTS as u64,
        "the kills must land before ingestion completes"
    );

    let (mut daemon, mut out) = spawn(&["serve"], &data, Some(&bootstrap));
    let http = wait_line(&mut out, "http: ");
    std::thread::spawn(move || for _ in out {});
    let start = Instant::now();
    while stats(&http)["documents"] != DOCUMENTS {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "not all documents arrived: {}",
            stats(&http)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    broker.kill().unwrap();
    broker.wait().unwrap();

    let engine = hashing_engine(&data);
    let index = engine.index(&name("kb")).await.unwrap();
    let s = index.reader().stats().await.unwrap();
    assert_eq!(s.documents, DOCUMENTS);
    let lance_ids = index
        .lance()
        .all_chunk_ids(&index.lance().latest())
        .await
        .unwrap();
    let mut unique = lance_ids.clone();
    unique.dedup();
    assert_eq!(unique.len(), lance_ids.len(), "a chunk id is stored twice");
    assert_eq!(
        lance_ids.len(),
        DOCUMENTS,
        "every document has exactly its one chunk"
    );
    assert_eq!(
        index.keyword().chunk_ids(s.index_version).unwrap(),
        lance_ids,
        "tantivy agrees with Lance"
    );
}

/// Killed right after a poison message reached the dead-letter topic, before anything after
/// it was committed: the restarted daemon dead-letters it again (a repeat, never a loss) and
/// indexes every good document exactly once.
#[tokio::test]
async fn sigkill_after_dead_lettering_loses_and_duplicates_nothing() {
    const GOOD: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let (broker_data, data) = (dir.path().join("broker"), dir.path().join("data"));
    let (mut broker, mut broker_out) = spawn(&["broker"], &broker_data, None);
    let bootstrap = wait_line(&mut broker_out, "kafka bootstrap: ");
    std::thread::spawn(move || for _ in broker_out {});

    // One partition, so the poison sits between good documents in one ordered log.
    let mut lines: Vec<String> = (0..GOOD)
        .map(|i| {
            let event = serde_json::json!({"schema_version": 1, "op": "upsert", "index": "kb",
                "document": {"id": format!("d{i}"), "text": format!("Good document {i}.")}});
            format!("kb/d{i}\t{event}")
        })
        .collect();
    lines.insert(GOOD / 2, "kb/poison\t{not json".to_string());
    crate::daemon::kcat_produce(
        &bootstrap,
        "ragstream.documents",
        &["-K", "\t", "-p", "0"],
        &lines,
    );

    let (mut crashed, out) = spawn_at(
        &["serve"],
        &data,
        Some(&bootstrap),
        Some("after-dead-letter"),
    );
    std::thread::spawn(move || for _ in out {});
    let started = Instant::now();
    let status = loop {
        if let Some(status) = crashed.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the failpoint never fired"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!status.success(), "the failpoint aborts the daemon");

    let (mut daemon, mut out) = spawn(&["serve"], &data, Some(&bootstrap));
    let http = wait_line(&mut out, "http: ");
    std::thread::spawn(move || for _ in out {});
    let start = Instant::now();
    while stats(&http)["documents"] != GOOD {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "not all good documents arrived: {}",
            stats(&http)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let letters = crate::daemon::kcat_count(&bootstrap, "ragstream.dlq");
    broker.kill().unwrap();
    broker.wait().unwrap();
    assert!(
        (1..=2).contains(&letters),
        "the poison is dead-lettered, at most once more after the crash: {letters}"
    );

    let engine = hashing_engine(&data);
    let index = engine.index(&name("kb")).await.unwrap();
    let s = index.reader().stats().await.unwrap();
    assert_eq!(s.documents, GOOD);
    let ids = index
        .lance()
        .all_chunk_ids(&index.lance().latest())
        .await
        .unwrap();
    assert_eq!(ids.len(), GOOD, "every good document exactly once");
    assert_eq!(index.keyword().chunk_ids(s.index_version).unwrap(), ids);
}
