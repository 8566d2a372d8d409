//! A long-query variant of a BEIR dataset, built from the dataset itself: each document a
//! judged query cites becomes a query (its title and text, typically 100–300 words), relevant
//! to the other documents the same queries cite. The corpus is unchanged, so the variant is
//! scored on the index of its source. A query's own document is left out of its results
//! (BEIR's `ignore_identical_ids`): the query id is that document's id.
//!
//! The test split alone gives few such queries (SciFact: a few dozen), too few to tell a gap
//! of 0.01 from none, so `eval` also scores the variant built from every judged split
//! (`long-all`) when no calibration read the other splits' judgments.
//!
//! Passages as queries are what agents send when they ask for "more like this" context;
//! they stress what short claims do not (every keyword term, long-text embeddings).

use std::collections::{BTreeMap, HashMap};

use super::beir::BeirQuery;
use ragstream::calibration::metrics::Qrels;
use ragstream::model::Document;

/// The long queries and their judgments for `corpus` from the judged queries of `splits`:
/// documents cited by a query that cites at least two (else nothing is left to find), in
/// document-id order. A document cited in several splits asks once, for all it is cited with.
pub fn long_queries(corpus: &[Document], splits: &[&Qrels]) -> (Vec<BeirQuery>, Qrels) {
    let by_id: HashMap<&str, &Document> = corpus.iter().map(|d| (d.id.as_str(), d)).collect();
    let mut judged: BTreeMap<String, HashMap<String, i64>> = BTreeMap::new();
    for relevant in splits.iter().flat_map(|qrels| qrels.values()) {
        let cited: Vec<&String> = relevant
            .iter()
            .filter(|(_, r)| **r > 0)
            .map(|(d, _)| d)
            .collect();
        for query in &cited {
            for other in cited.iter().filter(|o| *o != query) {
                let gain = relevant[*other];
                let entry = judged
                    .entry(query.to_string())
                    .or_default()
                    .entry(other.to_string())
                    .or_insert(0);
                *entry = (*entry).max(gain);
            }
        }
    }
    let mut queries = Vec::new();
    let mut long_qrels = Qrels::new();
    for (id, relevant) in judged {
        let Some(doc) = by_id.get(id.as_str()) else {
            continue;
        };
        let text = as_query(doc);
        if text.trim().is_empty() {
            continue;
        }
        queries.push(BeirQuery {
            id: id.clone(),
            text,
        });
        long_qrels.insert(id, relevant);
    }
    (queries, long_qrels)
}

/// A document asked as a query: its title and text, joined.
pub fn as_query(doc: &Document) -> String {
    [doc.title.as_deref(), doc.text.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// `set` without the queries whose ids (documents) are among `others`: a weight measured on
/// the training split's long queries then never saw one of the test split's. The same
/// document is often cited by claims of both splits.
pub fn without(set: (Vec<BeirQuery>, Qrels), others: &[BeirQuery]) -> (Vec<BeirQuery>, Qrels) {
    let taken: std::collections::HashSet<&str> = others.iter().map(|q| q.id.as_str()).collect();
    let (queries, mut qrels) = set;
    let queries: Vec<BeirQuery> = queries
        .into_iter()
        .filter(|q| !taken.contains(q.id.as_str()))
        .collect();
    qrels.retain(|id, _| !taken.contains(id.as_str()));
    (queries, qrels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, text: &str) -> Document {
        Document {
            id: id.into(),
            title: Some(format!("Title {id}")),
            text: Some(text.into()),
            ..Default::default()
        }
    }

    /// One query, `q`, citing `x` and `y`.
    fn citing(x: &str, y: &str) -> Qrels {
        [(
            "q".to_string(),
            [(x.to_string(), 1), (y.to_string(), 1)].into(),
        )]
        .into()
    }

    #[test]
    fn each_cited_document_asks_for_the_others_its_queries_cite() {
        let corpus = vec![doc("a", "alpha"), doc("b", "beta"), doc("c", "gamma")];
        let qrels: Qrels = [
            (
                "q1".to_string(),
                [("a".to_string(), 1), ("b".to_string(), 2)].into(),
            ),
            (
                "q2".to_string(),
                [("b".to_string(), 1), ("c".to_string(), 1)].into(),
            ),
            // One citation: nothing left to find, no query.
            ("q3".to_string(), [("c".to_string(), 1)].into()),
            // Judged not relevant: not a citation.
            (
                "q4".to_string(),
                [("a".to_string(), 0), ("c".to_string(), 1)].into(),
            ),
        ]
        .into();
        let (queries, judged) = long_queries(&corpus, &[&qrels]);
        let ids: Vec<&str> = queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(queries[0].text, "Title a alpha");
        assert_eq!(judged["a"], [("b".to_string(), 2)].into());
        assert_eq!(
            judged["b"],
            [("a".to_string(), 1), ("c".to_string(), 1)].into()
        );
        assert_eq!(judged["c"], [("b".to_string(), 1)].into());
    }

    /// Splits are read side by side, even where they reuse a query id: a document cited in
    /// both asks once, for everything it is cited with in either.
    #[test]
    fn a_document_cited_in_two_splits_asks_for_what_both_cite_it_with() {
        let corpus = vec![doc("a", "alpha"), doc("b", "beta"), doc("c", "gamma")];
        let (test, train) = (citing("a", "b"), citing("a", "c"));
        let (queries, judged) = long_queries(&corpus, &[&test, &train]);
        let ids: Vec<&str> = queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(
            judged["a"],
            [("b".to_string(), 1), ("c".to_string(), 1)].into()
        );
        assert_eq!(judged["c"], [("a".to_string(), 1)].into());
        assert_eq!(long_queries(&corpus, &[&test]).0.len(), 2);
    }

    #[test]
    fn training_long_queries_leave_out_the_documents_the_test_split_asks_with() {
        let corpus = vec![doc("a", "alpha"), doc("b", "beta"), doc("c", "gamma")];
        let (test, _) = long_queries(&corpus, &[&citing("b", "c")]);
        let (queries, judged) = without(long_queries(&corpus, &[&citing("a", "b")]), &test);
        let ids: Vec<&str> = queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["a"], "b is a test query");
        assert_eq!(judged.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(
            judged["a"],
            [("b".to_string(), 1)].into(),
            "b is still judged"
        );
    }
}
