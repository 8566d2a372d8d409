//! `query_preprocessing` of contract 000: `none` uses the query as given; `normalize` applies
//! Unicode NFKC, lower-cases, drops punctuation and symbols (except between two letters or
//! digits, so `e-mail`, `3.5` and `don't` survive), and collapses whitespace.
//! Contract 000's example maps "How does retrieval work?" to "how does retrieval work".

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[schemars(
    description = "none: the query as given; normalize: NFKC, lower-cased, punctuation dropped \
                   (except inside words and numbers), whitespace collapsed."
)]
pub enum QueryPreprocessing {
    #[default]
    None,
    Normalize,
}

impl QueryPreprocessing {
    pub fn apply(self, query: &str) -> String {
        match self {
            QueryPreprocessing::None => query.to_string(),
            QueryPreprocessing::Normalize => normalize(query),
        }
    }
}

fn normalize(query: &str) -> String {
    let chars: Vec<char> = query.nfkc().flat_map(char::to_lowercase).collect();
    let mut out = String::with_capacity(chars.len());
    for (i, &c) in chars.iter().enumerate() {
        let keep = if c.is_alphanumeric() {
            true
        } else if c.is_whitespace() || c.is_control() {
            false
        } else {
            let before = i > 0 && chars[i - 1].is_alphanumeric();
            let after = chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
            before && after
        };
        if keep {
            out.push(c);
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_matches_the_contract_example() {
        assert_eq!(
            QueryPreprocessing::Normalize.apply("How does retrieval work?"),
            "how does retrieval work"
        );
    }

    #[test]
    fn normalize_rules() {
        let n = |q| QueryPreprocessing::Normalize.apply(q);
        assert_eq!(n("  Ｆｕｌｌ-width\tTEXT!! "), "full-width text");
        assert_eq!(n("don't stop: v3.5 (beta)"), "don't stop v3.5 beta");
        assert_eq!(n("a -- b"), "a b");
        assert_eq!(n("???"), "");
    }

    #[test]
    fn none_keeps_the_query() {
        assert_eq!(QueryPreprocessing::None.apply(" A? "), " A? ");
    }
}
