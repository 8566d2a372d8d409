//! JSON Schemas (draft 2020-12) of what travels on the bus: document events, each contract's
//! query and reply, errors, dead letters and version notices. They are cut from the OpenAPI document's
//! components, so HTTP and the bus are described by one set of schemas; `ragstream schema`
//! prints them and `docs/schemas/` holds a copy that a test keeps in step.

use serde_json::{json, Map, Value};

use crate::pipeline::events::dead_letter_codes;

/// A published schema: its name, what it describes, and the component it is (or the schema
/// itself, for the two that only the bus has).
pub struct Published {
    pub name: &'static str,
    pub description: &'static str,
    root: Root,
}

enum Root {
    Component(&'static str),
    DocumentEvent,
    DeadLetter,
    VersionNotice,
}

const fn component(name: &'static str, description: &'static str, c: &'static str) -> Published {
    Published {
        name,
        description,
        root: Root::Component(c),
    }
}

/// Every published schema, in the order `ragstream schema` lists them.
pub const PUBLISHED: &[Published] = &[
    Published {
        name: "document-event",
        description: "A message on the documents topic: an upsert or a delete.",
        root: Root::DocumentEvent,
    },
    component("query-000", "A contract 000 request (bus header contract: 000).", "RetrievalRequest"),
    component("reply-000", "A contract 000 reply.", "RetrievalCallsResponse"),
    component("query-001", "A contract 001 request (contract: 001).", "RagQueryRequest"),
    component("reply-001", "A contract 001 reply.", "RagQueryResponse"),
    component("query-002", "A contract 002 query (contract: 002, header index).", "QueryRequest"),
    component("reply-002", "A contract 002 reply.", "QueryResponse"),
    component("query-003", "A contract 003 request (contract: 003).", "RetrieveInput"),
    component("reply-003", "A contract 003 reply.", "RetrieveOutput"),
    component("query-004", "A contract 004 request (contract: 004, header retriever).", "RetrieverRequest"),
    component("reply-004", "A contract 004 reply.", "RetrieverResponse"),
    component("query-explain", "An explain request (contract: explain, header index).", "ExplainRequest"),
    component("reply-explain", "An explain reply.", "Explanation"),
    component("query-diff", "A diff request (contract: diff, header index).", "DiffRequest"),
    component("reply-diff", "A diff reply.", "Diff"),
    component("error", "The reply to any request that failed, on every contract (003 with its own codes).", "Error"),
    Published {
        name: "dead-letter",
        description: "The headers of a message on the dead-letter topic (its key and payload are the original's).",
        root: Root::DeadLetter,
    },
    Published {
        name: "version-notice",
        description: "A message on the versions topic: a writer on an object store published a version of an index (its key is the index).",
        root: Root::VersionNotice,
    },
];

/// The schema called `name`, self-contained: the components it refers to are under
/// `$defs`. `None` for an unknown name.
pub fn schema(name: &str) -> Option<Value> {
    let published = PUBLISHED.iter().find(|p| p.name == name)?;
    let openapi = crate::http::openapi::document(env!("CARGO_PKG_VERSION"));
    let components = openapi["components"]["schemas"]
        .as_object()
        .expect("the OpenAPI document has component schemas");
    let mut root = match published.root {
        Root::Component(c) => components[c].clone(),
        Root::DocumentEvent => document_event(),
        Root::DeadLetter => dead_letter(),
        Root::VersionNotice => version_notice(),
    };
    let mut defs = Map::new();
    let mut pending = refs(&root);
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let def = components
            .get(&name)
            .unwrap_or_else(|| panic!("a $ref to the missing component {name}"))
            .clone();
        pending.extend(refs(&def));
        defs.insert(name, def);
    }
    let mut out = Map::new();
    out.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    out.insert("$id".into(), json!(format!("ragstream/{name}.json")));
    out.insert("title".into(), json!(name));
    out.insert("description".into(), json!(published.description));
    if let Value::Object(fields) = &mut root {
        fields.remove("description");
        out.extend(std::mem::take(fields));
    }
    if !defs.is_empty() {
        out.insert("$defs".into(), Value::Object(defs));
    }
    let mut out = Value::Object(out);
    relink(&mut out);
    Some(out)
}

