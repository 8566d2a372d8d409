//! The error body every route and every bus reply shares: `{"error": {"code", "message",
//! "field"?}}`.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// A refusal or a failure, as every edge writes it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(
    rename = "Error",
    description = "The error body of every route (contract 003 included, with its own codes)."
)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong, with the field to blame when there is one.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ErrorDetail {
    /// A stable code: invalid_request, unauthenticated, forbidden, index_not_found,
    /// retriever_not_found, version_unavailable, embedder_mismatch, embedder_unavailable,
    /// query_timeout, body_too_large, bus_unavailable, not_ready, not_found, index_damaged,
    /// read_only_replica, write_conflict, storage_unavailable, internal; contract 003 answers
    /// InputError and NotFoundError.
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// The offending field as a dotted path, when one field is to blame.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub field: Option<String>,
    /// version_unavailable only: the oldest retained version.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1))]
    pub oldest_available_version: Option<u64>,
    /// version_unavailable only: the newest version.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1))]
    pub latest_version: Option<u64>,
}

impl ErrorBody {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: code.into(),
                message: message.into(),
                field: None,
                oldest_available_version: None,
                latest_version: None,
            },
        }
    }

    /// The same error, blaming `field`.
    pub fn field(mut self, field: impl Into<String>) -> ErrorBody {
        self.error.field = Some(field.into());
        self
    }

    /// The same error, blaming `field` when there is one.
    pub fn maybe_field(mut self, field: Option<impl Into<String>>) -> ErrorBody {
        self.error.field = field.map(Into::into);
        self
    }

    /// The body as JSON (where a reply carries its body as a value).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("an error body is plain JSON")
    }
}
