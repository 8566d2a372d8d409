//! `ragstream bench embed`: each embedder alone, chunks/s at fixed chunk lengths, and for the
//! transformer its FLOPs per chunk and the fraction of a plain f32 GEMM of the model's largest
//! shape (the FFN up-projection) it reaches, measured in the same run.

use std::path::Path;
use std::time::Instant;

use candle_core::{Device, Tensor};
use serde::Serialize;

use ragstream::embedding::{EmbedError, Embedder, MiniLmEmbedder, StaticEmbedder};

const HIDDEN: f64 = 384.0;
const FFN: f64 = 1536.0;
const LAYERS: f64 = 6.0;

/// all-MiniLM-L6-v2 forward FLOPs for one sequence of `l` tokens (a multiply-add is 2):
/// Q, K, V, O projections 8·l·h², FFN 4·l·h·f, attention scores and mix 4·l²·h, per layer.
pub fn minilm_flops(l: usize) -> f64 {
    let l = l as f64;
    LAYERS * (8.0 * l * HIDDEN * HIDDEN + 4.0 * l * HIDDEN * FFN + 4.0 * l * l * HIDDEN)
}

#[derive(Debug, Serialize)]
pub struct EmbedRow {
    pub embedder: String,
    pub tokens_per_chunk: usize,
    pub chunks: usize,
    pub seconds: f64,
    pub chunks_per_second: f64,
    pub gflop_per_chunk: Option<f64>,
    pub gflops: Option<f64>,
    pub fraction_of_gemm: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct EmbedReport {
    /// f32 GEMM (m = 32·256, k = 384, n = 1536) on this machine, same run.
    pub gemm_gflops: f64,
    pub rows: Vec<EmbedRow>,
}

/// Times `m×k · k×n` f32 matrix products with candle (the library the transformer runs on).
pub fn gemm_gflops() -> Result<f64, EmbedError> {
    let inference = |e: candle_core::Error| EmbedError::Inference(e.to_string());
    let (m, k, n) = (32 * 256, 384, 1536);
    let a = Tensor::ones((m, k), candle_core::DType::F32, &Device::Cpu).map_err(inference)?;
    let b = Tensor::ones((k, n), candle_core::DType::F32, &Device::Cpu).map_err(inference)?;
    a.matmul(&b).map_err(inference)?; // warm-up
    let reps = 10;
    let started = Instant::now();
    for _ in 0..reps {
        a.matmul(&b).map_err(inference)?;
    }
    let flops = 2.0 * (m * k * n) as f64 * reps as f64;
    Ok(flops / started.elapsed().as_secs_f64() / 1e9)
}

/// Chunk texts long enough to fill `tokens` word pieces (the transformer's are cut to one
/// window, the static model truncates its own).
fn texts(corpus: &[String], count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            let mut t = String::new();
            let mut j = i;
            while t.len() < 4_000 {
                t.push_str(&corpus[j % corpus.len()]);
                t.push(' ');
                j += 1;
            }
            t
        })
        .collect()
}

fn time(embedder: &dyn Embedder, texts: &[String]) -> Result<f64, EmbedError> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    embedder.embed(&refs[..refs.len().min(8)])?; // warm-up
    let started = Instant::now();
    embedder.embed(&refs)?;
    Ok(started.elapsed().as_secs_f64())
}

pub fn run(
    model_dir: &Path,
    static_dir: &Path,
    corpus: &[String],
    transformer_chunks: usize,
    static_chunks: usize,
) -> Result<EmbedReport, EmbedError> {
    let gemm = gemm_gflops()?;
    let mut rows = Vec::new();
    for tokens in [64, 256] {
        let minilm = MiniLmEmbedder::load(model_dir, 32, tokens)?;
        let input = texts(corpus, transformer_chunks)
            .iter()
            .map(|t| minilm.first_window(t).map(str::to_string))
            .collect::<Result<Vec<_>, _>>()?;
        let seconds = time(&minilm, &input)?;
        let rate = transformer_chunks as f64 / seconds;
        let gflop = minilm_flops(tokens) / 1e9;
        rows.push(EmbedRow {
            embedder: minilm.id().to_string(),
            tokens_per_chunk: tokens,
            chunks: transformer_chunks,
            seconds,
            chunks_per_second: rate,
            gflop_per_chunk: Some(gflop),
            gflops: Some(gflop * rate),
            fraction_of_gemm: Some(gflop * rate / gemm),
        });
        let fast = StaticEmbedder::load(static_dir, tokens)?;
        let input = texts(corpus, static_chunks);
        let seconds = time(&fast, &input)?;
        rows.push(EmbedRow {
            embedder: fast.id().to_string(),
            tokens_per_chunk: tokens,
            chunks: static_chunks,
            seconds,
            chunks_per_second: static_chunks as f64 / seconds,
            gflop_per_chunk: None,
            gflops: None,
            fraction_of_gemm: None,
        });
    }
    Ok(EmbedReport {
        gemm_gflops: gemm,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flops_per_chunk_follow_the_layer_shapes() {
        // One layer at l = 1: 8·384² + 4·384·1536 + 4·384 = 3,540,480; six layers.
        assert_eq!(minilm_flops(1), 6.0 * 3_540_480.0);
        // Attention grows quadratically: doubling l more than doubles the FLOPs.
        assert!(minilm_flops(256) > 2.0 * minilm_flops(128));
    }
}
