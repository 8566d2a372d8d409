//! An embedder wrapper that adds a fixed latency to every call: a stand-in for a slow or
//! overloaded embedding provider, used to exercise backpressure (`model.simulated_latency_ms`).

use std::time::Duration;

use super::{EmbedError, Embedder};

pub struct Throttled<E> {
    inner: E,
    latency: Duration,
}

impl<E: Embedder> Throttled<E> {
    pub fn new(inner: E, latency: Duration) -> Self {
        Throttled { inner, latency }
    }
}

impl<E: Embedder> Embedder for Throttled<E> {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        std::thread::sleep(self.latency);
        self.inner.embed(texts)
    }

    fn recipe(&self) -> String {
        self.inner.recipe()
    }

    fn report(&self) -> serde_json::Value {
        self.inner.report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedding::HashingEmbedder;

    #[test]
    fn adds_latency_and_keeps_results() {
        let plain = HashingEmbedder::new(8);
        let slow = Throttled::new(HashingEmbedder::new(8), Duration::from_millis(30));
        let t = std::time::Instant::now();
        assert_eq!(
            slow.embed(&["a b"]).unwrap(),
            plain.embed(&["a b"]).unwrap()
        );
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert_eq!(slow.id(), "hashing");
    }
}
