//! Entity names in one comparable form: Unicode NFKC, lower case, every run of characters
//! that are not letters or digits turned into one space. "COVID-19", "covid 19" and
//! " Covid–19 " are all `covid 19`.

use unicode_normalization::UnicodeNormalization;

/// The key an entity name is stored and looked up under.
pub fn key(name: &str) -> String {
    tokens(name).join(" ")
}

/// The normalised words of `text`.
pub fn tokens(text: &str) -> Vec<String> {
    let folded: String = text.nfkc().flat_map(char::to_lowercase).collect();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Edit distance a fuzzy match may have: none below 5 characters (short names are too easily
/// confused: "gene" and "gone"), else 1 (a typo).
pub fn fuzzy_budget(chars: usize) -> usize {
    usize::from(chars >= 5)
}

/// Every string one character shorter than `s` (one deletion), the neighbourhood a
/// symmetric-deletion index stores: two strings within edit distance 1 share a member (or
/// are each other's).
pub fn deletions(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    (0..chars.len())
        .map(|i| {
            chars
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, c)| *c)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_punctuation_and_whitespace_fold_away() {
        assert_eq!(key("COVID-19"), "covid 19");
        assert_eq!(key("  Covid–19 "), "covid 19");
        assert_eq!(key("Entity\tA"), "entity a");
        assert_eq!(key("Ｆｕｌｌwidth"), "fullwidth");
        assert_eq!(key("?!"), "");
    }

    #[test]
    fn deletions_meet_within_one_edit() {
        let a: std::collections::BTreeSet<String> = deletions("insulin").into_iter().collect();
        // A substitution (insulin → insulun) shares a deletion; a far word does not.
        assert!(deletions("insulun").iter().any(|d| a.contains(d)));
        assert!(!deletions("glucose").iter().any(|d| a.contains(d)));
        assert_eq!(fuzzy_budget(4), 0);
        assert_eq!(fuzzy_budget(7), 1);
    }
}
