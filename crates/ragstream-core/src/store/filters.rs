//! Exact-match filters (contract 000's "provider-agnostic exact-match filter bag"), parsed once
//! and pushed down into both stores: Lance as a SQL predicate, tantivy as term clauses. Keys
//! within the bag are ANDed; an array value matches any of its elements.

use serde_json::{Map, Value};

use crate::model::ValidationError;

/// How a built-in column is typed, which decides what filter values it accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    Text,
    UInt,
    Bool,
}

/// Filterable first-class columns (the built-in metadata of contract 000 plus the document
/// fields `project_id` and `updated_at`).
pub const FILTER_COLUMNS: &[(&str, ColumnKind)] = &[
    ("knowledge_base_id", ColumnKind::Text),
    ("document_id", ColumnKind::Text),
    ("chunk_index", ColumnKind::UInt),
    ("title", ColumnKind::Text),
    ("source_type", ColumnKind::Text),
    ("source_name", ColumnKind::Text),
    ("uri", ColumnKind::Text),
    ("source_id", ColumnKind::Text),
    ("source_path", ColumnKind::Text),
    ("managed_by_source", ColumnKind::Bool),
    ("page_number", ColumnKind::UInt),
    ("project_id", ColumnKind::Text),
    ("updated_at", ColumnKind::Text),
];

/// What a filter key refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterTarget {
    Column(&'static str, ColumnKind),
    /// `tags`: the document's tag list contains the value.
    Tags,
    /// Any other key: a custom `metadata` key with a scalar (or list of scalars) value.
    Metadata(String),
}

/// A canonical filter value; `term()` is the exact string both stores index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterValue {
    Text(String),
    UInt(u64),
    Bool(bool),
    /// A custom metadata value (string, number or boolean) as given.
    Json(Value),
}

impl FilterValue {
    pub fn term(&self) -> String {
        match self {
            FilterValue::Text(s) => s.clone(),
            FilterValue::UInt(n) => n.to_string(),
            FilterValue::Bool(b) => b.to_string(),
            FilterValue::Json(v) => v.to_string(),
        }
    }
}

/// One key of the bag: matches when the target equals any of `values`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterClause {
    pub target: FilterTarget,
    pub values: Vec<FilterValue>,
}

impl FilterClause {
    /// The name of the keyword-store field this clause matches on.
    pub fn field_name(&self) -> &str {
        match &self.target {
            FilterTarget::Column(name, _) => name,
            FilterTarget::Tags => "tags",
            FilterTarget::Metadata(_) => METADATA_TERMS_FIELD,
        }
    }

    /// The exact terms that match, as the keyword store indexes them.
    pub fn terms(&self) -> Vec<String> {
        match &self.target {
            FilterTarget::Metadata(key) => self
                .values
                .iter()
                .map(|v| format!("{key}={}", v.term()))
                .collect(),
            _ => self.values.iter().map(FilterValue::term).collect(),
        }
    }
}

/// Name of the column/field holding `key=<json value>` terms for custom metadata.
pub const METADATA_TERMS_FIELD: &str = "meta_kv";

/// The term a custom metadata scalar is indexed and filtered under.
pub fn metadata_term(key: &str, value: &Value) -> String {
    format!("{key}={value}")
}

/// Terms for one custom metadata entry: one per scalar, one per element of a scalar list.
pub fn metadata_terms(key: &str, value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter(|v| is_scalar(v))
            .map(|v| metadata_term(key, v))
            .collect(),
        v if is_scalar(v) => vec![metadata_term(key, v)],
        _ => Vec::new(),
    }
}

fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_))
}

/// Which rows a search sees (contract 003): deletes are soft, and only `active` rows are
/// visible unless a caller allowed to override asks for `all` or `deleted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    #[default]
    Active,
    All,
    Deleted,
}

impl Visibility {
    pub fn name(self) -> &'static str {
        match self {
            Visibility::Active => "active",
            Visibility::All => "all",
            Visibility::Deleted => "deleted",
        }
    }

    /// The keyword-store term of a row's visibility field (`None` for `All`: no clause).
    pub fn term(self) -> Option<&'static str> {
        match self {
            Visibility::Active => Some("active"),
            Visibility::Deleted => Some("deleted"),
            Visibility::All => None,
        }
    }

    /// The Lance predicate for this visibility (`None` for `All`).
    pub fn to_sql(self) -> Option<&'static str> {
        match self {
            Visibility::Active => Some(LIVE_ROWS),
            Visibility::Deleted => Some("deleted_at IS NOT NULL"),
            Visibility::All => None,
        }
    }
}

