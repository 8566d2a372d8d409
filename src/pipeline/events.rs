//! Document events on the documents topic, and why a message is poison.
//!
//! ```json
//! {"schema_version": 1, "op": "upsert", "index": "kb", "document": {...}}
//! {"schema_version": 1, "op": "delete", "index": "kb", "document_id": "doc-1"}
//! ```
//! Key: `INDEX/DOCUMENT_ID` (so one document's events stay in one partition, in order).

use serde::Deserialize;
use serde_json::Value;

use crate::index::DocumentOp;
use crate::model::{Document, DocumentLimits, IndexName};

/// The event schema versions this build understands.
pub const SCHEMA_VERSION: u64 = 1;

/// A valid document event.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentEvent {
    pub index: IndexName,
    pub op: DocumentOp,
}

impl DocumentEvent {
    /// The message key: the index's name, so that one index's events share a partition,
    /// which keeps their order and gives the index one writer (the daemon reading that
    /// partition).
    pub fn key(&self) -> String {
        self.index.as_str().to_string()
    }

    /// The wire form [`parse_event`] reads.
    pub fn to_json(&self) -> Value {
        match &self.op {
            DocumentOp::Upsert(d) => serde_json::json!({"schema_version": SCHEMA_VERSION,
                "op": "upsert", "index": self.index.as_str(), "document": d}),
            DocumentOp::Delete { document_id } => {
                serde_json::json!({"schema_version": SCHEMA_VERSION,
                "op": "delete", "index": self.index.as_str(), "document_id": document_id})
            }
        }
    }
}

/// Why a message cannot be applied; it goes to the dead-letter topic with this reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoisonReason {
    #[error("message has no payload")]
    Empty,
    #[error("payload is {size} bytes, over the limit of {limit}")]
    Oversize { size: usize, limit: usize },
    #[error("payload is not JSON: {0}")]
    BadJson(String),
    #[error("schema violation: {field}: {rule}")]
    Schema { field: String, rule: String },
    #[error("unknown op {0:?}: expected upsert or delete")]
    UnknownOp(String),
    #[error("invalid index name: {0}")]
    InvalidIndex(String),
    /// The message key names another index or document than the body (the key decides the
    /// partition, so one document's events stay in order only when the two agree).
    #[error("the key {key:?} does not match the event, whose key is {expected:?}")]
    KeyMismatch { key: String, expected: String },
    /// Authentication is on and the message carries no valid `authorization` header.
    #[error("{0}")]
    Unauthenticated(String),
    /// The message's token may not write to the event's index.
    #[error("{0}")]
    Forbidden(String),
}

/// The other `error.code`s of dead letters: valid events a later stage refuses, and bus
/// queries that name no way to answer them. Each stage sends its code by these names, so
/// that every code it can send is in [`dead_letter_codes`] (and starts at zero in metrics).
pub mod later_codes {
    /// The chunker: the index was built with another embedder.
    pub const EMBEDDER_MISMATCH: &str = "embedder_mismatch";
    /// The embedder client: the provider refused the document's text.
    pub const EMBEDDING_REJECTED: &str = "embedding_rejected";
    /// The triple extractor: the extractor refused the document.
    pub const EXTRACTION_REJECTED: &str = "extraction_rejected";
    /// The query handler: a request without `reply-to` or `correlation-id`.
    pub const MISSING_REPLY_HEADERS: &str = "missing_reply_headers";
    /// The query handler: a `reply-to` that `kafka.reply_topics` does not allow.
    pub const REPLY_TOPIC_NOT_ALLOWED: &str = "reply_topic_not_allowed";
}

/// The codes of [`later_codes`].
pub const OTHER_DEAD_LETTER_CODES: [&str; 5] = [
    later_codes::EMBEDDER_MISMATCH,
    later_codes::EMBEDDING_REJECTED,
    later_codes::EXTRACTION_REJECTED,
    later_codes::MISSING_REPLY_HEADERS,
    later_codes::REPLY_TOPIC_NOT_ALLOWED,
];

/// Every `error.code` a dead letter may carry.
pub fn dead_letter_codes() -> impl Iterator<Item = &'static str> {
    PoisonReason::CODES
        .into_iter()
        .chain(OTHER_DEAD_LETTER_CODES)
}

