//! A persistent embedding cache keyed by (embedder id, recipe, dimensions, text), so that
//! re-ingesting unchanged or moved text never calls the model again. It lives in one redb
//! file under the data directory and survives restarts. Keys are SHA-256 digests; values
//! little-endian f32.
//!
//! The cache is bounded (`model.cache_max_mb`) by two generations, a cheap stand-in for
//! least-recently-used: new vectors go into the current one; a vector found only in the
//! previous one is copied forward. Once the current generation holds half the budget, the
//! previous one is dropped whole and the current one becomes the previous. So a vector used
//! within the last half-budget of writes stays, and the file stops growing: redb reuses the
//! pages a dropped generation frees.
//!
//! [`CachedEmbedder`] wraps any embedder: it looks every text up, embeds only the misses (in
//! one call, so batching is unchanged) and stores them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::{EmbedError, Embedder};

/// The two generations. The first name is the one table files written before generations
/// existed hold, so they open as a full current generation.
const GENERATIONS: [TableDefinition<&[u8], &[u8]>; 2] = [
    TableDefinition::new("vectors"),
    TableDefinition::new("vectors.alternate"),
];
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// Which generation is current (0 or 1).
const CURRENT: &str = "current";
/// Key and value bytes in the current generation.
const CURRENT_BYTES: &str = "current_bytes";
const KEY_BYTES: u64 = 32;

#[derive(Debug, thiserror::Error)]
#[error("embedding cache {path}: {reason}")]
pub struct CacheError {
    pub path: String,
    pub reason: String,
}

