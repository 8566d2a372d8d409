//! `ragstream dlq replay` against a standalone broker: a document refused by one daemon's
//! limit is dead-lettered; a second daemon with the limit raised indexes it once the letter
//! is replayed, with its key and original headers and without the dead-letter headers. A
//! replay is idempotent: a letter is re-sent once, and a poison letter does not multiply.

use std::process::Command;

use serde_json::{json, Value};

use crate::daemon::{
    curl, kcat_count, kcat_produce, start_broker, start_daemon_at, upsert, wait_for,
};

/// `ragstream dlq replay ARGS` with `env`: exit code and stdout as JSON (Null if not JSON).
fn replay(env: &[(&str, &str)], args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ragstream"))
        .args(["dlq", "replay"])
        .args(args)
        .env_remove("RAGSTREAM_KAFKA_BROKERS")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Whether a replay report selected the letter keyed `kb/big`.
fn selects_big(report: &Value) -> bool {
    report["replayed"]
        .as_array()
        .unwrap_or_else(|| panic!("no replayed list: {report}"))
        .iter()
        .any(|l| l["key"] == "kb/big")
}

#[test]
fn replayed_dead_letters_are_indexed_once_the_cause_is_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start_broker(&dir.path().join("broker"), &[]);
    let brokers = [("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str())];
    let data = dir.path().join("data");
    let stats = |http: &str| curl(&[&format!("{http}/v1/indexes/kb/stats")]).1;

    // The first daemon refuses documents over 1,024 bytes.
    let first = start_daemon_at(
        &data,
        &[brokers[0], ("RAGSTREAM_LIMITS_MAX_DOCUMENT_BYTES", "1024")],
    );
    let big = "lava ".repeat(400);
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &["-k", "kb/small"],
        &[upsert("small", "Basalt is cooled lava.")],
    );
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &["-k", "kb/big", "-H", "origin=importer"],
        &[upsert("big", &big)],
    );
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &[],
        &["{nope".to_string()],
    );
    wait_for("two dead letters", || {
        kcat_count(&broker.bootstrap, "ragstream.dlq") == 2
    });
    wait_for("the small document", || {
        stats(&first.http)["documents"] == 1
    });
    assert!(first.terminate().success());

    // Without brokers, or with a backwards range: a usage error.
    let (code, _, err) = replay(&[], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("kafka.brokers"), "{err}");
    let (code, _, err) = replay(&brokers, &["--from-offset", "5", "--to-offset", "1"]);
    assert_eq!(code, 2, "{err}");

    // The limit raised; a dry run selects the refused document and sends nothing.
    let second = start_daemon_at(&data, &brokers);
    let (code, report, err) = replay(&brokers, &["--code", "schema_violation", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["scanned"], 2, "{report}");
    assert_eq!(report["dry_run"], true);
    let taken = report["replayed"].as_array().unwrap();
    assert_eq!(taken.len(), 1, "{report}");
    assert_eq!(taken[0]["key"], "kb/big");
    assert_eq!(taken[0]["code"], "schema_violation");
    assert!(taken[0]["sent_to"].is_null());

    // By place: every letter, then exactly one by its partition and offset, then a range
    // of that partition that ends before it.
    let (code, all, err) = replay(&brokers, &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(all["replayed"].as_array().unwrap().len(), 2, "{all}");
    let big_letter = all["replayed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["key"] == "kb/big")
        .unwrap_or_else(|| panic!("{all}"));
    let (partition, offset) = (
        big_letter["partition"].to_string(),
        big_letter["offset"].as_i64().unwrap(),
    );
    let at = offset.to_string();
    let (code, report, err) = replay(
        &brokers,
        &[
            "--dry-run",
            "--partition",
            &partition,
            "--from-offset",
            &at,
            "--to-offset",
            &at,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let taken = report["replayed"].as_array().unwrap();
    assert_eq!(taken.len(), 1, "{report}");
    assert_eq!(taken[0]["key"], "kb/big", "{report}");
    assert_eq!(taken[0]["offset"], offset, "{report}");
    if offset > 0 {
        let before = (offset - 1).to_string();
        let (code, report, err) = replay(
            &brokers,
            &[
                "--dry-run",
                "--partition",
                &partition,
                "--to-offset",
                &before,
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert!(!selects_big(&report), "{report}");
    }
    let (code, report, err) = replay(
        &brokers,
        &["--dry-run", "--from-offset", &(offset + 1).to_string()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        !selects_big(&report),
        "a range after the letter leaves it out: {report}"
    );

    // The replay: the document is indexed, and not dead-lettered again.
    let (code, report, err) = replay(&brokers, &["--key", "kb/big"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["replayed"].as_array().unwrap().len(), 1, "{report}");
    assert!(report["replayed"][0]["sent_to"].is_array(), "{report}");
    wait_for("the replayed document", || {
        stats(&second.http)["documents"] == 2
    });
    assert_eq!(kcat_count(&broker.bootstrap, "ragstream.dlq"), 2);
    let (status, answer) = curl(&[
        "-X",
        "POST",
        "-d",
        &json!({"query": "lava", "top_k": 1}).to_string(),
        &format!("{}/v1/indexes/kb/query", second.http),
    ]);
    assert_eq!(status, 200);
    assert_eq!(answer["results"][0]["document_id"], "big", "{answer}");

    // Idempotent: the same replay again re-sends nothing.
    let (code, report, err) = replay(&brokers, &["--key", "kb/big"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["replayed"].as_array().unwrap().len(), 0, "{report}");
    assert_eq!(report["already_replayed"], 1, "{report}");
    // A poison letter comes back as one new letter per replay: letters never multiply.
    for run in 1..=3 {
        let (code, report, err) = replay(&brokers, &[]);
        assert_eq!(code, 0, "{err}");
        let taken = report["replayed"].as_array().unwrap();
        assert_eq!(taken.len(), 1, "run {run}: {report}");
        assert_eq!(taken[0]["code"], "bad_json", "run {run}: {report}");
        wait_for("the poison dead-lettered again", || {
            kcat_count(&broker.bootstrap, "ragstream.dlq") == 2 + run
        });
    }

    // What was re-sent: the key and the original header, no dead-letter header.
    let out = Command::new(crate::common::kcat_program())
        .args([
            "-C",
            "-b",
            &broker.bootstrap,
            "-t",
            "ragstream.documents",
            "-e",
            "-q",
            "-f",
            "%k %h\n",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let resent: Vec<&str> = text.lines().filter(|l| l.starts_with("kb/big ")).collect();
    assert_eq!(resent.len(), 2, "{text}");
    for line in resent {
        assert!(line.contains("origin=importer"), "{line}");
        assert!(!line.contains("error.code"), "{line}");
    }
}

/// A restart sends no second dead letter for a message the daemon read before it: here a
/// bad message after the index's last commit, in a batch of its own, so no index's
/// checkpoint covers it and the restarted pipeline reads it again. Counts the letters
/// (lost: none, duplicated: none) and the documents around it.
#[test]
fn a_restart_sends_no_second_dead_letter_for_a_message_read_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let broker = start_broker(&dir.path().join("broker"), &[]);
    let brokers = [("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str())];
    let data = dir.path().join("data");
    let documents =
        |http: &str| curl(&[&format!("{http}/v1/indexes/kb/stats")]).1["documents"].clone();
    // One partition: the bad message follows the document on the same log.
    let first = start_daemon_at(&data, &[brokers[0], ("RAGSTREAM_KAFKA_PARTITIONS", "1")]);
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &["-k", "kb/a"],
        &[upsert("a", "Basalt is cooled lava.")],
    );
    wait_for("the first document", || documents(&first.http) == 1);
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &[],
        &["{nope".to_string()],
    );
    wait_for("one dead letter", || {
        kcat_count(&broker.bootstrap, "ragstream.dlq") == 1
    });
    assert!(first.terminate().success());

    let second = start_daemon_at(&data, &[brokers[0], ("RAGSTREAM_KAFKA_PARTITIONS", "1")]);
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &["-k", "kb/b"],
        &[upsert("b", "Obsidian is volcanic glass.")],
    );
    // The second document is behind the bad message: once it is in, the bad one was read.
    wait_for("the second document", || documents(&second.http) == 2);
    assert_eq!(
        kcat_count(&broker.bootstrap, "ragstream.dlq"),
        1,
        "the bad message was dead-lettered again after the restart"
    );
    assert!(second.terminate().success());
}
