//! Explain: `POST /v1/indexes/{index}/explain`, and the bus with header `contract: explain`.
//! A query in contract 002's shape (or 000's) and the targets to explain → why each was or
//! was not retrieved (`retrieval::explain`). The query is validated by its own contract's
//! rules, so a query and its explanation can never disagree about what was asked.

use serde_json::{Map, Value};

use super::wire::explain::{ExplainRequestBody, ExplainResponse, QueryContract};
use super::{c000_retrieval_calls, c002_retrieval_api, wire, Reply};
use crate::engine::{Engine, EngineError};
use crate::model::{IndexName, ValidationError};
use crate::retrieval::explain::{Target, MAX_TARGETS};
use crate::retrieval::SearchRequest;

/// A request's fields, checked; the query is parsed once the index's defaults are known.
struct ExplainRequest {
    query: Query,
    targets: Vec<Target>,
}

/// A query as its contract takes it: 002 (the default) or 000.
pub(super) struct Query {
    pub contract: &'static str,
    pub request: Value,
}

/// Reads the body of an explain or diff request (`what` names it in an unknown key's rule):
/// serde takes the shape, with the rules these requests have always given.
pub(super) fn read<T: serde::de::DeserializeOwned + schemars::JsonSchema + 'static>(
    body: &Value,
    what: &str,
) -> Result<T, ValidationError> {
    wire::read_as(
        body,
        "",
        &|_| {
            let fields = wire::fields::<T>().join(", ");
            format!("is not a field of the {what} request ({fields})")
        },
        &|field| match field {
            "contract" => "must be \"002\" or \"000\"".into(),
            "request" => "must be an object".into(),
            "targets" => "must be a list".into(),
            _ => "must be an index version (1 or more)".into(),
        },
        &|field| match field {
            "request" => "is required: the query, as its contract takes it".into(),
            _ => "is required".into(),
        },
    )
}

impl Query {
    pub(super) fn new(contract: Option<QueryContract>, request: Map<String, Value>) -> Query {
        Query {
            contract: contract.unwrap_or_default().label(),
            request: Value::Object(request),
        }
    }
}

fn parse(body: &Value, max_query_bytes: usize) -> Result<ExplainRequest, ValidationError> {
    let given: ExplainRequestBody = read(body, "explain")?;
    if given.targets.is_empty() || given.targets.len() > MAX_TARGETS {
        return Err(ValidationError::new(
            "targets",
            format!("must hold 1 to {MAX_TARGETS} targets"),
        ));
    }
    let targets = given
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| target(i, t, max_query_bytes))
        .collect::<Result<_, _>>()?;
    Ok(ExplainRequest {
        query: Query::new(given.contract, given.request),
        targets,
    })
}

/// `{"document_id": ...}`, `{"chunk_id": ...}` or `{"text": ...}`.
fn target(i: usize, t: &Value, max_text_bytes: usize) -> Result<Target, ValidationError> {
    let field = format!("targets[{i}]");
    let bad = |rule: &str| ValidationError::new(field.clone(), rule);
    let obj: &Map<String, Value> = t
        .as_object()
        .ok_or_else(|| bad("must be an object with document_id, chunk_id or text"))?;
    let [(key, value)] = obj.iter().collect::<Vec<_>>()[..] else {
        return Err(bad(
            "must name exactly one of document_id, chunk_id or text",
        ));
    };
    let text = match value {
        Value::String(s) if !s.trim().is_empty() => s.clone(),
        _ => return Err(bad(&format!("{key} must be a non-empty string"))),
    };
    if text.len() > max_text_bytes {
        return Err(bad(&format!(
            "{key} must be at most {max_text_bytes} bytes (limits.max_query_bytes)"
        )));
    }
    match key.as_str() {
        "document_id" => Ok(Target::DocumentId(text)),
        "chunk_id" => Ok(Target::ChunkId(text)),
        "text" => Ok(Target::Text(text)),
        _ => Err(bad(
            "must name exactly one of document_id, chunk_id or text",
        )),
    }
}

