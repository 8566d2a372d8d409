//! `ragstream serve` and `ragstream broker`: the daemon, and the embedded broker alone.

use std::sync::Arc;

use super::{failure, load_embedder, lock_data_dir, usage, Failure};
use crate::config::{Config, Role};
use crate::engine::Engine;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// What this daemon runs (default: serve.role, which defaults to all): `all`
    /// (ingestion, maintenance, queries), `ingest` (no queries over the bus) or `query` (a
    /// query replica of the indexes on storage.uri).
    #[arg(long, value_enum)]
    pub role: Option<Role>,
}

/// The daemon: Kafka pipeline, queries over the bus, HTTP, until SIGTERM or SIGINT.
pub async fn serve(mut config: Config, args: ServeArgs) -> Result<(), Failure> {
    if let Some(role) = args.role {
        config.serve.role = role;
    }
    let role = config.serve.role;
    if role == Role::Query && config.storage.uri.is_none() {
        return Err(usage(
            "serve.role = query needs storage.uri: a query replica reads the indexes its writer publishes on an object store",
        ));
    }
    // A replica writes nothing shared, so several may run beside a writer; each still
    // needs a data directory of its own for its cache.
    let _lock = lock_data_dir(&config, "serve")?;
    let engine = Engine::new(config.clone(), load_embedder(&config)?).keeping_indexes_warm();
    let engine = Arc::new(match role {
        Role::Query => engine.as_replica(),
        Role::All | Role::Ingest => engine,
    });
    crate::daemon::serve(config, engine).await.map_err(failure)
}

/// The embedded Kafka-protocol broker alone, until SIGTERM or SIGINT.
pub async fn broker(config: Config) -> Result<(), Failure> {
    crate::daemon::run_broker(config).await.map_err(failure)
}
