//! Explain and diff: the requests (a query in its contract's shape, and what to explain or
//! which versions to compare) and the answers (the index and the query's contract, then the
//! engine's explanation or diff).

use std::num::NonZeroU64;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{present, IndexVersion};
use crate::retrieval::diff::Diff;
use crate::retrieval::explain::Explanation;
use crate::retrieval::explain::MAX_TARGETS;

/// The contract whose shape a nested query has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[schemars(inline)]
pub enum QueryContract {
    #[default]
    #[serde(rename = "002")]
    C002,
    #[serde(rename = "000")]
    C000,
}

impl QueryContract {
    pub fn label(self) -> &'static str {
        match self {
            QueryContract::C002 => "002",
            QueryContract::C000 => "000",
        }
    }
}

/// `POST /v1/indexes/{index}/explain`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ExplainRequest")]
pub struct ExplainRequestBody {
    /// The shape of `request` (default 002).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "QueryContract")]
    pub contract: Option<QueryContract>,
    /// The query as its contract takes it: a QueryRequest (002), or {"retrieval": {...}}
    /// naming this index (000).
    pub request: Map<String, Value>,
    // Each target is read on its own, so a fault names its place (`targets[2]`).
    #[schemars(schema_with = "targets")]
    pub targets: Vec<Value>,
}

/// `POST /v1/indexes/{index}/diff`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "DiffRequest")]
pub struct DiffRequestBody {
    /// The shape of `request` (default 002).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "QueryContract")]
    pub contract: Option<QueryContract>,
    /// The query as its contract takes it, without index_version.
    pub request: Map<String, Value>,
    /// The older version.
    #[schemars(with = "IndexVersion")]
    pub from_version: NonZeroU64,
    /// The newer version.
    #[schemars(with = "IndexVersion")]
    pub to_version: NonZeroU64,
}

fn targets(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_TARGETS,
        "items": {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": false,
            "properties": {
                "document_id": {"type": "string", "minLength": 1},
                "chunk_id": {"type": "string", "minLength": 1},
                "text": {"type": "string", "minLength": 1,
                    "description": "A snippet, located in the index (case and spacing ignored)."},
            },
        },
        "description": format!("What to explain: 1 to {MAX_TARGETS} targets."),
    })
}

/// The answer of an explain request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "Explanation")]
pub struct ExplainResponse {
    #[schemars(with = "crate::model::IndexName")]
    pub index: String,
    /// The shape the query was given in.
    pub contract: &'static str,
    #[serde(flatten)]
    pub explanation: Explanation,
}

/// The answer of a diff request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "Diff")]
pub struct DiffResponse {
    #[schemars(with = "crate::model::IndexName")]
    pub index: String,
    /// The shape the query was given in.
    pub contract: &'static str,
    #[serde(flatten)]
    pub diff: Diff,
}
