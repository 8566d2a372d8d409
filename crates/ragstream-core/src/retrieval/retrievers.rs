//! Named retrievers (contract 004, "Retriever contract v1"): one narrow call,
//! `retrieve(query, messages?) → [document]`, with everything else (index, method, weight,
//! filters, `top_k`) fixed at construction in `[retrievers.<name>]`. A composite retriever
//! fuses other named retrievers (weighted min-max or reciprocal rank fusion) and keeps the
//! same contract: scores on one scale, descending, `[]` for no hits, errors as errors.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Filters, SearchMethod};
use crate::index::ChunkRow;
use crate::model::IndexName;

/// `[retrievers.<name>]`: a leaf (`index` set) or a composite (`composite` set).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrieverConfig {
    #[serde(default)]
    pub index: Option<String>,
    #[serde(default)]
    pub method: Option<SearchMethod>,
    /// Semantic weight of hybrid search (default 0.5).
    #[serde(default)]
    pub alpha: Option<f64>,
    #[serde(default = "default_top_k")]
    pub top_k: usize,
    /// An exact-match filter bag, as contract 000's.
    #[serde(default)]
    pub filters: Map<String, Value>,
    /// Names of the retrievers a composite fuses.
    #[serde(default)]
    pub composite: Vec<String>,
    #[serde(default)]
    pub fusion: Fusion,
    /// One weight per composite child (default: equal).
    #[serde(default)]
    pub weights: Vec<f64>,
}

fn default_top_k() -> usize {
    10
}

impl RetrieverConfig {
    /// A leaf retriever over `index` with every other setting at its default, as
    /// `[retrievers.<name>] index = "..."` alone configures it.
    pub fn leaf(index: &str, top_k: usize) -> RetrieverConfig {
        RetrieverConfig {
            index: Some(index.to_string()),
            method: None,
            alpha: None,
            top_k,
            filters: Map::new(),
            composite: Vec::new(),
            fusion: Fusion::default(),
            weights: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// Each child's scores min-max scaled (all equal → 1.0), then a weighted sum: [0, 1].
    #[default]
    MinMax,
    /// Reciprocal rank fusion, Σ weight / (60 + rank).
    Rrf,
}

/// One retrieved document of the contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieved {
    pub id: String,
    pub score: f64,
    pub row: ChunkRow,
}

/// Checks a set of retrievers: leaves name an index, composites name existing retrievers,
/// there are no cycles. Returns `(key, reason)` for the first problem.
pub fn check(
    all: &BTreeMap<String, RetrieverConfig>,
    max_top_k: usize,
) -> Result<(), (String, String)> {
    for (name, r) in all {
        let key = |k: &str| format!("retrievers.{name}.{k}");
        if r.top_k == 0 || r.top_k > max_top_k {
            return Err((key("top_k"), format!("must be between 1 and {max_top_k}")));
        }
        if let Some(a) = r.alpha {
            if !(0.0..=1.0).contains(&a) {
                return Err((key("alpha"), "must be between 0 and 1".into()));
            }
        }
        match (&r.index, r.composite.is_empty()) {
            (Some(i), true) => {
                IndexName::parse(i).map_err(|e| (key("index"), e.rule))?;
                Filters::parse(&r.filters).map_err(|e| (key(&e.field), e.rule))?;
            }
            (None, false) => {
                for child in &r.composite {
                    if !all.contains_key(child) {
                        return Err((
                            key("composite"),
                            format!("names {child:?}, which is not a retriever"),
                        ));
                    }
                }
                if !r.weights.is_empty() && r.weights.len() != r.composite.len() {
                    return Err((
                        key("weights"),
                        "needs one weight per composite child".into(),
                    ));
                }
                if depth(all, name, 0).is_none() {
                    return Err((key("composite"), "forms a cycle".into()));
                }
            }
            _ => {
                return Err((
                    format!("retrievers.{name}"),
                    "needs either index (a leaf) or composite (a list of retrievers)".into(),
                ))
            }
        }
    }
    Ok(())
}

/// The indexes retriever `name` searches, through every composite level (checked
/// configurations have no cycles), sorted and deduplicated.
pub fn indexes_of(all: &BTreeMap<String, RetrieverConfig>, name: &str) -> Vec<IndexName> {
    let mut out = Vec::new();
    let mut stack = vec![name];
    while let Some(n) = stack.pop() {
        let Some(r) = all.get(n) else { continue };
        match &r.index {
            Some(i) => out.extend(IndexName::parse(i).ok()),
            None => stack.extend(r.composite.iter().map(String::as_str)),
        }
    }
    out.sort();
    out.dedup();
    out
}

fn depth(all: &BTreeMap<String, RetrieverConfig>, name: &str, d: usize) -> Option<usize> {
    if d > all.len() {
        return None;
    }
    let r = all.get(name)?;
    r.composite
        .iter()
        .map(|c| depth(all, c, d + 1))
        .try_fold(d, |m, x| x.map(|x| m.max(x)))
}

/// Fuses child results onto one scale; descending, ties by id.
pub fn fuse(children: &[Vec<Retrieved>], weights: &[f64], fusion: Fusion) -> Vec<Retrieved> {
    let mut scores: HashMap<String, f64> = HashMap::new();
    let mut rows: HashMap<String, ChunkRow> = HashMap::new();
    for (child, w) in children.iter().zip(weights) {
        let raw: Vec<f64> = child.iter().map(|d| d.score).collect();
        let scaled = match fusion {
            Fusion::MinMax => super::fusion::min_max(&raw),
            Fusion::Rrf => (0..child.len())
                .map(|rank| 1.0 / (60.0 + rank as f64 + 1.0))
                .collect(),
        };
        for (d, s) in child.iter().zip(scaled) {
            *scores.entry(d.id.clone()).or_default() += w * s;
            rows.entry(d.id.clone()).or_insert_with(|| d.row.clone());
        }
    }
    let mut out: Vec<Retrieved> = scores
        .into_iter()
        .map(|(id, score)| Retrieved {
            row: rows.remove(&id).expect("every id has a row"),
            id,
            score,
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    out
}
