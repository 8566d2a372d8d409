//! The embedded broker: nisshi, a Kafka-compatible broker written by others, run as a child
//! process on 127.0.0.1 with its messages in SQLite under `<data_dir>/broker/`. Any Kafka
//! client (kcat included) produces to the bootstrap address it prints. What it acknowledged
//! is on disk: a SIGKILL, a SIGTERM or a restart of either process loses nothing, and a
//! backlog waits in the file, not in memory.
//!
//! The broker is supervised: it dies with its parent (`PR_SET_PDEATHSIG`), a death is
//! reported to `/healthz` and the broker is started again on the same port, and a stop is
//! SIGINT, then SIGKILL after a grace period. Its cluster id, kept in the directory, names
//! the log: checkpoints stored in the indexes stay valid across restarts.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::KafkaConfig;
use crate::data_dir::DataDirLock;
use crate::health::{Health, Impact};

/// How long the broker may take to accept connections after it is started.
const READY_WITHIN: Duration = Duration::from_secs(20);
/// How long a stopping broker may take before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// The `/healthz` part a dead broker is reported under.
const HEALTH_PART: &str = "kafka.embedded_broker";

#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("the embedded broker needs nisshi, which was not found ({looked}): run scripts/setup, set kafka.embedded_broker to its path, or set kafka.brokers to a Kafka cluster")]
    NotInstalled { looked: String },
    #[error("embedded broker directory {dir}: {reason}")]
    Directory { dir: PathBuf, reason: String },
    #[error("the embedded broker ({program}) could not be started: {reason}")]
    Spawn { program: String, reason: String },
    #[error(
        "the embedded broker exited during start-up ({status}); its log {log} ends with:\n{tail}"
    )]
    Exited {
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error("the embedded broker did not accept connections on {addr} within {within:?}; its log is {log}")]
    NotReady {
        addr: SocketAddr,
        within: Duration,
        log: PathBuf,
    },
}

/// How to run the broker: program, directory, port and cluster id.
#[derive(Debug, Clone)]
struct Spec {
    program: PathBuf,
    dir: PathBuf,
    addr: SocketAddr,
    cluster_id: String,
}

/// State the supervisor shares with the handle.
#[derive(Default)]
struct Shared {
    stopping: AtomicBool,
    /// The running child's pid (0: none).
    pid: AtomicU32,
    exited: AtomicBool,
}

/// A running embedded broker. Dropping it (or `stop`) stops the broker; its messages stay.
pub struct EmbeddedBroker {
    bootstrap: String,
    shared: Arc<Shared>,
    supervisor: Option<JoinHandle<()>>,
    _lock: DataDirLock,
}

impl EmbeddedBroker {
    /// Starts the broker on `<data_dir>/broker` (the port it used last time if it is free)
    /// and waits until it accepts connections. A death later is reported to `health` (if
    /// any) and the broker is started again.
    pub fn start(
        kafka: &KafkaConfig,
        data_dir: &Path,
        health: Option<Arc<Health>>,
    ) -> Result<Self, BrokerError> {
        let program = find_program(&kafka.embedded_broker)?;
        let dir = data_dir.join("broker");
        let in_dir = |reason: String| BrokerError::Directory {
            dir: dir.clone(),
            reason,
        };
        // One broker per directory: SQLite would take two, and they would share a log.
        let lock =
            DataDirLock::acquire(&dir, "embedded broker").map_err(|e| in_dir(e.to_string()))?;
        let cluster_id = read_or_create(&dir.join("cluster-id"), || {
            format!("ragstream-{}", uuid::Uuid::new_v4())
        })
        .map_err(in_dir)?;
        let addr = choose_port(&dir, kafka.embedded_port).map_err(in_dir)?;
        let spec = Spec {
            program,
            dir,
            addr,
            cluster_id,
        };
        let shared = Arc::new(Shared::default());
        let (ready_tx, ready_rx) = mpsc::channel();
        // The child is spawned by, and dies with, this thread (PR_SET_PDEATHSIG follows the
        // thread that forked): it lives as long as the broker is wanted.
        let supervisor = std::thread::Builder::new()
            .name("embedded-broker".into())
            .spawn({
                let (spec, shared) = (spec.clone(), shared.clone());
                move || supervise(spec, shared, health, ready_tx)
            })
            .map_err(|e| BrokerError::Spawn {
                program: spec.program.display().to_string(),
                reason: e.to_string(),
            })?;
        let started = ready_rx.recv().unwrap_or_else(|_| {
            Err(BrokerError::Spawn {
                program: spec.program.display().to_string(),
                reason: "the supervisor thread ended during start-up".into(),
            })
        });
        let mut broker = EmbeddedBroker {
            bootstrap: addr.to_string(),
            shared,
            supervisor: Some(supervisor),
            _lock: lock,
        };
        if let Err(e) = started {
            broker.stop();
            return Err(e);
        }
        Ok(broker)
    }

    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// Stops the broker: SIGINT, then SIGKILL after a grace period. nisshi ends its
    /// connections at once on SIGINT (on SIGTERM it waits for its clients to leave); a write
    /// cut short was never acknowledged, and SQLite rolls it back.
    pub fn stop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        signal(&self.shared, libc::SIGINT);
        let deadline = Instant::now() + STOP_GRACE;
        while !self.shared.exited.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !self.shared.exited.load(Ordering::SeqCst) {
            tracing::warn!("the embedded broker did not stop within its grace period; killing it");
            signal(&self.shared, libc::SIGKILL);
        }
        if let Some(t) = self.supervisor.take() {
            let _ = t.join();
        }
    }
}

