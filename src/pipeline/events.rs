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
    /// The message key: `INDEX/DOCUMENT_ID` (one document's events share a partition).
    pub fn key(&self) -> String {
        crate::transport::kafka::document_key(self.index.as_str(), self.op.document_id())
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
}

impl PoisonReason {
    /// A short stable code for the `error.code` header and metrics.
    pub fn code(&self) -> &'static str {
        match self {
            PoisonReason::Empty => "empty",
            PoisonReason::Oversize { .. } => "oversize",
            PoisonReason::BadJson(_) => "bad_json",
            PoisonReason::Schema { .. } => "schema_violation",
            PoisonReason::UnknownOp(_) => "unknown_op",
            PoisonReason::InvalidIndex(_) => "invalid_index",
        }
    }
}

fn schema(field: &str, rule: impl Into<String>) -> PoisonReason {
    PoisonReason::Schema {
        field: field.into(),
        rule: rule.into(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    schema_version: Option<u64>,
    op: String,
    index: Value,
    #[serde(default)]
    document: Option<Value>,
    #[serde(default)]
    document_id: Option<String>,
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
            DocumentOp::Delete { document_id: id }
        }
        other => return Err(PoisonReason::UnknownOp(other.to_string())),
    };
    Ok(DocumentEvent { index, op })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
