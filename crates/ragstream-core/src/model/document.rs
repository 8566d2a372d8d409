//! The document a producer submits, and its validation.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::metadata::{reserved_metadata_keys, BUILT_IN_FIELDS, DOCUMENT_FILTER_FIELDS};
use super::ValidationError;

/// One page of a paged source (a PDF, say).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// 1-based, as printed; unique within the document.
    #[schemars(range(min = 1, max = u32::MAX))]
    pub page_number: u32,
    /// The page's text.
    pub text: String,
}

/// A document as submitted for indexing. Exactly one of `text` and `pages` is set.
// The doc comments on the fields are the schema's descriptions (`ragstream schema`,
// `/openapi.json`): they speak to producers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    extend("oneOf" = [
        {"required": ["text"], "properties": {"text": {"type": "string"}}},
        {"required": ["pages"], "properties": {"pages": {"type": "array"}}},
    ]),
    description = "A document as submitted. Re-sending unchanged content creates no version."
)]
pub struct Document {
    /// At most `limits.max_document_id_bytes` bytes (default 512), no control characters.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub id: String,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub title: Option<String>,
    /// The content (exactly one of text and pages); at most `limits.max_document_bytes`
    /// bytes (default 1 MiB).
    #[serde(default)]
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub text: Option<String>,
    /// Paged content (exactly one of text and pages); at least one page with text; at most
    /// `limits.max_document_bytes` bytes in all.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub pages: Option<Vec<Page>>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub uri: Option<String>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub source_type: Option<String>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub source_name: Option<String>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub source_id: Option<String>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub source_path: Option<String>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub managed_by_source: Option<bool>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    pub project_id: Option<String>,
    /// Stored on every chunk and returned in its metadata.
    #[serde(default)]
    #[schemars(inner(length(min = 1)))]
    pub tags: Vec<String>,
    /// RFC 3339; kept as given.
    #[serde(default)]
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: Option<String>,
    /// Custom metadata; keys may not be a key chunk metadata has of its own (a built-in
    /// field, a document field, `section_path`, `offsets`) or contain `=`. Scalars (and lists
    /// of scalars) are filterable.
    #[serde(default)]
    #[schemars(extend("propertyNames" = {"pattern": "^[^=]+$", "not": {"enum": reserved_metadata_keys().collect::<Vec<_>>()}}))]
    pub metadata: Map<String, Value>,
    /// Knowledge-graph facts this document states: stored with the index version, searched
    /// by contract 001 in graph mode, removed (soft) with the document.
    // Left out of the serialised form when empty, so documents without them keep their
    // content hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triples: Vec<Triple>,
    /// Aliases of the triples' entities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<EntityAliases>,
    // Triples the pipeline's extractor read from the chunks. Never submitted, never
    // serialised, so not part of the content hash: re-sending an unchanged document stays a
    // no-op instead of asking the model again.
    #[serde(skip)]
    pub extracted: Vec<Triple>,
}

/// A fact `subject —relation→ object`.
// Without `chunk` the triple is linked to the chunks that mention its subject or object
// (else to the first chunk).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Triple {
    /// An entity; at most 512 bytes.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub subject: String,
    /// A short verb phrase; at most 512 bytes.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub relation: String,
    /// An entity; at most 512 bytes.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub object: String,
    /// The chunk (0-based) the fact was read from; without it the fact is linked to the chunk
    /// that names its subject or object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = u32::MAX))]
    pub chunk: Option<u32>,
}

/// Names an entity is also known by: a query naming an alias links to the entity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntityAliases {
    /// An entity the triples name.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub name: String,
    /// Other names a query may use for it.
    #[serde(default)]
    #[schemars(inner(length(min = 1)))]
    pub aliases: Vec<String>,
}

/// Longest subject, relation, object or entity name, in bytes.
pub const MAX_GRAPH_TERM_BYTES: usize = 512;

/// Limits a document is validated against (from the `[limits]` config section).
#[derive(Debug, Clone, Copy)]
pub struct DocumentLimits {
    pub max_document_bytes: usize,
    pub max_id_bytes: usize,
}

