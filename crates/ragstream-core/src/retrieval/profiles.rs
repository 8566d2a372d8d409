//! Retrieval profiles (contract 002): `exact`, `balanced`, `semantic` fix the semantic weight
//! of hybrid fusion; `auto` picks one from a light analysis of the query.
//!
//! Weights sit inside the contract's ranges: exact 0.2 (lexical 0.8 of "≈ 0.75–0.9"),
//! balanced 0.5 ("≈ 0.4–0.6"), semantic 0.8 (lexical 0.2 of "≈ 0.1–0.3").
//!
//! `auto` detects the contract's signals: lexical ones (quoted phrases, symbols, file paths,
//! camelCase / snake_case, error-like strings, numbers and versions, short queries) and
//! semantic ones (question form, long natural language, conversational phrasing, no rare
//! tokens). As the contract words it, signals *increase* a weight: starting from balanced
//! (0.5), each lexical signal lowers the semantic weight by 0.15 (one clear lexical signal
//! is enough for `exact`) and each semantic signal raises it by 0.1; mixed signals fall back to balanced. The contract's safeguard against
//! over-semantic drift, "lexical anchoring in auto mode", keeps auto within [0.2, 0.65]: auto
//! may go as lexical as `exact` but always keeps a lexical anchor of at least 0.35. The
//! effective profile reported is the one whose range the weight falls in.
//!
//! A passage (a query longer than a sentence, [`PASSAGE_MIN_WORDS`] words or more) runs at
//! the index's passage weight whatever the centre and its other signals: balanced unless
//! calibration measured another. A passage gives the keyword branch many terms, so the
//! weight that suits passages is not the one that suits sentences, and calibration measures
//! the two apart (BENCHMARKS.md, "A passage weight of its own").

use std::sync::LazyLock;

use regex::Regex;

pub use crate::model::Profile;

impl Profile {
    pub fn parse(s: &str) -> Option<Profile> {
        match s {
            "auto" => Some(Profile::Auto),
            "exact" => Some(Profile::Exact),
            "balanced" => Some(Profile::Balanced),
            "semantic" => Some(Profile::Semantic),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Auto => "auto",
            Profile::Exact => "exact",
            Profile::Balanced => "balanced",
            Profile::Semantic => "semantic",
        }
    }

    /// The semantic weight of a fixed profile (`auto` resolves to one of them first).
    pub fn semantic_weight(self) -> f64 {
        match self {
            Profile::Exact => 0.2,
            Profile::Balanced | Profile::Auto => 0.5,
            Profile::Semantic => 0.8,
        }
    }
}

/// Signals that favour lexical matching.
pub const LEXICAL_SIGNALS: &[&str] = &[
    "quoted_phrase",
    "symbol",
    "file_path",
    "camel_case",
    "snake_case",
    "error_pattern",
    "number",
    "version_string",
    "short_query",
];

/// Signals that favour semantic matching (the order `analyze` reports them in).
pub const SEMANTIC_SIGNALS: &[&str] = &[
    "question_form",
    "long_query",
    "conversational",
    "no_rare_tokens",
];

/// Reported when a query is a passage: `auto` then runs it at the passage weight (module
/// comment).
pub const PASSAGE_QUERY: &str = "passage_query";

/// Words from which a query is a passage rather than a sentence (the synthetic queries of
/// `eval::synthetic` cut their sentences shorter).
pub const PASSAGE_MIN_WORDS: usize = 41;

static QUOTED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#""[^"]+"|'[^']{2,}'"#).unwrap());
static FILE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^|\s)(\.{0,2}/)?[\w.-]+/[\w./-]+|\b[\w-]+\.(rs|py|js|ts|go|java|c|h|cpp|toml|ya?ml|json|md|txt|log|sh|cfg|conf|ini)\b").unwrap()
});
static CAMEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[a-z]+[A-Z][a-zA-Z0-9]*\b|\b[A-Z][a-z]+[A-Z][a-zA-Z0-9]*\b").unwrap()
});
static SNAKE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b").unwrap());
static ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b\w*(error|exception|panic|traceback|errno|segfault|fatal)\w*\b|\b0x[0-9a-f]+\b|\b[A-Z]{2,}\d{2,}\b|\bE\d{3,}\b").unwrap()
});
static VERSION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bv?\d+\.\d+(\.\d+)*\b").unwrap());
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d+\b").unwrap());
static QUESTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(how|why|when|what|who|which|where|can|could|should|is|are|does|do|explain|describe)\b|\?\s*$").unwrap()
});
static CONVERSATIONAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(i|me|my|we|our|you|your|please|tell me|help me)\b").unwrap()
});

