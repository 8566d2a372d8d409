//! `ragstream bench soak`: the daemon as operators run it, for N minutes, from outside. A
//! standalone broker (`ragstream broker`) keeps the log; a daemon (`ragstream serve`, a
//! child process) ingests documents produced at a steady rate, some of them updated later,
//! while a client queries it over HTTP; every few minutes the daemon is stopped (SIGTERM
//! and SIGKILL in turn) and started again on the same data directory. At the end every
//! produced document must be indexed exactly once, in Lance and in the keyword store.
//!
//! Reported: documents lost and duplicated, answers with a 5xx, queries that found the
//! daemon down (during restarts), query p50/p99 and the daemon's RSS per minute, and the
//! RSS slope of each incarnation.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::ClientConfig;
use serde::Serialize;
use serde_json::{json, Value};

use super::pipeline::{failed, BenchError};
use crate::eval::beir::percentile;

#[derive(Debug, Clone)]
pub struct SoakOptions {
    pub minutes: f64,
    /// Documents produced per second.
    pub rate: f64,
    /// The daemon is restarted this often (SIGTERM and SIGKILL in turn).
    pub restart_every: Duration,
    /// The embedder the daemon runs (`model.embedder`).
    pub embedder: String,
}

#[derive(Debug, Default, Serialize)]
pub struct Minute {
    pub minute: usize,
    pub queries: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub server_errors: usize,
    /// Queries that found no daemon listening (it was restarting).
    pub unavailable: usize,
    pub rss_mib: f64,
}

#[derive(Debug, Serialize)]
pub struct Incarnation {
    pub stopped_by: String,
    pub seconds: f64,
    /// Least-squares slope of the RSS samples, MiB per minute.
    pub rss_slope_mib_per_minute: f64,
    pub rss_last_mib: f64,
}

#[derive(Debug, Serialize)]
pub struct SoakReport {
    pub minutes: f64,
    pub embedder: String,
    pub documents_produced: usize,
    pub updates_produced: usize,
    pub documents_expected: usize,
    pub documents_indexed: u64,
    pub lost: i64,
    pub duplicated: i64,
    pub lance_chunks: u64,
    pub keyword_chunks: u64,
    pub restarts: usize,
    pub queries: usize,
    pub server_errors: usize,
    pub unavailable: usize,
    pub per_minute: Vec<Minute>,
    pub incarnations: Vec<Incarnation>,
}

/// A child `ragstream` process and what it announced on stdout.
struct Process {
    child: Child,
    announced: String,
}

fn spawn(
    exe: &Path,
    args: &[&str],
    env: &[(&str, String)],
    wait_for: &str,
) -> Result<Process, BenchError> {
    let mut child = Command::new(exe)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed("starting ragstream", &e))?;
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let announced = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(rest) = line.strip_prefix(wait_for) {
                    break rest.to_string();
                }
            }
            _ => {
                return Err(BenchError::Stalled(format!(
                    "{args:?} exited before announcing {wait_for:?}"
                )))
            }
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok(Process { child, announced })
}

fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// Least-squares slope of `(seconds, mib)` samples, in MiB per minute.
fn slope_per_minute(samples: &[(f64, f64)]) -> f64 {
    let n = samples.len() as f64;
    if samples.len() < 2 {
        return 0.0;
    }
    let (mx, my) = (
        samples.iter().map(|s| s.0).sum::<f64>() / n,
        samples.iter().map(|s| s.1).sum::<f64>() / n,
    );
    let sxx: f64 = samples.iter().map(|s| (s.0 - mx).powi(2)).sum();
    let sxy: f64 = samples.iter().map(|s| (s.0 - mx) * (s.1 - my)).sum();
    if sxx == 0.0 {
        0.0
    } else {
        sxy / sxx * 60.0
    }
}

/// One query's outcome: when, how long, and its status (0: nothing listening).
type Sample = (f64, f64, u16);