impl Default for DocumentLimits {
    fn default() -> Self {
        DocumentLimits {
            max_document_bytes: 1 << 20,
            max_id_bytes: 512,
        }
    }
}

/// The rule every document id follows, in an upsert and in a delete alike: non-empty, at
/// most `max_id_bytes`, no control characters. The error names the field `id`.
pub fn validate_document_id(id: &str, limits: &DocumentLimits) -> Result<(), ValidationError> {
    if id.trim().is_empty() {
        return Err(ValidationError::new("id", "must not be empty"));
    }
    if id.len() > limits.max_id_bytes {
        return Err(ValidationError::new(
            "id",
            format!("must be at most {} bytes", limits.max_id_bytes),
        ));
    }
    if id.chars().any(char::is_control) {
        return Err(ValidationError::new(
            "id",
            "must not contain control characters",
        ));
    }
    Ok(())
}

impl Document {
    /// Checks every field rule; the error names the field and the rule broken.
    pub fn validate(&self, limits: &DocumentLimits) -> Result<(), ValidationError> {
        let err = |field: &str, rule: &str| ValidationError::new(field, rule);
        validate_document_id(&self.id, limits)?;
        match (&self.text, &self.pages) {
            (Some(_), Some(_)) => {
                return Err(err("text", "give either `text` or `pages`, not both"));
            }
            (None, None) => return Err(err("text", "one of `text` or `pages` is required")),
            (None, Some(pages)) => {
                if pages.is_empty() {
                    return Err(err("pages", "must hold at least one page"));
                }
                let mut seen = std::collections::BTreeSet::new();
                for (i, page) in pages.iter().enumerate() {
                    if page.page_number == 0 {
                        return Err(err(
                            &format!("pages[{i}].page_number"),
                            "must be 1 or greater",
                        ));
                    }
                    if !seen.insert(page.page_number) {
                        return Err(err(
                            &format!("pages[{i}].page_number"),
                            "must be unique within the document",
                        ));
                    }
                }
            }
            (Some(text), None) => {
                if text.trim().is_empty() {
                    return Err(err("text", "must contain non-whitespace text"));
                }
            }
        }
        if let Some(pages) = &self.pages {
            if pages.iter().all(|p| p.text.trim().is_empty()) {
                return Err(err("pages", "at least one page must contain text"));
            }
        }
        let size = self.content_bytes();
        if size > limits.max_document_bytes {
            return Err(err(
                if self.text.is_some() { "text" } else { "pages" },
                &format!(
                    "is {size} bytes, over the limit of {} bytes (limits.max_document_bytes)",
                    limits.max_document_bytes
                ),
            ));
        }
        if let Some(ts) = &self.updated_at {
            if time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339)
                .is_err()
            {
                return Err(err(
                    "updated_at",
                    "must be an RFC 3339 timestamp such as 2024-05-01T12:00:00Z",
                ));
            }
        }
        for (i, tag) in self.tags.iter().enumerate() {
            if tag.is_empty() {
                return Err(err(&format!("tags[{i}]"), "must not be empty"));
            }
        }
        let term = |field: String, value: &str| {
            if value.trim().is_empty() {
                return Err(err(&field, "must not be empty"));
            }
            if value.len() > MAX_GRAPH_TERM_BYTES {
                return Err(err(
                    &field,
                    &format!("must be at most {MAX_GRAPH_TERM_BYTES} bytes"),
                ));
            }
            Ok(())
        };
        for (i, t) in self.triples.iter().enumerate() {
            term(format!("triples[{i}].subject"), &t.subject)?;
            term(format!("triples[{i}].relation"), &t.relation)?;
            term(format!("triples[{i}].object"), &t.object)?;
        }
        for (i, e) in self.entities.iter().enumerate() {
            term(format!("entities[{i}].name"), &e.name)?;
            for (j, a) in e.aliases.iter().enumerate() {
                term(format!("entities[{i}].aliases[{j}]"), a)?;
            }
        }
        for key in self.metadata.keys() {
            if BUILT_IN_FIELDS.contains(&key.as_str())
                || DOCUMENT_FILTER_FIELDS.contains(&key.as_str())
            {
                return Err(err(
                    &format!("metadata.{key}"),
                    "is a reserved built-in metadata field; set the top-level field instead",
                ));
            }
            if reserved_metadata_keys().any(|k| k == key) {
                return Err(err(
                    &format!("metadata.{key}"),
                    "is a reserved metadata field: every chunk answers with its own; \
                     use another name",
                ));
            }
            if key.is_empty() || key.contains('=') {
                return Err(err(
                    &format!("metadata.{key}"),
                    "keys must be non-empty and must not contain '='",
                ));
            }
        }
        Ok(())
    }

    /// Size of the text content the limit applies to.
    pub fn content_bytes(&self) -> usize {
        match (&self.text, &self.pages) {
            (Some(text), _) => text.len(),
            (None, Some(pages)) => pages.iter().map(|p| p.text.len()).sum(),
            (None, None) => 0,
        }
    }

    /// A digest of everything stored for this document. Equal hashes mean re-ingesting the
    /// document changes nothing, so no version is created and nothing is embedded.
    pub fn content_hash(&self) -> String {
        // serde_json with preserve_order serialises fields in declaration order and metadata
        // in insertion order; sort metadata keys so that key order does not matter.
        let mut canonical = self.clone();
        let mut sorted: Vec<(String, Value)> = canonical.metadata.into_iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        canonical.metadata = sorted.into_iter().collect();
        let bytes = serde_json::to_vec(&canonical).expect("a document always serialises");
        hex::encode(&Sha256::digest(&bytes)[..16])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        Document {
            id: "d1".into(),
            text: Some("hello".into()),
            ..Default::default()
        }
    }

    fn field_of(d: &Document) -> String {
        d.validate(&DocumentLimits::default()).unwrap_err().field
    }

    #[test]
    fn valid_document_passes() {
        doc().validate(&DocumentLimits::default()).unwrap();
    }

    #[test]
    fn empty_id_is_rejected() {
        let mut d = doc();
        d.id = "  ".into();
        assert_eq!(field_of(&d), "id");
    }

    #[test]
    fn oversize_text_names_the_limit() {
        let d = doc();
        let e = d
            .validate(&DocumentLimits {
                max_document_bytes: 3,
                max_id_bytes: 10,
            })
            .unwrap_err();
        assert_eq!(e.field, "text");
        assert!(e.rule.contains("limits.max_document_bytes"), "{}", e.rule);
    }

    #[test]
    fn bad_timestamp_is_rejected() {
        let mut d = doc();
        d.updated_at = Some("yesterday".into());
        assert_eq!(field_of(&d), "updated_at");
        d.updated_at = Some("2024-05-01T12:00:00+02:00".into());
        d.validate(&DocumentLimits::default()).unwrap();
    }

    #[test]
    fn reserved_metadata_keys_are_rejected() {
        // Every key a chunk answers with on its own would hide the custom one.
        for key in reserved_metadata_keys() {
            let mut d = doc();
            d.metadata.insert(key.to_string(), Value::from(3));
            assert_eq!(field_of(&d), format!("metadata.{key}"));
        }
        let mut d = doc();
        d.metadata.insert("language".into(), Value::from("en"));
        d.validate(&DocumentLimits::default()).unwrap();
    }

    #[test]
    fn text_and_pages_are_exclusive() {
        let mut d = doc();
        d.pages = Some(vec![Page {
            page_number: 1,
            text: "x".into(),
        }]);
        assert_eq!(field_of(&d), "text");
        d.text = None;
        d.validate(&DocumentLimits::default()).unwrap();
        d.pages = Some(vec![Page {
            page_number: 0,
            text: "x".into(),
        }]);
        assert_eq!(field_of(&d), "pages[0].page_number");
    }

    #[test]
    fn content_hash_ignores_metadata_key_order_but_not_content() {
        let mut a = doc();
        a.metadata.insert("x".into(), Value::from(1));
        a.metadata.insert("y".into(), Value::from(2));
        let mut b = doc();
        b.metadata.insert("y".into(), Value::from(2));
        b.metadata.insert("x".into(), Value::from(1));
        assert_eq!(a.content_hash(), b.content_hash());
        b.text = Some("hello!".into());
        assert_ne!(a.content_hash(), b.content_hash());
    }

    #[test]
    fn unknown_fields_are_rejected_when_parsing() {
        let e = serde_json::from_str::<Document>(r#"{"id":"a","text":"b","colour":"red"}"#)
            .unwrap_err();
        assert!(e.to_string().contains("colour"));
    }
}

