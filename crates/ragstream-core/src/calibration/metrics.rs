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

/// Two methods scored on the same queries: the mean of their per-query differences, and its
/// standard error. A mean within a standard error or two of zero is as likely the queries'
/// spread as a real difference.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PairedDifference {
    pub mean: f64,
    /// 0 with fewer than two queries: nothing to measure the spread with.
    pub standard_error: f64,
}

/// `a − b`, query by query (the first `min(len)` queries of each).
pub fn paired_difference(a: &[f64], b: &[f64]) -> PairedDifference {
    let differences: Vec<f64> = a.iter().zip(b).map(|(a, b)| a - b).collect();
    let n = differences.len();
    let mean = differences.iter().sum::<f64>() / n.max(1) as f64;
    let standard_error = if n < 2 {
        0.0
    } else {
        let variance = differences.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (variance / n as f64).sqrt()
    };
    PairedDifference {
        mean,
        standard_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_difference_has_the_spread_of_the_differences_not_of_the_scores() {
        // Scores that spread widely but differ by the same amount each query: no doubt.
        let same_gap = paired_difference(&[0.9, 0.5, 0.1], &[0.8, 0.4, 0.0]);
        assert!((same_gap.mean - 0.1).abs() < 1e-12);
        assert!(same_gap.standard_error < 1e-12);
        // Differences of +0.2 and 0: mean 0.1, sample sd √0.02, se √0.02 / √2 = 0.1.
        let spread = paired_difference(&[0.7, 0.5], &[0.5, 0.5]);
        assert!((spread.mean - 0.1).abs() < 1e-12);
        assert!((spread.standard_error - 0.1).abs() < 1e-12);
        // One query measures no spread; none measures nothing.
        assert_eq!(paired_difference(&[0.3], &[0.5]).standard_error, 0.0);
        assert_eq!(paired_difference(&[], &[]).mean, 0.0);
    }

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
