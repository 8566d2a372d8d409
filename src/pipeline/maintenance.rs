//! The maintenance actor: every `index.maintenance.interval_ms` it runs one maintenance pass
//! ([`crate::index::maintenance`]) over each index this process writes, then lets the
//! index calibrate `auto` on its own queries when it has grown enough to be due. The pass takes
//! the index's write lock for each commit it makes, so it interleaves with the index writer
//! between batches rather than racing it. Passes run at `index.maintenance.background_priority` (idle
//! time by default), so that they take the cores queries and the writer leave free.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::engine::Engine;

pub async fn run(engine: Arc<Engine>, mut stopped: watch::Receiver<bool>) {
    let every = engine.config().index.maintenance.interval_ms;
    if every == 0 {
        return;
    }
    let mut ticks = tokio::time::interval(Duration::from_millis(every));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is immediate: skip it, a daemon that just started has nothing to tidy.
    ticks.tick().await;
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = stopped.changed() => return,
        }
        // Deleted indexes' files (`index::deleted`): removed here, off the request path.
        let purge = {
            let engine = engine.clone();
            tokio::task::spawn_blocking(move || engine.purge_deleted_indexes())
        };
        match purge.await {
            Ok(Ok(0)) => {}
            Ok(Ok(n)) => tracing::info!(indexes = n, "deleted indexes' files removed"),
            Ok(Err(e)) => tracing::warn!(error = %e, "removing deleted indexes' files failed"),
            Err(e) => tracing::warn!(error = %e, "removing deleted indexes' files panicked"),
        }
        let names = match engine.maintained_indexes().await {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!(error = %e, "listing indexes for maintenance failed");
                Vec::new()
            }
        };
        for name in names {
            // At the background priority (`index.maintenance.background_priority`): see runtime/background.rs.
            let pass = {
                let (engine, name) = (engine.clone(), name.clone());
                crate::runtime::background::run(async move { engine.maintain(&name).await })
            };
            let report = tokio::select! {
                r = pass => r,
                _ = stopped.changed() => return,
            };
            match report {
                Ok(r) if r.fragments_compacted + r.chunks_purged + r.versions_pruned > 0 => {
                    tracing::info!(index = %name, compacted = r.fragments_compacted,
                        written = r.fragments_written, purged = r.chunks_purged,
                        pruned = r.versions_pruned, seconds = r.seconds, "maintenance pass");
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(index = %name, error = %e, "maintenance pass failed"),
            }
            // `auto` calibrates itself as the index grows (eval/calibrate.rs), also at the
            // background priority.
            let calibration = {
                let (engine, name) = (engine.clone(), name.clone());
                crate::runtime::background::run(async move {
                    crate::calibration::calibrate::self_calibrate_if_due(&engine, &name).await
                })
            };
            let calibrated = tokio::select! {
                r = calibration => r,
                _ = stopped.changed() => return,
            };
            if let Err(e) = calibrated {
                tracing::warn!(index = %name, error = %e, "calibrating auto failed");
            }
        }
    }
}
