//! What `/healthz` and `/readyz` report. Each part of the daemon reports its own problem
//! (or clears it) under its own name; the probes read them all.
//!
//! - An [`Impact::Unhealthy`] problem (a stalled pipeline, a restart loop, dead letters
//!   that cannot be delivered) fails `/healthz`: the process is not doing its job and a
//!   restart or an operator is needed.
//! - An [`Impact::Unready`] problem (a data directory that cannot be written) fails
//!   `/readyz`: requests should go elsewhere until it is fixed.
//!
//! - An [`Impact::Degraded`] problem fails neither probe: it is listed so that an operator
//!   sees it.
//!
//! Both probes list every problem with its reason, so the answer says what is wrong.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

/// What a problem fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(
    description = "`unhealthy` fails /healthz, `unready` fails /readyz, `degraded` fails neither."
)]
pub enum Impact {
    Unhealthy,
    Unready,
    /// Listed by both probes, failing neither: the daemon serves, but not all it should (a
    /// query replica serving an older version than its writer has committed).
    Degraded,
}

/// One reported problem.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// Which part: `storage`, `pipeline.stalled`, `pipeline.commits.<index>`,
    /// `pipeline.restarts`, `queries.restarts`, `maintenance.restarts`, `dead_letters`, ...
    pub part: String,
    pub impact: Impact,
    /// What is wrong, in words.
    pub reason: String,
    /// When the part first reported it (RFC 3339, UTC).
    #[schemars(extend("format" = "date-time"))]
    pub since: String,
}

#[derive(Debug, Default)]
pub struct Health {
    problems: Mutex<BTreeMap<String, Problem>>,
}

impl Health {
    /// Records `part`'s problem; a part reporting the same problem again keeps its `since`.
    pub fn report(&self, part: &str, impact: Impact, reason: impl Into<String>) {
        let reason = reason.into();
        let mut problems = self.problems.lock().expect("health lock");
        if let Some(p) = problems.get_mut(part) {
            p.impact = impact;
            p.reason = reason;
            return;
        }
        tracing::error!(part, ?impact, %reason, "health: problem reported");
        let since = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        problems.insert(
            part.to_string(),
            Problem {
                part: part.to_string(),
                impact,
                reason,
                since,
            },
        );
    }

    /// `part` is fine again.
    pub fn clear(&self, part: &str) {
        if self
            .problems
            .lock()
            .expect("health lock")
            .remove(part)
            .is_some()
        {
            tracing::info!(part, "health: problem cleared");
        }
    }

    /// Reports `problem` for `part`, or clears it when `None`.
    pub fn set(&self, part: &str, impact: Impact, problem: Option<String>) {
        match problem {
            Some(reason) => self.report(part, impact, reason),
            None => self.clear(part),
        }
    }

    pub fn problems(&self) -> Vec<Problem> {
        self.problems
            .lock()
            .expect("health lock")
            .values()
            .cloned()
            .collect()
    }

    pub fn is_healthy(&self) -> bool {
        self.problems()
            .iter()
            .all(|p| p.impact != Impact::Unhealthy)
    }

    pub fn is_ready(&self) -> bool {
        self.problems().iter().all(|p| p.impact != Impact::Unready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_fail_their_probe_until_cleared_and_keep_their_first_time() {
        let h = Health::default();
        assert!(h.is_healthy() && h.is_ready());
        h.report("storage", Impact::Unready, "disk full");
        assert!(h.is_healthy());
        assert!(!h.is_ready());
        h.report("pipeline", Impact::Unhealthy, "stalled");
        let since = h.problems()[0].since.clone();
        h.report("pipeline", Impact::Unhealthy, "stalled longer");
        let pipeline = h
            .problems()
            .into_iter()
            .find(|p| p.part == "pipeline")
            .unwrap();
        assert_eq!(pipeline.reason, "stalled longer");
        assert_eq!(pipeline.since, since);
        assert!(!h.is_healthy());
        h.set("pipeline", Impact::Unhealthy, None);
        h.clear("storage");
        assert!(h.is_healthy() && h.is_ready());
        assert!(h.problems().is_empty());
    }
}
