//! EmbedderClient: fills in the vectors of a planned batch's new chunks. The embedder is the
//! slowest stage; while it works its mailbox fills and the source pauses Kafka. Embedding is
//! CPU-bound, so it runs on the blocking pool and never holds up the async workers that
//! answer queries. Failures are retried with backoff; when retries run out the actor fails
//! and the supervisor restarts the pipeline from the stored checkpoint.

use std::sync::Arc;
use std::time::Duration;

use super::actor::{Actor, ActorError, Mailbox};
use super::PlannedBatch;
use crate::embedding::Embedder;
use crate::index::{ChunkRow, WritePlan};

/// Attempts per batch before the actor gives up.
const ATTEMPTS: u32 = 4;

pub struct EmbedderClient {
    pub embedder: Arc<dyn Embedder>,
    pub next: Mailbox<PlannedBatch>,
}

impl Actor for EmbedderClient {
    type Message = PlannedBatch;
    const NAME: &'static str = "embedder-client";

    async fn handle(&mut self, mut batch: PlannedBatch) -> Result<(), ActorError> {
        for work in &mut batch.work {
            let rows = std::mem::take(&mut work.rows);
            work.rows = self.embed(rows).await?;
        }
        self.next
            .send(batch)
            .await
            .map_err(|_| ActorError::Downstream { actor: Self::NAME })
    }
}

impl EmbedderClient {
    async fn embed(&self, rows: Vec<ChunkRow>) -> Result<Vec<ChunkRow>, ActorError> {
        let mut plan = WritePlan {
            rows,
            ..WritePlan::default()
        };
        let mut delay = Duration::from_millis(200);
        let mut attempt = 1;
        loop {
            let embedder = self.embedder.clone();
            let (returned, result) = tokio::task::spawn_blocking(move || {
                let r = plan.embed(embedder.as_ref());
                (plan, r)
            })
            .await
            .map_err(|e| ActorError::failed(Self::NAME, e))?;
            plan = returned;
            match result {
                Ok(()) => return Ok(plan.rows),
                Err(e) if attempt == ATTEMPTS => return Err(ActorError::failed(Self::NAME, e)),
                Err(e) => {
                    tracing::warn!(error = %e, attempt, retry_in = ?delay, "embedding failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                    attempt += 1;
                }
            }
        }
    }
}
