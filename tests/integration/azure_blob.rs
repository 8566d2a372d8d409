//! Indexes on Azure Blob Storage (`az://container/prefix`): Azurite, Azure Storage's own
//! emulator, on 127.0.0.1 (installed by `scripts/setup` into `tests/azurite`), a standalone
//! broker, a writer and a query replica as separate processes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::daemon::{
    curl, kcat_produce, serve_command, start_broker, start_daemon_at, upsert, wait_for,
};

/// Azurite's well-known development account and key (not a secret: every Azurite has them).
const ACCOUNT: &str = "devstoreaccount1";
const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Azurite's blob service on a free port with its data in a directory of its own, killed
/// when dropped.
struct Azurite {
    child: Child,
    /// The account's endpoint, as a user configures it (`…/devstoreaccount1`).
    endpoint: String,
    _data: tempfile::TempDir,
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn azurite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/azurite")
}

/// Starts Azurite with `container` created in it.
fn start_azurite(container: &str) -> Azurite {
    let port = crate::telemetry::free_port();
    let data = tempfile::tempdir().unwrap();
    let child = Command::new(azurite_dir().join("node_modules/.bin/azurite-blob"))
        .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .args(["--skipApiVersionCheck", "--silent", "--location"])
        .arg(data.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Azurite is installed by scripts/setup into tests/azurite");
    let blob = format!("http://127.0.0.1:{port}");
    let server = Azurite {
        child,
        endpoint: format!("{blob}/{ACCOUNT}"),
        _data: data,
    };
    wait_for("Azurite's blob service", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let created = Command::new("node")
        .arg(azurite_dir().join("create-container.mjs"))
        .args([&blob, container])
        .status()
        .unwrap();
    assert!(created.success(), "container {container} created");
    server
}

/// The `[storage.options]` lines for `azurite`; the account key comes from the variable
/// `RS_TEST_AZURE_KEY` (`_env` indirection).
fn azure_options(azurite: &Azurite) -> String {
    format!(
        r#"azure_storage_account_name = "{ACCOUNT}"
azure_storage_account_key_env = "RS_TEST_AZURE_KEY"
azure_storage_endpoint = "{}"
allow_http = "true"
client_max_retries = "1"
client_retry_timeout = "5"
"#,
        azurite.endpoint
    )
}

fn azure_config(dir: &Path, azurite: &Azurite, uri: &str) -> PathBuf {
    let path = dir.join(format!("storage-{}.toml", uri.replace(['/', ':'], "_")));
    std::fs::write(
        &path,
        format!(
            "[storage]\nuri = \"{uri}\"\npoll_interval_ms = 200\n\n[storage.options]\n{}",
            azure_options(azurite)
        ),
    )
    .unwrap();
    path
}

/// The contract 000 answer for `index_version` (or the newest), without the fields that vary
/// per call.
fn answer(http: &str, version: Option<u64>) -> Value {
    let mut retrieval = json!({"index": "kb", "query": "lava rock valleys", "top_k": 3});
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

fn documents(http: &str) -> Value {
    curl(&[&format!("{http}/v1/indexes/kb/stats")]).1["documents"].clone()
}

#[test]
fn a_replica_serves_what_the_writer_commits_to_an_azure_container() {
    let dir = tempfile::tempdir().unwrap();
    let azurite = start_azurite("ragstream");
    let broker = start_broker(
        &dir.path().join("broker"),
        &[("RAGSTREAM_KAFKA_PARTITIONS", "2")],
    );
    let config = azure_config(dir.path(), &azurite, "az://ragstream/rs");
    let env = [
        ("RAGSTREAM_KAFKA_BROKERS", broker.bootstrap.as_str()),
        ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
        ("RS_TEST_AZURE_KEY", ACCOUNT_KEY),
    ];
    let writer_dir = dir.path().join("writer");
    let writer = start_daemon_at(&writer_dir, &env);
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &[],
        &[
            upsert("volcano", "Magma erupts from volcanoes as lava."),
            upsert("glacier", "Glaciers carve valleys out of rock."),
        ],
    );
    wait_for("the writer's documents", || documents(&writer.http) == 2);
    let first = answer(&writer.http, None);
    let v1 = first["retrieval_calls"][0]["index_version"]
        .as_u64()
        .unwrap();
    // The datasets are in the container, not on the writer's disk.
    assert!(!writer_dir.join("indexes/kb/chunks.lance").exists());

    // A replica on an empty data directory serves the writer's version byte for byte.
    let replica = start_daemon_at(
        &dir.path().join("replica"),
        &[env[0], env[1], env[2], ("RAGSTREAM_SERVE_ROLE", "query")],
    );
    wait_for("the replica's documents", || documents(&replica.http) == 2);
    assert_eq!(answer(&replica.http, Some(v1)), first);

    // A delete commits a new version that the replica follows; v1 stays answerable.
    kcat_produce(
        &broker.bootstrap,
        "ragstream.documents",
        &[],
        &[json!({"schema_version": 1, "op": "delete", "index": "kb",
            "document_id": "glacier"})
        .to_string()],
    );
    wait_for("the delete on the replica", || {
        documents(&replica.http) == 1
    });
    assert_eq!(answer(&replica.http, None), answer(&writer.http, None));
    assert_eq!(answer(&replica.http, Some(v1)), first);
}

/// An engine (a writer in this test process) on `uri` at `azurite`, its own data directory
/// under `dir`.
fn azure_engine(dir: &Path, azurite: &Azurite, uri: &str) -> ragstream::Engine {
    crate::object_storage::engine_on(
        dir,
        uri,
        &[
            ("azure_storage_account_name", ACCOUNT),
            ("azure_storage_account_key", ACCOUNT_KEY),
            ("azure_storage_endpoint", azurite.endpoint.as_str()),
            ("allow_http", "true"),
        ],
    )
}

/// The fence on Azure's conditional writes: after another writer's commit under a later
/// claim, a stale writer's commit is refused and nothing of it lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_lost_an_index_cannot_commit_to_it_on_azure() {
    let dir = tempfile::tempdir().unwrap();
    let azurite = start_azurite("ragfence");
    let a = azure_engine(&dir.path().join("a"), &azurite, "az://ragfence/rs");
    let b = azure_engine(&dir.path().join("b"), &azurite, "az://ragfence/rs");
    crate::object_storage::a_stale_writer_is_refused(&a, &b).await;
}

#[test]
fn a_container_that_cannot_be_used_stops_start_up_with_the_key_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let azurite = start_azurite("ragbad");
    let fails = |data_dir: &str, uri: &str, key: &str| {
        let config = azure_config(dir.path(), &azurite, uri);
        let out = serve_command(
            &dir.path().join(data_dir),
            &[
                ("RAGSTREAM_CONFIG", config.to_str().unwrap()),
                ("RS_TEST_AZURE_KEY", key),
            ],
        )
        .stdout(Stdio::null())
        .output()
        .unwrap();
        assert_ne!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    // A container that does not exist.
    let stderr = fails("a", "az://no-such-container/rs", ACCOUNT_KEY);
    assert!(
        stderr.contains("storage.uri az://no-such-container/rs"),
        "{stderr}"
    );
    assert!(stderr.contains("ContainerNotFound"), "{stderr}");
    // A wrong account key (well-formed base64, not the account's).
    let wrong = "d3Jvbmcga2V5IGZvciB0aGUgYWNjb3VudA==";
    let stderr = fails("b", "az://ragbad/rs", wrong);
    assert!(stderr.contains("storage.uri az://ragbad/rs"), "{stderr}");
    assert!(stderr.contains("403"), "{stderr}");
}

/// A Google Cloud Storage URI is accepted by the configuration; a bucket that cannot be
/// reached stops start-up naming it (no GCS emulator that speaks the API Lance's client uses
/// is installable here: docs/scale-out.md).
#[test]
fn an_unreachable_gcs_bucket_stops_start_up_with_the_uri() {
    let dir = tempfile::tempdir().unwrap();
    let closed = crate::telemetry::free_port();
    let config = dir.path().join("gcs.toml");
    std::fs::write(
        &config,
        format!(
            r#"[storage]
uri = "gs://ragstream-test/rs"

[storage.options]
google_base_url = "http://127.0.0.1:{closed}"
google_storage_token = "unused"
allow_http = "true"
client_max_retries = "0"
client_retry_timeout = "2"
"#
        ),
    )
    .unwrap();
    let out = serve_command(
        &dir.path().join("d"),
        &[("RAGSTREAM_CONFIG", config.to_str().unwrap())],
    )
    .stdout(Stdio::null())
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("storage.uri gs://ragstream-test/rs"),
        "{stderr}"
    );
    assert!(stderr.contains("error sending request"), "{stderr}");
}
