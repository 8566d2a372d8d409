//! The probes: `/healthz` (liveness) and `/readyz` (readiness), and their answers.

use std::sync::atomic::Ordering;

use actix_web::{web, HttpResponse};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::HttpState;
use crate::contracts::wire::error::{ErrorBody, ErrorDetail};
use crate::health::{Impact, Problem};

/// The answer of `/healthz`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Health {
    pub status: HealthStatus,
    /// Every problem a part of the daemon reports now.
    pub problems: Vec<Problem>,
    pub pipeline: PipelineRestarts,
    /// The embedder's report; its shape depends on the embedder (with the cache:
    /// `{embedder, cache: {hits, misses, hit_ratio, entries}}`).
    pub embedding: Value,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    Ok,
    Unhealthy,
}

/// The ingest pipeline's supervised restarts.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct PipelineRestarts {
    /// Supervised restarts of the ingest pipeline.
    pub restarts: u64,
    /// Why it last restarted; null if never.
    pub last_failure: Option<String>,
}

/// The answer of `/readyz` when the daemon is ready.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Ready {
    #[schemars(extend("const" = "ready"))]
    pub status: &'static str,
    /// Every problem a part of the daemon reports now.
    pub problems: Vec<Problem>,
}

/// The answer of `/readyz` when it is not: why, and every problem.
#[derive(Debug, Serialize)]
struct NotReady {
    error: ErrorDetail,
    problems: Vec<Problem>,
}

/// Liveness: 200 `ok` unless a part reports a problem that needs a restart or an operator
/// (a stalled pipeline, a restart loop, dead letters that cannot be delivered), then 503
/// `unhealthy`. Either way the body lists every problem with its reason, and the ingest
/// pipeline's supervised restarts.
pub(super) async fn healthz(state: web::Data<HttpState>) -> HttpResponse {
    let problems = state.health.problems();
    let healthy = problems.iter().all(|p| p.impact != Impact::Unhealthy);
    let mut response = if healthy {
        HttpResponse::Ok()
    } else {
        HttpResponse::ServiceUnavailable()
    };
    response.json(Health {
        status: if healthy {
            HealthStatus::Ok
        } else {
            HealthStatus::Unhealthy
        },
        problems,
        pipeline: PipelineRestarts {
            restarts: state.pipeline.restarts(),
            last_failure: state.pipeline.last_failure(),
        },
        embedding: state.engine.embedding_report(),
    })
}

/// Readiness: 503 while starting or draining, and while a part reports that requests
/// cannot be served (the data directory cannot be written), with the reasons.
pub(super) async fn readyz(state: web::Data<HttpState>) -> HttpResponse {
    let problems = state.health.problems();
    let not_ready = |message: String, problems| {
        HttpResponse::ServiceUnavailable().json(NotReady {
            error: ErrorBody::new("not_ready", message).error,
            problems,
        })
    };
    if !state.ready.load(Ordering::SeqCst) {
        return not_ready("the daemon is starting or shutting down".into(), problems);
    }
    let reasons: Vec<&str> = problems
        .iter()
        .filter(|p| p.impact == Impact::Unready)
        .map(|p| p.reason.as_str())
        .collect();
    if !reasons.is_empty() {
        let message = reasons.join("; ");
        return not_ready(message, problems);
    }
    HttpResponse::Ok().json(Ready {
        status: "ready",
        problems,
    })
}
