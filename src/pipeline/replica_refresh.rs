//! A query replica's look for what its writer committed: on each notice of the versions
//! topic, and every `storage.poll_interval_ms` besides, it opens the indexes the object
//! store lists (new ones included) and refreshes each (`Index::refresh`). An index it cannot refresh keeps serving the version it had; the
//! failure is counted (`ragstream_replica_refresh_failures_total`) and listed in
//! `/healthz` until a refresh succeeds.

use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::StreamConsumer;
use tokio::sync::watch;

use crate::engine::Engine;
use crate::health::{Health, Impact};

pub async fn run(
    engine: Arc<Engine>,
    health: Arc<Health>,
    notices: Option<StreamConsumer>,
    mut stopped: watch::Receiver<bool>,
) {
    let every = Duration::from_millis(engine.config().storage.poll_interval_ms);
    loop {
        refresh_all(&engine, &health).await;
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = next_notice(notices.as_ref()) => {}
            _ = stopped.changed() => return,
        }
    }
}

/// Returns when notices arrive, having read every one already waiting (one look serves
/// them all); never without a consumer, nor after a read error (the poll goes on).
async fn next_notice(notices: Option<&StreamConsumer>) {
    let Some(consumer) = notices else {
        return std::future::pending().await;
    };
    if let Err(e) = consumer.recv().await {
        tracing::warn!(error = %e, "reading the versions topic failed; polling until the next look");
        std::future::pending::<()>().await;
    }
    while let Ok(Ok(_)) = tokio::time::timeout(NOTICE_GAP, consumer.recv()).await {}
}

/// Notices closer together than this are served by one look.
const NOTICE_GAP: Duration = Duration::from_millis(5);

/// One look at every index; each failure is reported under `replica.<index>`.
pub async fn refresh_all(engine: &Engine, health: &Health) {
    let names = match engine.list_indexes().await {
        Ok(names) => {
            health.clear("replica");
            engine.close_unlisted(&names).await;
            names
        }
        Err(e) => {
            health.report(
                "replica",
                Impact::Degraded,
                format!("cannot list the indexes on the object store: {e}"),
            );
            return;
        }
    };
    for name in names {
        let part = format!("replica.{name}");
        let refreshed = match engine.index(&name).await {
            Ok(index) => match index.refresh().await {
                Ok(version) => Ok(version),
                Err(crate::store::StoreError::UnknownIndex(_)) => {
                    // Deleted, or deleted and made again: opened afresh next time.
                    engine.close(&name).await;
                    continue;
                }
                Err(e) => Err(e.to_string()),
            },
            // Listed but not yet readable (its writer is creating it): next time.
            Err(crate::engine::EngineError::IndexNotFound(_)) => continue,
            Err(e) => Err(e.to_string()),
        };
        let metrics = crate::telemetry::metrics();
        match refreshed {
            Ok(version) => {
                health.clear(&part);
                if let Some(m) = metrics {
                    m.replica_serving_version
                        .with_label_values(&[name.as_str()])
                        .set(version as i64);
                }
            }
            Err(e) => {
                tracing::warn!(index = %name, error = %e, "replica refresh failed; serving the version it had");
                if let Some(m) = metrics {
                    m.replica_refresh_failures_total
                        .with_label_values(&[name.as_str()])
                        .inc();
                }
                health.report(
                    &part,
                    Impact::Degraded,
                    format!("serving the version it had; the newest cannot be read: {e}"),
                );
            }
        }
    }
}
