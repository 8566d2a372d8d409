//! Judged queries an index makes from its own chunks, so that `auto` can be calibrated
//! without anyone's judgments.
//!
//! A sample of documents with at least two chunks is drawn (the documents whose ids hash
//! lowest: the same sample every time, spread over the whole index). From one chunk of
//! each, three queries are cut: a few of a sentence's longest words (keyword-like), the
//! sentence itself (question-like) and the chunk's inner text (passage-like). Each query's
//! relevant document is the one it was cut from, but the chunk it was cut from is left out
//! of its results: the other chunks of the document must be found. A verbatim copy of the
//! chunk would be found by every method; its siblings share its topic, its title and some
//! of its words, which is what real queries share with what they look for.

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use sha2::{Digest, Sha256};

use super::metrics::Qrels;
use super::BeirQuery;
use crate::engine::{Engine, EngineError};
use crate::index::ChunkRow;
use crate::model::IndexName;
use crate::retrieval::profiles::PASSAGE_MIN_WORDS;

/// Documents drawn per calibration: three queries each.
pub const SAMPLED_DOCUMENTS: usize = 100;
/// Words of a chunk's edges left out of its passage query: chunks overlap their neighbours,
/// and the overlap would hand the query a verbatim copy of the sibling it must find.
const EDGE_WORDS: usize = 40;

/// Synthetic queries with their judgments and, per query, the chunk left out of its
/// results.
#[derive(Debug, Default)]
pub struct SyntheticQueries {
    pub queries: Vec<BeirQuery>,
    pub qrels: Qrels,
    pub left_out: HashMap<String, String>,
}

/// Draws the sample from `name`'s newest version and cuts its queries.
pub async fn from_index(
    engine: &Engine,
    name: &IndexName,
) -> Result<SyntheticQueries, EngineError> {
    let index = engine.index(name).await?;
    let ds = index.lance().latest();
    // Bottom-k by hash: a bounded heap of the lowest hashes seen, each document once.
    let mut lowest: BinaryHeap<([u8; 32], String)> = BinaryHeap::new();
    let mut held: HashSet<String> = HashSet::new();
    let pool = SAMPLED_DOCUMENTS * 4;
    index
        .lance()
        .each_document_id(&ds, |id| {
            if held.contains(id) {
                return;
            }
            let hash: [u8; 32] = Sha256::digest(id.as_bytes()).into();
            if lowest.len() < pool {
                held.insert(id.to_string());
                lowest.push((hash, id.to_string()));
            } else if lowest.peek().is_some_and(|(top, _)| hash < *top) {
                if let Some((_, out)) = lowest.pop() {
                    held.remove(&out);
                }
                held.insert(id.to_string());
                lowest.push((hash, id.to_string()));
            }
        })
        .await?;
    let mut sampled: Vec<([u8; 32], String)> = lowest.into_vec();
    sampled.sort();
    let ids: Vec<String> = sampled.into_iter().map(|(_, id)| id).collect();
    let documents = index.lance().live_documents(&ds, &ids).await?;
    let ordered: Vec<&Vec<ChunkRow>> = ids.iter().filter_map(|id| documents.get(id)).collect();
    Ok(cut_queries(&ordered, SAMPLED_DOCUMENTS))
}

/// The queries of up to `limit` of `documents` (each its chunks in order); documents with
/// one chunk, or with nothing to cut, are passed over.
pub fn cut_queries(documents: &[&Vec<ChunkRow>], limit: usize) -> SyntheticQueries {
    let mut out = SyntheticQueries::default();
    let mut used = 0;
    for chunks in documents {
        if used == limit {
            break;
        }
        if chunks.len() < 2 {
            continue;
        }
        let source = &chunks[chunks.len() / 2];
        let siblings: Vec<&str> = chunks
            .iter()
            .filter(|c| c.chunk_id != source.chunk_id)
            .map(|c| c.text.as_str())
            .collect();
        let Some(sentence) = sentence_of(&source.text, &siblings) else {
            continue;
        };
        used += 1;
        let mut forms: BTreeMap<&str, String> = BTreeMap::new();
        forms.insert("keyword", longest_words(&sentence, 4));
        forms.insert("question", sentence);
        let words: Vec<&str> = source.text.split_whitespace().collect();
        if words.len() >= 2 * EDGE_WORDS + 30 {
            forms.insert(
                "passage",
                words[EDGE_WORDS..words.len() - EDGE_WORDS].join(" "),
            );
        }
        for (form, text) in forms {
            let id = format!("{}#{form}", source.chunk_id);
            out.qrels
                .insert(id.clone(), HashMap::from([(source.document_id.clone(), 1)]));
            out.left_out.insert(id.clone(), source.chunk_id.clone());
            out.queries.push(BeirQuery { id, text });
        }
    }
    out
}

