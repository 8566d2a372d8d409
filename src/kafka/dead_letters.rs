//! The dead-letter topic: poison messages with the error and their origin in headers.
//!
//! A dead letter is never dropped and never blocks the pipeline for long:
//!
//! - a letter too large for the topic (the broker's or the producer's size limit) is sent
//!   again shrunk: the headers, with the payload's size and SHA-256 instead of the payload
//!   (the original stays in the source topic at the offset the headers name), and without
//!   its key too if that is still too large;
//! - a letter the topic does not take within [`DELIVERY_DEADLINE`] is parked: appended,
//!   whole, to `<data_dir>/dead-letters/parked.jsonl` (fsynced), and `/healthz` reports the
//!   dead-letter path as failing until a letter gets through again. While it fails, each
//!   new letter gets one short try before it is parked, so a broken topic costs the
//!   pipeline seconds, not minutes. With no letter refused for [`FAILING_EXPIRES`], the
//!   path counts as working again.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use sha2::{Digest, Sha256};

use crate::health::{Health, Impact};

/// How long one letter is retried before it is parked.
pub const DELIVERY_DEADLINE: Duration = Duration::from_secs(30);

/// The one try a letter gets while the path is failing.
const FAILING_TRY: Duration = Duration::from_secs(5);

/// A failing path with no letter refused for this long counts as working again.
pub const FAILING_EXPIRES: Duration = Duration::from_secs(300);

/// The file parked letters are appended to, under the data directory.
pub const PARKED_FILE: &str = "dead-letters/parked.jsonl";

/// The part name under which `/healthz` reports a failing dead-letter path.
const HEALTH_PART: &str = "dead_letters";

/// Where a message came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// The message's own headers, copied onto its dead letter (see [`ORIGINAL_HEADERS_SKIPPED`]).
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// Original headers a dead letter does not carry: credentials stay out of the dead-letter
/// topic, and the letter's own headers are not shadowed.
pub const ORIGINAL_HEADERS_SKIPPED: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "error.code",
    "error.message",
    "source.topic",
    "source.partition",
    "source.offset",
    "key.sha256",
    "payload.omitted",
    "payload.bytes",
    "payload.sha256",
];

impl Origin {
    /// The original headers a dead letter carries: all but [`ORIGINAL_HEADERS_SKIPPED`].
    pub fn carried_headers(&self) -> impl Iterator<Item = (&str, Option<&[u8]>)> {
        self.headers
            .iter()
            .filter(|(key, _)| {
                !ORIGINAL_HEADERS_SKIPPED.contains(&key.to_ascii_lowercase().as_str())
            })
            .map(|(key, value)| (key.as_str(), value.as_deref()))
    }

    /// Where `msg` came from, with its headers.
    pub fn of(msg: &impl rdkafka::Message) -> Origin {
        use rdkafka::message::Headers;
        let headers = msg
            .headers()
            .map(|h| {
                h.iter()
                    .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                    .collect()
            })
            .unwrap_or_default();
        Origin {
            topic: msg.topic().to_string(),
            partition: msg.partition(),
            offset: msg.offset(),
            headers,
        }
    }
}

#[derive(Clone)]
pub struct DeadLetters {
    producer: FutureProducer,
    topic: String,
    parked: PathBuf,
    health: Option<Arc<Health>>,
    /// Since when the topic has been refusing letters (none: it takes them), and when it
    /// last refused one.
    failing: Arc<Mutex<Option<(Instant, Instant)>>>,
    /// Per `"topic:partition"`, the offset below which every letter was already sent: the
    /// pipeline's consumer group committed past it, and the group commits only after a
    /// batch's letters are out. A message below it read again after a restart gets none.
    sent_below: Arc<HashMap<String, i64>>,
}

/// How much of a letter is sent: all of it, then without the payload, then without the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shrunk {
    Whole,
    NoPayload,
    NoKey,
}

/// One letter as it is sent (or parked).
struct Letter<'a> {
    origin: &'a Origin,
    key: Option<&'a [u8]>,
    payload: Option<&'a [u8]>,
    code: &'a str,
    message: &'a str,
}

impl DeadLetters {
    /// Letters go to `topic`; those it refuses are parked under `data_dir`.
    pub fn new(producer: FutureProducer, topic: String, data_dir: &std::path::Path) -> Self {
        DeadLetters {
            producer,
            topic,
            parked: data_dir.join(PARKED_FILE),
            health: None,
            failing: Arc::new(Mutex::new(None)),
            sent_below: Arc::default(),
        }
    }

