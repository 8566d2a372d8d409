//! Embedders turn chunk and query texts into vectors.

pub mod distill;
mod hashing;
mod minilm;
mod static_model;
mod throttled;

pub use hashing::HashingEmbedder;
pub use minilm::MiniLmEmbedder;
pub use static_model::{StaticEmbedder, STATIC_MODEL_ID};
pub use throttled::Throttled;

/// Why embedding failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model directory {path}: {reason}")]
    Model { path: String, reason: String },
    #[error("tokenizer failed: {0}")]
    Tokenizer(String),
    #[error("model inference failed: {0}")]
    Inference(String),
}

/// Turns texts into L2-normalised vectors of a fixed dimension. Implementations are
/// deterministic: the same text always gives the same vector.
pub trait Embedder: Send + Sync {
    /// Stable identifier recorded in each index (for example `all-minilm-l6-v2`).
    fn id(&self) -> &str;
    fn dimensions(&self) -> usize;
    /// One vector per input text, in input order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Scales a vector to unit length (a zero vector stays zero).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// A shared embedder is an embedder (so wrappers such as [`Throttled`] can hold one).
impl<T: Embedder + ?Sized> Embedder for std::sync::Arc<T> {
    fn id(&self) -> &str {
        (**self).id()
    }

    fn dimensions(&self) -> usize {
        (**self).dimensions()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts)
    }
}
