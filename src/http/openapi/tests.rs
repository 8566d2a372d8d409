//! Tests of the OpenAPI document against the routes and the adapters.

use std::collections::{BTreeSet, HashSet};

use super::*;
use crate::contracts::c000_retrieval_calls::{self as c000, RequestLimits};
use crate::contracts::c001_rag_searcher as c001;
use crate::contracts::c002_retrieval_api as c002;
use crate::contracts::c003_ai_core as c003;
use crate::contracts::c004_retriever as c004;
use crate::model::metadata::BUILT_IN_FIELDS;

const VERSION: &str = "1.2.3-test";
const LIMITS: RequestLimits = RequestLimits {
    max_top_k: 100,
    max_query_bytes: 8192,
};

/// Every `$ref` value under `v`.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => refs(x, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// Every object under `v`, `v` included.
fn objects<'a>(v: &'a Value, out: &mut Vec<&'a Map<String, Value>>) {
    match v {
        Value::Object(m) => {
            out.push(m);
            m.values().for_each(|x| objects(x, out));
        }
        Value::Array(items) => items.iter().for_each(|x| objects(x, out)),
        _ => {}
    }
}

fn operation_of<'a>(doc: &'a Value, route: &Route) -> &'a Value {
    &doc["paths"][route.path][route.method.to_ascii_lowercase().as_str()]
}

#[test]
fn declares_openapi_3_1_and_the_given_version() {
    let d = document(VERSION);
    assert_eq!(d["openapi"], "3.1.0");
    assert_eq!(d["info"]["version"], VERSION);
    assert_eq!(document("0.0.1")["info"]["version"], "0.0.1");
}

#[test]
fn every_ref_resolves_to_a_component_schema() {
    let d = document(VERSION);
    let schemas = d["components"]["schemas"].as_object().expect("schemas");
    let mut found = Vec::new();
    refs(&d, &mut found);
    assert!(found.len() > 50, "only {} references found", found.len());
    for r in &found {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{r} does not point at a component schema"));
        assert!(schemas.contains_key(name), "{r} does not resolve");
    }
}

#[test]
fn every_component_schema_is_referenced() {
    let d = document(VERSION);
    let mut found = Vec::new();
    refs(&d, &mut found);
    let used: HashSet<&str> = found
        .iter()
        .filter_map(|r| r.strip_prefix("#/components/schemas/"))
        .collect();
    for name in d["components"]["schemas"].as_object().unwrap().keys() {
        assert!(used.contains(name.as_str()), "{name} is never referenced");
    }
}

#[test]
fn schema_names_are_unique() {
    let mut seen = HashSet::new();
    for (name, _) in schema_list() {
        assert!(seen.insert(name.clone()), "{name} is defined twice");
    }
}

