//! Retention: messages the broker deleted before the pipeline read them are reported with
//! their count, and ingestion goes on from the oldest message kept — never a silent jump,
//! never a stall. The broker (the embedded one, nisshi) deletes them as retention does, at
//! once: through Kafka's DeleteRecords, which moves the oldest kept offset the same way.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::crash::{stats, wait_line, Lines};
use crate::daemon::kcat_produce;

/// Deletes partition 0 of `topic` below `offset`, as retention would. Blocking.
fn delete_below(bootstrap: &str, topic: &str, offset: i64) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let mut list = rdkafka::TopicPartitionList::new();
    list.add_partition_offset(topic, 0, rdkafka::Offset::Offset(offset))
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let deleted = runtime
        .block_on(admin.delete_records(&list, &AdminOptions::new()))
        .unwrap();
    for p in deleted.elements() {
        assert!(p.error().is_ok(), "deleting records: {:?}", p.error());
    }
}

fn spawn(args: &[&str], data: &std::path::Path, bootstrap: Option<&str>) -> (Child, Lines) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ragstream"));
    cmd.args(args)
        .env("RAGSTREAM_STORAGE_DATA_DIR", data)
        .env("RAGSTREAM_MODEL_EMBEDDER", "hashing")
        .env("RAGSTREAM_HTTP_BIND", "127.0.0.1:0")
        .env("RAGSTREAM_KAFKA_PARTITIONS", "1")
        .env("RAGSTREAM_LOG", "error")
        .stdout(Stdio::piped());
    if let Some(b) = bootstrap {
        cmd.env("RAGSTREAM_KAFKA_BROKERS", b);
    }
    let mut child = cmd.spawn().unwrap();
    let lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    (child, lines)
}

fn documents(from: usize, to: usize, filler: &str) -> Vec<String> {
    (from..to)
        .map(|i| {
            let event = serde_json::json!({"schema_version": 1, "op": "upsert", "index": "kb",
                "document": {"id": format!("d{i}"), "text": format!("Document {i}. {filler}")}});
            format!("kb/d{i}\t{event}")
        })
        .collect()
}

fn wait_for_documents(http: &str, want: usize) {
    let start = Instant::now();
    while stats(http)["documents"] != want {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "expected {want} documents: {}",
            stats(http)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The oldest offset partition 0 of `topic` still keeps.
fn low_watermark(bootstrap: &str, topic: &str) -> i64 {
    let out = Command::new("timeout")
        .arg("30")
        .arg(crate::common::kcat_program())
        .args(["-C", "-b", bootstrap, "-t", topic, "-p", "0"])
        .args(["-o", "beginning", "-c", "1", "-e", "-q", "-f", "%o\n"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn lost_metric(http: &str) -> Option<i64> {
    let out = Command::new("curl")
        .args(["-s", &format!("{http}/metrics")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        l.strip_prefix(r#"ragstream_kafka_messages_lost_total{topic="ragstream.documents"} "#)?
            .parse()
            .ok()
    })
}

#[test]
fn messages_deleted_by_retention_before_they_were_read_are_counted_and_skipped() {
    const EARLY: usize = 3;
    const LATER: usize = 3_000;
    let dir = tempfile::tempdir().unwrap();
    let (broker_data, data) = (dir.path().join("broker"), dir.path().join("data"));
    let (mut broker, mut broker_out) = spawn(&["broker"], &broker_data, None);
    let bootstrap = wait_line(&mut broker_out, "kafka bootstrap: ");
    std::thread::spawn(move || for _ in broker_out {});
    let topic = "ragstream.documents";

    // A first daemon indexes three documents and stops: its checkpoint is offset 3.
    kcat_produce(&bootstrap, topic, &["-K", "\t"], &documents(0, EARLY, ""));
    let (mut first, mut out) = spawn(&["serve"], &data, Some(&bootstrap));
    let http = wait_line(&mut out, "http: ");
    std::thread::spawn(move || for _ in out {});
    wait_for_documents(&http, EARLY);
    first.kill().unwrap();
    first.wait().unwrap();

    // While no daemon runs, more arrives, and retention deletes the oldest unread messages.
    let filler = "filler words ".repeat(120);
    kcat_produce(
        &bootstrap,
        topic,
        &["-K", "\t"],
        &documents(EARLY, EARLY + LATER, &filler),
    );
    delete_below(&bootstrap, topic, (EARLY + LATER / 2) as i64);
    let low = low_watermark(&bootstrap, topic);
    assert!(
        low > EARLY as i64,
        "retention deleted unread messages: oldest offset {low}"
    );

    let (mut second, mut out) = spawn(&["serve"], &data, Some(&bootstrap));
    let http = wait_line(&mut out, "http: ");
    std::thread::spawn(move || for _ in out {});
    // Every message still kept is indexed: offsets low.. are documents d{low}...
    wait_for_documents(&http, EARLY + (EARLY + LATER - low as usize));
    assert_eq!(
        lost_metric(&http),
        Some(low - EARLY as i64),
        "the loss is counted to the message"
    );
    second.kill().unwrap();
    second.wait().unwrap();
    broker.kill().unwrap();
    broker.wait().unwrap();
}
