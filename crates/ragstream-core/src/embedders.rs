//! Builds the embedder a configuration names: a built-in model or an `[embedders.<name>]`
//! HTTP provider, slowed down on request (`model.simulated_latency_ms`).

use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::embedding::http::HttpEmbedder;
use crate::embedding::{
    EmbedError, Embedder, HashingEmbedder, MiniLmEmbedder, StaticEmbedder, Throttled,
};

/// The embedder called `name` in `config`.
pub fn load(config: &Config, name: &str) -> Result<Arc<dyn Embedder>, EmbedError> {
    let model = &config.model;
    let embedder: Arc<dyn Embedder> = match name {
        "hashing" => Arc::new(HashingEmbedder::new(384)),
        "static" => Arc::new(StaticEmbedder::load(
            &model.static_dir,
            model.max_sequence_tokens,
        )?),
        "all-minilm-l6-v2" => Arc::new(MiniLmEmbedder::load(
            &model.dir,
            model.batch_size,
            model.max_sequence_tokens,
        )?),
        other => match config.embedders.get(other) {
            Some(provider) => Arc::new(HttpEmbedder::new(other, provider.clone())?),
            None => {
                return Err(EmbedError::Model {
                    path: format!("embedders.{other}"),
                    reason: "no built-in embedder and no [embedders] section has this name".into(),
                })
            }
        },
    };
    let latency = Duration::from_millis(model.simulated_latency_ms);
    Ok(if latency.is_zero() {
        embedder
    } else {
        Arc::new(Throttled::new(embedder, latency))
    })
}

/// The embedder `model.embedder` names.
pub fn configured(config: &Config) -> Result<Arc<dyn Embedder>, EmbedError> {
    load(config, &config.model.embedder)
}

/// The client queries embed with: for an HTTP provider, the same provider with its query
/// prefix and a query's patience (`HttpEmbedder::for_queries`: one retry, a short timeout);
/// otherwise `embedder` itself.
pub fn for_queries(config: &Config, embedder: &Arc<dyn Embedder>) -> Arc<dyn Embedder> {
    let name = &config.model.embedder;
    match config
        .embedders
        .get(name)
        .map(|p| HttpEmbedder::for_queries(name, p))
    {
        Some(Ok(q)) if q.id() == embedder.id() && q.dimensions() == embedder.dimensions() => {
            Arc::new(q)
        }
        // `embedder` was built from this configuration a moment ago, so the query client
        // builds too; where a caller passed another embedder, queries use that one.
        Some(Err(e)) => {
            tracing::error!(error = %e, "query client of the provider not built; queries use the chunk client");
            embedder.clone()
        }
        _ => embedder.clone(),
    }
}