pub struct EmbeddingCache {
    db: Database,
    path: String,
    /// Key and value bytes kept at most (0: no limit).
    max_bytes: u64,
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

/// What a lookup found: a vector per key, and which of them only the previous generation
/// held (to be copied forward, so that what is used stays).
#[derive(Debug, Default)]
pub struct Found {
    pub vectors: Vec<Option<Vec<f32>>>,
    pub previous_only: Vec<usize>,
}

fn decode(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

impl EmbeddingCache {
    /// Opens (or creates) the cache file, to hold at most `max_mb` MiB of keys and vectors
    /// (0: no limit). Another process holding it is an error; callers decide whether to go
    /// on without a cache.
    pub fn open(path: &Path, max_mb: u64) -> Result<Self, CacheError> {
        let err = |reason: String| CacheError {
            path: path.display().to_string(),
            reason,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| err(e.to_string()))?;
        }
        let db = Database::create(path).map_err(|e| err(e.to_string()))?;
        let cache = EmbeddingCache {
            db,
            path: path.display().to_string(),
            max_bytes: max_mb.saturating_mul(1 << 20),
        };
        // Create the tables up front so that readers never see one missing.
        let tx = cache.db.begin_write().map_err(|e| cache.err(e))?;
        {
            for generation in GENERATIONS {
                tx.open_table(generation).map_err(|e| cache.err(e))?;
            }
            let mut meta = tx.open_table(META).map_err(|e| cache.err(e))?;
            if meta.get(CURRENT).map_err(|e| cache.err(e))?.is_none() {
                // A file from before generations: its one table is the current generation.
                let stored = tx
                    .open_table(GENERATIONS[0])
                    .map_err(|e| cache.err(e))?
                    .stats()
                    .map_err(|e| cache.err(e))?
                    .stored_bytes();
                meta.insert(CURRENT, 0).map_err(|e| cache.err(e))?;
                meta.insert(CURRENT_BYTES, stored)
                    .map_err(|e| cache.err(e))?;
            }
        }
        tx.commit().map_err(|e| cache.err(e))?;
        Ok(cache)
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

    fn current(&self, meta: &impl ReadableTable<&'static str, u64>) -> Result<usize, CacheError> {
        let current = meta.get(CURRENT).map_err(|e| self.err(e))?;
        Ok(current.map_or(0, |g| g.value() as usize) % 2)
    }

    /// Each key's vector: from the current generation, else the previous one.
    pub fn get_many(&self, keys: &[[u8; 32]]) -> Result<Found, CacheError> {
        let tx = self.db.begin_read().map_err(|e| self.err(e))?;
        let meta = tx.open_table(META).map_err(|e| self.err(e))?;
        let current = self.current(&meta)?;
        let newer = tx
            .open_table(GENERATIONS[current])
            .map_err(|e| self.err(e))?;
        let older = tx
            .open_table(GENERATIONS[1 - current])
            .map_err(|e| self.err(e))?;
        let mut found = Found::default();
        for (i, k) in keys.iter().enumerate() {
            let vector = match newer.get(k.as_slice()).map_err(|e| self.err(e))? {
                Some(v) => Some(decode(v.value())),
                None => {
                    let v = older.get(k.as_slice()).map_err(|e| self.err(e))?;
                    if v.is_some() {
                        found.previous_only.push(i);
                    }
                    v.map(|v| decode(v.value()))
                }
            };
            found.vectors.push(vector);
        }
        Ok(found)
    }

    /// Stores vectors in the current generation; then, if it holds half the budget, drops
    /// the previous generation and starts a new one. Returns how many vectors were dropped.
    pub fn put_many(&self, entries: &[([u8; 32], &[f32])]) -> Result<u64, CacheError> {
        let tx = self.db.begin_write().map_err(|e| self.err(e))?;
        let mut meta = tx.open_table(META).map_err(|e| self.err(e))?;
        let current = self.current(&meta)?;
        let mut bytes = meta
            .get(CURRENT_BYTES)
            .map_err(|e| self.err(e))?
            .map_or(0, |b| b.value());
        {
            let mut table = tx
                .open_table(GENERATIONS[current])
                .map_err(|e| self.err(e))?;
            for (k, v) in entries {
                let value: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                let replaced = table
                    .insert(k.as_slice(), value.as_slice())
                    .map_err(|e| self.err(e))?
                    .map_or(0, |old| KEY_BYTES + old.value().len() as u64);
                bytes = (bytes + KEY_BYTES + value.len() as u64).saturating_sub(replaced);
            }
        }
        let mut dropped = 0;
        if self.max_bytes > 0 && bytes >= self.max_bytes / 2 {
            let previous = GENERATIONS[1 - current];
            dropped = tx
                .open_table(previous)
                .map_err(|e| self.err(e))?
                .len()
                .map_err(|e| self.err(e))?;
            tx.delete_table(previous).map_err(|e| self.err(e))?;
            tx.open_table(previous).map_err(|e| self.err(e))?;
            meta.insert(CURRENT, (1 - current) as u64)
                .map_err(|e| self.err(e))?;
            bytes = 0;
        }
        meta.insert(CURRENT_BYTES, bytes).map_err(|e| self.err(e))?;
        drop(meta);
        tx.commit().map_err(|e| self.err(e))?;
        Ok(dropped)
    }

    /// Vectors held, in both generations (one used again may be counted twice until the
    /// older copy is dropped).
    pub fn len(&self) -> Result<u64, CacheError> {
        let tx = self.db.begin_read().map_err(|e| self.err(e))?;
        GENERATIONS.iter().try_fold(0, |sum, g| {
            let table = tx.open_table(*g).map_err(|e| self.err(e))?;
            Ok(sum + table.len().map_err(|e| self.err(e))?)
        })
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
        let Found {
            vectors: mut found,
            previous_only,
        } = self.cache.get_many(&keys).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "embedding cache read failed; embedding everything");
            Found {
                vectors: vec![None; texts.len()],
                previous_only: Vec::new(),
            }
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
        let vectors = if missing.is_empty() {
            Vec::new()
        } else {
            let to_embed: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            self.inner.embed(&to_embed)?
        };
        // New vectors, and those only the previous generation held (so they stay).
        let entries: Vec<([u8; 32], &[f32])> = missing
            .iter()
            .zip(&vectors)
            .map(|(&i, v)| (keys[i], v.as_slice()))
            .chain(
                previous_only
                    .iter()
                    .filter_map(|&i| found[i].as_deref().map(|v| (keys[i], v))),
            )
            .collect();
        if !entries.is_empty() {
            match self.cache.put_many(&entries) {
                Ok(dropped) => {
                    if let (Some(m), true) = (crate::telemetry::metrics(), dropped > 0) {
                        m.embedding_cache_evicted_total
                            .with_label_values::<&str>(&[])
                            .inc_by(dropped);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "embedding cache write failed"),
            }
        }
        for (i, v) in missing.into_iter().zip(vectors) {
            found[i] = Some(v);
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
                Arc::new(EmbeddingCache::open(&path, 0).unwrap()),
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
            Arc::new(EmbeddingCache::open(&path, 0).unwrap()),
        );
        cached.embed(&["delta", "gamma"]).unwrap();
        assert_eq!(counting.embedded.load(Ordering::Relaxed), 3);
        assert_eq!(cached.stats().hit_ratio(), 1.0);
    }

    fn counting(dimensions: usize) -> Arc<Counting> {
        Arc::new(Counting {
            inner: HashingEmbedder::new(dimensions),
            embedded: AtomicU64::new(0),
        })
    }

    /// A counting model of 64 dimensions behind a cache at `path` of `max_mb`.
    fn cached_at(path: &Path, max_mb: u64) -> (Arc<Counting>, CachedEmbedder) {
        let model = counting(64);
        let cache = Arc::new(EmbeddingCache::open(path, max_mb).unwrap());
        (model.clone(), CachedEmbedder::new(model, cache))
    }

    fn texts(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix} {i}")).collect()
    }

    fn embed_all(cached: &CachedEmbedder, texts: &[String]) {
        for batch in texts.chunks(50) {
            let batch: Vec<&str> = batch.iter().map(String::as_str).collect();
            cached.embed(&batch).unwrap();
        }
    }

    /// How many of `texts` the model embeds again.
    fn reembedded(cached: &CachedEmbedder, model: &Counting, texts: &[String]) -> u64 {
        let before = model.embedded.load(Ordering::Relaxed);
        embed_all(cached, texts);
        model.embedded.load(Ordering::Relaxed) - before
    }

    #[test]
    fn a_bounded_cache_drops_old_vectors_and_its_file_stops_growing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.redb");
        // 1 MiB; an entry is 32 + 256 bytes, so a generation holds about 1,800.
        let (model, cached) = cached_at(&path, 1);
        let first = texts("first", 500);
        embed_all(&cached, &first);
        let mut sizes = Vec::new();
        for round in 0..8 {
            embed_all(&cached, &texts(&format!("round {round}"), 4_000));
            sizes.push(std::fs::metadata(&path).unwrap().len());
        }
        let held = cached.cache.len().unwrap();
        assert!(
            held <= 2 * 1_850,
            "{held} vectors held against a 1 MiB budget"
        );
        assert!(held >= 1_000, "{held}: the newest generation is kept");
        assert_eq!(
            reembedded(&cached, &model, &first),
            500,
            "the oldest were dropped"
        );
        // 8 rounds wrote 9 MiB of vectors; the file stopped growing by the second.
        assert!(sizes[7] <= sizes[1], "the file grew: {sizes:?}");
        assert!(sizes[7] < 9 << 20, "{sizes:?}");
        // The newest stay.
        let newest = texts("round 7", 4_000);
        assert_eq!(reembedded(&cached, &model, &newest[3_000..]), 0);
    }

