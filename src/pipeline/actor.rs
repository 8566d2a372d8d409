//! A minimal actor runtime on tokio: an actor owns its state, receives typed messages from a
//! bounded mailbox one at a time, and passes typed messages on through the mailboxes of the
//! next stage. A full mailbox makes the sender wait, which is how backpressure travels up the
//! pipeline to the Kafka consumer.
//!
//! Why not actix: actix's bounded `send` waits for the receiver to *finish* the message (no
//! enqueue-and-go), `do_send` ignores the capacity, actors are tied to an arbiter thread, and
//! its `Supervisor` neither catches panics nor backs off. Quickwit wrote its own small actor
//! layer on tokio for the same reasons; this is the same idea at this project's size.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Why an actor stopped before its mailbox was drained.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ActorError {
    #[error("{actor} failed: {reason}")]
    Failed { actor: &'static str, reason: String },
    #[error("{actor} panicked: {reason}")]
    Panicked { actor: &'static str, reason: String },
    /// The next stage has stopped; this one cannot pass its work on.
    #[error("{actor}: the next stage has stopped")]
    Downstream { actor: &'static str },
}

impl ActorError {
    pub fn failed(actor: &'static str, reason: impl ToString) -> Self {
        ActorError::Failed {
            actor,
            reason: reason.to_string(),
        }
    }
}

/// Which of a mailbox's two queues a message waits in. Each queue has a receiver of its own,
/// so each lane runs its own chain of stages: a live batch never waits for a backfill's batch
/// at any stage (`pipeline::lanes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    Live,
    #[default]
    Bulk,
}

impl Lane {
    pub const ALL: [Lane; 2] = [Lane::Live, Lane::Bulk];

    /// Its place in a pair ordered as [`Lane::ALL`].
    pub fn slot(self) -> usize {
        match self {
            Lane::Live => 0,
            Lane::Bulk => 1,
        }
    }
}

/// A message that names its lane.
pub trait Laned {
    fn lane(&self) -> Lane;
}

/// The sending side of an actor's bounded mailbox: one queue per lane.
pub struct Mailbox<M> {
    tx: [mpsc::Sender<M>; 2],
    depth: Arc<Depth>,
}

impl<M> Clone for Mailbox<M> {
    fn clone(&self) -> Self {
        Mailbox {
            tx: self.tx.clone(),
            depth: self.depth.clone(),
        }
    }
}

/// The receiving side of one lane, owned by the task of the actor that serves the lane.
pub struct Inbox<M> {
    rx: mpsc::Receiver<M>,
    lane: Lane,
    depth: Arc<Depth>,
}

/// The mailbox of actor `actor`, holding at most `capacity` messages in each lane, and its
/// two receivers in the order of [`Lane::ALL`]. Its depth (both lanes) and the time senders
/// wait for room are metrics (`ragstream_actor_mailbox_depth`,
/// `ragstream_actor_backpressure_seconds_total`).
pub fn mailbox<M>(actor: &'static str, capacity: usize) -> (Mailbox<M>, [Inbox<M>; 2]) {
    let (live_tx, live_rx) = mpsc::channel(capacity.max(1));
    let (bulk_tx, bulk_rx) = mpsc::channel(capacity.max(1));
    let depth = Arc::new(Depth {
        actor,
        lanes: Default::default(),
    });
    let inbox = |rx, lane| Inbox {
        rx,
        lane,
        depth: depth.clone(),
    };
    (
        Mailbox {
            tx: [live_tx, bulk_tx],
            depth: depth.clone(),
        },
        [inbox(live_rx, Lane::Live), inbox(bulk_rx, Lane::Bulk)],
    )
}

/// How many messages wait in each lane of one mailbox, as last seen by a sender or a receiver.
struct Depth {
    /// The receiving actor, naming the mailbox in metrics.
    actor: &'static str,
    lanes: [AtomicUsize; 2],
}

impl Depth {
    fn set(&self, lane: Lane, waiting: usize) {
        self.lanes[lane.slot()].store(waiting, Ordering::Relaxed);
        if let Some(m) = crate::telemetry::metrics() {
            let total: usize = self.lanes.iter().map(|l| l.load(Ordering::Relaxed)).sum();
            m.actor_mailbox_depth
                .with_label_values(&[self.actor])
                .set(i64::try_from(total).unwrap_or(i64::MAX));
        }
    }
}

/// The receiver has stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

impl<M: Laned> Mailbox<M> {
    /// Waits for room in the message's lane, then enqueues (it does not wait for the message
    /// to be handled).
    pub async fn send(&self, msg: M) -> Result<(), Closed> {
        let lane = msg.lane();
        let permit = self.reserve(lane).await?;
        permit.send(msg);
        self.record_depth(lane);
        Ok(())
    }

    /// Waits for room in `lane` and holds it: sending on the permit cannot fail or wait.
    /// Dropping the future while waiting loses nothing (there is no message in it yet). Time
    /// spent waiting is counted as this actor's backpressure.
    pub async fn reserve(&self, lane: Lane) -> Result<mpsc::Permit<'_, M>, Closed> {
        let tx = &self.tx[lane.slot()];
        let waited = (tx.capacity() == 0).then(std::time::Instant::now);
        let permit = tx.reserve().await.map_err(|_| Closed)?;
        if let Some(started) = waited {
            if let Some(m) = crate::telemetry::metrics() {
                m.actor_backpressure_seconds_total
                    .with_label_values(&[self.depth.actor])
                    .inc_by(started.elapsed().as_secs_f64());
            }
        }
        Ok(permit)
    }

    fn record_depth(&self, lane: Lane) {
        let tx = &self.tx[lane.slot()];
        self.depth.set(lane, tx.max_capacity() - tx.capacity());
    }

    /// Enqueues without waiting: `Ok(None)` sent, `Ok(Some(msg))` the lane is full.
    pub fn try_send(&self, msg: M) -> Result<Option<M>, Closed> {
        let lane = msg.lane();
        match self.tx[lane.slot()].try_send(msg) {
            Ok(()) => {
                self.record_depth(lane);
                Ok(None)
            }
            Err(mpsc::error::TrySendError::Full(m)) => Ok(Some(m)),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(Closed),
        }
    }
}