pub async fn run(exe: &Path, options: &SoakOptions) -> Result<SoakReport, BenchError> {
    let scratch = super::scratch_dir();
    let result = soak(exe, options, &scratch).await;
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

async fn soak(exe: &Path, options: &SoakOptions, scratch: &Path) -> Result<SoakReport, BenchError> {
    let data = scratch.join("data");
    let broker_dir = scratch.join("broker");
    let mut broker = spawn(
        exe,
        &["broker"],
        &[(
            "RAGSTREAM_STORAGE_DATA_DIR",
            broker_dir.display().to_string(),
        )],
        "kafka bootstrap: ",
    )?;
    let bootstrap = broker.announced.clone();
    let env: Vec<(&str, String)> = vec![
        ("RAGSTREAM_STORAGE_DATA_DIR", data.display().to_string()),
        ("RAGSTREAM_KAFKA_BROKERS", bootstrap.clone()),
        ("RAGSTREAM_HTTP_BIND", "127.0.0.1:0".into()),
        ("RAGSTREAM_MODEL_EMBEDDER", options.embedder.clone()),
    ];
    let start_daemon = || spawn(exe, &["serve"], &env, "http: ");
    let mut daemon = start_daemon()?;
    let http = Arc::new(Mutex::new(daemon.announced.clone()));
    let started = Instant::now();
    let deadline = Duration::from_secs_f64(options.minutes * 60.0);

    // Queries, back to back with a short pause, against whichever daemon is up.
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let querier = {
        let (http, samples, stop) = (http.clone(), samples.clone(), stop.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("client");
            let topics = [
                "moon tides",
                "document about restarts",
                "soak number 7",
                "ocean",
            ];
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let url = format!("{}/v1/retrieve", http.lock().expect("http").clone());
                let body = json!({"retrieval": {"index": "soak", "query": topics[i % topics.len()],
                    "search_method": "hybrid", "top_k": 10}});
                i += 1;
                let t = Instant::now();
                let status = match client.post(&url).json(&body).send().await {
                    Ok(r) => r.status().as_u16(),
                    Err(_) => 0,
                };
                samples.lock().expect("samples").push((
                    started.elapsed().as_secs_f64(),
                    t.elapsed().as_secs_f64() * 1000.0,
                    status,
                ));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("linger.ms", "5")
        .create()?;
    let mut produced = 0usize;
    let mut updates = 0usize;
    let mut rss: Vec<(usize, f64, f64)> = Vec::new(); // (incarnation, seconds, MiB)
    let mut incarnations = Vec::new();
    let mut incarnation_started = Instant::now();
    let mut last_restart = Instant::now();
    let mut last_rss = Instant::now() - Duration::from_secs(10);
    let mut sigkill = false;
    let every = Duration::from_secs_f64(1.0 / options.rate.max(0.1));
    while started.elapsed() < deadline {
        // One event: a new document, or (every fifth) a new text for an earlier one.
        let (id, text) = if produced > 10 && (produced + updates) % 5 == 4 {
            updates += 1;
            let id = (updates * 7919) % produced;
            (
                id,
                format!("Soak document {id}, revision {updates}: the moon and the tides."),
            )
        } else {
            produced += 1;
            let id = produced - 1;
            (
                id,
                format!("Soak document {id} about restarts and the ocean."),
            )
        };
        let id = format!("soak-{id:07}");
        let event = json!({"schema_version": 1, "op": "upsert", "index": "soak",
            "document": {"id": id, "text": text}})
        .to_string();
        let key = format!("soak/{id}");
        producer
            .send(
                FutureRecord::to("ragstream.documents")
                    .key(&key)
                    .payload(&event),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(e, _)| BenchError::Kafka(e))?;
        if last_rss.elapsed() >= Duration::from_secs(5) {
            if let Some(mib) = rss_mib(daemon.child.id()) {
                rss.push((incarnations.len(), started.elapsed().as_secs_f64(), mib));
            }
            last_rss = Instant::now();
        }
        if last_restart.elapsed() >= options.restart_every {
            let pid = daemon.child.id().to_string();
            let signal = if sigkill { "-KILL" } else { "-TERM" };
            let _ = Command::new("kill").args([signal, &pid]).status();
            let _ = daemon.child.wait();
            incarnations.push(incarnation(
                &rss,
                incarnations.len(),
                signal,
                incarnation_started.elapsed(),
            ));
            sigkill = !sigkill;
            daemon = start_daemon()?;
            *http.lock().expect("http") = daemon.announced.clone();
            incarnation_started = Instant::now();
            last_restart = Instant::now();
        }
        tokio::time::sleep(every).await;
    }

    // Everything produced must arrive: wait (bounded) until the index holds every document.
    let client = reqwest::Client::new();
    let stats_url = format!("{}/v1/indexes/soak/stats", daemon.announced);
    let waited = Instant::now();
    let stats: Value = loop {
        let s: Value = match client.get(&stats_url).send().await {
            Ok(r) => r.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        if s["documents"].as_u64() == Some(produced as u64) && s["keyword_chunks"] == s["chunks"]
            || waited.elapsed() > Duration::from_secs(300)
        {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = querier.await;
    incarnations.push(incarnation(
        &rss,
        incarnations.len(),
        "end",
        incarnation_started.elapsed(),
    ));
    let _ = Command::new("kill")
        .args(["-TERM", &daemon.child.id().to_string()])
        .status();
    let _ = daemon.child.wait();
    let _ = broker.child.kill();
    let _ = broker.child.wait();

    let indexed = stats["documents"].as_u64().unwrap_or(0);
    let lance_chunks = stats["chunks"].as_u64().unwrap_or(0);
    let keyword_chunks = stats["keyword_chunks"].as_u64().unwrap_or(0);
    let samples = samples.lock().expect("samples").clone();
    let minutes = (started.elapsed().as_secs_f64() / 60.0).ceil() as usize;
    let per_minute = (0..minutes).map(|m| minute(m, &samples, &rss)).collect();
    Ok(SoakReport {
        minutes: options.minutes,
        embedder: options.embedder.clone(),
        documents_produced: produced,
        updates_produced: updates,
        documents_expected: produced,
        documents_indexed: indexed,
        lost: produced as i64 - indexed as i64,
        // Each document is one chunk: more chunks than documents, or keyword chunks that
        // differ from Lance's, are duplicates.
        duplicated: (lance_chunks as i64 - indexed as i64)
            .max(keyword_chunks as i64 - indexed as i64),
        lance_chunks,
        keyword_chunks,
        restarts: incarnations.len() - 1,
        queries: samples.len(),
        server_errors: samples.iter().filter(|s| s.2 >= 500).count(),
        unavailable: samples.iter().filter(|s| s.2 == 0).count(),
        per_minute,
        incarnations,
    })
}

fn incarnation(
    rss: &[(usize, f64, f64)],
    index: usize,
    stopped_by: &str,
    ran: Duration,
) -> Incarnation {
    let own: Vec<(f64, f64)> = rss
        .iter()
        .filter(|s| s.0 == index)
        .map(|s| (s.1, s.2))
        .collect();
    Incarnation {
        stopped_by: stopped_by.trim_start_matches('-').to_string(),
        seconds: ran.as_secs_f64(),
        rss_slope_mib_per_minute: slope_per_minute(&own),
        rss_last_mib: own.last().map_or(0.0, |s| s.1),
    }
}

fn minute(m: usize, samples: &[Sample], rss: &[(usize, f64, f64)]) -> Minute {
    let within = |t: f64| t >= m as f64 * 60.0 && t < (m + 1) as f64 * 60.0;
    let mut ms: Vec<f64> = samples
        .iter()
        .filter(|s| within(s.0) && s.2 != 0)
        .map(|s| s.1)
        .collect();
    ms.sort_by(f64::total_cmp);
    Minute {
        minute: m + 1,
        queries: ms.len(),
        p50_ms: percentile(&ms, 50.0),
        p99_ms: percentile(&ms, 99.0),
        server_errors: samples.iter().filter(|s| within(s.0) && s.2 >= 500).count(),
        unavailable: samples.iter().filter(|s| within(s.0) && s.2 == 0).count(),
        rss_mib: rss
            .iter()
            .filter(|s| within(s.1))
            .map(|s| s.2)
            .fold(0.0, f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_is_in_mib_per_minute() {
        let samples: Vec<(f64, f64)> = (0..10)
            .map(|i| (i as f64 * 6.0, 100.0 + i as f64))
            .collect();
        assert!((slope_per_minute(&samples) - 10.0).abs() < 1e-9);
        assert_eq!(slope_per_minute(&[(0.0, 5.0)]), 0.0);
    }
}
