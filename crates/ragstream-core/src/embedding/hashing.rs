//! A model-free embedder: signed feature hashing of lower-cased word tokens.
//!
//! It needs no files and is fully deterministic, which makes it the embedder of choice for
//! tests of the stores and the engine, and a working fallback for smoke runs. It captures
//! word overlap only, not meaning.

use sha2::{Digest, Sha256};

use super::{l2_normalize, EmbedError, Embedder};

#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    dimensions: usize,
}

impl HashingEmbedder {
    pub fn new(dimensions: usize) -> Self {
        HashingEmbedder {
            dimensions: dimensions.max(1),
        }
    }
}

impl Embedder for HashingEmbedder {
    fn id(&self) -> &str {
        "hashing"
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0f32; self.dimensions];
                for word in text
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    let h = Sha256::digest(word.to_lowercase().as_bytes());
                    let slot = u64::from_le_bytes(h[..8].try_into().expect("8 bytes"));
                    let sign = if h[8] & 1 == 0 { 1.0 } else { -1.0 };
                    v[(slot % self.dimensions as u64) as usize] += sign;
                }
                l2_normalize(&mut v);
                v
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_words_mean_higher_similarity() {
        let e = HashingEmbedder::new(64);
        let v = e
            .embed(&["red apple", "red apple pie", "blue ocean"])
            .unwrap();
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]));
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-6);
    }
}