    #[test]
    fn a_vector_used_again_outlives_those_that_were_not() {
        let dir = tempfile::tempdir().unwrap();
        let (model, cached) = cached_at(&dir.path().join("cache.redb"), 1);
        let (used, unused) = (texts("used", 100), texts("unused", 100));
        embed_all(&cached, &used);
        embed_all(&cached, &unused);
        // Each filler is more than a generation: each moves the two above one older.
        let filler = |round: usize| texts(&format!("filler {round}"), 2_000);
        embed_all(&cached, &filler(0));
        assert_eq!(
            reembedded(&cached, &model, &used),
            0,
            "found in the previous generation"
        );
        embed_all(&cached, &filler(1));
        assert_eq!(
            reembedded(&cached, &model, &used),
            0,
            "copied forward when used"
        );
        assert_eq!(reembedded(&cached, &model, &unused), 100, "dropped");
    }

    #[test]
    fn a_cache_without_a_limit_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let (model, cached) = cached_at(&dir.path().join("cache.redb"), 0);
        let all = texts("kept", 10_000);
        embed_all(&cached, &all);
        assert_eq!(cached.cache.len().unwrap(), 10_000);
        assert_eq!(reembedded(&cached, &model, &all), 0);
    }

    #[test]
    fn a_file_from_before_generations_is_read_and_then_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.redb");
        let old = texts("old", 3_000);
        // Written under the key the cache's model has.
        let writer = counting(64);
        {
            // What the cache wrote before generations: one table, no metadata.
            let db = Database::create(&path).unwrap();
            let tx = db.begin_write().unwrap();
            {
                let mut table = tx.open_table(GENERATIONS[0]).unwrap();
                let (id, recipe, dims) = (writer.id(), writer.recipe(), writer.dimensions());
                for (text, v) in old.iter().zip(
                    writer
                        .inner
                        .embed(&old.iter().map(String::as_str).collect::<Vec<_>>())
                        .unwrap(),
                ) {
                    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                    table
                        .insert(
                            EmbeddingCache::key(id, &recipe, dims, text).as_slice(),
                            bytes.as_slice(),
                        )
                        .unwrap();
                }
            }
            tx.commit().unwrap();
        }
        let (model, cached) = cached_at(&path, 1);
        assert_eq!(
            reembedded(&cached, &model, &old[..10]),
            0,
            "the old vectors are found"
        );
        // The old table counts toward the budget: the next write starts a new generation.
        embed_all(&cached, &texts("new", 10));
        assert!(cached.cache.len().unwrap() <= 3_010);
        assert_eq!(
            reembedded(&cached, &model, &old[..100]),
            0,
            "found in the previous generation, and copied forward"
        );
        embed_all(&cached, &texts("newer", 2_000));
        assert_eq!(
            reembedded(&cached, &model, &old[100..200]),
            100,
            "dropped at last"
        );
        assert_eq!(reembedded(&cached, &model, &old[..100]), 0, "still there");
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