/// A nested contract's validation error, its field named under `request`.
fn nested(e: ValidationError) -> ValidationError {
    ValidationError::new(format!("request.{}", e.field), e.rule)
}

/// The engine request `parsed` asks for on `index`.
pub(super) async fn search_request(
    engine: &Engine,
    index: &IndexName,
    parsed: &Query,
) -> Result<SearchRequest, EngineError> {
    let limits = &engine.config().limits;
    if parsed.contract == "000" {
        let limits = c000_retrieval_calls::RequestLimits {
            max_top_k: limits.max_top_k,
            max_query_bytes: limits.max_query_bytes,
        };
        let (named, request) =
            c000_retrieval_calls::parse_request(&parsed.request, limits).map_err(nested)?;
        if &named != index {
            return Err(ValidationError::new(
                "request.retrieval.index",
                format!("must name the index explained ({index})"),
            )
            .into());
        }
        return Ok(request);
    }
    let req = c002_retrieval_api::parse_request(
        &parsed.request,
        limits.max_top_k,
        limits.max_query_bytes,
    )
    .map_err(nested)?;
    let defaults = engine.index(index).await?.query_defaults();
    let mut search = c002_retrieval_api::search_request(&req, &defaults).0;
    c002_retrieval_api::expand_with_graph(engine, index, &req, &mut search)
        .await
        .map_err(|e| match e {
            EngineError::Invalid(v) => nested(v).into(),
            other => other,
        })?;
    Ok(search)
}

