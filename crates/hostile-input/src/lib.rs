//! Hostile inputs, reproducible from a seed: JSON built from the field names the wire
//! formats use, with values that break their rules (wrong types, control characters,
//! numbers out of range, long strings, deep nesting), valid bodies with one part broken,
//! and raw bytes. The HTTP fuzz test and `ragstream bench fuzz` share them.

use serde_json::{json, Map, Value};

/// Field names of the five contracts, document events and ingestion bodies: a generated
/// object uses them, so it reaches past "unknown field" into each field's own rules.
pub const FIELDS: &[&str] = &[
    "retrieval",
    "index",
    "query",
    "search_method",
    "top_k",
    "filters",
    "index_version",
    "semantic_weight",
    "retrieval_profile",
    "debug",
    "hybrid",
    "alpha",
    "min_sim",
    "visibility",
    "messages",
    "documents",
    "deletes",
    "document",
    "document_id",
    "id",
    "text",
    "title",
    "pages",
    "metadata",
    "tags",
    "project_id",
    "path_prefix",
    "updated_after",
    "schema_version",
    "op",
    "chunk_ids",
    "ids",
    "default_retrieval_profile",
    "collection_id",
    "kg",
    "content",
    "role",
];

/// Strings that break rules: empty, blank, control characters, unicode edge cases,
/// injection-shaped text, names that are not index names, dates that are not dates.
const STRINGS: &[&str] = &[
    "",
    " ",
    "\u{0}",
    "a\u{0}b",
    "\n\r\t",
    "\u{202e}gnp.exe",
    "\u{fffd}\u{feff}",
    "🦀🦀🦀",
    "' OR 1=1 --",
    "\" OR \"\"=\"",
    "id = 'x' OR true",
    "../../etc/passwd",
    "%00",
    "kb",
    "KB",
    "kb/../other",
    "*",
    "-1",
    "1e309",
    "NaN",
    "2024-13-45",
    "2024-05-01",
    "2024-05-01T00:00:00",
    "not-a-date",
    "hybrid",
    "semantic",
    "keyword",
    "upsert",
    "delete",
    "all",
    "deleted",
];

pub struct Hostile {
    rng: fastrand::Rng,
}

impl Hostile {
    pub fn new(seed: u64) -> Self {
        Hostile {
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// One request body: mostly JSON (generated, or a valid body with one part broken),
    /// sometimes raw bytes or pathological nesting.
    pub fn body(&mut self, valid: &Value) -> Vec<u8> {
        match self.rng.u8(0..20) {
            0 => (0..self.rng.usize(0..64))
                .map(|_| self.rng.u8(..))
                .collect(),
            1 => {
                let depth = self.rng.usize(100..3000);
                let mut s = "[".repeat(depth);
                s.push_str(&"]".repeat(depth));
                s.into_bytes()
            }
            2 => {
                // Truncated valid JSON.
                let mut b = serde_json::to_vec(valid).expect("json");
                let keep = self.rng.usize(0..b.len().max(1));
                b.truncate(keep);
                b
            }
            3..=10 => serde_json::to_vec(&self.broken(valid)).expect("json"),
            _ => serde_json::to_vec(&self.value(3)).expect("json"),
        }
    }

    /// `valid` with one value somewhere in it replaced by a hostile one.
    pub fn broken(&mut self, valid: &Value) -> Value {
        let mut v = valid.clone();
        self.break_one(&mut v);
        v
    }

    /// Walks down a random path and replaces the value where it stops.
    fn break_one(&mut self, v: &mut Value) {
        let descend = self.rng.bool();
        match v {
            Value::Object(m) if descend && !m.is_empty() => {
                let i = self.rng.usize(0..m.len());
                if let Some((_, child)) = m.iter_mut().nth(i) {
                    return self.break_one(child);
                }
            }
            Value::Array(a) if descend && !a.is_empty() => {
                let i = self.rng.usize(0..a.len());
                return self.break_one(&mut a[i]);
            }
            _ => {}
        }
        *v = self.value(2);
    }

    /// A JSON value of at most `depth` levels.
    pub fn value(&mut self, depth: usize) -> Value {
        let kinds = if depth == 0 { 6 } else { 8 };
        match self.rng.u8(0..kinds) {
            0 => Value::Null,
            1 => json!(self.rng.bool()),
            2 => self.number(),
            3 | 4 => json!(self.string()),
            5 => json!(self.rng.i64(..)),
            6 => Value::Array(
                (0..self.rng.usize(0..4))
                    .map(|_| self.value(depth - 1))
                    .collect(),
            ),
            _ => {
                let mut m = Map::new();
                for _ in 0..self.rng.usize(0..5) {
                    let key = if self.rng.u8(0..8) == 0 {
                        self.string()
                    } else {
                        FIELDS[self.rng.usize(0..FIELDS.len())].to_string()
                    };
                    m.insert(key, self.value(depth - 1));
                }
                Value::Object(m)
            }
        }
    }

    fn number(&mut self) -> Value {
        match self.rng.u8(0..6) {
            0 => json!(0),
            1 => json!(-1),
            2 => json!(u64::MAX),
            3 => json!(i64::MIN),
            4 => json!(self.rng.f64() * 2.0 - 0.5),
            _ => json!(1e300),
        }
    }

    /// A hostile string: from the list, random unicode, or long.
    pub fn string(&mut self) -> String {
        match self.rng.u8(0..8) {
            0 => "x".repeat(self.rng.usize(500..20_000)),
            1 => (0..self.rng.usize(1..40))
                .map(|_| self.rng.char(..))
                .collect(),
            _ => STRINGS[self.rng.usize(0..STRINGS.len())].to_string(),
        }
    }

    /// A path segment (index, retriever or document name), percent-encoded for a URL.
    pub fn path_segment(&mut self) -> String {
        let raw = match self.rng.u8(0..4) {
            0 => "kb".to_string(),
            1 => "x".repeat(self.rng.usize(65..700)),
            _ => self.string().chars().take(200).collect(),
        };
        raw.bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs_and_broken_bodies_differ_from_the_valid_one() {
        let valid = json!({"retrieval": {"index": "kb", "query": "x", "top_k": 3}});
        let (mut a, mut b) = (Hostile::new(7), Hostile::new(7));
        let first: Vec<Vec<u8>> = (0..50).map(|_| a.body(&valid)).collect();
        let second: Vec<Vec<u8>> = (0..50).map(|_| b.body(&valid)).collect();
        assert_eq!(first, second);
        let mut h = Hostile::new(1);
        let changed = (0..50).filter(|_| h.broken(&valid) != valid).count();
        assert!(changed > 40, "{changed}");
        let segment = Hostile::new(3).path_segment();
        assert!(segment.bytes().all(|b| b.is_ascii_graphic()), "{segment}");
    }
}