/// An RFC 3339 timestamp in one canonical form: UTC, millisecond precision, `Z`
/// (`2024-05-01T10:00:00.000Z`). Canonical strings sort chronologically, so both stores can
/// range-filter them as text. `None` if `ts` is not RFC 3339.
pub fn canonical_timestamp(ts: &str) -> Option<String> {
    let t = time::OffsetDateTime::parse(ts.trim(), &time::format_description::well_known::Rfc3339)
        .ok()?;
    Some(canonical(t))
}

/// An ISO 8601 date or date-time in the canonical form of [`canonical_timestamp`]: RFC 3339,
/// or a date-time without an offset (read as UTC), or a date alone (its midnight, UTC).
/// `None` if `ts` is none of these.
pub fn canonical_iso8601(ts: &str) -> Option<String> {
    use time::format_description::parse_borrowed;
    let ts = ts.trim();
    if let Some(t) = canonical_timestamp(ts) {
        return Some(t);
    }
    let local = [
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]",
        "[year]-[month]-[day]T[hour]:[minute]:[second]",
        "[year]-[month]-[day]T[hour]:[minute]",
    ];
    for f in local {
        let f = parse_borrowed::<1>(f).expect("a valid format description");
        if let Ok(t) = time::PrimitiveDateTime::parse(ts, &f) {
            return Some(canonical(t.assume_utc()));
        }
    }
    let f = parse_borrowed::<1>("[year]-[month]-[day]").expect("a valid format description");
    let day = time::Date::parse(ts, &f).ok()?;
    Some(canonical(day.midnight().assume_utc()))
}

