//! The daemon end to end: kcat (an outside Kafka client) produces documents and queries to
//! the embedded broker; replies, dead letters and HTTP answers are checked from outside.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub struct Daemon {
    child: Child,
    pub bootstrap: String,
    pub http: String,
    _dir: Option<tempfile::TempDir>,
}

impl Daemon {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL (no shutdown of any kind), and waits for the exit.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then waits (up to 60 s) for the exit.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no exit 60 s after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_daemon() -> Daemon {
    start_daemon_with(&[])
}

pub fn start_daemon_with(env: &[(&str, &str)]) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let mut d = start_daemon_at(dir.path(), env);
    d._dir = Some(dir);
    d
}

/// The `serve` command the tests run, on `data_dir`, before its announcement is read.
pub fn serve_command(data_dir: &std::path::Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ragstream"));
    command
        .arg("serve")
        .env("RAGSTREAM_STORAGE_DATA_DIR", data_dir)
        .env("RAGSTREAM_MODEL_EMBEDDER", "hashing")
        .env("RAGSTREAM_HTTP_BIND", "127.0.0.1:0")
        .env("RAGSTREAM_KAFKA_MAX_MESSAGE_BYTES", "4096")
        .env("RAGSTREAM_KAFKA_PARTITIONS", "2")
        .env_remove("RAGSTREAM_FAILPOINT")
        .envs(env.iter().copied());
    command
}

/// A daemon on a data directory the caller keeps (to start another on it later).
pub fn start_daemon_at(data_dir: &std::path::Path, env: &[(&str, &str)]) -> Daemon {
    let mut child = serve_command(data_dir, env)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut bootstrap, mut http) = (None, None);
    while bootstrap.is_none() || http.is_none() {
        let line = lines
            .next()
            .expect("daemon exited before announcing")
            .unwrap();
        if let Some(b) = line.strip_prefix("kafka bootstrap: ") {
            bootstrap = Some(b.to_string());
        }
        if let Some(h) = line.strip_prefix("http: ") {
            http = Some(h.to_string());
        }
    }
    // keep draining stdout so the daemon never blocks on a full pipe
    std::thread::spawn(move || for _ in lines {});
    Daemon {
        child,
        bootstrap: bootstrap.unwrap(),
        http: http.unwrap(),
        _dir: None,
    }
}