    /// The same letters, but none for a message below its partition's offset in
    /// `committed` (the consumer group's committed offsets, `"topic:partition"` → offset):
    /// their letters went out before.
    pub fn sent_below(&self, committed: HashMap<String, i64>) -> Self {
        DeadLetters {
            sent_below: Arc::new(committed),
            ..self.clone()
        }
    }

    /// Reports a failing dead-letter path to `health`.
    pub fn reporting_to(mut self, health: Arc<Health>) -> Self {
        self.health = Some(health);
        self
    }

    /// Sends the original key and payload with headers `error.code`, `error.message`,
    /// `source.topic`, `source.partition`, `source.offset`; shrunk when too large, parked
    /// when the topic does not take it in time (see the module documentation).
    pub async fn send(
        &self,
        origin: &Origin,
        key: Option<&[u8]>,
        payload: Option<&[u8]>,
        code: &str,
        message: &str,
    ) {
        let partition = format!("{}:{}", origin.topic, origin.partition);
        if self
            .sent_below
            .get(&partition)
            .is_some_and(|below| origin.offset < *below)
        {
            tracing::debug!(%partition, offset = origin.offset, code,
                "message read again below the group's committed offset: its dead letter went out before");
            return;
        }
        if let Some(m) = crate::telemetry::metrics() {
            m.dead_letters_total.with_label_values(&[code]).inc();
        }
        let letter = Letter {
            origin,
            key,
            payload,
            code,
            message,
        };
        let started = Instant::now();
        let failing = self.failing.lock().expect("dead letters lock").is_some();
        let deadline = if failing {
            FAILING_TRY
        } else {
            DELIVERY_DEADLINE
        };
        let mut shrunk = Shrunk::Whole;
        let mut delay = Duration::from_millis(250);
        loop {
            // One try never outlasts what is left of the deadline (the producer's own
            // timeout is longer); a letter delivered after all is then also parked: a
            // duplicate, never a loss.
            let left = deadline
                .saturating_sub(started.elapsed())
                .max(Duration::from_millis(100));
            let tried = tokio::time::timeout(left, self.produce(&letter, shrunk))
                .await
                .unwrap_or(Err(KafkaError::MessageProduction(
                    RDKafkaErrorCode::MessageTimedOut,
                )));
            match tried {
                Ok(()) => {
                    tracing::warn!(code, %message, topic = %origin.topic, partition = origin.partition,
                        offset = origin.offset, ?shrunk, "message sent to the dead-letter topic");
                    crate::failpoint::abort_at("after-dead-letter");
                    self.delivering();
                    return;
                }
                Err(e) if too_large(&e) && shrunk < Shrunk::NoKey => {
                    tracing::warn!(error = %e, ?shrunk, "dead letter too large for the topic; sending less of it");
                    shrunk = if shrunk == Shrunk::Whole {
                        Shrunk::NoPayload
                    } else {
                        Shrunk::NoKey
                    };
                }
                Err(e) if started.elapsed() >= deadline => {
                    tracing::error!(error = %e, "the dead-letter topic refused a letter; parking it");
                    self.park(&letter, &e.to_string()).await;
                    return;
                }
                Err(e) => {
                    tracing::error!(error = %e, retry_in = ?delay, "dead-letter produce failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    async fn produce(&self, letter: &Letter<'_>, shrunk: Shrunk) -> Result<(), KafkaError> {
        let partition = letter.origin.partition.to_string();
        let offset = letter.origin.offset.to_string();
        let mut headers = OwnedHeaders::new()
            .insert(Header {
                key: "error.code",
                value: Some(letter.code),
            })
            .insert(Header {
                key: "error.message",
                value: Some(letter.message),
            })
            .insert(Header {
                key: "source.topic",
                value: Some(letter.origin.topic.as_str()),
            })
            .insert(Header {
                key: "source.partition",
                value: Some(partition.as_str()),
            })
            .insert(Header {
                key: "source.offset",
                value: Some(offset.as_str()),
            });
        let payload = letter.payload.unwrap_or_default();
        let (size, digest) = (
            payload.len().to_string(),
            hex::encode(Sha256::digest(payload)),
        );
        let key_digest = hex::encode(Sha256::digest(letter.key.unwrap_or_default()));
        if shrunk == Shrunk::NoKey {
            headers = headers.insert(Header {
                key: "key.sha256",
                value: Some(key_digest.as_str()),
            });
        }
        if shrunk > Shrunk::Whole {
            headers = headers
                .insert(Header {
                    key: "payload.omitted",
                    value: Some("true"),
                })
                .insert(Header {
                    key: "payload.bytes",
                    value: Some(size.as_str()),
                })
                .insert(Header {
                    key: "payload.sha256",
                    value: Some(digest.as_str()),
                });
        }
        for (key, value) in letter.origin.carried_headers() {
            headers = headers.insert(Header { key, value });
        }
        let mut record = FutureRecord::<[u8], [u8]>::to(&self.topic).headers(headers);
        if let (Some(k), true) = (letter.key, shrunk < Shrunk::NoKey) {
            record = record.key(k);
        }
        if let (Some(p), Shrunk::Whole) = (letter.payload, shrunk) {
            record = record.payload(p);
        }
        self.producer
            .send(record, Duration::from_secs(5))
            .await
            .map(|_| ())
            .map_err(|(e, _)| e)
    }

    fn delivering(&self) {
        if self
            .failing
            .lock()
            .expect("dead letters lock")
            .take()
            .is_some()
        {
            if let Some(h) = &self.health {
                h.clear(HEALTH_PART);
            }
        }
    }

    /// A failing path that has refused nothing for `after` counts as working again (the
    /// next letter gets its full deadline). The daemon's monitor calls this.
    pub fn expire(&self, after: Duration) {
        let mut failing = self.failing.lock().expect("dead letters lock");
        if failing.is_some_and(|(_, last)| last.elapsed() >= after) {
            *failing = None;
            if let Some(h) = &self.health {
                h.clear(HEALTH_PART);
            }
        }
    }

    /// Appends the whole letter to the parked file. If even that fails (no space), the
    /// letter is retried — topic, then file — until one takes it: the pipeline waits, and
    /// the stall shows in `/healthz`, but nothing is lost.
    async fn park(&self, letter: &Letter<'_>, produce_error: &str) {
        let since = {
            let mut failing = self.failing.lock().expect("dead letters lock");
            let since = failing.map_or_else(Instant::now, |(since, _)| since);
            *failing = Some((since, Instant::now()));
            since
        };
        let record = parked_record(letter, produce_error);
        loop {
            match append_line(&self.parked, &record) {
                Ok(()) => break,
                Err(e) => {
                    tracing::error!(error = %e, file = %self.parked.display(),
                        "cannot park a dead letter; retrying the topic, then the file");
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    if self.produce(letter, Shrunk::NoKey).await.is_ok() {
                        self.delivering();
                        return;
                    }
                }
            }
        }
        if let Some(m) = crate::telemetry::metrics() {
            m.dead_letters_parked_total
                .with_label_values(&[letter.code])
                .inc();
        }
        if let Some(h) = &self.health {
            h.report(
                HEALTH_PART,
                Impact::Unhealthy,
                format!(
                    "the dead-letter topic {} has refused letters for {} s (last: {produce_error}); \
                     they are parked in {}",
                    self.topic,
                    since.elapsed().as_secs(),
                    self.parked.display()
                ),
            );
        }
    }
}

/// The broker or the producer refused the letter for its size: sending it again as it is
/// cannot succeed.
fn too_large(e: &KafkaError) -> bool {
    matches!(
        e,
        KafkaError::MessageProduction(
            RDKafkaErrorCode::MessageSizeTooLarge
                | RDKafkaErrorCode::MessageBatchTooLarge
                | RDKafkaErrorCode::InvalidMessageSize
        )
    )
}

/// A parked letter as one JSON line: key and payload as text when they are UTF-8, as hex
/// (`key_hex`, `payload_hex`) when not.
fn parked_record(letter: &Letter<'_>, produce_error: &str) -> serde_json::Value {
    let mut record = serde_json::json!({
        "parked_at": time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        "error": {"code": letter.code, "message": letter.message},
        "source": {"topic": letter.origin.topic, "partition": letter.origin.partition,
            "offset": letter.origin.offset},
        "produce_error": produce_error,
    });
    for (name, bytes) in [("key", letter.key), ("payload", letter.payload)] {
        match bytes.map(std::str::from_utf8) {
            None => {}
            Some(Ok(text)) => record[name] = text.into(),
            Some(Err(_)) => record[format!("{name}_hex")] = hex::encode(bytes.unwrap()).into(),
        }
    }
    // The headers the letter would have carried on the topic, each as text when it is
    // UTF-8, else as hex, so a parked letter can be re-sent as faithfully as a sent one.
    let headers: Vec<serde_json::Value> = letter
        .origin
        .carried_headers()
        .map(|(key, value)| match value {
            None => serde_json::json!({"key": key, "value": null}),
            Some(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => serde_json::json!({"key": key, "value": text}),
                Err(_) => serde_json::json!({"key": key, "value_hex": hex::encode(bytes)}),
            },
        })
        .collect();
    if !headers.is_empty() {
        record["headers"] = headers.into();
    }
    record
}

fn append_line(path: &std::path::Path, record: &serde_json::Value) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Readable by the daemon's user only: a letter holds a document's whole payload. A file
    // an older version created is narrowed too.
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    let mut line = serde_json::to_vec(record).expect("json");
    line.push(b'\n');
    file.write_all(&line)?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::ClientConfig;

    fn unreachable_producer() -> FutureProducer {
        ClientConfig::new()
            .set("bootstrap.servers", "127.0.0.1:9")
            .set("message.timeout.ms", "200")
            .create()
            .unwrap()
    }

    #[tokio::test]
    async fn a_letter_the_topic_refuses_is_parked_whole_and_reported_then_the_next_is_parked_at_once(
    ) {
        let dir = tempfile::tempdir().unwrap();
        let health = Arc::new(Health::default());
        let letters = DeadLetters::new(unreachable_producer(), "dlq".into(), dir.path())
            .reporting_to(health.clone());
        let origin = Origin {
            topic: "docs".into(),
            partition: 3,
            offset: 41,
            headers: vec![
                ("origin".into(), Some(b"importer".to_vec())),
                ("trace".into(), Some(vec![0xfe])),
                ("empty".into(), None),
                ("Authorization".into(), Some(b"Bearer secret".to_vec())),
                ("X-Api-Key".into(), Some(b"secret-key".to_vec())),
            ],
        };
        // A shortened deadline is not needed: the first try fails within message.timeout.ms
        // and the loop retries until DELIVERY_DEADLINE; here the path is marked failing first.
        *letters.failing.lock().unwrap() = Some((Instant::now(), Instant::now()));
        letters
            .send(
                &origin,
                Some(b"kb/d1"),
                Some(&[0xff, 0x00]),
                "bad_json",
                "not JSON",
            )
            .await;
        letters
            .send(&origin, None, Some(b"{\"a\":1}"), "schema_violation", "x")
            .await;
        let text = std::fs::read_to_string(dir.path().join(PARKED_FILE)).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["key"], "kb/d1");
        assert_eq!(lines[0]["payload_hex"], "ff00");
        assert_eq!(lines[0]["error"]["code"], "bad_json");
        assert_eq!(lines[0]["source"]["offset"], 41);
        // The original headers, credentials left out, as on the topic.
        assert_eq!(
            lines[0]["headers"],
            serde_json::json!([
                {"key": "origin", "value": "importer"},
                {"key": "trace", "value_hex": "fe"},
                {"key": "empty", "value": null},
            ])
        );
        assert!(!text.contains("secret"), "{text}");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(dir.path().join(PARKED_FILE))
                .unwrap()
                .permissions(),
        );
        assert_eq!(mode & 0o777, 0o600, "only the daemon's user reads payloads");
        assert_eq!(lines[1]["payload"], "{\"a\":1}");
        assert!(lines[1].get("key").is_none());
        let problem = health.problems().pop().expect("reported");
        assert_eq!(problem.part, HEALTH_PART);
        assert!(problem.reason.contains("parked"), "{}", problem.reason);
        assert!(!health.is_healthy());
        // Nothing refused for a while: the path counts as working again.
        letters.expire(Duration::ZERO);
        assert!(health.is_healthy());
        assert!(letters.failing.lock().unwrap().is_none());
    }

    #[test]
    fn size_errors_are_told_apart_from_the_rest() {
        assert!(too_large(&KafkaError::MessageProduction(
            RDKafkaErrorCode::MessageSizeTooLarge
        )));
        assert!(!too_large(&KafkaError::MessageProduction(
            RDKafkaErrorCode::MessageTimedOut
        )));
    }
}
