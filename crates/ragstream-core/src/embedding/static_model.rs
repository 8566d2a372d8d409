//! The static embedder: a model2vec model (see `distill`) run by `model2vec-rs`. Embedding a
//! text is tokenisation, a lookup per token and a normalised mean: far cheaper than a
//! transformer pass (docs/benchmark-history.md, "Embedders alone"), at some cost in quality
//! (BENCHMARKS.md, "Current figures").

use std::path::Path;

use model2vec_rs::model::StaticModel;

use super::{EmbedError, Embedder};

/// Identifier recorded in indexes built with the static model distilled from
/// all-MiniLM-L6-v2.
pub const STATIC_MODEL_ID: &str = "all-minilm-l6-v2-static";

pub struct StaticEmbedder {
    model: StaticModel,
    max_tokens: usize,
}

impl StaticEmbedder {
    /// Loads a distilled model directory. A missing directory names the command that makes it.
    pub fn load(dir: &Path, max_tokens: usize) -> Result<Self, EmbedError> {
        let model_err = |reason: String| EmbedError::Model {
            path: dir.display().to_string(),
            reason,
        };
        if !dir.join("model.safetensors").is_file() {
            return Err(model_err(
                "has no model.safetensors; run scripts/setup (or `ragstream model distill`)".into(),
            ));
        }
        let model = StaticModel::from_pretrained(dir, None, Some(true), None)
            .map_err(|e| model_err(format!("{e:#}")))?;
        Ok(StaticEmbedder { model, max_tokens })
    }
}

impl Embedder for StaticEmbedder {
    fn id(&self) -> &str {
        STATIC_MODEL_ID
    }

    fn dimensions(&self) -> usize {
        self.model.dim()
    }

    /// A long text's vector depends on where it is cut.
    fn recipe(&self) -> String {
        format!("truncated at {} tokens", self.max_tokens)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let owned: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        Ok(crate::runtime::compute_pool::run(|| {
            self.model
                .encode_with_args(&owned, Some(self.max_tokens), owned.len().max(1))
        }))
    }
}