/// The longest sentence of `text`, from 8 words to just short of a passage, that no sibling
/// chunk holds (the overlap between chunks repeats text).
fn sentence_of(text: &str, siblings: &[&str]) -> Option<String> {
    text.split_inclusive(['.', '?', '!'])
        .map(str::trim)
        .filter(|s| (8..PASSAGE_MIN_WORDS).contains(&s.split_whitespace().count()))
        .filter(|s| !siblings.iter().any(|other| other.contains(s)))
        .max_by_key(|s| s.len())
        .map(str::to_string)
}

/// The `n` longest distinct words of `sentence` (letters and digits only), in sentence
/// order: a keyword query's few specific terms.
fn longest_words(sentence: &str, n: usize) -> String {
    let words: Vec<String> = sentence
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
        .filter(|w| !w.is_empty())
        .collect();
    let mut by_length: Vec<(usize, usize)> = words
        .iter()
        .enumerate()
        .map(|(i, w)| (w.chars().count(), i))
        .collect();
    by_length.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut seen = HashSet::new();
    let mut keep: Vec<usize> = by_length
        .into_iter()
        .filter(|(_, i)| seen.insert(words[*i].to_lowercase()))
        .take(n)
        .map(|(_, i)| i)
        .collect();
    keep.sort_unstable();
    keep.iter()
        .map(|i| words[*i].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(doc: &str, i: u32, text: &str) -> ChunkRow {
        ChunkRow {
            chunk_id: format!("{doc}:{i}"),
            document_id: doc.into(),
            chunk_index: i,
            text: text.into(),
            ..Default::default()
        }
    }

    #[test]
    fn each_document_gives_a_keyword_a_question_and_a_passage_query_for_its_siblings() {
        // Sentences too short to be a question query: 24 of 5 words each side.
        let long: String = (0..24)
            .map(|i| format!("Filler words number {i} appear. "))
            .collect();
        let middle = format!(
            "{long} Glaciers retreat quickly when summer temperatures rise above the long term mean. {long}"
        );
        let doc = vec![
            chunk("d", 0, "Opening words about ice."),
            chunk("d", 1, &middle),
            chunk("d", 2, "Closing words about ice."),
        ];
        let single = vec![chunk(
            "s",
            0,
            "Only one chunk here, which has nothing to find.",
        )];
        let q = cut_queries(&[&single, &doc], 10);
        let texts: HashMap<&str, &str> = q
            .queries
            .iter()
            .map(|q| (q.id.as_str(), q.text.as_str()))
            .collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert_eq!(
            texts["d:1#question"],
            "Glaciers retreat quickly when summer temperatures rise above the long term mean."
        );
        assert_eq!(
            texts["d:1#keyword"],
            "Glaciers retreat quickly temperatures"
        );
        assert!(
            texts["d:1#passage"].starts_with("Filler words number 8 appear."),
            "{texts:?}"
        );
        for id in texts.keys() {
            assert_eq!(q.left_out[*id], "d:1");
            assert_eq!(q.qrels[*id]["d"], 1);
        }
    }

    #[test]
    fn a_sentence_a_sibling_repeats_is_not_used() {
        let shared = "This sentence sits in the overlap between two neighbouring chunks here.";
        assert_eq!(sentence_of(shared, &[shared]), None);
        assert_eq!(sentence_of("Too short.", &[]), None);
    }

    #[test]
    fn the_longest_words_keep_sentence_order_and_appear_once() {
        assert_eq!(
            longest_words("Basal melting accelerates basal sliding of glaciers.", 3),
            "melting accelerates glaciers"
        );
    }
}