/// The component names `value` refers to.
fn refs(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get("$ref") {
                    if let Some(name) = r.strip_prefix("#/components/schemas/") {
                        found.push(name.to_string());
                    }
                }
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    found
}

/// Points the OpenAPI document's `$ref`s at this schema's `$defs`.
fn relink(value: &mut Value) {
    match value {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get_mut("$ref") {
                if let Some(name) = r.strip_prefix("#/components/schemas/") {
                    *r = format!("#/$defs/{name}");
                }
            }
            o.values_mut().for_each(relink);
        }
        Value::Array(a) => a.iter_mut().for_each(relink),
        _ => {}
    }
}

fn document_event() -> Value {
    json!({
        "type": "object",
        "required": ["schema_version", "op", "index"],
        "properties": {
            "schema_version": {"const": crate::pipeline::events::SCHEMA_VERSION},
            "op": {"enum": ["upsert", "delete"]},
            "index": {"$ref": "#/components/schemas/IndexName"},
            "document": {"type": "object",
                "description": "The document (upsert). For delete, its id may name the document instead of document_id."},
            "document_id": {"type": "string", "minLength": 1, "pattern": "\\S",
                "description": "The document a delete removes."},
        },
        // As the pipeline reads an event: an upsert carries a whole document; a delete names
        // one, by document_id or by its document's id.
        "allOf": [
            {"if": {"properties": {"op": {"const": "upsert"}}},
             "then": {"required": ["document"],
                      "properties": {"document": {"$ref": "#/components/schemas/Document"}}}},
            {"if": {"properties": {"op": {"const": "delete"}}},
             "then": {"anyOf": [
                {"required": ["document_id"]},
                {"required": ["document"], "properties": {"document": {"required": ["id"],
                    "properties": {"id": {"type": "string", "minLength": 1, "pattern": "\\S"}}}}},
             ]}},
        ],
        // Fields the envelope does not know are ignored (forward compatibility); the
        // document's own fields are strict.
        "additionalProperties": true,
    })
}

fn version_notice() -> Value {
    json!({
        "type": "object",
        "required": ["index", "index_version", "committed_at"],
        "properties": {
            "index": {"$ref": "#/components/schemas/IndexName"},
            "index_version": {"type": "integer", "minimum": 1},
            "committed_at": {"type": "string", "format": "date-time"},
        },
        "additionalProperties": false,
    })
}

fn dead_letter() -> Value {
    let codes: Vec<&str> = dead_letter_codes().collect();
    json!({
        "type": "object",
        "description": "Kafka headers, as text. The message's own headers are copied too, except credentials (authorization, proxy-authorization, cookie, x-api-key).",
        "required": ["error.code", "error.message", "source.topic", "source.partition", "source.offset"],
        "properties": {
            "error.code": {"enum": codes},
            "error.message": {"type": "string"},
            "source.topic": {"type": "string"},
            "source.partition": {"type": "string", "pattern": "^[0-9]+$"},
            "source.offset": {"type": "string", "pattern": "^[0-9]+$"},
        },
        "additionalProperties": {"type": "string"},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_self_contained() {
        for p in PUBLISHED {
            let s = schema(p.name).unwrap();
            let text = s.to_string();
            assert!(!text.contains("#/components/"), "{}", p.name);
            let defs = s.get("$defs").and_then(Value::as_object);
            for r in refs_to_defs(&s) {
                assert!(
                    defs.is_some_and(|d| d.contains_key(&r)),
                    "{}: {r} is not under $defs",
                    p.name
                );
            }
        }
        assert!(schema("nope").is_none());
    }

    fn refs_to_defs(v: &Value) -> Vec<String> {
        let text = v.to_string();
        text.match_indices("\"#/$defs/")
            .map(|(i, m)| {
                let rest = &text[i + m.len()..];
                rest[..rest.find('"').unwrap()].to_string()
            })
            .collect()
    }
}
