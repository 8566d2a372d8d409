//! Contract 003 (AI Core): `RetrieveInput` as it is read and `RetrieveOutput` as it is written.
//!
//! The contract is lenient where others refuse: integers may be written as whole floats,
//! the override flag takes the usual spellings of a boolean, and numbers are clamped after
//! reading, never refused. The readers below keep that leniency; the validation step
//! (`contracts::c003_ai_core`) clamps.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::retrieval::search::MAX_POOL;
use crate::store::filters::Visibility;

/// Longest `content` of a parent section, in characters: a parent gives context, and a
/// whole long chapter would crowd out the matches themselves.
pub const MAX_PARENT_CHARS: usize = 4000;

/// `POST /v1/ai/rag/query/`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    rename = "RetrieveInput",
    description = "AI Core's RetrieveInput. Other keys are ignored. Search is hybrid."
)]
pub struct RetrieveInputBody {
    /// Not trimmed. An empty query still runs and matches nothing (NotFoundError unless the
    /// router is tenant-scoped).
    #[serde(default)]
    #[schemars(with = "String", extend("default" = ""))]
    pub query: Option<String>,
    /// Must be a mapping (`filters must be a mapping when provided`); null values are
    /// dropped.
    #[serde(default)]
    #[schemars(with = "super::FilterBag")]
    pub filters: Option<Map<String, Value>>,
    /// Trimmed and lower-cased; empty is unset. Reported in `meta.routing`.
    #[serde(default)]
    pub process: Option<String>,
    /// Trimmed and lower-cased; empty is unset. Reported in `meta.routing`.
    #[serde(default)]
    pub doc_class: Option<String>,
    /// Trimmed (case kept); empty is unset. Reported in `meta.routing` and applied as the
    /// exact-match filter `collection_id`.
    #[serde(default)]
    pub collection_id: Option<String>,
    /// Trimmed and lower-cased; empty is unset. Reported in `meta.routing`.
    #[serde(default)]
    pub workflow_id: Option<String>,
    /// Case-insensitive and trimmed; absent, null or empty is active. all and deleted need
    /// the visibility override, else active is enforced and `rag.visibility.override_denied`
    /// is logged.
    // Kept as text: an unknown value is refused naming it (the validation step).
    #[serde(default)]
    #[schemars(schema_with = "visibility_requested", extend("default" = "active"))]
    pub visibility: Option<String>,
    /// coerce_bool_flag: booleans, 0/1 and their usual spellings (case-insensitive). Absent
    /// or null inherits the caller's context (the token's visibility_override scope, or
    /// `contracts.visibility_override_allowed` without authentication); it can decline the
    /// override, never grant more than the context allows.
    #[serde(default, deserialize_with = "bool_flag")]
    #[schemars(schema_with = "bool_flag_schema")]
    pub visibility_override_allowed: Option<bool>,
    // Read after the rest, with its own wording for absent, null and non-objects. No
    // `serde(default)`: that would make it optional in the schema.
    #[schemars(required, schema_with = "hybrid_parameters")]
    pub hybrid: Option<Value>,
    /// Overrides hybrid.top_k; clamped to 1..10, never refused.
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(with = "Option<i64>")]
    pub top_k: Option<i64>,
}

/// Required. Only these keys: any other is refused (InputError `Unknown hybrid
/// parameter(s): a, b`). Numbers are clamped, never refused; `meta` reports the values used.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridParameters {
    /// The semantic weight of fusion; clamped to 0..1.
    #[serde(default)]
    #[schemars(extend("default" = 0.7))]
    pub alpha: Option<f64>,
    /// Matches scoring below it are dropped; clamped to 0..1.
    #[serde(default)]
    #[schemars(extend("default" = 0.15))]
    pub min_sim: Option<f64>,
    /// Matches wanted; clamped to 1..10.
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(extend("default" = 5))]
    pub top_k: Option<i64>,
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(extend("default" = 50, "description" = pool("vector")))]
    pub vec_limit: Option<i64>,
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(extend("default" = 50, "description" = pool("lexical")))]
    pub lex_limit: Option<i64>,
    /// A trigram threshold, clamped to 0..1. Accepted for compatibility: ragstream has no
    /// trigram stage.
    #[serde(default)]
    pub trgm_limit: Option<f64>,
    /// Fused candidates kept before min_sim and diversification. Default max(vec_limit,
    /// lex_limit); raised to at least top_k, vec_limit and lex_limit.
    #[serde(default, deserialize_with = "whole_number")]
    pub max_candidates: Option<i64>,
    /// MMR strength, clamped to 0..1 (lambda = 1 − strength; 0 keeps the plain ranking).
    #[serde(default)]
    #[schemars(extend("default" = 0.3))]
    pub diversify_strength: Option<f64>,
}

/// The description of a candidate pool, with the engine's cap on it.
fn pool(which: &str) -> String {
    format!(
        "The {which} candidate pool; raised to at least 1 (the engine fetches at most \
         {MAX_POOL} a stage)."
    )
}

/// An integer, or a float with no fraction (`3.0`); null is absent. A number too large
/// saturates (it is clamped later anyway).
fn whole_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<serde_json::Number>::deserialize(d)? {
        None => Ok(None),
        Some(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .map(Some)
            .ok_or_else(|| D::Error::custom("not a whole number")),
    }
}