impl PoisonReason {
    /// Every [`PoisonReason::code`].
    pub const CODES: [&'static str; 9] = [
        "empty",
        "oversize",
        "bad_json",
        "schema_violation",
        "unknown_op",
        "invalid_index",
        "key_mismatch",
        "unauthenticated",
        "forbidden",
    ];

    /// A short stable code for the `error.code` header and metrics.
    pub fn code(&self) -> &'static str {
        match self {
            PoisonReason::Empty => "empty",
            PoisonReason::Oversize { .. } => "oversize",
            PoisonReason::BadJson(_) => "bad_json",
            PoisonReason::Schema { .. } => "schema_violation",
            PoisonReason::UnknownOp(_) => "unknown_op",
            PoisonReason::InvalidIndex(_) => "invalid_index",
            PoisonReason::KeyMismatch { .. } => "key_mismatch",
            PoisonReason::Unauthenticated(_) => "unauthenticated",
            PoisonReason::Forbidden(_) => "forbidden",
        }
    }
}

fn schema(field: &str, rule: impl Into<String>) -> PoisonReason {
    PoisonReason::Schema {
        field: field.into(),
        rule: rule.into(),
    }
}

/// The event around a document. Fields it does not know are ignored (a newer producer's
/// additions must not dead-letter its events), counted in
/// `ragstream_event_unknown_fields_total` and logged once per name; the document's own
/// fields stay strict.
#[derive(Deserialize)]
struct Envelope {
    schema_version: Option<u64>,
    op: String,
    index: Value,
    #[serde(default)]
    document: Option<Value>,
    #[serde(default)]
    document_id: Option<String>,
    #[serde(flatten)]
    unknown: std::collections::BTreeMap<String, Value>,
}

/// Counts an event with unknown envelope fields, and logs each field name the first time
/// (up to a bound, so hostile producers cannot grow the set without end).
fn note_unknown_fields(fields: &std::collections::BTreeMap<String, Value>) {
    const LOGGED_NAMES: usize = 100;
    static LOGGED: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    if fields.is_empty() {
        return;
    }
    if let Some(m) = crate::telemetry::metrics::metrics() {
        m.event_unknown_fields_total
            .with_label_values(&[] as &[&str])
            .inc();
    }
    let mut logged = LOGGED.lock().unwrap_or_else(|e| e.into_inner());
    for name in fields.keys() {
        if logged.len() < LOGGED_NAMES && logged.insert(name.clone()) {
            let field: String = name.chars().take(100).collect();
            tracing::warn!(%field, "a document event holds a field this version does not know: ignored");
        }
    }
}

