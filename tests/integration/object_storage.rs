//! Indexes on an object store: a writer and query replicas as separate processes over
//! moto's S3-compatible server on 127.0.0.1, a standalone broker, kcat as the producer.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::daemon::{
    curl, kcat_consume, kcat_count, kcat_produce, serve_command, start_broker, start_daemon_at,
    upsert, wait_for, wait_for_state_within, wait_for_within,
};

/// moto's S3 server on a free port, killed when dropped.
struct S3Server {
    child: Child,
    endpoint: String,
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_s3(bucket: &str) -> S3Server {
    let port = crate::telemetry::free_port();
    let child = Command::new("moto_server")
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("moto_server is installed by scripts/setup");
    let server = S3Server {
        child,
        endpoint: format!("http://127.0.0.1:{port}"),
    };
    wait_for("moto's server", || {
        Command::new("curl")
            .args(["-s", "-o", "/dev/null", &server.endpoint])
            .status()
            .is_ok_and(|s| s.success())
    });
    let (status, _) = curl(&["-X", "PUT", &format!("{}/{bucket}", server.endpoint)]);
    assert_eq!(status, 200, "bucket {bucket} created");
    server
}

/// A configuration file putting indexes under `uri` on `s3`; the secret key comes from the
/// variable `RS_TEST_S3_SECRET` (`_env` indirection).
fn storage_config(dir: &Path, s3: &S3Server, uri: &str) -> PathBuf {
    storage_config_with(dir, s3, uri, "")
}

/// [`storage_config`] with `more` lines in `[storage.options]`.
fn storage_config_with(dir: &Path, s3: &S3Server, uri: &str, more: &str) -> PathBuf {
    let path = dir.join(format!("storage-{}.toml", uri.replace(['/', ':'], "_")));
    std::fs::write(
        &path,
        format!(
            r#"[storage]
uri = "{uri}"
poll_interval_ms = 200

[storage.options]
aws_endpoint = "{}"
aws_region = "us-east-1"
aws_access_key_id = "test"
aws_secret_access_key_env = "RS_TEST_S3_SECRET"
allow_http = "true"
client_max_retries = "1"
client_retry_timeout = "5"
{more}"#,
            s3.endpoint
        ),
    )
    .unwrap();
    path
}

/// The contract 000 answer at `url` for `index_version` (or the newest), without the
/// fields that vary per call.
fn answer(http: &str, index: &str, version: Option<u64>) -> Value {
    let mut retrieval = json!({"index": index, "query": "lava rock valleys rain", "top_k": 3});
    if let Some(v) = version {
        retrieval["index_version"] = json!(v);
    }
    let (status, mut body) = curl(&[
        "-X",
        "POST",
        &format!("{http}/v1/retrieve"),
        "-d",
        &json!({ "retrieval": retrieval }).to_string(),
    ]);
    assert_eq!(status, 200, "{body}");
    let call = body["retrieval_calls"][0].as_object_mut().unwrap();
    call.remove("query_id");
    call.remove("latency_ms");
    body
}

fn version_of(answer: &Value) -> u64 {
    answer["retrieval_calls"][0]["index_version"]
        .as_u64()
        .unwrap()
}

fn documents(http: &str, index: &str) -> Value {
    curl(&[&format!("{http}/v1/indexes/{index}/stats")]).1["documents"].clone()
}

/// The keys under `prefix` in `bucket`, from the store's own listing.
fn keys(s3: &S3Server, bucket: &str, prefix: &str) -> String {
    let out = Command::new("curl")
        .args([
            "-s",
            &format!(
                "{}/{bucket}?list-type=2&max-keys=10000&prefix={prefix}",
                s3.endpoint
            ),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn a_replica_serves_what_the_writer_commits_to_the_bucket_with_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let s3 = start_s3("ragtest");
    let broker = start_broker(
        &dir.path().join("broker"),
        &[("RAGSTREAM_KAFKA_PARTITIONS", "2")],
    );
    let config = storage_config(dir.path(), &s3, "s3://ragtest/rs");
    let config = config.to_str().unwrap();
    let env = [
        ("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str()),
        ("RAGSTREAM_CONFIG", config),
        ("RS_TEST_S3_SECRET", "test"),
    ];
    let writer_dir = dir.path().join("writer");
    let writer = start_daemon_at(&writer_dir, &env);

    let other = |id: &str, text: &str| {
        json!({"schema_version": 1, "op": "upsert", "index": "other",
            "document": {"id": id, "title": id, "text": text}})
        .to_string()
    };
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &[],
        &[
            upsert("volcano", "Magma erupts from volcanoes as lava."),
            upsert("glacier", "Glaciers carve valleys out of rock."),
            other("o1", "Another index on the same bucket."),
        ],
    );
    wait_for("the writer's two documents", || {
        documents(&writer.http, "kb") == 2 && documents(&writer.http, "other") == 1
    });
    let first = answer(&writer.http, "kb", None);
    let v1 = version_of(&first);

    // The datasets and the keyword index are in the bucket, not on the writer's disk.
    let listed = keys(&s3, "ragtest", "rs/indexes/kb/");
    assert!(
        listed.contains("rs/indexes/kb/chunks.lance/_versions/"),
        "{listed}"
    );
    assert!(listed.contains("rs/indexes/kb/index.json"), "{listed}");
    assert!(!writer_dir.join("indexes/kb/chunks.lance").exists());
    wait_for("version 1's keyword snapshot in the bucket", || {
        keys(&s3, "ragtest", "rs/indexes/kb/keyword/").contains(&format!("meta.v{v1}.json"))
    });

    // A replica on its own (empty) data directory serves both indexes, byte for byte. It
    // polls only every ten minutes: the writer's notices bring it new versions.
    let replica_env = [
        env[0],
        env[1],
        env[2],
        ("RAGSTREAM_SERVE_ROLE", "query"),
        ("RAGSTREAM_STORAGE_POLL_INTERVAL_MS", "600000"),
    ];
    let replica = start_daemon_at(&dir.path().join("replica"), &replica_env);
    wait_for("the replica's documents", || {
        documents(&replica.http, "kb") == 2 && documents(&replica.http, "other") == 1
    });
    assert_eq!(answer(&replica.http, "kb", Some(v1)), first);

    // The writer goes on; the replica follows by itself.
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &[],
        &[upsert(
            "desert",
            "Deserts receive little rain; valleys of rock.",
        )],
    );
    wait_for("the writer's third document", || {
        documents(&writer.http, "kb") == 3
    });
    let second = answer(&writer.http, "kb", None);
    let v2 = version_of(&second);
    assert!(v2 > v1);
    let mut notice = Value::Null;
    wait_for("the writer's notice of version 2", || {
        let n = kcat_count(&broker.bootstrap, "ragstream.versions");
        notice = kcat_consume(&broker.bootstrap, "ragstream.versions", n)
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l.split_once('\t')?.1).ok())
            .find(|notice| notice["index"] == "kb" && notice["index_version"] == v2)
            .unwrap_or_default();
        !notice.is_null()
    });
    crate::schemas::assert_valid("version-notice", &notice);
    // (Maintenance may commit a version of its own meanwhile: pinned answers compare.)
    wait_for("the replica at the writer's version", || {
        version_of(&answer(&replica.http, "kb", None)) >= v2
    });
    assert_eq!(answer(&replica.http, "kb", Some(v2)), second);
    assert_eq!(answer(&replica.http, "kb", Some(v1)), first);