#[test]
fn every_route_is_a_path_operation_and_nothing_else_is() {
    let d = document(VERSION);
    for route in ROUTES {
        assert_eq!(
            operation_of(&d, route)["operationId"],
            route.operation_id(),
            "{} {}",
            route.method,
            route.path
        );
    }
    let operations: usize = d["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert_eq!(operations, ROUTES.len());
}

#[test]
fn operation_ids_and_routes_are_unique() {
    let mut ids = HashSet::new();
    let mut routes = HashSet::new();
    for r in ROUTES {
        assert!(
            ids.insert(r.operation_id()),
            "operation id {} twice",
            r.operation_id()
        );
        assert!(
            routes.insert((r.method, r.path)),
            "{} {} twice",
            r.method,
            r.path
        );
    }
}

#[test]
fn routes_name_defined_schemas_and_known_methods() {
    let list = schema_list();
    let names: HashSet<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
    for r in ROUTES {
        assert!(
            ["GET", "POST", "PUT", "DELETE"].contains(&r.method),
            "{}",
            r.method
        );
        assert!(names.contains(r.response), "{}", r.response);
        if let Some(request) = r.request {
            assert!(names.contains(request), "{request}");
        }
    }
}

#[test]
fn required_keys_are_declared_properties() {
    let d = document(VERSION);
    let mut all = Vec::new();
    objects(&d["components"]["schemas"], &mut all);
    let mut checked = 0;
    for o in all {
        let required = o.get("required").and_then(Value::as_array);
        let properties = o.get("properties").and_then(Value::as_object);
        let (Some(required), Some(properties)) = (required, properties) else {
            continue;
        };
        for key in required {
            let key = key.as_str().expect("required names are strings");
            assert!(
                properties.contains_key(key),
                "required {key} is not a property"
            );
        }
        checked += 1;
    }
    assert!(checked > 20, "only {checked} objects checked");
}

#[test]
fn v1_routes_document_authentication_and_the_rest_need_no_token() {
    let d = document(VERSION);
    assert_eq!(d["security"], json!([{"bearer": []}, {}]));
    assert_eq!(d["components"]["securitySchemes"]["bearer"]["type"], "http");
    assert_eq!(
        d["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    for r in ROUTES {
        let op = operation_of(&d, r);
        if r.path.starts_with("/v1/") {
            assert!(
                op.get("security").is_none(),
                "{} follows the global rule",
                r.path
            );
            // The index list leaves out what the caller may not read: never a 403.
            let refuses: &[u16] = if r.operation == Operation::ListIndexes {
                &[401, 500]
            } else {
                &[401, 403, 500]
            };
            for &status in refuses {
                assert!(r.errors.contains(&status), "{} lacks {status}", r.path);
                let body = &op["responses"][status.to_string().as_str()]["content"];
                assert_eq!(
                    body["application/json"]["schema"]["$ref"],
                    "#/components/schemas/Error"
                );
            }
        } else if r.path == "/metrics" {
            assert_eq!(op["security"], json!([{"bearer": []}, {}]));
            assert!(r.errors.contains(&401) && r.errors.contains(&403));
        } else {
            assert_eq!(op["security"], json!([]), "{} needs no token", r.path);
        }
    }
}

#[test]
fn every_error_status_has_its_own_description() {
    for r in ROUTES {
        for &status in r.errors {
            assert_ne!(
                error_description(r, status),
                "Error.",
                "{} {status}",
                r.path
            );
        }
        if r.tag == TAG_003 {
            assert!(error_description(r, 400).starts_with("InputError"));
            assert!(error_description(r, 404).starts_with("NotFoundError"));
        }
    }
}

#[test]
fn query_routes_declare_the_index_version_header() {
    let d = document(VERSION);
    let with_header = [
        "retrieve",
        "ragQuery",
        "indexRagQuery",
        "indexQuery",
        "hydrate",
        "aiRagQuery",
        "aiRagQueryNoSlash",
        "indexAiRagQuery",
    ];
    for r in ROUTES {
        let responses = &operation_of(&d, r)["responses"];
        let header = &responses["200"]["headers"][INDEX_VERSION_HEADER];
        assert_eq!(
            header.is_object(),
            with_header.contains(&r.operation_id()),
            "{}",
            r.operation_id()
        );
    }
}

#[test]
fn ingestion_and_deletes_answer_202() {
    let d = document(VERSION);
    let ingest = &d["paths"]["/v1/indexes/{index}/documents"]["post"]["responses"];
    assert!(ingest["202"].is_object());
    assert!(ingest["200"].is_null());
    let delete = &d["paths"]["/v1/indexes/{index}/documents/{id}"]["delete"]["responses"];
    assert!(delete["202"].is_object());
    let metrics = &d["paths"]["/metrics"]["get"]["responses"]["200"]["content"];
    assert!(metrics[METRICS_MEDIA_TYPE].is_object());
    assert!(metrics["application/json"].is_null());
}

#[test]
fn path_parameters_match_the_templates() {
    let d = document(VERSION);
    for r in ROUTES {
        let declared: Vec<&str> = operation_of(&d, r)["parameters"]
            .as_array()
            .map(|ps| ps.iter().map(|p| p["name"].as_str().unwrap()).collect())
            .unwrap_or_default();
        let templated: Vec<&str> = r
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .collect();
        assert_eq!(declared, templated, "{}", r.path);
    }
    let index = &d["paths"]["/v1/indexes/{index}/query"]["post"]["parameters"][0];
    assert_eq!(index["schema"]["$ref"], "#/components/schemas/IndexName");
    assert_eq!(index["in"], "path");
    assert_eq!(index["required"], true);
}

#[test]
fn index_name_pattern_agrees_with_the_parser() {
    let pattern = regex::Regex::new(crate::model::IndexName::PATTERN).unwrap();
    let longest = "a".repeat(64);
    let too_long = "a".repeat(65);
    for name in [
        "a",
        "0",
        "kb_product-docs",
        longest.as_str(),
        "",
        "_a",
        "-a",
        "A",
        "a b",
        "a/b",
        "ä",
        too_long.as_str(),
        "../x",
        "kb\n",
    ] {
        assert_eq!(
            pattern.is_match(name),
            crate::model::IndexName::parse(name).is_ok(),
            "{name:?}"
        );
    }
}

#[test]
fn hybrid_parameters_are_exactly_the_adapters_keys() {
    let d = document(VERSION);
    let h = &d["components"]["schemas"]["HybridParameters"];
    let declared: BTreeSet<&str> = h["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // The contract's eight keys: the adapter reads them from the same type, so this pins
    // the type to the contract.
    let contract: BTreeSet<&str> = [
        "alpha",
        "min_sim",
        "top_k",
        "vec_limit",
        "lex_limit",
        "trgm_limit",
        "max_candidates",
        "diversify_strength",
    ]
    .into_iter()
    .collect();
    assert_eq!(declared, contract);
    for key in &contract {
        let body = json!({"hybrid": {*key: 1}});
        assert!(c003::parse_request(&body).is_ok(), "{key} is accepted");
    }
}

#[test]
fn chunk_metadata_declares_every_built_in_and_document_field() {
    let d = document(VERSION);
    let properties = &d["components"]["schemas"]["ChunkMetadata"]["properties"];
    for field in BUILT_IN_FIELDS
        .iter()
        .chain(crate::model::metadata::DOCUMENT_FILTER_FIELDS)
    {
        assert!(properties[*field].is_object(), "{field}");
    }
}

#[test]
fn stated_defaults_are_the_adapters_defaults() {
    let d = document(VERSION);
    let s = &d["components"]["schemas"];

    let (_, r) =
        c000::parse_request(&json!({"retrieval": {"index": "kb", "query": "q"}}), LIMITS).unwrap();
    let spec = &s["RetrievalSpec"]["properties"];
    assert_eq!(spec["top_k"]["default"], r.top_k);
    assert_eq!(spec["hybrid_alpha"]["default"], r.hybrid_alpha);
    assert_eq!(
        spec["search_method"]["default"],
        serde_json::to_value(r.method).unwrap()
    );
    assert_eq!(
        spec["query_preprocessing"]["default"],
        serde_json::to_value(r.preprocessing).unwrap()
    );

    let rag = c001::parse_request(&json!({"query": "q"}), 8192).unwrap();
    assert_eq!(
        s["RagQueryRequest"]["properties"]["top_k"]["default"],
        rag.top_k
    );

    let q = c002::parse_request(&json!({"query": "q"}), 100, 8192).unwrap();
    let query = &s["QueryRequest"]["properties"];
    assert_eq!(query["top_k"]["default"], q.top_k);
    assert_eq!(query["debug"]["default"], q.debug);

    let h = c003::parse_request(&json!({"hybrid": {}})).unwrap().hybrid;
    let hybrid = &s["HybridParameters"]["properties"];
    assert_eq!(hybrid["alpha"]["default"], h.alpha);
    assert_eq!(hybrid["min_sim"]["default"], h.min_sim);
    assert_eq!(hybrid["top_k"]["default"], h.top_k);
    assert_eq!(hybrid["vec_limit"]["default"], h.vec_limit);
    assert_eq!(hybrid["lex_limit"]["default"], h.lex_limit);
    assert_eq!(
        hybrid["diversify_strength"]["default"],
        h.diversify_strength
    );
}

#[test]
fn closed_schemas_are_the_ones_whose_adapters_refuse_unknown_keys() {
    let d = document(VERSION);
    let s = &d["components"]["schemas"];
    let closed = |name: &str| s[name]["additionalProperties"] == false;
    let cases = [
        (
            "RetrievalSpec",
            c000::parse_request(
                &json!({"retrieval": {"index": "kb", "query": "q", "bogus": 1}}),
                LIMITS,
            )
            .is_err(),
        ),
        (
            "RagQueryRequest",
            c001::parse_request(&json!({"query": "q", "bogus": 1}), 8192).is_err(),
        ),
        (
            "QueryRequest",
            c002::parse_request(&json!({"query": "q", "bogus": 1}), 100, 8192).is_err(),
        ),
        (
            "RetrieveInput",
            c003::parse_request(&json!({"hybrid": {}, "bogus": 1})).is_err(),
        ),
        (
            "HybridParameters",
            c003::parse_request(&json!({"hybrid": {"bogus": 1}})).is_err(),
        ),
        (
            "HydrateRequest",
            crate::contracts::hydrate::parse_request(&json!({"chunk_ids": ["a"], "bogus": 1}))
                .is_err(),
        ),
        (
            "RetrieverRequest",
            c004::parse_request(&json!({"query": "q", "top_k": 3})).is_err(),
        ),
    ];
    for (name, refused) in cases {
        assert_eq!(closed(name), refused, "{name}");
    }
}
