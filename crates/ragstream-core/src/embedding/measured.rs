//! Embedding metrics: latency and texts per call of the model or provider behind an embedder
//! (`ragstream_embed_duration_seconds`, `ragstream_embed_batch_texts`, by embedder id). The
//! engine wraps each embedder it builds once, below the cache, so that cache hits are not
//! counted as model calls.

use std::sync::Arc;
use std::time::Instant;

use super::{EmbedError, Embedder};

pub struct Measured {
    inner: Arc<dyn Embedder>,
}

impl Measured {
    pub fn wrap(inner: Arc<dyn Embedder>) -> Arc<dyn Embedder> {
        Arc::new(Measured { inner })
    }
}

impl Embedder for Measured {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let started = Instant::now();
        let result = self.inner.embed(texts);
        if let Some(m) = crate::telemetry::metrics() {
            let id = [self.inner.id()];
            m.embed_duration_seconds
                .with_label_values(&id)
                .observe(started.elapsed().as_secs_f64());
            m.embed_batch_texts
                .with_label_values(&id)
                .observe(texts.len() as f64);
        }
        result
    }

    fn recipe(&self) -> String {
        self.inner.recipe()
    }

    fn report(&self) -> serde_json::Value {
        self.inner.report()
    }
}