impl<M> Inbox<M> {
    /// The lane's next message; `None` once the senders are gone and the lane is drained.
    pub async fn recv(&mut self) -> Option<M> {
        let msg = self.rx.recv().await;
        self.depth.set(self.lane, self.rx.len());
        msg
    }
}

/// A stage of the pipeline.
pub trait Actor: Send + 'static {
    type Message: Send + 'static;
    const NAME: &'static str;

    /// Handles one message. An error stops the actor (and, through the supervisor, restarts
    /// the pipeline it belongs to).
    fn handle(&mut self, msg: Self::Message)
        -> impl Future<Output = Result<(), ActorError>> + Send;
}

/// Runs `actor` on its own task; see [`run`].
pub fn spawn<A: Actor>(actor: A, inbox: Inbox<A::Message>) -> JoinHandle<Result<(), ActorError>> {
    tokio::spawn(run(actor, inbox))
}

/// Handles messages until the mailbox is closed and drained, the actor fails, or it panics (a
/// panic is caught and reported as [`ActorError::Panicked`]).
pub async fn run<A: Actor>(mut actor: A, mut inbox: Inbox<A::Message>) -> Result<(), ActorError> {
    while let Some(msg) = inbox.recv().await {
        let _busy = busy(A::NAME);
        match AssertUnwindSafe(actor.handle(msg)).catch_unwind().await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(panic) => {
                return Err(ActorError::Panicked {
                    actor: A::NAME,
                    reason: crate::panic_message(&panic),
                })
            }
        }
    }
    Ok(())
}

/// Stages holding a message now, and since when (as Quickwit's `protect_zone`): a stage
/// that holds one message longer than the stall limit is stuck, and `/healthz` says so.
static BUSY: std::sync::Mutex<std::collections::BTreeMap<u64, (&'static str, std::time::Instant)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());
static NEXT_BUSY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Marks `stage` busy until the guard is dropped, and adds the time to the stage's
/// `ragstream_actor_busy_seconds_total` (what a stage's share of the pipeline's time is
/// read from: `bench pipeline` reports it).
pub struct Busy {
    id: u64,
    stage: &'static str,
    since: std::time::Instant,
}

pub fn busy(stage: &'static str) -> Busy {
    let id = NEXT_BUSY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let since = std::time::Instant::now();
    BUSY.lock().expect("busy lock").insert(id, (stage, since));
    Busy { id, stage, since }
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.lock().expect("busy lock").remove(&self.id);
        if let Some(m) = crate::telemetry::metrics() {
            m.actor_busy_seconds_total
                .with_label_values(&[self.stage])
                .inc_by(self.since.elapsed().as_secs_f64());
        }
    }
}