/// Answers an explain request on `index`. Deleted chunks are shown only to a caller who may
/// see them (`reveal_deleted`: the visibility-override scope, as contract 003 has it).
pub async fn answer(
    engine: &Engine,
    index: &IndexName,
    body: &Value,
    reveal_deleted: bool,
) -> Reply {
    let parsed = match parse(body, engine.config().limits.max_query_bytes) {
        Ok(p) => p,
        Err(e) => return super::error_reply(&e.into()),
    };
    let request = match search_request(engine, index, &parsed.query).await {
        Ok(r) => r,
        Err(e) => return super::error_reply(&e),
    };
    match engine
        .explain(index, &request, &parsed.targets, reveal_deleted)
        .await
    {
        Ok(explanation) => {
            let version = explanation.index_version;
            let answer = ExplainResponse {
                index: index.to_string(),
                contract: parsed.query.contract,
                explanation,
            };
            Reply::typed(&answer, Some(version))
        }
        Err(e) => super::error_reply(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn targets_name_exactly_one_thing_each() {
        let ok = json!({"request": {"query": "q"}, "targets": [
            {"document_id": "d1"}, {"chunk_id": "c1"}, {"text": "the moon"}]});
        let parsed = parse(&ok, 100).unwrap();
        assert_eq!(parsed.query.contract, "002");
        assert_eq!(
            parsed.targets,
            [
                Target::DocumentId("d1".into()),
                Target::ChunkId("c1".into()),
                Target::Text("the moon".into())
            ]
        );
        for (body, field) in [
            (json!({"request": {"query": "q"}, "targets": []}), "targets"),
            (json!({"request": {"query": "q"}}), "targets"),
            (json!({"targets": [{"chunk_id": "c"}]}), "request"),
            (
                json!({"request": {"query": "q"}, "targets": [{"chunk_id": "c", "text": "t"}]}),
                "targets[0]",
            ),
            (
                json!({"request": {"query": "q"}, "targets": [{"document_id": ""}]}),
                "targets[0]",
            ),
            (
                json!({"request": {"query": "q"}, "targets": [{"text": "x".repeat(101)}]}),
                "targets[0]",
            ),
            (
                json!({"request": {"query": "q"}, "targets": [{"page": "1"}]}),
                "targets[0]",
            ),
            (
                json!({"contract": "003", "request": {}, "targets": [{"chunk_id": "c"}]}),
                "contract",
            ),
            (
                json!({"request": {"query": "q"}, "targets": [{"chunk_id": "c"}], "k": 1}),
                "k",
            ),
        ] {
            let e = parse(&body, 100)
                .err()
                .unwrap_or_else(|| panic!("{body} passed"));
            assert_eq!(e.field, field, "{body}: {e:?}");
        }
        let many: Vec<Value> = (0..=MAX_TARGETS)
            .map(|i| json!({"chunk_id": i.to_string()}))
            .collect();
        let e = parse(&json!({"request": {"query": "q"}, "targets": many}), 100).err();
        assert_eq!(e.map(|e| e.field), Some("targets".to_string()));
    }

    #[test]
    fn every_refusal_keeps_its_wording() {
        let q = json!({"query": "q"});
        let t = json!([{"chunk_id": "c"}]);
        let explain_fields = "is not a field of the explain request (contract, request, targets)";
        let targets_rule = format!("must hold 1 to {MAX_TARGETS} targets");
        let contract_rule = "must be \"002\" or \"000\"";
        let explain = [
            (json!([1]), "body", "must be an object"),
            (
                json!({"request": q, "targets": t, "k": 1}),
                "k",
                explain_fields,
            ),
            (
                json!({"contract": "003", "request": q, "targets": t}),
                "contract",
                contract_rule,
            ),
            (
                json!({"contract": null, "request": q, "targets": t}),
                "contract",
                contract_rule,
            ),
            (
                json!({"contract": 2, "request": q, "targets": t}),
                "contract",
                contract_rule,
            ),
            (
                json!({"targets": t}),
                "request",
                "is required: the query, as its contract takes it",
            ),
            (
                json!({"request": null, "targets": t}),
                "request",
                "must be an object",
            ),
            (
                json!({"request": "q", "targets": t}),
                "request",
                "must be an object",
            ),
            (json!({"request": q}), "targets", "is required"),
            (
                json!({"request": q, "targets": null}),
                "targets",
                "must be a list",
            ),
            (
                json!({"request": q, "targets": {"chunk_id": "c"}}),
                "targets",
                "must be a list",
            ),
            (
                json!({"request": q, "targets": []}),
                "targets",
                targets_rule.as_str(),
            ),
        ];
        for (body, field, rule) in explain {
            let e = parse(&body, 100)
                .err()
                .unwrap_or_else(|| panic!("{body} passed"));
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
        let diff_fields =
            "is not a field of the diff request (contract, request, from_version, to_version)";
        let version_rule = "must be an index version (1 or more)";
        let v =
            |from: Value, to: Value| json!({"request": q, "from_version": from, "to_version": to});
        let diff = [
            (
                json!({"request": q, "from_version": 1, "to_version": 2, "x": 0}),
                "x",
                diff_fields,
            ),
            (
                json!({"request": q, "to_version": 2}),
                "from_version",
                "is required",
            ),
            (
                json!({"request": q, "from_version": 1}),
                "to_version",
                "is required",
            ),
            (v(json!(0), json!(2)), "from_version", version_rule),
            (v(json!(1), json!(-2)), "to_version", version_rule),
            (v(json!("1"), json!(2)), "from_version", version_rule),
            (v(json!(1), json!(2.5)), "to_version", version_rule),
            (v(json!(null), json!(2)), "from_version", version_rule),
            (
                json!({"request": q, "from_version": 1, "to_version": 2, "contract": "001"}),
                "contract",
                contract_rule,
            ),
        ];
        for (body, field, rule) in diff {
            let e = read::<crate::contracts::wire::explain::DiffRequestBody>(&body, "diff")
                .err()
                .unwrap_or_else(|| panic!("{body} passed"));
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
        let ok = read::<crate::contracts::wire::explain::DiffRequestBody>(
            &json!({"contract": "000", "request": {"retrieval": {}}, "from_version": 1,
                "to_version": 3}),
            "diff",
        )
        .unwrap();
        assert_eq!(ok.contract, Some(QueryContract::C000));
        assert_eq!((ok.from_version.get(), ok.to_version.get()), (1, 3));
    }
}
