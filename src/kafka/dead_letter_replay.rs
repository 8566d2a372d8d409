//! Re-sends dead letters to the documents topic (`ragstream dlq replay`), once whatever
//! refused them is fixed: a limit raised, a token allowed, an embedder back. Each selected
//! letter goes back with its key, its payload and its original headers; the dead-letter
//! headers (`error.*`, `source.*`) stay behind. The dead-letter topic is only read, never
//! changed.
//!
//! A replay is idempotent: each letter is re-sent at most once, whatever the selection and
//! however often the command runs. After a letter's event is accepted by the documents
//! topic, its place is recorded on the ledger topic, `<dlq topic>.replayed` (key
//! `partition/offset`); every replay reads the ledger first and leaves the letters on it
//! alone. A re-sent event that fails again becomes a new letter, replayed by a later run
//! once: poison letters do not multiply. A replay stopped between the send and the record
//! re-sends that one letter next time (at least once, never lost).

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Message, Offset, TopicPartitionList};
use serde::Serialize;

use super::client_config;
use super::dead_letters::ORIGINAL_HEADERS_SKIPPED;
use crate::config::KafkaConfig;

const TIMEOUT: Duration = Duration::from_secs(30);

/// Which dead letters to replay: all of them when every field is empty.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `error.code` values (any of them).
    pub codes: Vec<String>,
    /// Message keys (any of them).
    pub keys: Vec<String>,
    /// Only this partition of the dead-letter topic.
    pub partition: Option<i32>,
    /// Offsets in the dead-letter topic, inclusive.
    pub from_offset: Option<i64>,
    pub to_offset: Option<i64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Replayed {
    pub partition: i32,
    pub offset: i64,
    pub code: String,
    pub key: Option<String>,
    /// Where it went on the documents topic (none on a dry run).
    pub sent_to: Option<(i32, i64)>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplayReport {
    /// Dead letters read.
    pub scanned: usize,
    /// Letters the selection took that an earlier replay already re-sent (left alone).
    pub already_replayed: usize,
    /// Letters the selection took, sent or (on a dry run) not.
    pub replayed: Vec<Replayed>,
    /// Letters the selection took that cannot be replayed: not a document event (a bus
    /// query's), or too large to carry its payload; with why.
    pub skipped: Vec<Skipped>,
    pub dry_run: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Skipped {
    pub partition: i32,
    pub offset: i64,
    pub reason: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error("the dead-letter topic {0} does not exist")]
    NoTopic(String),
    #[error(transparent)]
    Topics(#[from] super::topics::TopicsError),
    #[error("the documents topic refused dead letter {partition}/{offset}: {reason}")]
    Send {
        partition: i32,
        offset: i64,
        reason: String,
    },
    #[error("dead letter {partition}/{offset} was re-sent, but recording it on {ledger} failed (it may be re-sent once more): {reason}")]
    Record {
        ledger: String,
        partition: i32,
        offset: i64,
        reason: String,
    },
}

/// The topic that records which dead letters were re-sent.
pub fn ledger_topic(kafka: &KafkaConfig) -> String {
    format!("{}.replayed", kafka.dlq_topic)
}

/// A letter's place, as the ledger keys it.
fn place(partition: i32, offset: i64) -> String {
    format!("{partition}/{offset}")
}

/// Reads the dead-letter topic from its start to its current end and re-sends what
/// `selection` takes to the documents topic (`token`, when given, as the `authorization`
/// header: the original's is never kept in a dead letter).
pub async fn replay(
    kafka: &KafkaConfig,
    bootstrap: &str,
    selection: &Selection,
    token: Option<&str>,
    dry_run: bool,
) -> Result<ReplayReport, ReplayError> {
    let ledger = ledger_topic(kafka);
    if !dry_run {
        super::topics::ensure(kafka, bootstrap, &[(ledger.clone(), 1)], &[]).await?;
    }
    let letters = {
        let (kafka, bootstrap, selection, ledger) = (
            kafka.clone(),
            bootstrap.to_string(),
            selection.clone(),
            ledger.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let done = read_ledger(&kafka, &bootstrap, &ledger)?;
            read_letters(&kafka, &bootstrap, &selection, &done)
        })
        .await
        .expect("the dead-letter reader does not panic")?
    };
    let producer: FutureProducer = client_config(kafka, bootstrap)
        .set("enable.idempotence", "true")
        .create()?;
    let mut report = ReplayReport {
        scanned: letters.scanned,
        already_replayed: letters.already_replayed,
        replayed: Vec::new(),
        skipped: letters.skipped,
        dry_run,
    };
    for letter in letters.selected {
        let mut sent_to = None;
        if !dry_run {
            let mut headers = OwnedHeaders::new();
            for (k, v) in &letter.headers {
                headers = headers.insert(Header {
                    key: k,
                    value: v.as_deref(),
                });
            }
            let bearer = token.map(|t| format!("Bearer {t}"));
            if let Some(b) = &bearer {
                headers = headers.insert(Header {
                    key: "authorization",
                    value: Some(b.as_bytes()),
                });
            }
            let mut record = FutureRecord::to(&kafka.documents_topic)
                .payload(&letter.payload)
                .headers(headers);
            if let Some(k) = &letter.key {
                record = record.key(k);
            }
            let delivery =
                producer
                    .send(record, TIMEOUT)
                    .await
                    .map_err(|(e, _)| ReplayError::Send {
                        partition: letter.partition,
                        offset: letter.offset,
                        reason: e.to_string(),
                    })?;
            sent_to = Some((delivery.partition, delivery.offset));
            let key = place(letter.partition, letter.offset);
            let record = serde_json::json!({
                "sent_to": {"partition": delivery.partition, "offset": delivery.offset},
            })
            .to_string();
            producer
                .send(
                    FutureRecord::to(&ledger).key(&key).payload(&record),
                    TIMEOUT,
                )
                .await
                .map_err(|(e, _)| ReplayError::Record {
                    ledger: ledger.clone(),
                    partition: letter.partition,
                    offset: letter.offset,
                    reason: e.to_string(),
                })?;
        }
        report.replayed.push(Replayed {
            partition: letter.partition,
            offset: letter.offset,
            code: letter.code,
            key: letter.key,
            sent_to,
        });
    }
    Ok(report)
}

struct Letter {
    partition: i32,
    offset: i64,
    code: String,
    key: Option<String>,
    payload: Vec<u8>,
    headers: Vec<(String, Option<Vec<u8>>)>,
}

struct Letters {
    scanned: usize,
    already_replayed: usize,
    selected: Vec<Letter>,
    skipped: Vec<Skipped>,
}

/// The places of the letters earlier replays re-sent (an absent ledger: none).
fn read_ledger(
    kafka: &KafkaConfig,
    bootstrap: &str,
    ledger: &str,
) -> Result<std::collections::HashSet<String>, ReplayError> {
    let mut done = std::collections::HashSet::new();
    // An absent ledger (no replay yet, or a dry run's) records nothing.
    read_topic(
        kafka,
        bootstrap,
        ledger,
        |_| true,
        (None, None),
        |msg| {
            if let Some(key) = msg.key() {
                done.insert(String::from_utf8_lossy(key).into_owned());
            }
        },
    )?;
    Ok(done)
}

/// Reads `topic`'s partitions that `partitions` takes, each from offset `from` (its low
/// watermark when `None`) up to where it ends now or `to` (inclusive), handing each
/// message to `each`. False if the topic does not exist. Blocking.
fn read_topic(
    kafka: &KafkaConfig,
    bootstrap: &str,
    topic: &str,
    partitions: impl Fn(i32) -> bool,
    (from, to): (Option<i64>, Option<i64>),
    mut each: impl FnMut(&rdkafka::message::BorrowedMessage<'_>),
) -> Result<bool, ReplayError> {
    // No group: the reader assigns itself every partition and commits nothing.
    let consumer: BaseConsumer = client_config(kafka, bootstrap)
        .set("group.id", "ragstream-dlq-replay")
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "false")
        .set("auto.offset.reset", "earliest")
        .set("allow.auto.create.topics", "false")
        .create()?;
    let metadata = consumer.fetch_metadata(Some(topic), TIMEOUT)?;
    let exists = metadata
        .topics()
        .iter()
        .any(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty());
    let ids: Vec<i32> = metadata
        .topics()
        .iter()
        .filter(|t| t.name() == topic && t.error().is_none())
        .flat_map(|t| t.partitions().iter().map(|p| p.id()))
        .filter(|p| partitions(*p))
        .collect();
    // Each partition up to its end now: messages written during the read wait for the next.
    let mut ends = std::collections::HashMap::new();
    let mut list = TopicPartitionList::new();
    for p in &ids {
        let (low, high) = consumer.fetch_watermarks(topic, *p, TIMEOUT)?;
        let start = from.unwrap_or(low).max(low);
        let end = to.map_or(high, |to| (to + 1).min(high));
        if start < end {
            list.add_partition_offset(topic, *p, Offset::Offset(start))?;
            ends.insert(*p, end);
        }
    }
    if ends.is_empty() {
        return Ok(exists);
    }
    consumer.assign(&list)?;
    let mut next: std::collections::HashMap<i32, i64> = std::collections::HashMap::new();
    // The deadline is for a silence: each message read moves it on.
    let mut deadline = std::time::Instant::now() + TIMEOUT;
    while ends
        .iter()
        .any(|(p, end)| next.get(p).copied().unwrap_or(0) < *end)
    {
        if std::time::Instant::now() > deadline {
            return Err(ReplayError::Kafka(
                rdkafka::error::KafkaError::MessageConsumption(
                    rdkafka::types::RDKafkaErrorCode::OperationTimedOut,
                ),
            ));
        }
        let Some(msg) = consumer.poll(Duration::from_millis(200)) else {
            continue;
        };
        let msg = msg?;
        deadline = std::time::Instant::now() + TIMEOUT;
        let (p, offset) = (msg.partition(), msg.offset());
        next.insert(p, offset + 1);
        if offset < ends[&p] {
            each(&msg);
        }
    }
    Ok(exists)
}

fn read_letters(
    kafka: &KafkaConfig,
    bootstrap: &str,
    selection: &Selection,
    done: &std::collections::HashSet<String>,
) -> Result<Letters, ReplayError> {
    let topic = kafka.dlq_topic.as_str();
    let mut out = Letters {
        scanned: 0,
        already_replayed: 0,
        selected: Vec::new(),
        skipped: Vec::new(),
    };
    let exists = read_topic(
        kafka,
        bootstrap,
        topic,
        |p| selection.partition.is_none_or(|s| s == p),
        (selection.from_offset, selection.to_offset),
        |msg| take_letter(kafka, selection, done, msg, &mut out),
    )?;
    if !exists {
        return Err(ReplayError::NoTopic(topic.to_string()));
    }
    out.selected.sort_by_key(|l| (l.partition, l.offset));
    Ok(out)
}

/// Adds one dead letter to what `selection` takes, skips or finds already replayed.
fn take_letter(
    kafka: &KafkaConfig,
    selection: &Selection,
    done: &std::collections::HashSet<String>,
    msg: &rdkafka::message::BorrowedMessage<'_>,
    out: &mut Letters,
) {
    let (p, offset) = (msg.partition(), msg.offset());
    out.scanned += 1;
    let code = super::header(msg, "error.code").unwrap_or_default();
    let key = msg.key().map(|k| String::from_utf8_lossy(k).into_owned());
    let taken = (selection.codes.is_empty() || selection.codes.contains(&code))
        && (selection.keys.is_empty() || key.as_ref().is_some_and(|k| selection.keys.contains(k)));
    if !taken {
        return;
    }
    if done.contains(&place(p, offset)) {
        out.already_replayed += 1;
        return;
    }
    let skip = |reason: String| Skipped {
        partition: p,
        offset,
        reason,
    };
    let source = super::header(msg, "source.topic").unwrap_or_default();
    if source != kafka.documents_topic {
        out.skipped.push(skip(format!(
            "read from {source:?}, not the documents topic"
        )));
        return;
    }
    if super::header(msg, "payload.omitted").is_some() {
        out.skipped.push(skip(format!(
            "too large to carry its payload: the original is at {source} {}/{}",
            super::header(msg, "source.partition").unwrap_or_default(),
            super::header(msg, "source.offset").unwrap_or_default()
        )));
        return;
    }
    let headers = msg
        .headers()
        .map(|hs| {
            hs.iter()
                .filter(|h| !ORIGINAL_HEADERS_SKIPPED.contains(&h.key))
                .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                .collect()
        })
        .unwrap_or_default();
    out.selected.push(Letter {
        partition: p,
        offset,
        code,
        key,
        payload: msg.payload().unwrap_or_default().to_vec(),
        headers,
    });
}
