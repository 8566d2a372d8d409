//! Judged queries in the BEIR layout: `queries.jsonl` (`_id`, `text`) and a qrels TSV
//! (`query-id corpus-id score`). `ragstream index calibrate --queries … --qrels …` reads them,
//! and so does the evaluation in `ragstream-bench eval`.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use super::metrics::Qrels;
use super::CalibrationError;

fn data_err(path: &Path, reason: impl ToString) -> CalibrationError {
    CalibrationError::Data {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct BeirQuery {
    #[serde(rename = "_id")]
    pub id: String,
    pub text: String,
}

/// The queries of a BEIR dataset.
pub fn read_queries(path: &Path) -> Result<Vec<BeirQuery>, CalibrationError> {
    read_jsonl(path)
}

/// The lines of a JSON Lines file, each parsed as a `T` (blank lines skipped).
pub fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, CalibrationError> {
    let file = std::fs::File::open(path).map_err(|e| data_err(path, e))?;
    let mut out = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| data_err(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(&line)
                .map_err(|e| data_err(path, format!("line {}: {e}", n + 1)))?,
        );
    }
    Ok(out)
}

/// Reads a qrels TSV (`query-id corpus-id score`, header row, CRLF tolerated).
pub fn read_qrels(path: &Path) -> Result<Qrels, CalibrationError> {
    let text = std::fs::read_to_string(path).map_err(|e| data_err(path, e))?;
    let mut qrels: Qrels = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || (n == 0 && line.starts_with("query-id")) {
            continue;
        }
        let parts: Vec<&str> = line.split('\t').collect();
        let [q, d, s] = parts[..] else {
            return Err(data_err(
                path,
                format!("line {}: expected 3 tab-separated fields", n + 1),
            ));
        };
        let score: i64 = s
            .trim()
            .parse()
            .map_err(|_| data_err(path, format!("line {}: bad score {s:?}", n + 1)))?;
        qrels
            .entry(q.to_string())
            .or_default()
            .insert(d.to_string(), score);
    }
    Ok(qrels)
}

/// The judged queries of `qrels`, in file order.
pub fn judged<'a>(queries: &'a [BeirQuery], qrels: &Qrels) -> Vec<&'a BeirQuery> {
    queries
        .iter()
        .filter(|q| qrels.contains_key(&q.id))
        .collect()
}

/// Results a query does not count: what it was made from.
#[derive(Debug, Clone, Copy)]
pub enum LeftOut<'a> {
    Nothing,
    /// The document whose id is the query's (BEIR's `ignore_identical_ids`, for datasets
    /// whose queries are documents).
    QueryDocument,
    /// Per query id, the chunk it was cut from (synthetic queries).
    Chunks(&'a HashMap<String, String>),
}

impl LeftOut<'_> {
    /// Whether the chunk `chunk_id` of document `document_id` does not count for `query`.
    pub fn excludes(&self, query: &str, document_id: &str, chunk_id: &str) -> bool {
        match self {
            LeftOut::Nothing => false,
            LeftOut::QueryDocument => document_id == query,
            LeftOut::Chunks(chunks) => chunks.get(query).is_some_and(|c| c == chunk_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qrels_parse_with_header_and_crlf() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q.tsv");
        std::fs::write(
            &p,
            "query-id\tcorpus-id\tscore\r\n1\td1\t1\r\n1\td2\t0\r\n2\td3\t2\r\n",
        )
        .unwrap();
        let q = read_qrels(&p).unwrap();
        assert_eq!(q["1"]["d1"], 1);
        assert_eq!(q["1"]["d2"], 0);
        assert_eq!(q["2"]["d3"], 2);
        std::fs::write(&p, "1\td1\n").unwrap();
        assert!(read_qrels(&p).is_err());
    }
}