/// `coerce_bool_flag`: booleans, 0 and 1 (`1.0` too, as integers may be written), and the
/// usual spellings of them in any case; null is absent.
fn bool_flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(b)),
        Value::Number(n) if n.as_f64() == Some(1.0) => Ok(Some(true)),
        Value::Number(n) if n.as_f64() == Some(0.0) => Ok(Some(false)),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(Some(true)),
            "false" | "0" | "no" | "off" | "" => Ok(Some(false)),
            _ => Err(D::Error::custom("not a boolean")),
        },
        _ => Err(D::Error::custom("not a boolean")),
    }
}

fn hybrid_parameters(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<HybridParameters>()
}

/// The words [`bool_flag`] takes.
const FLAG_WORDS: [&str; 9] = ["true", "1", "yes", "on", "false", "0", "no", "off", ""];

fn bool_flag_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "anyOf": [
            {"type": "boolean"},
            {"type": "null"},
            {"type": "integer", "enum": [0, 1]},
            {"type": "string", "pattern": flag_words_pattern()},
        ],
    })
}

/// [`FLAG_WORDS`] as a pattern, in any case and with blanks around, as [`bool_flag`] reads
/// them (a schema pattern has no case-insensitive flag, so each letter is a class).
fn flag_words_pattern() -> String {
    let any_case = |word: &str| -> String {
        word.chars()
            .map(|c| match c {
                c if c.is_ascii_alphabetic() => {
                    format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                }
                c => c.to_string(),
            })
            .collect()
    };
    let words: Vec<String> = FLAG_WORDS.iter().map(|w| any_case(w)).collect();
    format!(r"^\s*({})\s*$", words.join("|"))
}

fn visibility_requested(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": ["string", "null"],
        "enum": ["active", "all", "deleted", "", null],
    })
}

/// The answer: `RetrieveOutput`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "RetrieveOutput")]
pub struct RetrieveOutput {
    /// Best first; empty only when the router is tenant-scoped.
    pub matches: Vec<RetrieveMatch>,
    pub meta: RetrieveMeta,
}

/// One match: a chunk, cited.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrieveMatch {
    /// The id of the document the chunk belongs to (`meta.chunk_id` is the chunk's own).
    pub id: String,
    /// The chunk's text.
    pub text: String,
    /// alpha·semantic + (1 − alpha)·lexical, each normalised.
    pub score: f64,
    /// Which candidate list held the chunk: the vector one, the lexical one or both.
    pub source: MatchSource,
    /// SHA-256 of text, hex.
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub hash: String,
    /// `<source> · S.<page> · Abschnitt <innermost section>`; the source is the title, else
    /// source_name, uri or document id.
    pub citation: String,
    pub meta: MatchMeta,
}

/// Which candidate list held a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum MatchSource {
    Vector,
    Lexical,
    Hybrid,
}

/// The chunk's metadata (as contract 000's) plus its id and its enclosing sections.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MatchMeta {
    #[serde(flatten)]
    #[schemars(with = "super::chunk_metadata::ChunkMetadata<'static>")]
    pub metadata: Map<String, Value>,
    /// The chunk's id.
    pub chunk_id: String,
    /// The ids of `parents`, in order.
    pub parent_ids: Vec<String>,
    /// One per enclosing section, outermost first.
    pub parents: Vec<MatchParent>,
}

/// An enclosing section of a match.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct MatchParent {
    /// Stable: derived from the document and the section path.
    #[schemars(regex(pattern = "^section-[0-9a-f]{16}$"))]
    pub id: String,
    /// The section's heading.
    pub heading: String,
    #[schemars(extend("description" = format!("The section's text (its chunks stitched, \
        overlap removed), cut at {MAX_PARENT_CHARS} characters.")))]
    pub content: String,
}

/// What the call did, with the values it used after clamping.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrieveMeta {
    pub routing: RetrieveRouting,
    /// Milliseconds.
    pub took_ms: u64,
    /// The alpha applied, after clamping.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub alpha: f64,
    /// The cutoff applied, after clamping.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_sim: f64,
    /// The top_k applied, after clamping.
    #[schemars(range(min = 1, max = 10))]
    pub top_k_effective: usize,
    /// Matches returned, after diversification.
    pub matches_returned: usize,
    /// The fused candidate pool (at least top_k).
    #[schemars(range(min = 1))]
    pub max_candidates_effective: usize,
    /// Vector candidates before fusion.
    pub vector_candidates: usize,
    /// Lexical candidates before fusion.
    pub lexical_candidates: usize,
    /// Deleted chunks that would have been among the matches had active not been enforced
    /// (0 for all and deleted).
    pub deleted_matches_blocked: usize,
    pub visibility_effective: VisibilityName,
    /// The strength applied, after clamping.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub diversify_strength: f64,
}

/// Where the call was routed, as the contract names it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrieveRouting {
    /// The embedding profile: `standard`.
    pub profile: &'static str,
    /// `rag/<index>`.
    pub vector_space_id: String,
    /// As normalised; null when unset.
    pub process: Option<String>,
    /// As normalised; null when unset.
    pub doc_class: Option<String>,
    /// As normalised; null when unset.
    pub collection_id: Option<String>,
    /// As normalised; null when unset.
    pub workflow_id: Option<String>,
}

/// active: live documents; deleted: soft-deleted ones; all: both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "Visibility")]
pub enum VisibilityName {
    Active,
    All,
    Deleted,
}

impl From<Visibility> for VisibilityName {
    fn from(v: Visibility) -> Self {
        match v {
            Visibility::Active => VisibilityName::Active,
            Visibility::All => VisibilityName::All,
            Visibility::Deleted => VisibilityName::Deleted,
        }
    }
}
