//! Backpressure: with the embedder slowed on purpose, 50,000 queued messages wait in Kafka,
//! not in the daemon's memory.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const MESSAGES: usize = 50_000;
/// Resident memory the daemon may not exceed while the backlog waits (librdkafka's own
/// prefetch queue is bounded at 64 MiB by default; the rest is the engine and its stores).
const RSS_BOUND_KIB: u64 = 600 * 1024;

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_slow_embedder_keeps_memory_flat_while_the_backlog_waits_in_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let mut broker = Command::new(env!("CARGO_BIN_EXE_ragstream"))
        .arg("broker")
        .env("RAGSTREAM_STORAGE_DATA_DIR", dir.path().join("broker"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(broker.stdout.take().unwrap()).lines();
    let bootstrap = loop {
        let line = out.next().unwrap().unwrap();
        if let Some(b) = line.strip_prefix("kafka bootstrap: ") {
            break b.to_string();
        }
    };
    let mut kcat = Command::new(crate::common::kcat_program())
        .args(["-P", "-b", &bootstrap, "-t", "ragstream.documents"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = kcat.stdin.take().unwrap();
    let filler = "word ".repeat(100);
    for i in 0..MESSAGES {
        writeln!(stdin, r#"{{"schema_version":1,"op":"upsert","index":"kb","document":{{"id":"d{i}","text":"{filler} {i}"}}}}"#).unwrap();
    }
    drop(stdin);
    assert!(kcat.wait().unwrap().success());

    let mut daemon = Command::new(env!("CARGO_BIN_EXE_ragstream"))
        .arg("serve")
        .env("RAGSTREAM_STORAGE_DATA_DIR", dir.path().join("data"))
        .env("RAGSTREAM_MODEL_EMBEDDER", "hashing")
        .env("RAGSTREAM_MODEL_SIMULATED_LATENCY_MS", "2000")
        .env("RAGSTREAM_KAFKA_BATCH_MAX_DOCUMENTS", "100")
        .env("RAGSTREAM_KAFKA_BROKERS", &bootstrap)
        .env("RAGSTREAM_HTTP_BIND", "127.0.0.1:0")
        .env("RAGSTREAM_LOG", "error")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut samples = Vec::new();
    for _ in 0..6 {
        std::thread::sleep(Duration::from_secs(4));
        samples.push(rss_kib(daemon.id()));
    }
    let _ = daemon.kill();
    let _ = daemon.wait();
    let _ = broker.kill();
    let _ = broker.wait();
    eprintln!("daemon RSS samples (KiB, every 4 s): {samples:?}");
    let peak = *samples.iter().max().unwrap();
    assert!(
        peak < RSS_BOUND_KIB,
        "RSS {peak} KiB exceeds the bound {RSS_BOUND_KIB} KiB"
    );
    // Flat: after start-up the backlog does not pile up in memory.
    let (settled, last) = (samples[2], *samples.last().unwrap());
    assert!(last < settled + 64 * 1024, "RSS kept growing: {samples:?}");
}
