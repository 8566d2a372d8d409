//! Embedders turn chunk and query texts into vectors.

mod cache;
pub mod distill;
mod hashing;
pub mod http;
mod measured;
mod minilm;
mod no_model;
mod static_model;
mod throttled;

pub use cache::{CacheStats, CachedEmbedder, EmbeddingCache};
pub use hashing::HashingEmbedder;
pub use measured::Measured;
pub use minilm::{MiniLmEmbedder, MINILM_ID};
pub use no_model::NoModel;
pub use static_model::{StaticEmbedder, STATIC_MODEL_ID};
pub use throttled::Throttled;

/// The `auto` centre measured for a built-in model on judged queries, by the embedder id an
/// index records; `None` for a model with none (the index then calibrates itself).
///
/// Synthetic queries, cut from an index's own chunks, share words with the chunks they must
/// find, so they favour the keyword branch. For a strong sentence encoder they point the
/// wrong way: all-MiniLM-L6-v2's best centre on queries people write is far more semantic
/// than on synthetic ones. Its centre is the best on SciFact's training queries, never on the
/// test queries or AppStream it is scored on (BENCHMARKS.md, "`auto` for passages, and a
/// model's measured centre"). The static model has none: its synthetic centre holds. Other
/// cuts of the synthetic queries pick keyword-leaning centres too (BENCHMARKS.md,
/// "Synthetic query variants do not find MiniLM's centre").
pub fn measured_auto_center(embedder_id: &str) -> Option<f64> {
    (embedder_id == MINILM_ID).then_some(0.8)
}

/// Why embedding failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model directory {path}: {reason}")]
    Model { path: String, reason: String },
    #[error("tokenizer failed: {0}")]
    Tokenizer(String),
    #[error("model inference failed: {0}")]
    Inference(String),
    /// A provider is down, overloaded or too slow, and stayed so through every retry (or its
    /// circuit breaker is open). Transient: the same texts may well embed later.
    #[error("embedding provider {provider} is unavailable: {reason}")]
    Unavailable { provider: String, reason: String },
    /// A provider refused the request (a 4xx other than 429) or answered something unusable
    /// (not JSON, wrong count, wrong dimensions). Permanent: retrying the same texts will not
    /// help.
    #[error("embedding provider {provider} rejected the request: {reason}")]
    Rejected { provider: String, reason: String },
}

impl EmbedError {
    /// Whether the same call may succeed later (the pipeline then waits instead of
    /// dead-lettering).
    pub fn is_transient(&self) -> bool {
        matches!(self, EmbedError::Unavailable { .. })
    }
}

/// Turns texts into L2-normalised vectors of a fixed dimension. Implementations are
/// deterministic: the same text always gives the same vector.
pub trait Embedder: Send + Sync {
    /// Stable identifier recorded in each index (for example `all-minilm-l6-v2`).
    fn id(&self) -> &str;
    fn dimensions(&self) -> usize;
    /// One vector per input text, in input order. May block (model inference, HTTP): call
    /// it from a blocking context.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// What besides the id and the dimensions decides a text's vector (for example how a
    /// long text is cut: at a length, or into windows), so that a cache never serves a vector
    /// made under other settings. Empty where nothing does.
    fn recipe(&self) -> String {
        String::new()
    }

    /// Counters for health and stats endpoints (requests, retries, cache hits, …); `null`
    /// where there is nothing to report.
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
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

    fn recipe(&self) -> String {
        (**self).recipe()
    }

    fn report(&self) -> serde_json::Value {
        (**self).report()
    }
}