/// The Lance predicate of rows that are not soft-deleted.
pub const LIVE_ROWS: &str = "deleted_at IS NULL";

/// Name of the keyword-store field holding a row's visibility term.
pub const VISIBILITY_FIELD: &str = "visibility";

/// A parsed filter bag, plus the two range filters of contract 002 and the visibility.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filters {
    pub clauses: Vec<FilterClause>,
    /// `source_path` or `uri` starts with this.
    pub path_prefix: Option<String>,
    /// `updated_at` is strictly after this canonical timestamp (see
    /// [`crate::model::canonical_timestamp`]); documents without one do not match.
    pub updated_after: Option<String>,
    pub visibility: Visibility,
}

impl Filters {
    /// Parses a filter bag; errors name `filters.<key>` and the rule.
    pub fn parse(bag: &Map<String, Value>) -> Result<Filters, ValidationError> {
        let mut clauses = Vec::with_capacity(bag.len());
        for (key, value) in bag {
            let field = format!("filters.{key}");
            if key.is_empty() || key.contains('=') {
                return Err(ValidationError::new(
                    field,
                    "filter keys must be non-empty and must not contain '='",
                ));
            }
            let target = match FILTER_COLUMNS.iter().find(|(name, _)| name == key) {
                Some((name, kind)) => FilterTarget::Column(name, *kind),
                None if key == "tags" => FilterTarget::Tags,
                None => FilterTarget::Metadata(key.clone()),
            };
            let items: Vec<&Value> = match value {
                Value::Array(items) if items.is_empty() => {
                    return Err(ValidationError::new(field, "an empty list matches nothing"));
                }
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            };
            let values = items
                .into_iter()
                .map(|v| parse_value(&target, v))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| ValidationError::new(field.clone(), expected(&target)))?;
            clauses.push(FilterClause { target, values });
        }
        Ok(Filters {
            clauses,
            ..Filters::default()
        })
    }

    /// True when nothing but the visibility restricts the rows.
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty() && self.path_prefix.is_none() && self.updated_after.is_none()
    }

    /// The visibility, when it is all the filter selects by (no clause, path or time).
    pub fn visibility_only(&self) -> Option<Visibility> {
        (self.clauses.is_empty() && self.path_prefix.is_none() && self.updated_after.is_none())
            .then_some(self.visibility)
    }

    /// The filter as a Lance (DataFusion SQL) predicate, or `None` for no filter.
    pub fn to_sql(&self) -> Option<String> {
        let mut parts: Vec<String> = self
            .clauses
            .iter()
            .map(|clause| {
                let alternatives: Vec<String> = match &clause.target {
                    FilterTarget::Column(name, _) => clause
                        .values
                        .iter()
                        .map(|v| format!("{name} = {}", sql_literal(v)))
                        .collect(),
                    FilterTarget::Tags => clause
                        .values
                        .iter()
                        .map(|v| format!("array_has(tags, {})", sql_literal(v)))
                        .collect(),
                    FilterTarget::Metadata(_) => clause
                        .terms()
                        .iter()
                        .map(|t| format!("array_has({METADATA_TERMS_FIELD}, {})", sql_string(t)))
                        .collect(),
                };
                format!("({})", alternatives.join(" OR "))
            })
            .collect();
        if let Some(p) = &self.path_prefix {
            let p = sql_string(p);
            parts.push(format!(
                "(starts_with(source_path, {p}) OR starts_with(uri, {p}))"
            ));
        }
        if let Some(t) = &self.updated_after {
            parts.push(format!("(updated_at > {})", sql_string(t)));
        }
        if let Some(v) = self.visibility.to_sql() {
            parts.push(format!("({v})"));
        }
        (!parts.is_empty()).then(|| parts.join(" AND "))
    }
}

