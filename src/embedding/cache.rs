//! A persistent embedding cache keyed by (embedder id, recipe, dimensions, text), so that
//! re-ingesting unchanged or moved text never calls the model again. It lives in one redb
//! file under the data directory and survives restarts. Keys are SHA-256 digests; values
//! little-endian f32.
//!
//! [`CachedEmbedder`] wraps any embedder: it looks every text up, embeds only the misses (in
//! one call, so batching is unchanged) and stores them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use redb::{Database, ReadableTableMetadata, TableDefinition};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{EmbedError, Embedder};

const VECTORS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("vectors");

#[derive(Debug, thiserror::Error)]
#[error("embedding cache {path}: {reason}")]
pub struct CacheError {
    pub path: String,
    pub reason: String,
}

pub struct EmbeddingCache {
    db: Database,
    path: String,
}

/// Hits and misses since the process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
}

impl CacheStats {
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

impl EmbeddingCache {
    /// Opens (or creates) the cache file. Another process holding it is an error; callers
    /// decide whether to go on without a cache.
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        let err = |reason: String| CacheError {
            path: path.display().to_string(),
            reason,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| err(e.to_string()))?;
        }
        let db = Database::create(path).map_err(|e| err(e.to_string()))?;
        // Create the table up front so that readers never see it missing.
        let tx = db.begin_write().map_err(|e| err(e.to_string()))?;
        tx.open_table(VECTORS).map_err(|e| err(e.to_string()))?;
        tx.commit().map_err(|e| err(e.to_string()))?;
        Ok(EmbeddingCache {
            db,
            path: path.display().to_string(),
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> CacheError {
        CacheError {
            path: self.path.clone(),
            reason: e.to_string(),
        }
    }

    /// The key of a text's vector. An empty recipe adds nothing, so the keys written before
    /// recipes existed stay valid for embedders that have none.
    pub fn key(embedder: &str, recipe: &str, dimensions: usize, text: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(embedder.as_bytes());
        h.update([0]);
        if !recipe.is_empty() {
            h.update(recipe.as_bytes());
            h.update([0]);
        }
        h.update(dimensions.to_le_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.finalize().into()
    }

    pub fn get_many(&self, keys: &[[u8; 32]]) -> Result<Vec<Option<Vec<f32>>>, CacheError> {
        let tx = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = tx.open_table(VECTORS).map_err(|e| self.err(e))?;
        keys.iter()
            .map(|k| {
                Ok(table.get(k.as_slice()).map_err(|e| self.err(e))?.map(|v| {
                    v.value()
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect()
                }))
            })
            .collect()
    }

    pub fn put_many(&self, entries: &[([u8; 32], &[f32])]) -> Result<(), CacheError> {
        let tx = self.db.begin_write().map_err(|e| self.err(e))?;
        {
            let mut table = tx.open_table(VECTORS).map_err(|e| self.err(e))?;
            for (k, v) in entries {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                table
                    .insert(k.as_slice(), bytes.as_slice())
                    .map_err(|e| self.err(e))?;
            }
        }
        tx.commit().map_err(|e| self.err(e))
    }

    pub fn len(&self) -> Result<u64, CacheError> {
        let tx = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = tx.open_table(VECTORS).map_err(|e| self.err(e))?;
        table.len().map_err(|e| self.err(e))
    }

    pub fn is_empty(&self) -> Result<bool, CacheError> {
        Ok(self.len()? == 0)
    }
}

/// An embedder that asks the cache first.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    cache: Arc<EmbeddingCache>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl CachedEmbedder {
    pub fn new(inner: Arc<dyn Embedder>, cache: Arc<EmbeddingCache>) -> Self {
        CachedEmbedder {
            inner,
            cache,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }
}

impl Embedder for CachedEmbedder {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }

    fn recipe(&self) -> String {
        self.inner.recipe()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let (id, recipe, dims) = (
            self.inner.id(),
            self.inner.recipe(),
            self.inner.dimensions(),
        );
        let keys: Vec<[u8; 32]> = texts
            .iter()
            .map(|t| EmbeddingCache::key(id, &recipe, dims, t))
            .collect();
        // A cache that cannot be read is a cache miss, not a failed ingest.
        let mut found = self.cache.get_many(&keys).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "embedding cache read failed; embedding everything");
            vec![None; texts.len()]
        });
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
        let hits = (texts.len() - missing.len()) as u64;
        self.hits.fetch_add(hits, Ordering::Relaxed);
        self.misses
            .fetch_add(missing.len() as u64, Ordering::Relaxed);
        if let Some(m) = crate::telemetry::metrics() {
            let lookups = &m.embedding_cache_lookups_total;
            lookups.with_label_values(&["hit"]).inc_by(hits);
            lookups
                .with_label_values(&["miss"])
                .inc_by(missing.len() as u64);
        }
        if !missing.is_empty() {
            let to_embed: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let vectors = self.inner.embed(&to_embed)?;
            let entries: Vec<([u8; 32], &[f32])> = missing
                .iter()
                .zip(&vectors)
                .map(|(&i, v)| (keys[i], v.as_slice()))
                .collect();
            if let Err(e) = self.cache.put_many(&entries) {
                tracing::warn!(error = %e, "embedding cache write failed");
            }
            for (i, v) in missing.into_iter().zip(vectors) {
                found[i] = Some(v);
            }
        }
        Ok(found
            .into_iter()
            .map(|v| v.expect("every text has a vector"))
            .collect())
    }

    fn report(&self) -> Value {
        let s = self.stats();
        json!({
            "embedder": self.inner.report(),
            "cache": {
                "hits": s.hits,
                "misses": s.misses,
                "hit_ratio": s.hit_ratio(),
                "entries": self.cache.len().ok(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedding::HashingEmbedder;

    /// Counts the texts it is asked to embed.
    struct Counting {
        inner: HashingEmbedder,
        embedded: AtomicU64,
    }

    impl Embedder for Counting {
        fn id(&self) -> &str {
            "counting"
        }
        fn dimensions(&self) -> usize {
            self.inner.dimensions()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.embedded
                .fetch_add(texts.len() as u64, Ordering::Relaxed);
            self.inner.embed(texts)
        }
    }

    #[test]
    fn embeds_only_misses_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.redb");
        let counting = Arc::new(Counting {
            inner: HashingEmbedder::new(16),
            embedded: AtomicU64::new(0),
        });
        let plain = HashingEmbedder::new(16);
        {
            let cached = CachedEmbedder::new(
                counting.clone(),
                Arc::new(EmbeddingCache::open(&path).unwrap()),
            );
            let out = cached.embed(&["alpha beta", "gamma"]).unwrap();
            assert_eq!(out, plain.embed(&["alpha beta", "gamma"]).unwrap());
            let out = cached.embed(&["gamma", "delta", "alpha beta"]).unwrap();
            assert_eq!(out, plain.embed(&["gamma", "delta", "alpha beta"]).unwrap());
            assert_eq!(
                counting.embedded.load(Ordering::Relaxed),
                3,
                "gamma and alpha beta once"
            );
            assert_eq!(cached.stats(), CacheStats { hits: 2, misses: 3 });
        }
        // A new process (here: a new handle) finds the vectors on disk.
        let cached = CachedEmbedder::new(
            counting.clone(),
            Arc::new(EmbeddingCache::open(&path).unwrap()),
        );
        cached.embed(&["delta", "gamma"]).unwrap();
        assert_eq!(counting.embedded.load(Ordering::Relaxed), 3);
        assert_eq!(cached.stats().hit_ratio(), 1.0);
    }

    #[test]
    fn keys_separate_embedders_recipes_and_dimensions() {
        let a = EmbeddingCache::key("m1", "", 384, "text");
        assert_ne!(a, EmbeddingCache::key("m2", "", 384, "text"));
        assert_ne!(a, EmbeddingCache::key("m1", "", 768, "text"));
        assert_ne!(a, EmbeddingCache::key("m1", "", 384, "text "));
        assert_eq!(a, EmbeddingCache::key("m1", "", 384, "text"));
        let truncated = EmbeddingCache::key("m1", "truncated at 256 tokens", 384, "text");
        assert_ne!(a, truncated);
        assert_ne!(
            truncated,
            EmbeddingCache::key("m1", "truncated at 128 tokens", 384, "text")
        );
    }
}