/// The signals found in `query`, lexical ones first, each once, in the order listed above,
/// then [`PASSAGE_QUERY`] for a passage.
pub fn analyze(query: &str) -> Vec<&'static str> {
    let words = query.split_whitespace().count();
    // A sentence's final full stop or question mark is not a symbol.
    let body = query.trim_end().trim_end_matches(['.', '?', '!']);
    let symbol = [
        "/", "_", "::", "->", "\\", "#", "=", "(", ")", "{", "}", "<", ">",
    ]
    .iter()
    .any(|s| body.contains(s))
        || body.contains('.') && body.split('.').all(|p| !p.is_empty() && !p.ends_with(' '));
    let words_are_plain = words > 3;
    let version = VERSION.is_match(body);
    let lexical_found = [
        (QUOTED.is_match(query), "quoted_phrase"),
        (symbol, "symbol"),
        (FILE_PATH.is_match(body), "file_path"),
        (CAMEL.is_match(query), "camel_case"),
        (SNAKE.is_match(query), "snake_case"),
        (ERROR.is_match(query), "error_pattern"),
        (NUMBER.is_match(query) && !version, "number"),
        (version, "version_string"),
        (!words_are_plain, "short_query"),
    ];
    let lexical = lexical_found.iter().any(|(on, _)| *on);
    let semantic_found = [
        QUESTION.is_match(query),
        words >= 8,
        CONVERSATIONAL.is_match(query),
        !lexical,
    ]
    .into_iter()
    .zip(SEMANTIC_SIGNALS.iter().copied());
    lexical_found
        .into_iter()
        .chain(semantic_found)
        .chain([(words >= PASSAGE_MIN_WORDS, PASSAGE_QUERY)])
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
}

/// Whether `query` is a passage: [`PASSAGE_MIN_WORDS`] words or more.
pub fn is_passage(query: &str) -> bool {
    query.split_whitespace().count() >= PASSAGE_MIN_WORDS
}

/// Where `auto` starts, and where it puts a passage, on one index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoStart {
    /// The weight a sentence's signals move from ([`DEFAULT_AUTO_CENTER`] unless the index
    /// was calibrated or its model has a measured centre, `IndexInfo::query_defaults`).
    pub center: f64,
    /// The weight of a passage ([`DEFAULT_PASSAGE_WEIGHT`] unless calibrated).
    pub passage_weight: f64,
}

impl AutoStart {
    /// Balanced for both: an index never calibrated.
    pub const DEFAULT: AutoStart = AutoStart {
        center: DEFAULT_AUTO_CENTER,
        passage_weight: DEFAULT_PASSAGE_WEIGHT,
    };

    /// Where `auto` starts on an index with these defaults (`IndexInfo::query_defaults`
    /// settles which centre that is).
    pub fn of(index: &crate::index::IndexDefaults) -> AutoStart {
        AutoStart {
            center: index.auto_semantic_center.unwrap_or(DEFAULT_AUTO_CENTER),
            passage_weight: index.auto_passage_weight.unwrap_or(DEFAULT_PASSAGE_WEIGHT),
        }
    }
}

/// The semantic weight `auto` gives a query with these signals on an index where it starts
/// from `start` (see the module comment).
pub fn auto_weight(signals: &[&str], start: AutoStart) -> f64 {
    let center = start.center;
    if signals.contains(&PASSAGE_QUERY) {
        return start.passage_weight;
    }
    let lexical = signals
        .iter()
        .filter(|s| LEXICAL_SIGNALS.contains(s))
        .count();
    let semantic = signals.len() - lexical;
    if lexical > 0 && semantic > 0 {
        return center;
    }
    let w = center + 0.1 * semantic as f64 - 0.15 * lexical as f64;
    // Rounded to two decimals so that the weight reads as the steps that made it.
    ((w * 100.0).round() / 100.0).clamp(AUTO_MIN_WEIGHT, auto_max_weight(center))
}

/// Where `auto` starts before the query's signals move it: balanced.
pub const DEFAULT_AUTO_CENTER: f64 = 0.5;

/// Where `auto` puts a passage on an index not calibrated: balanced.
pub const DEFAULT_PASSAGE_WEIGHT: f64 = 0.5;

/// Auto's range: as lexical as `exact`, and at least 0.35 lexical (lexical anchoring) — or,
/// on an index calibrated to a more semantic centre, as semantic as that centre, never past
/// the `semantic` profile (a lexical anchor of 0.2 always stays).
pub const AUTO_MIN_WEIGHT: f64 = 0.2;
pub const AUTO_MAX_WEIGHT: f64 = 0.65;

fn auto_max_weight(center: f64) -> f64 {
    center.clamp(AUTO_MAX_WEIGHT, Profile::Semantic.semantic_weight())
}

