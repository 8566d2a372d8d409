//! The contracts' wire types: each request and response is a Rust struct with serde derives,
//! and the OpenAPI components and the bus's JSON Schemas are generated from them
//! (`http::openapi`, `http::json_schema`). A shape is declared once: here, or beside the
//! engine type that an answer carries as it is (`IndexStats`, `Document`, `Problem`).
//!
//! A request is read in two steps. [`read`] turns the JSON body into its wire struct and
//! refuses what serde cannot take, naming the field: an unknown key, a missing required key,
//! a value of the wrong type. Then the contract's validation step checks what a type cannot
//! say (a range, a non-empty string) and builds the engine's request. Both steps answer with
//! the same field-named [`ValidationError`] the contracts have always given.

pub mod c000;
pub mod c001;
pub mod c002;
pub mod c003;
pub mod c004;
pub mod chunk_metadata;
pub mod error;
pub mod explain;
pub mod filter_bag;
pub mod hydrate;
pub mod index_admin;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::model::ValidationError;
pub use filter_bag::FilterBag;

// An index version, as every contract carries it. Only its schema is used: fields hold a
// `u64` and name this type with `#[schemars(with = "IndexVersion")]`.
#[derive(JsonSchema)]
#[schemars(description = "An index version. Every write creates one; the newest \
                   `index.retain_versions` stay queryable, so sending one back answers again \
                   from exactly the same data.")]
pub struct IndexVersion(#[schemars(range(min = 1))] pub u64);

/// Character offsets of a passage.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, JsonSchema)]
#[schemars(
    description = "Character offsets `[start, end)` into the document's `text`, or into its \
                   page's text for paged documents."
)]
pub struct Offsets {
    /// The first character, counted in Unicode scalar values.
    pub start: u32,
    /// One past the last character.
    pub end: u32,
}

/// A field that may be absent but, when given, not null (`#[serde(default, deserialize_with
/// = "present")]`).
pub fn present<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// What the body of a request may hold, read from its wire type's schema once.
struct Shape {
    fields: Vec<String>,
    required: Vec<String>,
    /// Unknown keys are refused (`#[serde(deny_unknown_fields)]`); otherwise ignored.
    closed: bool,
}

fn shape<T: JsonSchema + 'static>() -> Arc<Shape> {
    static SHAPES: OnceLock<Mutex<HashMap<TypeId, Arc<Shape>>>> = OnceLock::new();
    let mut shapes = SHAPES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    shapes
        .entry(TypeId::of::<T>())
        .or_insert_with(|| {
            let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
            let names = |key: &str| -> Vec<String> {
                match schema.get(key) {
                    Some(Value::Object(m)) => m.keys().cloned().collect(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    _ => Vec::new(),
                }
            };
            Arc::new(Shape {
                fields: names("properties"),
                required: names("required"),
                closed: schema.get("additionalProperties") == Some(&Value::Bool(false)),
            })
        })
        .clone()
}

/// The keys the body of `T` may hold, in declaration order.
pub fn fields<T: JsonSchema + 'static>() -> Vec<String> {
    shape::<T>().fields.clone()
}

/// Reads `body` as the wire type `T`. `prefix` is put before field names (`"filters."` for a
/// nested object); `unknown` is the rule an unknown key breaks, when `T` refuses unknown keys;
/// `rule` gives the rule of a field whose value has the wrong type. A missing required key
/// "is required".
pub fn read<T: DeserializeOwned + JsonSchema + 'static>(
    body: &Value,
    prefix: &str,
    unknown: &dyn Fn(&str) -> String,
    rule: &dyn Fn(&str) -> String,
) -> Result<T, ValidationError> {
    read_as(body, prefix, unknown, rule, &|_| "is required".into())
}