fn parse_value(target: &FilterTarget, v: &Value) -> Option<FilterValue> {
    let kind = match target {
        FilterTarget::Column(_, kind) => *kind,
        FilterTarget::Tags => ColumnKind::Text,
        FilterTarget::Metadata(_) => return is_scalar(v).then(|| FilterValue::Json(v.clone())),
    };
    match (kind, v) {
        // `updated_at` is stored canonical (UTC, milliseconds): compare like with like.
        (ColumnKind::Text, Value::String(s))
            if matches!(target, FilterTarget::Column("updated_at", _)) =>
        {
            crate::model::canonical_timestamp(s).map(FilterValue::Text)
        }
        (ColumnKind::Text, Value::String(s)) => Some(FilterValue::Text(s.clone())),
        (ColumnKind::UInt, Value::Number(n)) => n
            .as_u64()
            .filter(|n| *n <= u64::from(u32::MAX))
            .map(FilterValue::UInt),
        (ColumnKind::Bool, Value::Bool(b)) => Some(FilterValue::Bool(*b)),
        _ => None,
    }
}

fn expected(target: &FilterTarget) -> &'static str {
    match target {
        FilterTarget::Column("updated_at", _) => {
            "must be an RFC 3339 timestamp or a non-empty list of them"
        }
        FilterTarget::Column(_, ColumnKind::Text) | FilterTarget::Tags => {
            "must be a string or a non-empty list of strings"
        }
        FilterTarget::Column(_, ColumnKind::UInt) => {
            "must be a non-negative integer or a non-empty list of them"
        }
        FilterTarget::Column(_, ColumnKind::Bool) => "must be true or false",
        FilterTarget::Metadata(_) => {
            "must be a string, number or boolean, or a non-empty list of them"
        }
    }
}

fn sql_literal(v: &FilterValue) -> String {
    match v {
        FilterValue::Text(s) => sql_string(s),
        FilterValue::UInt(n) => n.to_string(),
        FilterValue::Bool(b) => b.to_string(),
        FilterValue::Json(v) => sql_string(&v.to_string()),
    }
}

/// Quotes a string literal for a Lance (DataFusion SQL) predicate.
pub fn sql_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Filters, ValidationError> {
        Filters::parse(v.as_object().unwrap())
    }

    #[test]
    fn an_empty_bag_leaves_only_the_visibility() {
        let mut f = parse(json!({})).unwrap();
        assert_eq!(f.to_sql().as_deref(), Some("(deleted_at IS NULL)"));
        f.visibility = Visibility::All;
        assert_eq!(f.to_sql(), None);
        f.visibility = Visibility::Deleted;
        assert_eq!(f.to_sql().as_deref(), Some("(deleted_at IS NOT NULL)"));
    }

    #[test]
    fn renders_sql_for_every_target_kind() {
        let f = parse(json!({
            "source_type": "pdf",
            "page_number": [3, 4],
            "managed_by_source": true,
            "tags": "o'reilly",
            "lang": "en"
        }))
        .unwrap();
        assert_eq!(
            f.to_sql().unwrap(),
            "(source_type = 'pdf') AND (page_number = 3 OR page_number = 4) AND \
             (managed_by_source = true) AND (array_has(tags, 'o''reilly')) AND \
             (array_has(meta_kv, 'lang=\"en\"')) AND (deleted_at IS NULL)"
        );
    }

    #[test]
    fn metadata_terms_match_what_is_indexed() {
        let f = parse(json!({"year": 2021, "lang": "en", "draft": false})).unwrap();
        let terms: Vec<Vec<String>> = f.clauses.iter().map(FilterClause::terms).collect();
        assert_eq!(terms[0], metadata_terms("year", &json!(2021)));
        assert_eq!(terms[1], metadata_terms("lang", &json!(["en"])));
        assert_eq!(terms[2], metadata_terms("draft", &json!(false)));
    }

    #[test]
    fn bad_values_name_the_key() {
        for (bag, field) in [
            (json!({"page_number": "three"}), "filters.page_number"),
            (json!({"page_number": -1}), "filters.page_number"),
            (json!({"document_id": 5}), "filters.document_id"),
            (json!({"tags": []}), "filters.tags"),
            (json!({"lang": {"nested": 1}}), "filters.lang"),
            (json!({"lang": null}), "filters.lang"),
            (json!({"a=b": "x"}), "filters.a=b"),
            (json!({"updated_at": "yesterday"}), "filters.updated_at"),
        ] {
            assert_eq!(parse(bag).unwrap_err().field, field);
        }
    }
}
