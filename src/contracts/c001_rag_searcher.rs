//! Contract 001, "RagSearcher Triplets Update": `{query, top_k}` → `{results, kg,
//! rewrite_terms}`, all three keys always present.
//!
//! ragstream serves the contract's "fast mode" (chunk hits only, structural depth 0): relation
//! hits, `kg` and `rewrite_terms` come with the knowledge graph and are honestly empty until
//! then. Chunk hits carry the contract's metadata (`language`, `title`, `url`, `timestamp`,
//! `tags` as one comma-joined string, `collection`) and `content`; fields without a value are
//! left out, as the contract's example does. Ranking is hybrid (α 0.5) and the order of
//! `results` is the rank (the contract has no score field). The answer's `index_version`
//! travels in the `x-ragstream-index-version` header.

use serde_json::{json, Map, Value};

use super::Reply;
use crate::engine::{Engine, EngineError};
use crate::index::ChunkRow;
use crate::model::{IndexName, ValidationError};
use crate::retrieval::{SearchMethod, SearchRequest};

/// `top_k` bounds and default (001 "optional integer in [1, 50]", "defaults to 5").
pub const TOP_K_MAX: u64 = 50;
pub const TOP_K_DEFAULT: usize = 5;

/// Validates the MCP tool input. Other fields are ignored (MCP clients send extras).
pub fn parse_request(
    body: &Value,
    max_query_bytes: usize,
) -> Result<SearchRequest, ValidationError> {
    let obj = body
        .as_object()
        .ok_or_else(|| ValidationError::new("body", "must be an object"))?;
    let query = match obj.get("query") {
        None | Some(Value::Null) => return Err(ValidationError::new("query", "is required")),
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Err(ValidationError::new("query", "must not be empty"))
        }
        Some(Value::String(s)) if s.len() > max_query_bytes => {
            return Err(ValidationError::new(
                "query",
                format!("must be at most {max_query_bytes} bytes"),
            ))
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(ValidationError::new("query", "must be a string")),
    };
    let top_k = match obj.get("top_k") {
        None | Some(Value::Null) => TOP_K_DEFAULT,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=TOP_K_MAX).contains(&n) => n as usize,
            _ => {
                return Err(ValidationError::new(
                    "top_k",
                    format!("must be an integer between 1 and {TOP_K_MAX}"),
                ))
            }
        },
    };
    Ok(SearchRequest::new(query, SearchMethod::Hybrid, top_k))
}

/// One chunk hit: `metadata` (non-empty fields only) and `content`.
pub fn render_chunk(row: &ChunkRow) -> Value {
    let mut metadata = Map::new();
    let mut put = |key: &str, value: Option<String>| {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            metadata.insert(key.into(), json!(v));
        }
    };
    let language = ["language", "lang"]
        .iter()
        .find_map(|k| row.metadata.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    put("language", language);
    put("title", row.title.clone());
    put("url", row.uri.clone());
    put("timestamp", row.updated_at.clone());
    put("tags", Some(row.tags.join(",")));
    put("collection", Some(row.knowledge_base_id.clone()));
    json!({"metadata": metadata, "content": row.text})
}

pub async fn answer(engine: &Engine, index: &IndexName, body: &Value) -> Reply {
    let request = match parse_request(body, engine.config().limits.max_query_bytes) {
        Ok(r) => r,
        Err(e) => return super::error_reply(&e.into()),
    };
    match engine.search(index, &request).await {
        Ok(result) => Reply::ok(
            json!({
                "results": result.hits.iter().map(|h| render_chunk(&h.row)).collect::<Vec<_>>(),
                "kg": [],
                "rewrite_terms": [],
            }),
            result.index_version,
        ),
        // An index nobody has written to yet holds nothing: the contract's empty state.
        Err(EngineError::IndexNotFound(_)) => Reply {
            status: 200,
            body: json!({"results": [], "kg": [], "rewrite_terms": []}),
            index_version: None,
        },
        Err(e) => super::error_reply(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_defaults_to_5_and_is_bounded_to_1_50() {
        assert_eq!(parse_request(&json!({"query": "q"}), 100).unwrap().top_k, 5);
        assert_eq!(
            parse_request(&json!({"query": "q", "top_k": 50}), 100)
                .unwrap()
                .top_k,
            50
        );
        for bad in [json!(0), json!(51), json!(2.5), json!("5"), json!(-1)] {
            let e = parse_request(&json!({"query": "q", "top_k": bad}), 100).unwrap_err();
            assert_eq!(e.field, "top_k", "{bad}");
        }
    }

    #[test]
    fn query_is_a_required_non_empty_string_and_extras_are_ignored() {
        for (body, rule) in [
            (json!({}), "is required"),
            (json!({"query": 3}), "must be a string"),
            (json!({"query": "  "}), "must not be empty"),
        ] {
            let e = parse_request(&body, 100).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), ("query", rule));
        }
        assert!(parse_request(&json!({"query": "q", "fast_mode": true}), 100).is_ok());
    }
}