    // A replica refuses writes with its own error; reads go on.
    let (status, body) = curl(&["-X", "DELETE", &format!("{}/v1/indexes/kb", replica.http)]);
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "read_only_replica");
    assert_eq!(documents(&replica.http, "kb"), 3);

    // A second replica with an empty cache answers an older version the same.
    let fresh = start_daemon_at(&dir.path().join("replica-2"), &replica_env);
    wait_for("the second replica", || documents(&fresh.http, "kb") == 3);
    assert_eq!(answer(&fresh.http, "kb", Some(v1)), first);
    assert_eq!(answer(&fresh.http, "kb", Some(v2)), second);

    // Ten versions on, a replica whose cache keeps only the version it serves (a limit of
    // 0 MiB) answers every older one the same as the writer: each is fetched again, and
    // evicts the one fetched before.
    let mut pinned = vec![(v1, first.clone()), (v2, second.clone())];
    for i in 0..8 {
        kcat_produce(
            &broker.bootstrap,
            "ragstream.documents",
            &[],
            &[upsert(
                &format!("extra{i}"),
                &format!("Rain on rock, valley {i}."),
            )],
        );
        wait_for("the writer's next document", || {
            documents(&writer.http, "kb") == 4 + i
        });
        let newest = answer(&writer.http, "kb", None);
        pinned.push((version_of(&newest), newest));
    }
    let small_env = [
        replica_env[0],
        replica_env[1],
        replica_env[2],
        replica_env[3],
        ("RAGSTREAM_STORAGE_CACHE_MAX_MB", "0"),
    ];
    let small = start_daemon_at(&dir.path().join("replica-3"), &small_env);
    wait_for("the small replica", || documents(&small.http, "kb") == 11);
    for (version, expected) in pinned.iter().chain(pinned.iter().rev()) {
        assert_eq!(
            &answer(&small.http, "kb", Some(*version)),
            expected,
            "version {version}"
        );
    }
    // What stays cached: the version served and the one asked for last.
    let caches: Vec<PathBuf> = std::fs::read_dir(dir.path().join("replica-3/indexes/kb"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("keyword-")
        })
        .collect();
    assert_eq!(caches.len(), 1, "{caches:?}");
    let cached: Vec<String> = std::fs::read_dir(&caches[0])
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("meta.v"))
        .collect();
    assert_eq!(cached.len(), 2, "{cached:?}");

    // A writer on a new machine (an empty data directory) goes on from the bucket.
    drop(writer);
    let moved = start_daemon_at(&dir.path().join("writer-2"), &env);
    assert_eq!(answer(&moved.http, "kb", Some(v1)), first);
    assert_eq!(answer(&moved.http, "kb", Some(v2)), second);
}