/// The current time, canonical.
pub fn now_timestamp() -> String {
    canonical(time::OffsetDateTime::now_utc())
}

/// The timestamp `ago` before now, in the same form as [`now_timestamp`] (which sorts as
/// text in time order).
pub fn timestamp_before(ago: std::time::Duration) -> String {
    canonical(time::OffsetDateTime::now_utc() - ago)
}

fn canonical(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

#[cfg(test)]
mod canonical_tests {
    use super::canonical_timestamp;

    #[test]
    fn timestamps_become_utc_milliseconds_that_sort_as_text() {
        assert_eq!(
            canonical_timestamp("2024-05-01T12:00:00+02:00").unwrap(),
            "2024-05-01T10:00:00.000Z"
        );
        let a = canonical_timestamp("2024-05-01T10:00:00Z").unwrap();
        let b = canonical_timestamp("2024-05-01T10:00:00.5Z").unwrap();
        assert!(a < b, "{a} < {b}");
        assert_eq!(canonical_timestamp("yesterday"), None);
    }

    #[test]
    fn iso_8601_accepts_a_date_alone_and_a_date_time_without_offset_as_utc() {
        use super::canonical_iso8601;
        assert_eq!(
            canonical_iso8601("2024-05-01").unwrap(),
            "2024-05-01T00:00:00.000Z"
        );
        assert_eq!(
            canonical_iso8601("2024-05-01T12:30:00").unwrap(),
            "2024-05-01T12:30:00.000Z"
        );
        assert_eq!(
            canonical_iso8601("2024-05-01T12:30:00.250").unwrap(),
            "2024-05-01T12:30:00.250Z"
        );
        assert_eq!(
            canonical_iso8601("2024-05-01T12:00:00+02:00").unwrap(),
            "2024-05-01T10:00:00.000Z"
        );
        for bad in ["May", "2024-13-01", "2024-05-01T25:00:00", "2024-05", ""] {
            assert_eq!(canonical_iso8601(bad), None, "{bad}");
        }
    }
}
