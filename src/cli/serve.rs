//! `ragstream serve` and `ragstream broker`: the daemon, and the embedded broker alone.

use std::sync::Arc;

use super::{failure, load_embedder, lock_data_dir, Failure};
use crate::config::Config;
use crate::engine::Engine;

/// The daemon: Kafka pipeline, queries over the bus, HTTP, until SIGTERM or SIGINT.
pub async fn serve(config: Config) -> Result<(), Failure> {
    let _lock = lock_data_dir(&config, "serve")?;
    let engine =
        Arc::new(Engine::new(config.clone(), load_embedder(&config)?).keeping_indexes_warm());
    crate::daemon::serve(config, engine).await.map_err(failure)
}

/// The embedded Kafka-protocol broker alone, until SIGTERM or SIGINT.
pub async fn broker(config: Config) -> Result<(), Failure> {
    crate::daemon::run_broker(config).await.map_err(failure)
}