/// An outage takes the object store's client its timeouts and retries to notice, and the
/// pipeline its back-off to get over.
const OUTAGE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(240);

/// `ragstream serve` with `env`: its exit code and standard error (it must exit).
fn serve_fails(data_dir: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let out = serve_command(data_dir, env)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_bucket_that_cannot_be_used_stops_start_up_with_the_key_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let s3 = start_s3("ragbad");
    let secret = ("RS_TEST_S3_SECRET", "test");

    // Another system's data under the prefix.
    let (status, _) = curl(&[
        "-X",
        "PUT",
        "--data-binary",
        "x",
        "-H",
        "content-type: application/octet-stream",
        &format!("{}/ragbad/theirs/part-0.parquet", s3.endpoint),
    ]);
    assert_eq!(status, 200);
    let foreign = storage_config(dir.path(), &s3, "s3://ragbad/theirs");
    let (code, stderr) = serve_fails(
        &dir.path().join("a"),
        &[("RAGSTREAM_CONFIG", foreign.to_str().unwrap()), secret],
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("storage.uri s3://ragbad/theirs"),
        "{stderr}"
    );
    assert!(stderr.contains("part-0.parquet"), "{stderr}");

    // A bucket that does not exist.
    let missing = storage_config(dir.path(), &s3, "s3://no-such-bucket/rs");
    let (code, stderr) = serve_fails(
        &dir.path().join("b"),
        &[("RAGSTREAM_CONFIG", missing.to_str().unwrap()), secret],
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("storage.uri s3://no-such-bucket/rs"),
        "{stderr}"
    );

    // The secret's variable unset: the key that names it.
    let ok = storage_config(dir.path(), &s3, "s3://ragbad/rs");
    let (code, stderr) = serve_fails(
        &dir.path().join("c"),
        &[("RAGSTREAM_CONFIG", ok.to_str().unwrap())],
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("storage.options.aws_secret_access_key_env"),
        "{stderr}"
    );

    // Nothing was written under the refused prefixes.
    assert!(!keys(&s3, "ragbad", "theirs/").contains("ragstream.json"));

    // A query replica without an object store.
    let (code, stderr) = serve_fails(&dir.path().join("d"), &[("RAGSTREAM_SERVE_ROLE", "query")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("storage.uri"), "{stderr}");
}

#[test]
fn ingestion_waits_out_an_object_store_outage_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s3 = start_s3("ragout");
    let broker = start_broker(
        &dir.path().join("broker"),
        &[("RAGSTREAM_KAFKA_PARTITIONS", "2")],
    );
    // A request the store does not answer fails after 3 s (the default is 30 s).
    let config = storage_config_with(dir.path(), &s3, "s3://ragout/rs", "timeout = \"3s\"\n");
    let env = [
        ("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str()),
        ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
        ("RS_TEST_S3_SECRET", "test"),
    ];
    let writer = start_daemon_at(&dir.path().join("writer"), &env);
    let batch = |from: usize| -> Vec<String> {
        (from..from + 5)
            .map(|i| {
                upsert(
                    &format!("d{i}"),
                    &format!("Document {i} about rock and rain."),
                )
            })
            .collect()
    };
    kcat_produce(&broker.bootstrap, "ragstream.documents", &[], &batch(0));
    wait_for("five documents", || documents(&writer.http, "kb") == 5);

    // The store stops answering, as behind a network partition: connections hang.
    signal(s3.child.id(), "-STOP");
    kcat_produce(&broker.bootstrap, "ragstream.documents", &[], &batch(5));
    let readyz = format!("{}/readyz", writer.http);
    let healthz = format!("{}/healthz", writer.http);
    // The writer holds the batch and says so (Lance retries each request for a while
    // before a commit counts as failed, twice in a row for that).
    wait_for_within("the writer to report the outage", OUTAGE_DEADLINE, || {
        curl(&[&readyz]).0 == 503
    });
    signal(s3.child.id(), "-CONT");

    // Back: every document indexed once, both stores in step, ready again.
    wait_for_within("ten documents", OUTAGE_DEADLINE, || {
        documents(&writer.http, "kb") == 10
    });
    wait_for("ready again", || curl(&[&readyz]).0 == 200);
    let (_, stats) = curl(&[&format!("{}/v1/indexes/kb/stats", writer.http)]);
    assert_eq!(stats["documents"], 10, "{stats}");
    assert_eq!(stats["chunks"], stats["keyword_chunks"], "{stats}");
    assert_eq!(stats["deleted_documents"], 0, "{stats}");
    // Waited out, not failed: the pipeline never restarted.
    assert_eq!(curl(&[&healthz]).1["pipeline"]["restarts"], 0);
}

/// An engine (a writer in this test process) on `uri` with the store's `options`, its own
/// data directory at `dir`.
pub fn engine_on(dir: &Path, uri: &str, options: &[(&str, &str)]) -> ragstream::Engine {
    let mut c = crate::common::config(dir);
    c.storage.uri = Some(uri.into());
    c.storage.options = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    crate::common::engine_with(c)
}

/// [`engine_on`] moto's `s3`.
fn s3_engine(dir: &Path, s3: &S3Server, uri: &str) -> ragstream::Engine {
    engine_on(
        dir,
        uri,
        &[
            ("aws_endpoint", s3.endpoint.as_str()),
            ("aws_region", "us-east-1"),
            ("aws_access_key_id", "test"),
            ("aws_secret_access_key", "test"),
            ("allow_http", "true"),
        ],
    )
}

/// Writer `a` commits to index `kb`, then writer `b` commits under a later claim; `a`,
/// not having heard, is refused (naming the claim and this process as the holder), and
/// nothing of its write lands. The fence on any store's conditional writes.
pub async fn a_stale_writer_is_refused(a: &ragstream::Engine, b: &ragstream::Engine) {
    use crate::common::{doc, name, upserts};
    use ragstream::engine::EngineError;
    use ragstream::index::StoreError;
    let kb = name("kb");
    let one = |id: &str| upserts(vec![doc(id, id, &format!("{id} is a document."))]);
    a.write(&kb, one("d1")).await.unwrap();

    // The index's partition moves to B: it opens what A committed and writes under a
    // later claim.
    b.write(&kb, one("d2")).await.unwrap();

    // A has not heard yet: its commit is refused, naming the new owner; nothing lands.
    let refused = a.write(&kb, one("d3")).await.unwrap_err();
    match &refused {
        EngineError::Store(StoreError::NotOwner {
            epoch,
            ours,
            holder,
            ..
        }) => {
            assert_eq!((*epoch, *ours), (2, 1), "{refused}");
            assert!(
                holder.contains(&format!("pid {}", std::process::id())),
                "{refused}"
            );
        }
        other => panic!("expected NotOwner, got {other}"),
    }
    let stats = b.stats(&kb).await.unwrap();
    assert_eq!((stats.documents, stats.chunks), (2, 2), "{stats:?}");
    assert_eq!(stats.keyword_chunks, 2, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_lost_an_index_cannot_commit_to_it() {
    use crate::common::{doc, name, upserts};
    use ragstream::engine::EngineError;
    use ragstream::index::StoreError;
    let dir = tempfile::tempdir().unwrap();
    let s3 = start_s3("ragfence");
    let a = s3_engine(&dir.path().join("a"), &s3, "s3://ragfence/rs");
    let b = s3_engine(&dir.path().join("b"), &s3, "s3://ragfence/rs");
    a_stale_writer_is_refused(&a, &b).await;
    let kb = name("kb");
    let one = |id: &str| upserts(vec![doc(id, id, &format!("{id} is a document."))]);
    b.write(&kb, one("d4")).await.unwrap();

    // A's partitions are revoked (its claims end), then the index comes back to it. Its
    // old view lacks d2 and d4: it opens the index again before planning, so deleting d2
    // (a no-op on the old view) takes effect, under a newer claim than B's...
    a.revocations()
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut ops = one("d3");
    ops.push(ragstream::index::DocumentOp::Delete {
        document_id: "d2".into(),
    });
    let outcome = a.write(&kb, ops).await.unwrap();
    assert_eq!((outcome.upserted, outcome.deleted), (1, 1), "{outcome:?}");
    // ...so that B, which has not heard yet, is refused in turn.
    let refused = b.write(&kb, one("d5")).await.unwrap_err();
    assert!(
        matches!(
            refused,
            EngineError::Store(StoreError::NotOwner {
                epoch: 3,
                ours: 2,
                ..
            })
        ),
        "{refused}"
    );
    // Every accepted write is there once; the refused ones are not (d1, d3, d4; d2 deleted).
    let stats = a.stats(&kb).await.unwrap();
    assert_eq!((stats.documents, stats.chunks), (3, 3), "{stats:?}");
    // The keyword store holds the deleted chunk too (for `deleted` visibility).
    assert_eq!(
        (stats.chunks + stats.deleted_chunks) as u64,
        stats.keyword_chunks,
        "{stats:?}"
    );
}

/// `n` upserts of `index`, keyed by the index's name, as kcat lines (`KEY\tEVENT`).
fn keyed_upserts(index: &str, from: usize, n: usize) -> Vec<String> {
    (from..from + n)
        .map(|i| {
            let event = json!({"schema_version": 1, "op": "upsert", "index": index,
                "document": {"id": format!("d{i}"), "title": format!("note {i}"),
                "text": format!("Field note {i} of {index}: rivers, rock and rain.")}});
            format!("{index}\t{event}")
        })
        .collect()
}

/// A counter of a daemon's `/metrics` (summed over the series that match `labels`).
fn metric(http: &str, name: &str, labels: &str) -> f64 {
    let out = Command::new("curl")
        .args(["-s", &format!("{http}/metrics")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(name) && l.contains(labels))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What a test of writers sharing a bucket starts with: moto's server with `bucket`, the
/// standalone broker with `partitions`, and a configuration putting indexes under
/// `s3://<bucket>/rs`.
fn shared_bucket(
    dir: &Path,
    bucket: &str,
    partitions: &str,
) -> (S3Server, crate::daemon::Broker, PathBuf) {
    let s3 = start_s3(bucket);
    let broker = start_broker(
        &dir.join("broker"),
        &[("RAGSTREAM_KAFKA_PARTITIONS", partitions)],
    );
    let config = storage_config(dir, &s3, &format!("s3://{bucket}/rs"));
    (s3, broker, config)
}

#[test]
fn two_writers_share_the_indexes_and_one_takes_over_from_a_killed_one() {
    const INDEXES: [&str; 4] = ["i0", "i1", "i2", "i3"];
    let dir = tempfile::tempdir().unwrap();
    let (_s3, broker, config) = shared_bucket(dir.path(), "ragshare", "4");
    let env = [
        ("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str()),
        ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
        ("RS_TEST_S3_SECRET", "test"),
        ("RAGSTREAM_SERVE_ROLE", "ingest"),
        // Small batches: a writer killed mid-ingest has committed some and not others.
        ("RAGSTREAM_KAFKA_BATCH_MAX_DOCUMENTS", "10"),
    ];
    let mut writers = vec![
        start_daemon_at(&dir.path().join("a"), &env),
        start_daemon_at(&dir.path().join("b"), &env),
    ];
    let replica = start_daemon_at(
        &dir.path().join("replica"),
        &[env[0], env[1], env[2], ("RAGSTREAM_SERVE_ROLE", "query")],
    );
    let produce = |from: usize, n: usize| {
        let lines: Vec<String> = INDEXES
            .iter()
            .flat_map(|i| keyed_upserts(i, from, n))
            .collect();
        kcat_produce(
            &broker.bootstrap,
            "ragstream.documents",
            &["-K", "\t"],
            &lines,
        );
    };
    let all_at = |n: usize| INDEXES.iter().all(|i| documents(&replica.http, i) == n);
    let wrote = |w: &crate::daemon::Daemon, index: &str| {
        metric(
            &w.http,
            "ragstream_documents_indexed_total",
            &format!("index=\"{index}\""),
        )
    };

    // Both writers in the group before the first documents: a writer joining later takes
    // partitions (and their indexes) over from the one already reading.
    wait_for("both writers owning partitions", || {
        let owned: Vec<f64> = writers
            .iter()
            .map(|w| metric(&w.http, "ragstream_partitions_assigned", ""))
            .collect();
        owned.iter().all(|n| *n > 0.0) && owned.iter().sum::<f64>() == 4.0
    });
    produce(0, 20);
    wait_for("every index's first documents on the replica", || {
        all_at(20)
    });
    // Each index has one writer: the daemon reading its partition.
    for index in INDEXES {
        let writing: Vec<bool> = writers.iter().map(|w| wrote(w, index) > 0.0).collect();
        assert_eq!(
            writing.iter().filter(|w| **w).count(),
            1,
            "{index} written by {writing:?}"
        );
    }
    // The writer of the most indexes is killed in the middle of the next documents.
    let victim = (0..2)
        .max_by_key(|k| {
            INDEXES
                .iter()
                .filter(|i| wrote(&writers[*k], i) > 0.0)
                .count()
        })
        .unwrap();
    let taken: Vec<&str> = INDEXES
        .iter()
        .copied()
        .filter(|i| wrote(&writers[victim], i) > 0.0)
        .collect();
    produce(20, 200);
    wait_for("the victim in the middle of its documents", || {
        let done: f64 = taken.iter().map(|i| wrote(&writers[victim], i)).sum();
        done > 20.0 * taken.len() as f64
    });
    let mut killed = writers.remove(victim);
    killed.kill();
    let survivor = &writers[0];

    // The survivor takes the victim's partitions and resumes each index at its checkpoint.
    wait_for_state_within(
        "every document on the replica",
        std::time::Duration::from_secs(240),
        || {
            let on_replica = INDEXES.map(|i| documents(&replica.http, i));
            let state = INDEXES.iter().zip(&on_replica).map(|(i, n)| {
                let written = wrote(survivor, i);
                format!("{i}: {n} on the replica, {written} written by the survivor")
            });
            let state = state.collect::<Vec<_>>().join("; ");
            (on_replica.iter().all(|n| *n == 220), state)
        },
    );
    for index in INDEXES {
        let (_, stats) = curl(&[&format!("{}/v1/indexes/{index}/stats", replica.http)]);
        // Once each: one chunk per document, in both stores.
        assert_eq!(stats["documents"], 220, "{index}: {stats}");
        assert_eq!(stats["chunks"], 220, "{index}: {stats}");
        assert_eq!(stats["keyword_chunks"], 220, "{index}: {stats}");
    }
    for index in &taken {
        assert!(wrote(survivor, index) > 0.0, "{index} taken over");
    }
}

/// Whether process `pid` is stopped (SIGSTOP).
fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| Some(stat.rsplit_once(") ")?.1.starts_with('T')))
        .unwrap_or(false)
}

#[test]
fn a_writer_frozen_with_a_batch_in_hand_is_refused_when_it_wakes() {
    let dir = tempfile::tempdir().unwrap();
    let (_s3, broker, config) = shared_bucket(dir.path(), "ragfrozen", "1");
    let env = [
        ("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str()),
        ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
        ("RS_TEST_S3_SECRET", "test"),
    ];
    let produce = |from: usize| {
        kcat_produce(
            &broker.bootstrap,
            "ragstream.documents",
            &["-K", "\t"],
            &keyed_upserts("kb", from, 1),
        )
    };
    // A writes the index (its claim is recorded with the commit), then freezes itself with
    // the next batch in hand, past its own partition check, as a long pause would.
    let a_env = [
        env[0],
        env[1],
        env[2],
        ("RAGSTREAM_FAILPOINT", "freeze-before-second-commit"),
    ];
    let a = start_daemon_at(&dir.path().join("a"), &a_env);
    produce(0);
    wait_for("A's first commit", || documents(&a.http, "kb") == 1);
    produce(1);
    wait_for("A frozen with the second document", || is_stopped(a.pid()));

    // B joins; once A's session has timed out, B reads the partition from A's checkpoint
    // and commits under a later claim.
    let b = start_daemon_at(&dir.path().join("b"), &env);
    wait_for_within("B's commit", std::time::Duration::from_secs(120), || {
        documents(&b.http, "kb") == 2
    });

    // A wakes and goes on with its batch: refused, nothing written; its pipeline starts again.
    signal(a.pid(), "-CONT");
    let mut health = Value::Null;
    wait_for("A's refusal", || {
        health = curl(&[&format!("{}/healthz", a.http)]).1;
        health["pipeline"]["restarts"]
            .as_u64()
            .is_some_and(|n| n > 0)
    });
    let failure = health["pipeline"]["last_failure"]
        .as_str()
        .unwrap_or_default();
    assert!(
        failure.contains("written by another daemon now"),
        "{health}"
    );
    // Ingestion goes on, on whichever daemon the group gives the partition to now; every
    // document is there once, in both stores.
    produce(2);
    let mut writer = String::new();
    wait_for("the next commit", || {
        writer = [&a.http, &b.http]
            .into_iter()
            .find(|http| documents(http, "kb") == 3)
            .cloned()
            .unwrap_or_default();
        !writer.is_empty()
    });
    let (_, stats) = curl(&[&format!("{writer}/v1/indexes/kb/stats")]);
    assert_eq!(stats["chunks"], 3, "{stats}");
    assert_eq!(stats["keyword_chunks"], 3, "{stats}");
}

/// The object keys under `prefix` in `bucket`.
fn key_names(s3: &S3Server, bucket: &str, prefix: &str) -> Vec<String> {
    keys(s3, bucket, prefix)
        .split("<Key>")
        .skip(1)
        .filter_map(|k| Some(k.split_once("</Key>")?.0.to_string()))
        .collect()
}

/// Sends `signal` (`-STOP`, `-CONT`) to process `pid`.
fn signal(pid: u32, signal: &str) {
    assert!(Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

#[test]
fn a_replica_that_cannot_read_a_version_keeps_serving_the_one_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let (s3, broker, config) = shared_bucket(dir.path(), "ragunread", "1");
    let env = [
        ("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str()),
        ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
        ("RS_TEST_S3_SECRET", "test"),
    ];
    let writer = start_daemon_at(&dir.path().join("writer"), &env);
    let produce = |id: &str, text: &str| {
        kcat_produce(
            &broker.bootstrap,
            "ragstream.documents",
            &[],
            &[upsert(id, text)],
        )
    };
    produce("volcano", "Magma erupts from volcanoes as lava.");
    wait_for("the writer's first document", || {
        documents(&writer.http, "kb") == 1
    });
    let first = answer(&writer.http, "kb", None);
    let replica = start_daemon_at(
        &dir.path().join("replica"),
        &[env[0], env[1], env[2], ("RAGSTREAM_SERVE_ROLE", "query")],
    );
    wait_for("the replica's first document", || {
        documents(&replica.http, "kb") == 1
    });
    assert_eq!(answer(&replica.http, "kb", None), first);

    // The replica sleeps through the next version, whose keyword segment files then go
    // missing from the bucket.
    signal(replica.pid(), "-STOP");
    let before = key_names(&s3, "ragunread", "rs/indexes/kb/keyword/");
    produce("glacier", "Glaciers carve valleys out of rock and lava.");
    wait_for("the writer's second document", || {
        documents(&writer.http, "kb") == 2
    });
    let v2 = version_of(&answer(&writer.http, "kb", None));
    wait_for("version 2's keyword snapshot in the bucket", || {
        keys(&s3, "ragunread", "rs/indexes/kb/keyword/").contains(&format!("meta.v{v2}.json"))
    });
    let added: Vec<String> = key_names(&s3, "ragunread", "rs/indexes/kb/keyword/")
        .into_iter()
        .filter(|k| !before.contains(k) && !k.contains("/meta.v"))
        .collect();
    assert!(!added.is_empty(), "version {v2} published no segment file");
    for key in &added {
        let (status, _) = curl(&[
            "-X",
            "DELETE",
            "--aws-sigv4",
            "aws:amz:us-east-1:s3",
            "--user",
            "test:test",
            &format!("{}/ragunread/{key}", s3.endpoint),
        ]);
        assert_eq!(status, 204, "{key}");
    }

    // Awake, it cannot read the new version: it says so and serves the old one.
    signal(replica.pid(), "-CONT");
    wait_for("the replica's report", || {
        metric(
            &replica.http,
            "ragstream_replica_refresh_failures_total",
            "index=\"kb\"",
        ) > 0.0
    });
    let (_, health) = curl(&[&format!("{}/healthz", replica.http)]);
    let listed = health.to_string();
    assert!(listed.contains("replica.kb"), "{health}");
    assert!(listed.contains("serving the version it had"), "{health}");
    assert_eq!(answer(&replica.http, "kb", None), first);
    assert_eq!(documents(&replica.http, "kb"), 1);
}