/// The profile whose range a semantic weight falls in.
pub fn profile_of_weight(w: f64) -> Profile {
    if w < 0.4 {
        Profile::Exact
    } else if w > 0.6 {
        Profile::Semantic
    } else {
        Profile::Balanced
    }
}

/// What `auto` resolves to for these signals.
pub fn auto_profile(signals: &[&str]) -> Profile {
    profile_of_weight(auto_weight(signals, AutoStart::DEFAULT))
}

/// The profile and weight a query runs with, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// Never `Auto`.
    pub profile: Profile,
    pub semantic_weight: f64,
    /// Empty unless `auto` ran.
    pub signals: Vec<&'static str>,
}

/// Precedence (contract 002): the request's `semantic_weight`, then its profile, then the
/// index's default weight, then its default profile, then `auto` (from the index's calibrated
/// centre, if any). A weight given without a profile reports the profile it came with (or
/// `balanced`).
pub fn resolve(
    query: &str,
    profile: Option<Profile>,
    weight: Option<f64>,
    index: &crate::index::IndexDefaults,
) -> Resolved {
    let (index_profile, index_weight) = (
        index.default_retrieval_profile,
        index.default_semantic_weight,
    );
    let start = AutoStart::of(index);
    let requested = profile.or(if weight.is_some() {
        None
    } else {
        index_profile
    });
    let given_weight = weight.or(if profile.is_none() {
        index_weight
    } else {
        None
    });
    let (chosen, signals, auto) = match requested.unwrap_or(Profile::Auto) {
        Profile::Auto if given_weight.is_some() => (Profile::Balanced, Vec::new(), None),
        Profile::Auto => {
            let signals = analyze(query);
            let w = auto_weight(&signals, start);
            (profile_of_weight(w), signals, Some(w))
        }
        p => (p, Vec::new(), None),
    };
    let semantic_weight = given_weight
        .or(auto)
        .unwrap_or_else(|| chosen.semantic_weight());
    let chosen = match (given_weight, requested) {
        // A bare weight reports the profile whose range it falls in.
        (Some(w), None) | (Some(w), Some(Profile::Auto)) => profile_of_weight(w),
        _ => chosen,
    };
    Resolved {
        profile: chosen,
        semantic_weight,
        signals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_like_queries_are_exact_and_questions_are_semantic() {
        for q in [
            "\"connection reset by peer\"",
            "src/index/writer.rs",
            "parseRequest",
            "max_top_k",
            "NullPointerException at line 42",
            "upgrade to v1.4.2",
            "E0308",
        ] {
            assert_eq!(
                auto_profile(&analyze(q)),
                Profile::Exact,
                "{q}: {:?}",
                analyze(q)
            );
        }
        for q in [
            "how does the immune system respond to a new virus infection over time",
            "why do tides follow the moon and the sun",
            "what is the relationship between sleep quality and long term memory",
        ] {
            assert_eq!(
                auto_profile(&analyze(q)),
                Profile::Semantic,
                "{q}: {:?}",
                analyze(q)
            );
        }
        assert_eq!(
            auto_profile(&analyze("why does parseRequest return E0308 in writer.rs")),
            Profile::Balanced,
            "mixed signals"
        );
    }

    #[test]
    fn a_final_full_stop_or_question_mark_is_not_a_symbol() {
        assert!(!analyze("what causes the seasons on earth today?").contains(&"symbol"));
        assert!(!analyze("explain photosynthesis in plants to me please.").contains(&"symbol"));
        assert!(analyze("config.toml").contains(&"symbol"));
    }

    fn index(profile: Option<Profile>, weight: Option<f64>) -> crate::index::IndexDefaults {
        crate::index::IndexDefaults {
            default_retrieval_profile: profile,
            default_semantic_weight: weight,
            ..Default::default()
        }
    }

    #[test]
    fn precedence_request_weight_then_profile_then_index_defaults_then_auto() {
        let q = "how do tides work in the open ocean at night";
        let r = resolve(q, Some(Profile::Exact), Some(0.9), &index(None, None));
        assert_eq!((r.profile, r.semantic_weight), (Profile::Exact, 0.9));
        let r = resolve(
            q,
            Some(Profile::Exact),
            None,
            &index(Some(Profile::Semantic), Some(0.7)),
        );
        assert_eq!(
            (r.profile, r.semantic_weight),
            (Profile::Exact, 0.2),
            "request beats index"
        );
        let r = resolve(q, None, None, &index(Some(Profile::Exact), None));
        assert_eq!(
            (r.profile, r.semantic_weight),
            (Profile::Exact, 0.2),
            "index default profile"
        );
        let r = resolve(q, None, None, &index(Some(Profile::Exact), Some(0.6)));
        assert_eq!(
            r.semantic_weight, 0.6,
            "index default weight beats its profile's weight"
        );
        let r = resolve(q, None, None, &index(None, None));
        assert_eq!(
            (r.profile, r.semantic_weight),
            (Profile::Semantic, 0.65),
            "anchored"
        );
        assert!(!r.signals.is_empty(), "auto reports its signals");
        let r = resolve("src/index/writer.rs", None, None, &index(None, None));
        assert_eq!(r.profile, Profile::Exact);
        assert!(r.semantic_weight <= 0.3, "{}", r.semantic_weight);
        let r = resolve(q, Some(Profile::Balanced), None, &index(None, None));
        assert!(r.signals.is_empty(), "no analysis for a fixed profile");
    }
}

#[cfg(test)]
mod calibrated_tests {
    use super::*;

    /// `auto` from `center`, passages at balanced.
    fn from(center: f64) -> AutoStart {
        AutoStart {
            center,
            passage_weight: DEFAULT_PASSAGE_WEIGHT,
        }
    }

    #[test]
    fn a_calibrated_centre_moves_auto_but_keeps_the_lexical_anchor_and_the_signals() {
        let statement = "vitamin d deficiency raises the risk of hip fracture in older adults";
        let plain = analyze(statement);
        assert_eq!(
            auto_weight(&plain, from(DEFAULT_AUTO_CENTER)),
            0.65,
            "{plain:?}"
        );
        assert_eq!(
            auto_weight(&plain, from(0.8)),
            0.8,
            "as semantic as the centre, no further"
        );
        assert_eq!(auto_weight(&plain, from(0.7)), 0.7);
        let code = analyze("src/index/writer.rs");
        assert!(
            auto_weight(&code, from(0.8)) < auto_weight(&plain, from(0.8)),
            "signals still move it"
        );
        assert!(auto_weight(&code, from(0.8)) >= AUTO_MIN_WEIGHT);
        let mixed = analyze("why does parseRequest return E0308 in writer.rs");
        assert_eq!(
            auto_weight(&mixed, from(0.7)),
            0.7,
            "mixed signals stay at the centre"
        );
        let calibrated = crate::index::IndexDefaults {
            auto_semantic_center: Some(0.8),
            ..Default::default()
        };
        assert_eq!(
            resolve(statement, None, None, &calibrated).semantic_weight,
            0.8
        );
        assert_eq!(
            resolve(statement, Some(Profile::Balanced), None, &calibrated).semantic_weight,
            0.5,
            "a fixed profile ignores the centre"
        );
    }

    #[test]
    fn a_passage_runs_at_the_passage_weight_whatever_the_centre() {
        let sentence = "glaciers retreat quickly when summer temperatures rise above the mean";
        let words: Vec<&str> = sentence.split_whitespace().collect();
        let passage = |n: usize| -> String {
            words
                .iter()
                .cycle()
                .take(n)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let longest_sentence = analyze(&passage(PASSAGE_MIN_WORDS - 1));
        assert!(!longest_sentence.contains(&PASSAGE_QUERY));
        assert!(!is_passage(&passage(PASSAGE_MIN_WORDS - 1)));
        assert_eq!(auto_weight(&longest_sentence, from(0.8)), 0.8);
        let shortest_passage = analyze(&passage(PASSAGE_MIN_WORDS));
        assert!(
            shortest_passage.contains(&PASSAGE_QUERY),
            "{shortest_passage:?}"
        );
        assert!(is_passage(&passage(PASSAGE_MIN_WORDS)));
        let with_number = analyze(&format!("{} in 1998", passage(300)));
        for signals in [&shortest_passage, &with_number] {
            for center in [0.2, 0.5, 0.8] {
                assert_eq!(
                    auto_weight(signals, from(center)),
                    0.5,
                    "{signals:?} at {center}"
                );
                let calibrated = AutoStart {
                    center,
                    passage_weight: 0.3,
                };
                assert_eq!(
                    auto_weight(signals, calibrated),
                    0.3,
                    "{signals:?} at {center}"
                );
            }
        }
        assert_eq!(
            profile_of_weight(auto_weight(&with_number, from(0.8))),
            Profile::Balanced
        );
        let calibrated = crate::index::IndexDefaults {
            auto_semantic_center: Some(0.8),
            auto_passage_weight: Some(0.2),
            ..Default::default()
        };
        let r = resolve(&passage(120), None, None, &calibrated);
        assert_eq!((r.profile, r.semantic_weight), (Profile::Exact, 0.2));
        assert_eq!(
            resolve(sentence, None, None, &calibrated).semantic_weight,
            0.8,
            "a sentence starts from the centre"
        );
    }
}