/// [`read`], with `missing` giving the rule a missing required key breaks (a contract whose
/// wording for it predates the types).
pub fn read_as<T: DeserializeOwned + JsonSchema + 'static>(
    body: &Value,
    prefix: &str,
    unknown: &dyn Fn(&str) -> String,
    rule: &dyn Fn(&str) -> String,
    missing: &dyn Fn(&str) -> String,
) -> Result<T, ValidationError> {
    let whole = if prefix.is_empty() {
        "body".to_string()
    } else {
        prefix.trim_end_matches('.').to_string()
    };
    let obj = body
        .as_object()
        .ok_or_else(|| ValidationError::new(&whole, "must be an object"))?;
    let shape = shape::<T>();
    if let Some(key) = obj
        .keys()
        .find(|k| shape.closed && !shape.fields.contains(k))
    {
        return Err(ValidationError::new(format!("{prefix}{key}"), unknown(key)));
    }
    if let Some(field) = shape.required.iter().find(|k| !obj.contains_key(*k)) {
        return Err(ValidationError::new(
            format!("{prefix}{field}"),
            missing(field),
        ));
    }
    serde_path_to_error::deserialize(body).map_err(|e| {
        let field = field_of(&e.path().to_string());
        ValidationError::new(format!("{prefix}{field}"), rule(&field))
    })
}

/// The field a serde path names: its first segment (`tags[2]` is a fault of `tags`, and
/// `retrieval_profile.exact`, an enum written as an object, of `retrieval_profile`). A
/// nested object is read with a prefix of its own, so the fields named are top-level ones.
fn field_of(path: &str) -> String {
    let field = path.split(['[', '.']).next().unwrap_or(path);
    match field {
        "" | "." => "body".to_string(),
        f => f.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Probe {
        name: String,
        #[serde(default)]
        count: Option<u32>,
        #[serde(default)]
        tags: Option<Vec<String>>,
    }

    fn probe(body: Value) -> Result<Probe, (String, String)> {
        read::<Probe>(&body, "", &|k| format!("{k} is unknown"), &|f| {
            format!("{f} is wrong")
        })
        .map_err(|e| (e.field, e.rule))
    }

    #[test]
    fn names_the_field_of_each_fault() {
        let err = |field: &str, rule: &str| Err((field.to_string(), rule.to_string()));
        assert_eq!(
            probe(json!([1])).map(|_| ()),
            err("body", "must be an object")
        );
        assert_eq!(
            probe(json!({"name": "n", "bogus": 1})).map(|_| ()),
            err("bogus", "bogus is unknown")
        );
        assert_eq!(probe(json!({})).map(|_| ()), err("name", "is required"));
        assert_eq!(
            probe(json!({"name": 5})).map(|_| ()),
            err("name", "name is wrong")
        );
        assert_eq!(
            probe(json!({"name": "n", "count": -1})).map(|_| ()),
            err("count", "count is wrong")
        );
        assert_eq!(
            probe(json!({"name": "n", "tags": ["a", 2]})).map(|_| ()),
            err("tags", "tags is wrong")
        );
        assert_eq!(field_of("retrieval_profile.exact"), "retrieval_profile");
        assert_eq!(field_of("."), "body");
        let ok = probe(json!({"name": "n", "count": null, "tags": ["a"]})).unwrap();
        assert_eq!((ok.name.as_str(), ok.count), ("n", None));
        assert_eq!(ok.tags, Some(vec!["a".to_string()]));
    }

    #[test]
    fn a_nested_object_names_its_fields_under_its_prefix() {
        let err = read::<Probe>(&json!({"name": 1}), "filters.", &|k| k.into(), &|f| {
            f.into()
        })
        .err()
        .unwrap();
        assert_eq!(
            (err.field.as_str(), err.rule.as_str()),
            ("filters.name", "name")
        );
        let err = read::<Probe>(&json!(3), "filters.", &|k| k.into(), &|f| f.into())
            .err()
            .unwrap();
        assert_eq!(err.field, "filters");
    }
}
