//! Property tests over every parser of outside input: whatever arrives (bytes, JSON of any
//! shape, hostile strings), the parser answers with a value or a named error, never a
//! panic; and what ragstream writes itself, it reads back unchanged. A thousand cases each
//! here; `ragstream bench fuzz` runs many more.

use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::contracts::{c000_retrieval_calls, c001_rag_searcher, c002_retrieval_api};
use crate::contracts::{c003_ai_core, c004_retriever};
use crate::model::DocumentLimits;
use crate::pipeline::events::{parse_event, DocumentEvent};
use hostile_input::FIELDS;

const CASES: u32 = 1000;

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(FIELDS).prop_map(str::to_string),
        1 => "\\PC{0,12}",
    ]
}

/// Any JSON value, up to a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,40}".prop_map(Value::String),
        proptest::sample::select(&["kb", "hybrid", "upsert", "delete", "2024-05-01", "*"][..])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn document_events_from_any_bytes_are_parsed_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_event(Some(&bytes), 1 << 20, &DocumentLimits::default());
    }

    #[test]
    fn document_events_from_any_json_are_parsed_or_refused(v in json()) {
        let bytes = serde_json::to_vec(&v).unwrap();
        if let Err(reason) = parse_event(Some(&bytes), 1 << 20, &DocumentLimits::default()) {
            // Every refusal has a code for the dead-letter header.
            prop_assert!(!reason.code().is_empty());
        }
    }

    #[test]
    fn valid_events_read_back_as_written(
        id in "[A-Za-z0-9_.-]{1,60}",
        text in "\\PC{1,300}",
        delete in any::<bool>(),
    ) {
        let op = if delete {
            crate::index::DocumentOp::Delete { document_id: id.clone() }
        } else {
            crate::index::DocumentOp::Upsert(crate::model::Document {
                id: id.clone(),
                text: Some(text),
                ..Default::default()
            })
        };
        let event = DocumentEvent { index: crate::model::IndexName::parse("kb").unwrap(), op };
        let bytes = event.to_json().to_string().into_bytes();
        match parse_event(Some(&bytes), 1 << 20, &DocumentLimits::default()) {
            Ok(back) => prop_assert_eq!(back, event),
            // A text of only whitespace may break a document rule: refused, named.
            Err(reason) => prop_assert_eq!(reason.code(), "schema_violation"),
        }
    }

    #[test]
    fn contract_requests_of_any_shape_are_parsed_or_refused(v in json()) {
        let limits = c000_retrieval_calls::RequestLimits { max_top_k: 100, max_query_bytes: 8192 };
        let _ = c000_retrieval_calls::parse_request(&v, limits);
        let _ = c001_rag_searcher::parse_request(&v, 8192);
        let _ = c001_rag_searcher::parse_graph_request(&v, 8192, &crate::graph::GraphConfig::default());
        let _ = c002_retrieval_api::parse_request(&v, 100, 8192);
        let _ = c003_ai_core::parse_request(&v);
        let _ = c004_retriever::parse_request(&v);
        if let Value::Object(bag) = &v {
            let _ = crate::store::filters::Filters::parse(bag);
        }
    }

    #[test]
    fn contract_requests_with_one_field_broken_are_parsed_or_refused(
        contract in 0..5usize,
        field in key(),
        value in json(),
    ) {
        let mut v = serde_json::json!({"query": "moon", "top_k": 3, "hybrid": {},
            "retrieval": {"index": "kb", "query": "moon"}, "filters": {"tags": ["a"]}});
        for part in ["retrieval", "filters"] {
            if let Some(o) = v.get_mut(part).and_then(Value::as_object_mut) {
                o.insert(field.clone(), value.clone());
            }
        }
        if let Some(o) = v.as_object_mut() {
            o.insert(field, value);
        }
        let limits = c000_retrieval_calls::RequestLimits { max_top_k: 100, max_query_bytes: 8192 };
        match contract {
            0 => { let _ = c000_retrieval_calls::parse_request(&v, limits); }
            1 => { let _ = c001_rag_searcher::parse_request(&v, 8192); }
            2 => { let _ = c002_retrieval_api::parse_request(&v, 100, 8192); }
            3 => { let _ = c003_ai_core::parse_request(&v); }
            _ => { let _ = c004_retriever::parse_request(&v); }
        }
    }

    #[test]
    fn configuration_from_any_environment_value_loads_or_is_refused_with_a_key(
        key in proptest::sample::select(&[
            "RAGSTREAM_KAFKA_PARTITIONS", "RAGSTREAM_KAFKA_REPLY_TOPICS",
            "RAGSTREAM_LIMITS_MAX_TOP_K", "RAGSTREAM_LIMITS_QUERY_TIMEOUT_MS",
            "RAGSTREAM_HTTP_BIND", "RAGSTREAM_MODEL_EMBEDDER", "RAGSTREAM_CHUNKING_MAX_TOKENS",
            "RAGSTREAM_INDEX_RETAIN_VERSIONS", "RAGSTREAM_KAFKA_STALL_AFTER_MS",
        ][..]),
        value in "\\PC{0,30}",
    ) {
        if let Err(e) = crate::config::Config::load_from(None, vec![(key.to_string(), value)]) {
            // The error says where and which key: `bad configuration in <source>: key ...`.
            prop_assert!(!e.key.is_empty() && !e.reason.is_empty(), "{e}");
        }
    }

    #[test]
    fn configuration_files_of_any_text_load_or_are_refused(text in "\\PC{0,200}") {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        let _ = crate::config::Config::load_from(Some(file.path()), Vec::<(String, String)>::new());
    }
}
