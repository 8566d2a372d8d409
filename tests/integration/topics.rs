//! The daemon's topics on a broker that has none: created through Kafka's admin API with
//! the configured partitions; on a broker that will not create them, start-up stops and
//! names the missing ones.

use serde_json::Value;

use crate::daemon::serve_command;

/// Each topic's name and partition count, from kcat's metadata listing.
pub fn topics(bootstrap: &str) -> Vec<(String, usize)> {
    let out = std::process::Command::new(crate::common::kcat_program())
        .args(["-L", "-J", "-b", bootstrap])
        .output()
        .unwrap();
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let mut topics: Vec<(String, usize)> = listing["topics"]
        .as_array()
        .unwrap_or_else(|| panic!("no topic list: {listing}"))
        .iter()
        .map(|t| {
            (
                t["topic"].as_str().unwrap_or_default().to_string(),
                t["partitions"].as_array().map_or(0, Vec::len),
            )
        })
        .collect();
    topics.sort();
    topics
}

#[test]
fn a_daemon_creates_its_missing_topics_on_a_bare_broker() {
    let dir = tempfile::tempdir().unwrap();
    // The broker alone, as the library starts it: no topics.
    let broker = ragstream::kafka::embedded_broker::EmbeddedBroker::start(
        &ragstream::config::KafkaConfig::default(),
        &dir.path().join("broker"),
        None,
    )
    .unwrap();
    assert!(topics(broker.bootstrap()).is_empty());

    let d = crate::daemon::start_daemon_at(
        &dir.path().join("data"),
        &[
            ("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap()),
            ("RAGSTREAM_KAFKA_PARTITIONS", "3"),
        ],
    );
    let expected: Vec<(String, usize)> = [
        ("ragstream.dlq", 1),
        ("ragstream.documents", 3),
        ("ragstream.queries", 3),
        ("ragstream.replies", 1),
        ("ragstream.versions", 1),
    ]
    .iter()
    .map(|(t, p)| (t.to_string(), *p))
    .collect();
    assert_eq!(topics(broker.bootstrap()), expected);
    drop(d);
}

#[test]
fn a_broker_that_will_not_create_topics_stops_start_up_naming_them() {
    // librdkafka's mock cluster answers no CreateTopics request; it holds only the
    // documents topic.
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let cluster = std::thread::spawn(move || {
        let cluster = rdkafka::mocking::MockCluster::new(1).unwrap();
        cluster.create_topic("ragstream.documents", 2, 1).unwrap();
        ready_tx.send(cluster.bootstrap_servers()).unwrap();
        let _ = stop_rx.recv();
    });
    let bootstrap = ready_rx.recv().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = serve_command(
        dir.path(),
        &[("RAGSTREAM_KAFKA_BROKERS", bootstrap.as_str())],
    )
    .output()
    .unwrap();
    let _ = stop_tx.send(());
    cluster.join().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for missing in [
        "ragstream.queries",
        "ragstream.dlq",
        "ragstream.replies",
        "ragstream.versions",
    ] {
        assert!(err.contains(missing), "{missing} in: {err}");
    }
    assert!(!err.contains("\"ragstream.documents\""), "{err}");
}
