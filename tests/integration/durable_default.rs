//! The default mode keeps every acknowledgement: `ragstream serve` with no `kafka.brokers`
//! runs its embedded broker (nisshi, messages on disk). 20,000 documents are acknowledged,
//! over HTTP (202) or to kcat (a Kafka ack), then the daemon is killed (SIGKILL) during the
//! drain or stopped (SIGTERM) right after the last acknowledgement, and the same command is
//! run again: every document is indexed exactly once. Each test counts what was lost and
//! what was duplicated. And the broker's own death is survived: it is started again on its
//! port, and counted.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::{hashing_engine, name};
use crate::daemon::{curl, post_json, start_daemon_at, wait_for_state_within, Daemon};
use crate::telemetry::{sample, scrape};

const DOCUMENTS: usize = 20_000;
const PER_REQUEST: usize = 200;

/// Small batches, so that the drain is long enough to be interrupted.
const ENV: &[(&str, &str)] = &[("RAGSTREAM_KAFKA_BATCH_MAX_DOCUMENTS", "50")];

fn document(i: usize) -> serde_json::Value {
    json!({"id": format!("doc-{i:05}"),
        "text": format!("Document {i} is about topic {} and number {}.", i % 97, i * 7)})
}

fn indexed(http: &str) -> u64 {
    curl(&[&format!("{http}/v1/indexes/kb/stats")]).1["documents"]
        .as_u64()
        .unwrap_or(0)
}

/// POSTs every document in requests of [`PER_REQUEST`]; each must be answered 202.
fn post_all(d: &Daemon) {
    for start in (0..DOCUMENTS).step_by(PER_REQUEST) {
        let docs: Vec<_> = (start..start + PER_REQUEST).map(document).collect();
        let (status, body) = post_json(
            &format!("{}/v1/indexes/kb/documents", d.http),
            &json!({ "documents": docs }),
        );
        assert_eq!(status, 202, "request at {start}: {body}");
    }
}

/// Waits until `kb` holds every document.
fn wait_for_all(d: &Daemon) {
    wait_for_state_within("every document", Duration::from_secs(600), || {
        let n = indexed(&d.http);
        (n == DOCUMENTS as u64, format!("{n} documents"))
    });
}

/// Documents lost (acknowledged, not indexed) and duplicated (chunks stored twice), read
/// from the data directory once no daemon runs. Lance and tantivy must agree.
async fn lost_and_duplicated(data: &std::path::Path) -> (usize, usize) {
    let engine = hashing_engine(data);
    let index = engine.index(&name("kb")).await.unwrap();
    let stats = index.reader().stats().await.unwrap();
    let ids = index
        .lance()
        .all_chunk_ids(&index.lance().latest())
        .await
        .unwrap();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        index.keyword().chunk_ids(stats.index_version).unwrap(),
        ids,
        "tantivy agrees with Lance"
    );
    // One chunk a document.
    let lost = DOCUMENTS.saturating_sub(unique.len());
    let duplicated = ids.len() - unique.len();
    eprintln!("lost {lost}, duplicated {duplicated} of {DOCUMENTS}");
    (lost, duplicated)
}

/// Kills `d` (SIGKILL) while the backlog drains; returns how many were indexed then.
fn kill_during_drain(mut d: Daemon) -> u64 {
    wait_for_state_within("the drain to start", Duration::from_secs(120), || {
        let n = indexed(&d.http);
        (n > 0, format!("{n} documents"))
    });
    let before = indexed(&d.http);
    d.kill();
    assert!(
        before < DOCUMENTS as u64,
        "the kill must land before the drain ends ({before} indexed)"
    );
    before
}

#[tokio::test]
async fn documents_posted_to_the_default_daemon_survive_sigkill_during_the_drain() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let d = start_daemon_at(&data, ENV);
    post_all(&d);
    let bootstrap = d.bootstrap.clone();
    kill_during_drain(d);

    let again = start_daemon_at(&data, ENV);
    assert_eq!(
        again.bootstrap, bootstrap,
        "the broker died with its daemon and comes back on its port"
    );
    wait_for_all(&again);
    drop(again);
    assert_eq!(lost_and_duplicated(&data).await, (0, 0));
}

#[tokio::test]
async fn documents_posted_to_the_default_daemon_survive_sigterm_after_the_last_202() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let d = start_daemon_at(&data, ENV);
    post_all(&d);
    assert!(d.terminate().success());

    let again = start_daemon_at(&data, ENV);
    wait_for_all(&again);
    drop(again);
    assert_eq!(lost_and_duplicated(&data).await, (0, 0));
}

#[tokio::test]
async fn documents_produced_with_kcat_to_the_default_daemon_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let d = start_daemon_at(&data, ENV);
    let lines: Vec<String> = (0..DOCUMENTS)
        .map(|i| {
            let doc = document(i);
            let event =
                json!({"schema_version": 1, "op": "upsert", "index": "kb", "document": doc});
            format!("kb/{}\t{event}", doc["id"].as_str().unwrap())
        })
        .collect();
    // kcat exits 0 only once every message is acknowledged.
    crate::daemon::kcat_produce(&d.bootstrap, "ragstream.documents", &["-K", "\t"], &lines);
    kill_during_drain(d);

    let again = start_daemon_at(&data, ENV);
    wait_for_all(&again);
    drop(again);
    assert_eq!(lost_and_duplicated(&data).await, (0, 0));
}

/// The pids of `parent`'s children.
fn children(parent: u32) -> Vec<u32> {
    let out = Command::new("pgrep")
        .args(["-P", &parent.to_string()])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn the_embedded_broker_is_started_again_when_it_dies_and_dies_with_its_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut d = start_daemon_at(&data, &[]);
    let brokers = children(d.pid());
    assert_eq!(brokers.len(), 1, "one broker process: {brokers:?}");
    let first = brokers[0];
    assert!(Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .unwrap()
        .success());

    // Started again, counted, on the same port: what is posted now is indexed.
    let restarts = r#"ragstream_actor_restarts_total{pipeline="embedded_broker"}"#;
    wait_for_state_within("a new broker", Duration::from_secs(60), || {
        let now = children(d.pid());
        let count = sample(&scrape(&d.http), restarts);
        (
            now.len() == 1 && now[0] != first && count == Some(1.0),
            format!("children {now:?}, restarts {count:?}"),
        )
    });
    wait_for_state_within("healthy again", Duration::from_secs(60), || {
        let (status, body) = curl(&[&format!("{}/healthz", d.http)]);
        (status == 200, body.to_string())
    });
    let (status, body) = post_json(
        &format!("{}/v1/indexes/kb/documents", d.http),
        &json!({"documents": [document(1)]}),
    );
    assert_eq!(status, 202, "{body}");
    wait_for_state_within("the document", Duration::from_secs(120), || {
        let n = indexed(&d.http);
        (n == 1, format!("{n} documents"))
    });

    // SIGKILL of the daemon takes its broker with it.
    let broker = children(d.pid())[0];
    d.kill();
    wait_for_state_within(
        "the broker to die with its daemon",
        Duration::from_secs(30),
        || {
            let alive = std::path::Path::new(&format!("/proc/{broker}")).exists()
                && !std::fs::read_to_string(format!("/proc/{broker}/stat"))
                    .unwrap_or_default()
                    .contains(") Z ");
            (!alive, format!("broker {broker} alive: {alive}"))
        },
    );
}
