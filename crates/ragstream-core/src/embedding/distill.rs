//! Distils a static embedding model from the bundled all-MiniLM-L6-v2, in the model2vec
//! layout: one vector per vocabulary token, so embedding a text is a table lookup and a mean.
//!
//! Each token's vector is the transformer's mean-pooled output for `[CLS] token [SEP]`. The
//! vectors are mean-centred (the component every token shares carries no meaning) and then
//! weighted by SIF with a Zipf prior: assuming the vocabulary is ordered roughly by
//! frequency, token `i` has probability ∝ 1/(i+2) and weight `c / (c + p)`, which turns down
//! frequent, uninformative tokens. The static model normalises the mean of a text's token
//! vectors, so the weights act as per-token importance.
//!
//! The output is deterministic: batches have a fixed size and every sequence has the same
//! length (3), so each vector is computed identically on every run.

use std::path::Path;
use std::time::Instant;

use safetensors::tensor::{Dtype, TensorView};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{EmbedError, MiniLmEmbedder};

/// model2vec's default SIF coefficient.
pub const SIF_COEFFICIENT: f64 = 1e-4;
/// Sequences per forward pass while distilling (fixed, so the output does not depend on the
/// configured `model.batch_size`).
const BATCH: usize = 512;

#[derive(Debug, Clone, Serialize)]
pub struct DistillReport {
    pub source: String,
    pub output: String,
    pub vocabulary: usize,
    pub dimensions: usize,
    pub seconds: f64,
    /// sha256 of the output `model.safetensors`.
    pub sha256: String,
}

fn io_err(path: &Path, e: impl ToString) -> EmbedError {
    EmbedError::Model {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// The SIF weight of every vocabulary row.
pub fn zipf_sif_weights(vocabulary: usize, coefficient: f64) -> Vec<f32> {
    let inv_rank: Vec<f64> = (0..vocabulary).map(|i| 1.0 / (i as f64 + 2.0)).collect();
    let total: f64 = inv_rank.iter().sum();
    inv_rank
        .iter()
        .map(|r| (coefficient / (coefficient + r / total)) as f32)
        .collect()
}

/// Subtracts the mean vector from every row.
pub fn mean_centre(rows: &mut [Vec<f32>]) {
    let Some(dims) = rows.first().map(Vec::len) else {
        return;
    };
    let mut mean = vec![0f64; dims];
    for r in rows.iter() {
        for (m, x) in mean.iter_mut().zip(r) {
            *m += f64::from(*x);
        }
    }
    let n = rows.len() as f64;
    let mean: Vec<f32> = mean.iter().map(|m| (m / n) as f32).collect();
    for r in rows.iter_mut() {
        for (x, m) in r.iter_mut().zip(&mean) {
            *x -= m;
        }
    }
}

/// Distils `from` (an all-MiniLM-L6-v2 directory) into `to`: `model.safetensors`
/// (`embeddings`, f32, vocabulary × 384), `tokenizer.json`, `config.json`, and
/// `distill.json` (this report). `vocabulary_limit` distils only the first rows (quick checks;
/// such a model is not loadable).
pub fn distill(
    from: &Path,
    to: &Path,
    vocabulary_limit: Option<usize>,
) -> Result<DistillReport, EmbedError> {
    let started = Instant::now();
    let teacher = MiniLmEmbedder::load(from, BATCH, 16)?;
    let vocabulary = vocabulary_limit.map_or(teacher.vocab_size(), |l| l.min(teacher.vocab_size()));
    let ids: Vec<u32> = (0..vocabulary as u32).collect();
    let mut rows = teacher.token_vectors(&ids)?;
    mean_centre(&mut rows);
    for (row, w) in rows
        .iter_mut()
        .zip(zipf_sif_weights(vocabulary, SIF_COEFFICIENT))
    {
        row.iter_mut().for_each(|x| *x *= w);
    }
    let dimensions = rows.first().map_or(0, Vec::len);

    std::fs::create_dir_all(to).map_err(|e| io_err(to, e))?;
    let bytes: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let model_path = to.join("model.safetensors");
    let view = TensorView::new(Dtype::F32, vec![vocabulary, dimensions], &bytes)
        .map_err(|e| io_err(&model_path, e))?;
    let serialized = safetensors::tensor::serialize([("embeddings", view)], None)
        .map_err(|e| io_err(&model_path, e))?;
    write_atomically(&model_path, &serialized)?;
    let tokenizer = std::fs::read(from.join("tokenizer.json"))
        .map_err(|e| io_err(&from.join("tokenizer.json"), e))?;
    write_atomically(&to.join("tokenizer.json"), &tokenizer)?;
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": "sentence-transformers/all-MiniLM-L6-v2",
        "apply_pca": null,
        "apply_zipf": true,
        "sif_coefficient": SIF_COEFFICIENT,
        "hidden_dim": dimensions,
        "seq_length": 1_000_000,
        "normalize": true,
    });
    write_atomically(
        &to.join("config.json"),
        &serde_json::to_vec_pretty(&config).expect("json"),
    )?;
    let report = DistillReport {
        source: from.display().to_string(),
        output: to.display().to_string(),
        vocabulary,
        dimensions,
        seconds: started.elapsed().as_secs_f64(),
        sha256: hex::encode(Sha256::digest(&serialized)),
    };
    write_atomically(
        &to.join("distill.json"),
        &serde_json::to_vec_pretty(&report).expect("json"),
    )?;
    Ok(report)
}

/// Writes through a temporary file and a rename, so an interrupted run leaves no half file
/// that a later start would load.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EmbedError> {
    crate::data_dir::write_atomically(path, bytes).map_err(|e| io_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequent_tokens_weigh_less_and_weights_stay_in_0_1() {
        let w = zipf_sif_weights(30_000, SIF_COEFFICIENT);
        assert!(w.windows(2).all(|p| p[0] < p[1]), "monotone in rank");
        assert!(
            w[0] > 0.0 && w[0] < 0.1,
            "the most frequent token is damped: {}",
            w[0]
        );
        assert!(w[29_999] > 0.9 && w[29_999] < 1.0);
    }

    #[test]
    fn centring_removes_the_shared_component() {
        let mut rows = vec![vec![1.0, 10.0], vec![3.0, 10.0], vec![5.0, 10.0]];
        mean_centre(&mut rows);
        assert_eq!(rows, vec![vec![-2.0, 0.0], vec![0.0, 0.0], vec![2.0, 0.0]]);
    }
}
