//! A query consumer group's first start skips the queries topic's history, and a restart
//! resumes where it stopped: a standalone broker, daemons as processes, kcat as the client.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::daemon::{kcat_consume, kcat_count, kcat_produce, start_daemon_at};
use crate::telemetry::{sample, scrape};

/// A query to `partition` of the queries topic.
fn ask(bootstrap: &str, partition: u32, correlation_id: &str) {
    let query = json!({"retrieval": {"index": "kb", "query": "anything", "top_k": 1}});
    kcat_produce(
        bootstrap,
        "ragstream.queries",
        &[
            "-p",
            &partition.to_string(),
            "-H",
            "reply-to=ragstream.replies",
            "-H",
            &format!("correlation-id={correlation_id}"),
        ],
        &[query.to_string()],
    );
}

/// The correlation ids of every reply in the topic, in order.
fn replied(bootstrap: &str) -> Vec<String> {
    let n = kcat_count(bootstrap, "ragstream.replies");
    kcat_consume(bootstrap, "ragstream.replies", n)
        .iter()
        .filter_map(|l| {
            let headers = l.split_once('\t')?.0;
            headers
                .split(',')
                .find_map(|h| h.strip_prefix("correlation-id="))
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn a_new_group_skips_old_queries_and_a_restarted_one_answers_what_came_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let mut broker = Stopped(
        Command::new(env!("CARGO_BIN_EXE_ragstream"))
            .arg("broker")
            .env("RAGSTREAM_STORAGE_DATA_DIR", dir.path().join("broker"))
            .env("RAGSTREAM_KAFKA_PARTITIONS", "2")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut out = BufReader::new(broker.0.stdout.take().unwrap()).lines();
    let bootstrap = loop {
        let line = out.next().expect("the broker announces").unwrap();
        if let Some(b) = line.strip_prefix("kafka bootstrap: ") {
            break b.to_string();
        }
    };
    std::thread::spawn(move || for _ in out {});

    // A query left in the topic before any daemon ran: its caller is long gone.
    ask(&bootstrap, 0, "before-any-daemon");
    let env = [
        ("RAGSTREAM_KAFKA_BROKERS", bootstrap.as_str()),
        ("RAGSTREAM_KAFKA_PARTITIONS", "2"),
    ];
    let data = dir.path().join("data");
    let d = start_daemon_at(&data, &env);
    ask(&bootstrap, 0, "first");
    let first = kcat_consume(&bootstrap, "ragstream.replies", 1);
    assert!(first[0].contains("correlation-id=first"), "{first:?}");
    // The old query was skipped: counted, never answered.
    let metrics = scrape(&d.http);
    assert_eq!(
        sample(&metrics, "ragstream_bus_queries_before_start_total"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(replied(&bootstrap), ["first"]);
    assert!(d.terminate().success());

    // Sent while no daemon runs, one to each partition (the second has never carried a
    // query): the restarted group resumes where it stopped and answers both, though they
    // are older than the new daemon.
    ask(&bootstrap, 0, "during-restart-0");
    ask(&bootstrap, 1, "during-restart-1");
    let d = start_daemon_at(&data, &env);
    ask(&bootstrap, 1, "after-restart");
    crate::daemon::wait_for("the queries answered", || replied(&bootstrap).len() >= 4);
    let mut answered = replied(&bootstrap);
    answered.sort();
    assert_eq!(
        answered,
        [
            "after-restart",
            "during-restart-0",
            "during-restart-1",
            "first"
        ]
    );
    assert_eq!(
        sample(&scrape(&d.http), "ragstream_bus_queries_before_start_total"),
        Some(0.0)
    );
}

/// A child process killed when dropped, the test failing or not.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
