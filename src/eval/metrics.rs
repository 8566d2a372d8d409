//! IR metrics with pytrec_eval (trec_eval) conventions: runs are ranked by score descending,
//! ties broken by document id descending; nDCG uses linear gain and log2(rank + 1) discount
//! with the ideal ranking taken from all judged documents; recall counts judged-relevant
//! documents (relevance > 0).

use std::collections::HashMap;

/// `query id → document id → relevance`.
pub type Qrels = HashMap<String, HashMap<String, i64>>;
/// `query id → document id → score`.
pub type Run = HashMap<String, HashMap<String, f64>>;

fn ranked(run: &HashMap<String, f64>) -> Vec<(&str, f64)> {
    let mut docs: Vec<(&str, f64)> = run.iter().map(|(d, s)| (d.as_str(), *s)).collect();
    docs.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(a.0)));
    docs
}

/// nDCG@k of one query.
pub fn ndcg_at(run: &HashMap<String, f64>, judged: &HashMap<String, i64>, k: usize) -> f64 {
    let dcg: f64 = ranked(run)
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, (d, _))| {
            let rel = judged.get(*d).copied().unwrap_or(0).max(0) as f64;
            rel / (i as f64 + 2.0).log2()
        })
        .sum();
    let mut ideal: Vec<i64> = judged.values().copied().filter(|r| *r > 0).collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, r)| *r as f64 / (i as f64 + 2.0).log2())
        .sum();
    if idcg > 0.0 {
        dcg / idcg
    } else {
        0.0
    }
}

/// Recall@k of one query.
pub fn recall_at(run: &HashMap<String, f64>, judged: &HashMap<String, i64>, k: usize) -> f64 {
    let relevant = judged.values().filter(|r| **r > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranked(run)
        .iter()
        .take(k)
        .filter(|(d, _)| judged.get(*d).is_some_and(|r| *r > 0))
        .count();
    found as f64 / relevant as f64
}

/// Mean of a per-query metric over every judged query (a query missing from the run
/// scores 0).
pub fn mean(
    qrels: &Qrels,
    run: &Run,
    metric: impl Fn(&HashMap<String, f64>, &HashMap<String, i64>) -> f64,
) -> f64 {
    if qrels.is_empty() {
        return 0.0;
    }
    let empty = HashMap::new();
    let total: f64 = qrels
        .iter()
        .map(|(q, judged)| metric(run.get(q).unwrap_or(&empty), judged))
        .sum();
    total / qrels.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map<V: Copy>(items: &[(&str, V)]) -> HashMap<String, V> {
        items.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn perfect_ranking_scores_one() {
        let judged = map(&[("a", 1), ("b", 1)]);
        let run = map(&[("a", 2.0), ("b", 1.0), ("c", 0.5)]);
        assert!((ndcg_at(&run, &judged, 10) - 1.0).abs() < 1e-12);
        assert_eq!(recall_at(&run, &judged, 100), 1.0);
    }

    #[test]
    fn ndcg_matches_a_hand_computation() {
        // relevant doc at rank 2 of one relevant: 1/log2(3)
        let judged = map(&[("a", 1)]);
        let run = map(&[("x", 2.0), ("a", 1.0)]);
        assert!((ndcg_at(&run, &judged, 10) - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert_eq!(ndcg_at(&run, &judged, 1), 0.0);
    }

    #[test]
    fn ties_are_broken_by_document_id_descending() {
        let judged = map(&[("a", 1)]);
        let run = map(&[("a", 1.0), ("b", 1.0)]);
        // trec_eval puts "b" first on a tie, so "a" is at rank 2
        assert!((ndcg_at(&run, &judged, 10) - 1.0 / 3f64.log2()).abs() < 1e-12);
    }

    #[test]
    fn recall_counts_relevant_documents_in_the_cutoff() {
        let judged = map(&[("a", 1), ("b", 2), ("c", 0)]);
        let run = map(&[("a", 3.0), ("c", 2.0), ("b", 1.0)]);
        assert_eq!(recall_at(&run, &judged, 2), 0.5);
        assert_eq!(recall_at(&run, &judged, 3), 1.0);
    }

    #[test]
    fn missing_queries_count_as_zero() {
        let qrels: Qrels = [
            ("q1".to_string(), map(&[("a", 1)])),
            ("q2".to_string(), map(&[("b", 1)])),
        ]
        .into();
        let run: Run = [("q1".to_string(), map(&[("a", 1.0)]))].into();
        assert_eq!(mean(&qrels, &run, |r, j| recall_at(r, j, 100)), 0.5);
    }
}