impl Drop for EmbeddedBroker {
    fn drop(&mut self) {
        self.stop();
    }
}

fn signal(shared: &Shared, signal: libc::c_int) {
    let pid = shared.pid.load(Ordering::SeqCst);
    if pid != 0 && !shared.exited.load(Ordering::SeqCst) {
        // SAFETY: kill(2) on the pid of a child this process has not reaped yet.
        unsafe { libc::kill(pid as libc::pid_t, signal) };
    }
}

/// Starts the child, reports start-up, then restarts it whenever it dies until stopped.
fn supervise(
    spec: Spec,
    shared: Arc<Shared>,
    health: Option<Arc<Health>>,
    ready: mpsc::Sender<Result<(), BrokerError>>,
) {
    let mut child = match run(&spec, &shared) {
        Ok(c) => {
            let _ = ready.send(Ok(()));
            c
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut backoff = Duration::from_millis(200);
    loop {
        let status = child.wait();
        shared.exited.store(true, Ordering::SeqCst);
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
        tracing::error!(%status, log = %spec.dir.join(LOG).display(),
            "the embedded broker died; starting it again");
        if let Some(m) = crate::telemetry::metrics() {
            m.actor_restarts_total
                .with_label_values(&["embedded_broker"])
                .inc();
        }
        if let Some(h) = &health {
            h.report(
                HEALTH_PART,
                Impact::Unhealthy,
                format!("the embedded broker died ({status}); it is being started again"),
            );
        }
        loop {
            let deadline = Instant::now() + backoff;
            while Instant::now() < deadline {
                if shared.stopping.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            match run(&spec, &shared) {
                Ok(c) => {
                    child = c;
                    backoff = Duration::from_millis(200);
                    if let Some(h) = &health {
                        h.clear(HEALTH_PART);
                    }
                    tracing::info!(addr = %spec.addr, "the embedded broker is back");
                    break;
                }
                Err(e) => {
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                    tracing::error!(error = %e, "the embedded broker did not start again");
                    if let Some(h) = &health {
                        h.report(HEALTH_PART, Impact::Unhealthy, e.to_string());
                    }
                }
            }
        }
    }
}

const LOG: &str = "broker.log";

/// Spawns the broker and waits until it accepts connections.
fn run(spec: &Spec, shared: &Shared) -> Result<Child, BrokerError> {
    let log_path = spec.dir.join(LOG);
    // The previous run's log is kept beside the new one: it may say why the broker died.
    let _ = std::fs::rename(&log_path, spec.dir.join(format!("{LOG}.1")));
    let spawn_error = |reason: String| BrokerError::Spawn {
        program: spec.program.display().to_string(),
        reason,
    };
    let log = std::fs::File::create(&log_path)
        .map_err(|e| spawn_error(format!("creating {}: {e}", log_path.display())))?;
    let listener = format!("tcp://{}", spec.addr);
    let mut command = Command::new(&spec.program);
    command
        .arg("broker")
        .args(["--listener-url", &listener])
        .args(["--advertised-listener-url", &listener])
        .args(["--storage-engine", "sqlite://broker.db"])
        .args(["--cluster-id", &spec.cluster_id])
        // A group's first member is assigned its partitions at once, not after waiting for
        // others: the first document after a start is searchable sooner.
        .args(["--group-initial-rebalance-delay", "0s"])
        .current_dir(&spec.dir)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(
            log.try_clone()
                .map_err(|e| spawn_error(format!("{}: {e}", log_path.display())))?,
        )
        .stderr(log);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            // The broker dies with the thread that started it (SIGKILL of this process
            // included), and a terminal's Ctrl-C reaches only this process, which drains
            // the pipeline before it stops the broker.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| spawn_error(e.to_string()))?;
    shared.exited.store(false, Ordering::SeqCst);
    shared.pid.store(child.id(), Ordering::SeqCst);
    let deadline = Instant::now() + READY_WITHIN;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            shared.exited.store(true, Ordering::SeqCst);
            return Err(BrokerError::Exited {
                status: status.to_string(),
                tail: tail(&log_path, 20),
                log: log_path,
            });
        }
        if TcpStream::connect_timeout(&spec.addr, Duration::from_millis(200)).is_ok() {
            return Ok(child);
        }
        if Instant::now() > deadline || shared.stopping.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            shared.exited.store(true, Ordering::SeqCst);
            return Err(BrokerError::NotReady {
                addr: spec.addr,
                within: READY_WITHIN,
                log: log_path,
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The broker's program: `configured` if set, else the copy `scripts/setup` installs, else
/// `nisshi` on the PATH.
fn find_program(configured: &str) -> Result<PathBuf, BrokerError> {
    let configured = configured.trim();
    if !configured.is_empty() {
        let path = PathBuf::from(configured);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(BrokerError::NotInstalled {
                looked: format!("kafka.embedded_broker = {configured:?} is not a file"),
            })
        };
    }
    let mut looked = Vec::new();
    if let Some(home) = std::env::var_os("HOME") {
        let installed = Path::new(&home).join(".cache/ragstream/nisshi/bin/nisshi");
        if installed.is_file() {
            return Ok(installed);
        }
        looked.push(installed.display().to_string());
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let candidate = dir.join("nisshi");
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    looked.push("nisshi on the PATH".into());
    Err(BrokerError::NotInstalled {
        looked: looked.join(", "),
    })
}

/// The file's trimmed content, or `make()`'s, written first.
fn read_or_create(path: &Path, make: impl FnOnce() -> String) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Ok(_) | Err(_) => {
            let value = make();
            crate::data_dir::write_atomically(path, value.as_bytes())
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            Ok(value)
        }
    }
}

/// The address to listen on: `configured` if not 0; else the port of the last run if it is
/// still free, so that clients keep their bootstrap address across restarts; else a free one.
/// The choice is recorded in `<dir>/port`.
fn choose_port(dir: &Path, configured: u16) -> Result<SocketAddr, String> {
    let at = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
    let record = dir.join("port");
    let port = if configured != 0 {
        configured
    } else {
        let last = std::fs::read_to_string(&record)
            .ok()
            .and_then(|s| s.trim().parse::<u16>().ok())
            .filter(|p| *p != 0 && TcpListener::bind(at(*p)).is_ok());
        match last {
            Some(p) => p,
            None => TcpListener::bind(at(0))
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("no free port on 127.0.0.1: {e}"))?
                .port(),
        }
    };
    crate::data_dir::write_atomically(&record, port.to_string().as_bytes())
        .map_err(|e| format!("writing {}: {e}", record.display()))?;
    Ok(at(port))
}

/// The last `lines` lines of a file, for an error message.
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// What `serve` and `broker` print so that a user can start producing at once.
pub fn announce(bootstrap: &str, kafka: &KafkaConfig) -> String {
    let first = bootstrap.split(',').next().unwrap_or(bootstrap);
    format!(
        "kafka bootstrap: {first}\n\
         example: echo '{{\"schema_version\":1,\"op\":\"upsert\",\"index\":\"kb\",\"document\":{{\"id\":\"doc-1\",\"text\":\"hello\"}}}}' \
         | kcat -P -b {first} -t {} -k kb/doc-1",
        kafka.documents_topic
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_is_named_with_what_to_do() {
        let e = find_program("/no/such/nisshi").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("/no/such/nisshi"), "{text}");
        assert!(
            text.contains("scripts/setup") && text.contains("kafka.brokers"),
            "{text}"
        );
    }

    #[test]
    fn the_port_of_the_last_run_is_taken_again_when_free() {
        let dir = tempfile::tempdir().unwrap();
        let first = choose_port(dir.path(), 0).unwrap();
        assert_eq!(choose_port(dir.path(), 0).unwrap(), first);
        // Taken by someone else: another port, recorded.
        let _held = TcpListener::bind(first).unwrap();
        let second = choose_port(dir.path(), 0).unwrap();
        assert_ne!(second, first);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("port")).unwrap(),
            second.port().to_string()
        );
    }

    #[test]
    fn the_cluster_id_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster-id");
        let id = read_or_create(&path, || "a".into()).unwrap();
        assert_eq!(read_or_create(&path, || "b".into()).unwrap(), id);
    }
}
