//! Contract 000's exact-match filter bag. Requests hold it as a JSON value (`Filters::parse`
//! reads it); this type gives its schema, typed per filterable column.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

use crate::store::filters::{ColumnKind, FILTER_COLUMNS};

/// The schema of the filter bag (no value has this type).
pub struct FilterBag;

impl JsonSchema for FilterBag {
    fn schema_name() -> Cow<'static, str> {
        "FilterBag".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut properties = Map::new();
        for (name, kind) in FILTER_COLUMNS {
            let item = match (*name, kind) {
                ("updated_at", _) => json!({"type": "string", "format": "date-time"}),
                (_, ColumnKind::Text) => json!({"type": "string"}),
                (_, ColumnKind::UInt) => {
                    json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
                }
                (_, ColumnKind::Bool) => json!({"type": "boolean"}),
            };
            properties.insert(name.to_string(), one_or_many(item));
        }
        properties.insert("tags".into(), one_or_many(json!({"type": "string"})));
        json_schema!({
            "type": "object",
            "description": "Exact-match filters, ANDed across keys; a list matches any of its \
                elements (an empty list is refused). The built-in columns are typed as declared; \
                `tags` matches one of the document's tags; any other key matches a custom \
                `metadata` value (a string, number or boolean).",
            "properties": properties,
            "propertyNames": {"pattern": "^[^=]+$"},
            "additionalProperties": one_or_many(json!({"type": ["string", "number", "boolean"]})),
        })
    }
}

/// A value, or a non-empty list of such values.
fn one_or_many(item: Value) -> Value {
    json!({"oneOf": [item.clone(), {"type": "array", "minItems": 1, "items": item}]})
}
