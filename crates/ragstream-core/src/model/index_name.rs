//! Validated index names: `[a-z0-9][a-z0-9_-]{0,63}`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use super::ValidationError;

/// An index name that is safe to use as a directory name and in filter expressions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct IndexName(String);

impl IndexName {
    pub fn parse(name: &str) -> Result<Self, ValidationError> {
        let bytes = name.as_bytes();
        let first_ok = bytes
            .first()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        let rest_ok = bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-');
        if first_ok && rest_ok && bytes.len() <= 64 {
            Ok(IndexName(name.to_string()))
        } else {
            Err(ValidationError::new(
                "index",
                format!("{name:?} must match [a-z0-9][a-z0-9_-]{{0,63}}"),
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IndexName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl IndexName {
    /// The rule [`IndexName::parse`] checks, as a regular expression (for schemas).
    pub const PATTERN: &'static str = "^[a-z0-9][a-z0-9_-]{0,63}$";
}

impl schemars::JsonSchema for IndexName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IndexName".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": IndexName::PATTERN,
            "minLength": 1,
            "maxLength": 64,
            "description": "An index name: a lower-case ASCII letter or digit, then up to 63 \
                lower-case letters, digits, `_` or `-`.",
            "examples": ["kb_product-docs"],
        })
    }
}

impl<'de> Deserialize<'de> for IndexName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        IndexName::parse(&s).map_err(|e| serde::de::Error::custom(e.rule))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_names() {
        for name in ["a", "kb_product-docs", "0", &"a".repeat(64)] {
            IndexName::parse(name).unwrap();
        }
    }

    #[test]
    fn rejects_invalid_names() {
        for name in [
            "",
            "_a",
            "-a",
            "A",
            "a b",
            "a/b",
            "ä",
            &"a".repeat(65),
            "../x",
        ] {
            let e = IndexName::parse(name).unwrap_err();
            assert_eq!(e.field, "index");
        }
    }
}