/// The standalone broker (`ragstream broker`) on `dir`, with `env`; killed when dropped.
pub struct Broker {
    child: Child,
    pub bootstrap: String,
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start_broker(dir: &std::path::Path, env: &[(&str, &str)]) -> Broker {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ragstream"))
        .arg("broker")
        .env("RAGSTREAM_STORAGE_DATA_DIR", dir)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let bootstrap = loop {
        let line = out.next().expect("the broker announces").unwrap();
        if let Some(b) = line.strip_prefix("kafka bootstrap: ") {
            break b.to_string();
        }
    };
    std::thread::spawn(move || for _ in out {});
    Broker { child, bootstrap }
}

pub fn kcat_produce(bootstrap: &str, topic: &str, args: &[&str], lines: &[String]) {
    let mut child = Command::new(crate::common::kcat_program())
        .args(["-P", "-b", bootstrap, "-t", topic])
        .args(args)
        .stdin(Stdio::piped())
        .spawn()
        .expect("kcat is installed by scripts/setup");
    let mut stdin = child.stdin.take().unwrap();
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Reads `count` messages from the beginning of `topic`, formatted `headers\tpayload`.
pub fn kcat_consume(bootstrap: &str, topic: &str, count: usize) -> Vec<String> {
    let out = Command::new("timeout")
        .args([
            "30",
            crate::common::kcat_program().to_str().unwrap(),
            "-C",
            "-b",
            bootstrap,
            "-t",
            topic,
            "-o",
            "beginning",
        ])
        .args(["-c", &count.to_string(), "-f", "%h\t%s\n"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Messages on `topic` right now (reads to the end and stops).
pub fn kcat_count(bootstrap: &str, topic: &str) -> usize {
    let out = Command::new("timeout")
        .args([
            "30",
            crate::common::kcat_program().to_str().unwrap(),
            "-C",
            "-b",
            bootstrap,
            "-t",
            topic,
            "-o",
            "beginning",
            "-e",
            "-q",
        ])
        .args(["-f", "x\n"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// curl with `args`; a body (`-d`) is sent as JSON unless the args name a content type.
pub fn curl(args: &[&str]) -> (u16, Value) {
    let json = args.contains(&"-d")
        && !args
            .iter()
            .any(|a| a.to_ascii_lowercase().starts_with("content-type:"));
    let out = Command::new("curl")
        .args(["-s", "-w", "\n%{http_code}"])
        .args(if json {
            &["-H", "content-type: application/json"][..]
        } else {
            &[]
        })
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (
        code.trim().parse().unwrap(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

/// POSTs `body` as JSON to `url`.
pub fn post_json(url: &str, body: &Value) -> (u16, Value) {
    curl(&["-X", "POST", "-d", &body.to_string(), url])
}

pub fn wait_for(what: &str, f: impl FnMut() -> bool) {
    wait_for_within(what, Duration::from_secs(60), f)
}

/// [`wait_for`] with a deadline of `limit`.
pub fn wait_for_within(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    wait_for_state_within(what, limit, || (f(), String::new()))
}

/// [`wait_for_within`] for a condition that also describes what it saw: a timeout names the
/// last state seen, so a failure says how far things got.
pub fn wait_for_state_within(what: &str, limit: Duration, mut f: impl FnMut() -> (bool, String)) {
    let start = Instant::now();
    loop {
        let (done, state) = f();
        if done {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "timed out waiting for {what}{}{state}",
            if state.is_empty() {
                ""
            } else {
                "; last seen: "
            }
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn upsert(id: &str, text: &str) -> String {
    json!({"schema_version": 1, "op": "upsert", "index": "kb",
        "document": {"id": id, "title": id, "text": text}})
    .to_string()
}

#[test]
fn kcat_documents_and_queries_round_trip_with_dead_letters() {
    let d = start_daemon();
    let docs = vec![
        upsert("volcano", "Magma erupts from volcanoes as lava."),
        "{not json".to_string(),
        upsert("glacier", "Glaciers carve valleys out of rock."),
        json!({"schema_version": 1, "op": "merge", "index": "kb"}).to_string(),
        json!({"schema_version": 1, "op": "delete", "index": "Bad Name", "document_id": "x"}).to_string(),
        json!({"schema_version": 1, "op": "upsert", "index": "kb", "document": {"id": "", "text": "t"}}).to_string(),
        upsert("big", &"x".repeat(5000)),
        upsert("desert", "Deserts receive little rain."),
    ];
    // Producer headers travel with a dead letter; a credential does not.
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &["-H", "producer=app-7", "-H", "authorization=Bearer leak-me"],
        &docs,
    );

    let stats_url = format!("{}/v1/indexes/kb/stats", d.http);
    wait_for("three documents", || {
        curl(&[&stats_url]).1["documents"] == 3
    });
    let (_, stats) = curl(&[&stats_url]);
    assert_eq!(stats["chunks"], stats["keyword_chunks"]);

    // every poison kind is in the DLQ with its reason and origin
    let dead = kcat_consume(&d.bootstrap, "ragstream.dlq", 5);
    let dead = dead.join("\n");
    for code in [
        "bad_json",
        "unknown_op",
        "invalid_index",
        "schema_violation",
        "oversize",
    ] {
        assert!(
            dead.contains(&format!("error.code={code}")),
            "{code} missing from {dead}"
        );
    }
    assert!(dead.contains("source.topic=ragstream.documents"), "{dead}");
    assert!(dead.contains("source.offset="), "{dead}");
    assert_eq!(
        dead.matches("producer=app-7").count(),
        5,
        "every letter carries its message's headers: {dead}"
    );
    assert!(!dead.contains("leak-me"), "{dead}");

    // a query over the bus, with kcat as the client
    let query = json!({"retrieval": {"index": "kb", "query": "magma lava", "search_method": "keyword", "top_k": 2}});
    kcat_produce(
        &d.bootstrap,
        "ragstream.queries",
        &[
            "-H",
            "reply-to=ragstream.replies",
            "-H",
            "correlation-id=req-42",
        ],
        &[query.to_string()],
    );
    let replies = kcat_consume(&d.bootstrap, "ragstream.replies", 1);
    let (headers, body) = replies[0].split_once('\t').unwrap();
    assert!(headers.contains("correlation-id=req-42"), "{headers}");
    let reply: Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        reply["retrieval_calls"][0]["results"][0]["metadata"]["document_id"],
        "volcano"
    );

    // the same documents over HTTP
    let url = format!("{}/v1/retrieve", d.http);
    let (code, v) = curl(&[
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "-d",
        &query.to_string(),
        &url,
    ]);
    assert_eq!(code, 200);
    assert_eq!(
        v["retrieval_calls"][0]["results"][0]["metadata"]["document_id"],
        "volcano"
    );
    let (code, v) = curl(&[
        "-X",
        "POST",
        "-d",
        r#"{"retrieval": {"index": "kb", "query": "q", "top_k": 0}}"#,
        &url,
    ]);
    assert_eq!(
        (code, v["error"]["field"].as_str()),
        (400, Some("retrieval.top_k"))
    );

    // HTTP ingestion runs through the same pipeline
    let ingest = format!("{}/v1/indexes/kb/documents", d.http);
    let body = json!({"documents": [{"id": "reef", "text": "Coral reefs grow in warm shallow seas."}], "deletes": ["desert"]});
    let (code, v) = curl(&["-X", "POST", "-d", &body.to_string(), &ingest]);
    assert_eq!(code, 202, "{v}");
    wait_for("reef indexed and desert deleted", || {
        let s = curl(&[&stats_url]).1;
        s["documents"] == 3
            && {
                let q = json!({"retrieval": {"index": "kb", "query": "coral reefs", "search_method": "keyword"}});
                let (_, r) = curl(&["-X", "POST", "-d", &q.to_string(), &url]);
                r["retrieval_calls"][0]["results"][0]["metadata"]["document_id"] == "reef"
            }
    });
    let (code, v) = curl(&[
        "-X",
        "POST",
        "-d",
        r#"{"documents": [{"id": ""}]}"#,
        &ingest,
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
    assert_eq!(curl(&[&format!("{}/healthz", d.http)]).0, 200);
    assert_eq!(curl(&[&format!("{}/readyz", d.http)]).0, 200);
}

#[test]
fn a_batch_closes_at_its_chunk_limit_before_its_time_limit() {
    // One chunk per batch, and a time limit the test would notice.
    let d = start_daemon_with(&[
        ("RAGSTREAM_KAFKA_BATCH_MAX_CHUNKS", "1"),
        ("RAGSTREAM_KAFKA_BATCH_MAX_MS", "600000"),
        ("RAGSTREAM_KAFKA_PARTITIONS", "1"),
    ]);
    let docs: Vec<String> = ["one", "two", "three"]
        .iter()
        .map(|id| upsert(id, &format!("the {id} document")))
        .collect();
    kcat_produce(&d.bootstrap, "ragstream.documents", &[], &docs);
    let stats_url = format!("{}/v1/indexes/kb/stats", d.http);
    wait_for("three documents without waiting for the time limit", || {
        curl(&[&stats_url]).1["documents"] == 3
    });
    let (_, stats) = curl(&[&stats_url]);
    // Version 1 is the empty dataset; each one-chunk batch is its own version.
    assert_eq!(stats["index_version"], 4, "{stats}");
}

#[test]
fn sigterm_drains_and_exits_zero() {
    let mut d = start_daemon();
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[upsert("a", "alpha text")],
    );
    let stats_url = format!("{}/v1/indexes/kb/stats", d.http);
    wait_for("document indexed", || {
        curl(&[&stats_url]).1["documents"] == 1
    });
    let pid = d.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let start = Instant::now();
    loop {
        if let Some(status) = d.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_panicking_stage_is_restarted_by_the_supervisor_and_nothing_is_lost() {
    let d = start_daemon_with(&[
        ("RAGSTREAM_FAILPOINT", "index-writer-panic-once"),
        ("RAGSTREAM_HTTP_MAX_BODY_BYTES", "65536"),
    ]);
    let docs: Vec<String> = (0..40)
        .map(|i| {
            upsert(
                &format!("d{i}"),
                &format!("document number {i} about supervision"),
            )
        })
        .collect();
    kcat_produce(&d.bootstrap, "ragstream.documents", &[], &docs);
    let stats_url = format!("{}/v1/indexes/kb/stats", d.http);
    wait_for("all documents indexed after the restart", || {
        curl(&[&stats_url]).1["documents"] == 40
    });
    let (status, health) = curl(&[&format!("{}/healthz", d.http)]);
    assert_eq!(status, 200);
    assert_eq!(health["pipeline"]["restarts"], 1, "{health}");
    let failure = health["pipeline"]["last_failure"].as_str().unwrap();
    assert!(failure.contains("index-writer panicked"), "{failure}");
    let (_, stats) = curl(&[&stats_url]);
    assert_eq!(stats["chunks"], 40, "each document once: {stats}");

    // Bodies over http.max_body_bytes get a JSON 413 that names the limit.
    let big = json!({"index": "kb", "query": "x".repeat(70_000)}).to_string();
    let (status, body) = curl(&[
        "-X",
        "POST",
        "-H",
        "content-type: application/json",
        "--data-binary",
        &big,
        &format!("{}/v1/retrieve", d.http),
    ]);
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "body_too_large");
    assert_eq!(body["error"]["field"], "body");
}

#[test]
fn every_contract_is_served_over_http_and_the_bus() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ragstream.toml");
    std::fs::write(
        &config,
        "[contracts]\ndefault_index = \"kb\"\ntenant_scoped = true\n\n\
         [retrievers.docs]\nindex = \"kb\"\nmethod = \"hybrid\"\ntop_k = 2\n",
    )
    .unwrap();
    let d = start_daemon_with(&[("RAGSTREAM_CONFIG", config.to_str().unwrap())]);
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[
            upsert("volcano", "Magma erupts from volcanoes as lava."),
            upsert("glacier", "Glaciers carve valleys out of rock."),
        ],
    );
    wait_for("two documents", || {
        curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["documents"] == 2
    });
    let post = |path: &str, body: Value| {
        curl(&[
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "-d",
            &body.to_string(),
            &format!("{}{path}", d.http),
        ])
    };
    let (code, v) = post("/v1/rag/query", json!({"query": "lava magma", "top_k": 1}));
    assert_eq!(code, 200, "{v}");
    assert!(v["results"][0]["content"]
        .as_str()
        .unwrap()
        .contains("Magma"));
    assert_eq!(v["kg"], json!([]));
    let (code, v) = post(
        "/v1/indexes/kb/query",
        json!({"query": "glacier valleys", "debug": true}),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["results"][0]["document_id"], "glacier");
    assert!(v["retrieval_profile_effective"].is_string());
    let (code, v) = post(
        "/v1/ai/rag/query/",
        json!({"query": "magma", "hybrid": {"top_k": 1, "min_sim": 0}}),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["matches"][0]["id"], "volcano");
    assert_eq!(v["meta"]["top_k_effective"], 1);
    let (code, v) = post(
        "/v1/ai/rag/query/",
        json!({"query": "x", "hybrid": {"bad": 1}}),
    );
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (400, Some("InputError"))
    );
    let (code, v) = post(
        "/v1/retrievers/docs/retrieve",
        json!({"query": "rock valleys"}),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v[0]["metadata"]["document_id"], "glacier");

    // The bus: the contract header picks the adapter; the reply carries status and version.
    kcat_produce(
        &d.bootstrap,
        "ragstream.queries",
        &[
            "-H",
            "reply-to=ragstream.replies",
            "-H",
            "correlation-id=c003",
            "-H",
            "contract=003",
        ],
        &[json!({"query": "lava", "hybrid": {"top_k": 1, "min_sim": 0}}).to_string()],
    );
    let replies = kcat_consume(&d.bootstrap, "ragstream.replies", 1);
    let (headers, body) = replies[0].split_once('\t').unwrap();
    assert!(headers.contains("correlation-id=c003"), "{headers}");
    assert!(headers.contains("status=200"), "{headers}");
    assert!(headers.contains("index-version="), "{headers}");
    let reply: Value = serde_json::from_str(body).unwrap();
    assert_eq!(reply["matches"][0]["id"], "volcano");
}
