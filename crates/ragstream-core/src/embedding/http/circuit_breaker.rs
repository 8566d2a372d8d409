//! A circuit breaker: after `threshold` consecutive transient failures the provider is left
//! alone for `cooldown`; then one trial call decides whether it closes again. It keeps a
//! struggling provider from being hammered by every retry of every batch.
//!
//! Time is passed in, so the state machine is tested without sleeping.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed {
        consecutive_failures: u32,
    },
    Open {
        until: Instant,
    },
    /// The cooldown is over and one trial call is under way.
    HalfOpen,
}

pub struct CircuitBreaker {
    threshold: u32,
    cooldown: Duration,
    state: Mutex<BreakerState>,
}

impl CircuitBreaker {
    pub fn new(threshold: u32, cooldown: Duration) -> Self {
        CircuitBreaker {
            threshold: threshold.max(1),
            cooldown,
            state: Mutex::new(BreakerState::Closed {
                consecutive_failures: 0,
            }),
        }
    }

    pub fn state(&self) -> BreakerState {
        *self.state.lock().expect("breaker lock")
    }

    /// Whether a call may go out now. Past the cooldown, the first caller gets the trial.
    pub fn allow(&self, now: Instant) -> bool {
        let mut state = self.state.lock().expect("breaker lock");
        match *state {
            BreakerState::Closed { .. } => true,
            BreakerState::Open { until } if now >= until => {
                *state = BreakerState::HalfOpen;
                true
            }
            BreakerState::Open { .. } | BreakerState::HalfOpen => false,
        }
    }

    /// The provider answered (even if the answer was a permanent error: it is up).
    pub fn success(&self) {
        *self.state.lock().expect("breaker lock") = BreakerState::Closed {
            consecutive_failures: 0,
        };
    }

    /// A transient failure. Returns true if this opened the breaker.
    pub fn failure(&self, now: Instant) -> bool {
        let mut state = self.state.lock().expect("breaker lock");
        let open = match *state {
            BreakerState::Closed {
                consecutive_failures,
            } if consecutive_failures + 1 < self.threshold => {
                *state = BreakerState::Closed {
                    consecutive_failures: consecutive_failures + 1,
                };
                false
            }
            BreakerState::Open { .. } => false,
            BreakerState::Closed { .. } | BreakerState::HalfOpen => true,
        };
        if open {
            *state = BreakerState::Open {
                until: now + self.cooldown,
            };
        }
        open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_threshold_failures_and_recovers_through_one_trial() {
        let b = CircuitBreaker::new(3, Duration::from_secs(10));
        let t0 = Instant::now();
        assert!(!b.failure(t0));
        assert!(!b.failure(t0));
        assert!(b.allow(t0), "still closed below the threshold");
        assert!(b.failure(t0), "the third failure opens it");
        assert!(
            !b.allow(t0 + Duration::from_secs(9)),
            "open during the cooldown"
        );
        let t1 = t0 + Duration::from_secs(10);
        assert!(
            b.allow(t1),
            "the first caller after the cooldown gets the trial"
        );
        assert_eq!(b.state(), BreakerState::HalfOpen);
        assert!(!b.allow(t1), "only one trial at a time");
        b.success();
        assert!(b.allow(t1));
        assert_eq!(
            b.state(),
            BreakerState::Closed {
                consecutive_failures: 0
            }
        );
    }

    #[test]
    fn a_failed_trial_opens_it_again() {
        let b = CircuitBreaker::new(1, Duration::from_secs(5));
        let t0 = Instant::now();
        assert!(b.failure(t0));
        let t1 = t0 + Duration::from_secs(5);
        assert!(b.allow(t1));
        assert!(b.failure(t1));
        assert!(!b.allow(t1 + Duration::from_secs(4)));
        assert!(b.allow(t1 + Duration::from_secs(5)));
    }

    #[test]
    fn a_success_resets_the_failure_count() {
        let b = CircuitBreaker::new(2, Duration::from_secs(5));
        let t0 = Instant::now();
        assert!(!b.failure(t0));
        b.success();
        assert!(!b.failure(t0), "the count started over");
    }
}