/// Parses and validates one message payload.
pub fn parse_event(
    payload: Option<&[u8]>,
    max_message_bytes: usize,
    limits: &DocumentLimits,
) -> Result<DocumentEvent, PoisonReason> {
    let bytes = payload
        .filter(|p| !p.is_empty())
        .ok_or(PoisonReason::Empty)?;
    if bytes.len() > max_message_bytes {
        return Err(PoisonReason::Oversize {
            size: bytes.len(),
            limit: max_message_bytes,
        });
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| PoisonReason::BadJson(e.to_string()))?;
    let env: Envelope =
        serde_json::from_value(value).map_err(|e| schema("event", e.to_string()))?;
    note_unknown_fields(&env.unknown);
    match env.schema_version {
        Some(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err(schema(
                "schema_version",
                format!("{v} is not supported (expected {SCHEMA_VERSION})"),
            ))
        }
        None => return Err(schema("schema_version", "is required")),
    }
    let index = match env.index {
        Value::String(s) => IndexName::parse(&s).map_err(|e| PoisonReason::InvalidIndex(e.rule))?,
        _ => return Err(PoisonReason::InvalidIndex("index must be a string".into())),
    };
    let op = match env.op.as_str() {
        "upsert" => {
            let doc = env
                .document
                .ok_or_else(|| schema("document", "is required for upsert"))?;
            let doc: Document =
                serde_json::from_value(doc).map_err(|e| schema("document", e.to_string()))?;
            doc.validate(limits)
                .map_err(|e| schema(&format!("document.{}", e.field), e.rule))?;
            DocumentOp::Upsert(doc)
        }
        "delete" => {
            let id = env
                .document_id
                .or_else(|| {
                    env.document
                        .as_ref()
                        .and_then(|d| d.get("id"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .filter(|id| !id.trim().is_empty())
                .ok_or_else(|| schema("document_id", "is required for delete"))?;
            // The id rule of an upsert: a delete can only name a document an upsert could.
            crate::model::validate_document_id(&id, limits)
                .map_err(|e| schema("document_id", e.rule))?;
            DocumentOp::Delete { document_id: id }
        }
        other => return Err(PoisonReason::UnknownOp(other.to_string())),
    };
    Ok(DocumentEvent { index, op })
}

/// Whether a valid event may be applied as it arrived: its key, when it has one, is the
/// event's own (`INDEX`; `INDEX/DOCUMENT_ID` is taken too, as earlier versions keyed
/// events), and, with authentication on, its `authorization`
/// header (`Bearer <token>`) names a token allowed to write to the event's index — the same
/// tokens and scopes as HTTP ingestion.
pub fn admit(
    event: &DocumentEvent,
    key: Option<&[u8]>,
    authorization: Option<&str>,
    auth: &crate::auth::Authenticator,
) -> Result<(), PoisonReason> {
    if let Some(key) = key {
        let expected = event.key();
        let earlier = crate::kafka::document_key(event.index.as_str(), event.op.document_id());
        if key != expected.as_bytes() && key != earlier.as_bytes() {
            // The key goes into the error header: at most its first 200 characters.
            return Err(PoisonReason::KeyMismatch {
                key: String::from_utf8_lossy(key).chars().take(200).collect(),
                expected,
            });
        }
    }
    let caller = auth
        .authenticate(authorization)
        .map_err(|e| PoisonReason::Unauthenticated(e.to_string()))?;
    caller
        .authorize(&event.index, crate::auth::Scope::Write)
        .map_err(|e| PoisonReason::Forbidden(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn codes_lists_every_reason_once() {
        let s = String::new;
        let all = [
            PoisonReason::Empty,
            PoisonReason::Oversize { size: 2, limit: 1 },
            PoisonReason::BadJson(s()),
            PoisonReason::Schema {
                field: s(),
                rule: s(),
            },
            PoisonReason::UnknownOp(s()),
            PoisonReason::InvalidIndex(s()),
            PoisonReason::KeyMismatch {
                key: s(),
                expected: s(),
            },
            PoisonReason::Unauthenticated(s()),
            PoisonReason::Forbidden(s()),
        ];
        let codes: Vec<&str> = all.iter().map(PoisonReason::code).collect();
        assert_eq!(codes, PoisonReason::CODES);
    }

    fn parse(v: &Value) -> Result<DocumentEvent, PoisonReason> {
        let bytes = serde_json::to_vec(v).unwrap();
        parse_event(Some(&bytes), 1000, &DocumentLimits::default())
    }

    #[test]
    fn upsert_and_delete_parse() {
        let e = parse(&json!({"schema_version": 1, "op": "upsert", "index": "kb",
            "document": {"id": "d", "text": "t"}}))
        .unwrap();
        assert_eq!(e.index.as_str(), "kb");
        assert!(matches!(e.op, DocumentOp::Upsert(ref d) if d.id == "d"));
        let e =
            parse(&json!({"schema_version": 1, "op": "delete", "index": "kb", "document_id": "d"}))
                .unwrap();
        assert_eq!(
            e.op,
            DocumentOp::Delete {
                document_id: "d".into()
            }
        );
    }

    #[test]
    fn deletes_follow_the_document_id_rule() {
        let delete = |id: &str| {
            parse(&json!({"schema_version": 1, "op": "delete", "index": "kb", "document_id": id}))
        };
        assert!(delete("doc-1").is_ok());
        for bad in ["a\u{0}b", &"x".repeat(600), "line\nbreak"] {
            let e = delete(bad).unwrap_err();
            assert_eq!(e.code(), "schema_violation", "{bad:?}");
            assert!(e.to_string().contains("document_id"), "{e}");
        }
    }

    #[test]
    fn an_event_is_admitted_with_its_own_key_and_a_token_allowed_to_write_its_index() {
        use crate::auth::{AuthConfig, Authenticator, Scope, TokenConfig};
        let event = parse(
            &json!({"schema_version": 1, "op": "delete", "index": "a_kb",
            "document_id": "d1"}),
        )
        .unwrap();
        let open = Authenticator::new(&AuthConfig::default());
        assert_eq!(admit(&event, None, None, &open), Ok(()));
        assert_eq!(admit(&event, Some(b"a_kb"), None, &open), Ok(()));
        assert_eq!(
            admit(&event, Some(b"a_kb/d1"), None, &open),
            Ok(()),
            "the earlier form"
        );
        for other in [&b"other/d1"[..], b"other", b"a_kb/d2", b"a_kb/"] {
            let mismatch = admit(&event, Some(other), None, &open).unwrap_err();
            assert_eq!(mismatch.code(), "key_mismatch");
            assert!(mismatch.to_string().contains("\"a_kb\""), "{mismatch}");
        }

        let token = |name: &str, tenant: &str, indexes: &[&str], scopes: &[Scope]| TokenConfig {
            name: name.into(),
            token: Some(format!("secret-{name}")),
            token_env: None,
            tenant: tenant.into(),
            indexes: indexes.iter().map(|s| s.to_string()).collect(),
            scopes: scopes.to_vec(),
        };
        let auth = Authenticator::new(&AuthConfig {
            tokens: vec![
                token("a-writer", "a", &["a_*"], &[Scope::Write]),
                token("a-reader", "a", &["a_*"], &[Scope::Read]),
                token("b-writer", "b", &["b_*"], &[Scope::Write]),
            ],
        });
        let code = |authorization: Option<&str>| {
            admit(&event, None, authorization, &auth)
                .err()
                .map(|e| e.code())
        };
        assert_eq!(code(None), Some("unauthenticated"));
        assert_eq!(code(Some("Bearer nope")), Some("unauthenticated"));
        assert_eq!(code(Some("Bearer secret-b-writer")), Some("forbidden"));
        assert_eq!(code(Some("Bearer secret-a-reader")), Some("forbidden"));
        assert_eq!(code(Some("Bearer secret-a-writer")), None);
    }

    #[test]
    fn every_poison_kind_is_named() {
        let limits = DocumentLimits::default();
        assert_eq!(parse_event(None, 10, &limits).unwrap_err().code(), "empty");
        assert_eq!(
            parse_event(Some(&[b'x'; 11]), 10, &limits)
                .unwrap_err()
                .code(),
            "oversize"
        );
        assert_eq!(
            parse_event(Some(b"{nope"), 10, &limits).unwrap_err().code(),
            "bad_json"
        );
        let cases = [
            (
                json!({"op": "upsert", "index": "kb", "document": {"id": "d", "text": "t"}}),
                "schema_violation",
            ),
            (
                json!({"schema_version": 2, "op": "upsert", "index": "kb"}),
                "schema_violation",
            ),
            (
                json!({"schema_version": 1, "op": "upsert", "index": "kb", "document": {"id": "", "text": "t"}}),
                "schema_violation",
            ),
            (
                json!({"schema_version": 1, "op": "upsert", "index": "kb", "extra": 1}),
                "schema_violation",
            ),
            (
                json!({"schema_version": 1, "op": "merge", "index": "kb"}),
                "unknown_op",
            ),
            (
                json!({"schema_version": 1, "op": "delete", "index": "Bad/Name", "document_id": "d"}),
                "invalid_index",
            ),
            (
                json!({"schema_version": 1, "op": "delete", "index": "kb"}),
                "schema_violation",
            ),
        ];
        for (v, code) in cases {
            assert_eq!(parse(&v).unwrap_err().code(), code, "{v}");
        }
    }

    #[test]
    fn unknown_envelope_fields_are_ignored_and_unknown_document_fields_refused() {
        let limits = DocumentLimits::default();
        let parse =
            |v: &serde_json::Value| parse_event(Some(v.to_string().as_bytes()), 1 << 20, &limits);
        let counted = || {
            crate::telemetry::metrics::metrics().map(|m| {
                m.event_unknown_fields_total
                    .with_label_values(&[] as &[&str])
                    .get()
            })
        };
        let before = counted();
        let event = parse(&json!({"schema_version": 1, "op": "upsert", "index": "kb",
            "trace_context": {"v": 1}, "priority": "high",
            "document": {"id": "d", "text": "t"}}))
        .unwrap();
        assert_eq!(event.index.as_str(), "kb");
        if let (Some(before), Some(after)) = (before, counted()) {
            assert!(after > before);
        }
        let e = parse(&json!({"schema_version": 1, "op": "upsert", "index": "kb",
            "document": {"id": "d", "text": "t", "colour": "red"}}))
        .unwrap_err();
        assert_eq!(e.code(), "schema_violation");
        assert!(e.to_string().contains("colour"), "{e}");
    }
}
