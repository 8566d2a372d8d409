//! An object store that does not answer is waited out, as an embedder outage is: the stage
//! that meets it holds its batch and tries again with capped exponential backoff, the
//! mailboxes before it fill, and the source pauses Kafka. Nothing is read ahead, dropped or
//! dead-lettered meanwhile; the stage goes on by itself when the store answers again.

use std::time::Duration;

use crate::engine::{Engine, EngineError};

/// Longest wait between two attempts while the object store does not answer.
const MAX_WAIT: Duration = Duration::from_secs(10);

/// The wait before the first attempt again.
const FIRST_WAIT: Duration = Duration::from_millis(200);

/// Whether `e` is the object store holding the indexes failing (rather than the data or
/// the request being wrong). Always false for indexes on local storage: a failing disk
/// restarts the pipeline as any other commit failure does.
pub async fn is_outage(engine: &Engine, e: &EngineError) -> bool {
    let on_object_store = engine.storage().await.is_ok_and(|s| s.object().is_some());
    on_object_store && matches!(e, EngineError::Store(s) if s.is_storage_failure())
}

/// Capped exponential backoff between attempts.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST_WAIT }
    }
}

impl Backoff {
    /// The wait before the next attempt; each is twice the last, up to [`MAX_WAIT`].
    pub fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(MAX_WAIT);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_cap() {
        let mut b = Backoff::default();
        let waits: Vec<Duration> = (0..10).map(|_| b.next_wait()).collect();
        assert_eq!(waits[0], FIRST_WAIT);
        assert_eq!(waits[1], FIRST_WAIT * 2);
        assert!(waits.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*waits.last().unwrap(), MAX_WAIT);
    }
}