/// The stage that has held one message the longest, if any holds one now.
pub fn longest_busy() -> Option<(&'static str, std::time::Duration)> {
    BUSY.lock()
        .expect("busy lock")
        .values()
        .map(|(stage, since)| (*stage, since.elapsed()))
        .max_by_key(|(_, held)| *held)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers from 1,000 up travel in the live lane.
    impl Laned for u64 {
        fn lane(&self) -> Lane {
            if *self >= 1000 {
                Lane::Live
            } else {
                Lane::Bulk
            }
        }
    }

    /// Doubles numbers and passes them on; fails on 13, panics on 666.
    struct Doubler {
        next: Mailbox<u64>,
    }

    impl Actor for Doubler {
        type Message = u64;
        const NAME: &'static str = "doubler";

        async fn handle(&mut self, n: u64) -> Result<(), ActorError> {
            match n {
                13 => Err(ActorError::failed(Self::NAME, "unlucky")),
                666 => panic!("beast"),
                _ => self
                    .next
                    .send(n * 2)
                    .await
                    .map_err(|_| ActorError::Downstream { actor: Self::NAME }),
            }
        }
    }

    #[tokio::test]
    async fn handles_in_order_and_stops_when_drained() {
        let (tx, [_, inbox]) = mailbox("test", 2);
        let (next, [_, mut out]) = mailbox("test", 10);
        let task = spawn(Doubler { next }, inbox);
        for n in [1, 2, 3] {
            tx.send(n).await.unwrap();
        }
        drop(tx);
        assert_eq!(task.await.unwrap(), Ok(()));
        let mut got = Vec::new();
        while let Some(n) = out.recv().await {
            got.push(n);
        }
        assert_eq!(got, vec![2, 4, 6]);
    }

    #[tokio::test]
    async fn an_error_or_a_panic_stops_the_actor_with_its_reason() {
        for (input, want) in [
            (13, ActorError::failed("doubler", "unlucky")),
            (
                666,
                ActorError::Panicked {
                    actor: "doubler",
                    reason: "beast".into(),
                },
            ),
        ] {
            let (tx, [_, inbox]) = mailbox("test", 2);
            let (next, _out) = mailbox("test", 10);
            let task = spawn(Doubler { next }, inbox);
            tx.send(input).await.unwrap();
            assert_eq!(task.await.unwrap(), Err(want));
            assert_eq!(
                tx.send(1).await,
                Err(Closed),
                "a stopped actor's mailbox closes"
            );
        }
    }

    #[tokio::test]
    async fn a_full_mailbox_makes_the_sender_wait() {
        let (tx, [_, mut inbox]) = mailbox::<u64>("test", 1);
        assert_eq!(tx.try_send(1), Ok(None));
        assert_eq!(tx.try_send(2), Ok(Some(2)), "second message does not fit");
        let blocked = tokio::spawn({
            let tx = tx.clone();
            async move { tx.send(2).await }
        });
        tokio::task::yield_now().await;
        assert!(!blocked.is_finished());
        assert_eq!(inbox.recv().await, Some(1));
        assert_eq!(blocked.await.unwrap(), Ok(()));
        assert_eq!(inbox.recv().await, Some(2));
    }

    #[tokio::test]
    async fn each_lane_reaches_its_own_receiver_in_order_and_a_full_one_holds_no_other() {
        let (tx, [mut live, mut bulk]) = mailbox::<u64>("test", 4);
        for n in [1, 2, 1000, 3, 1001, 4] {
            assert_eq!(tx.try_send(n), Ok(None));
        }
        assert_eq!(tx.try_send(5), Ok(Some(5)), "the bulk lane is full");
        assert_eq!(
            tx.try_send(1002),
            Ok(None),
            "the live lane has its own room"
        );
        // The live lane's actor takes its messages while the bulk lane's has taken none.
        for want in [1000, 1001, 1002] {
            assert_eq!(live.recv().await, Some(want));
        }
        drop(tx);
        assert_eq!(live.recv().await, None);
        let mut got = Vec::new();
        while let Some(n) = bulk.recv().await {
            got.push(n);
        }
        assert_eq!(got, vec![1, 2, 3, 4]);
    }
}
