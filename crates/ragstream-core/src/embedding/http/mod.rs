//! Embedding providers over HTTP: OpenAI-compatible `POST /v1/embeddings`, Hugging Face TEI
//! `POST /embed` and Ollama `POST /api/embed`.
//!
//! One [`HttpEmbedder`] serves all three ([`ProviderApi`] holds what differs). A call splits
//! its texts into batches of `max_batch`, sends up to `max_in_flight` of them at once, and
//! retries each on 429 (honouring `Retry-After`), 408, 5xx, timeouts and connection failures
//! with exponential backoff and jitter, behind a circuit breaker. What is still failing after
//! the retries is [`EmbedError::Unavailable`] (transient: the pipeline waits and tries again);
//! a 4xx or an unusable answer (not JSON, wrong count, wrong dimensions) is
//! [`EmbedError::Rejected`] (permanent: the documents go to the dead-letter topic).
//!
//! The client is blocking (`ureq`), like every [`Embedder`]: callers run it on the blocking
//! pool, never on an async worker.

mod api;
mod circuit_breaker;
mod retry;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use api::ProviderApi;
pub use circuit_breaker::{BreakerState, CircuitBreaker};
pub use retry::{retry_after, Backoff};

use super::{l2_normalize, EmbedError, Embedder};

/// `[embedders.<name>]` in the configuration file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// `openai`, `tei` or `ollama`.
    pub provider: ProviderApi,
    /// Base URL; the API's path (`/v1/embeddings`, `/embed`, `/api/embed`) is appended.
    pub url: String,
    /// Model name sent to the provider (TEI serves one model and ignores it).
    #[serde(default)]
    pub model: String,
    /// Dimensions every vector must have; an answer of another length is a permanent error.
    pub dimensions: usize,
    /// Text put before every query, for a model trained to tell queries from passages (e5:
    /// `"query: "`; bge v1.5: `"Represent this sentence for searching relevant passages: "`).
    #[serde(default)]
    pub query_prefix: String,
    /// Text put before every chunk it embeds (e5: `"passage: "`).
    #[serde(default)]
    pub document_prefix: String,
    /// Header that carries the credential, and the environment variable holding it (the
    /// secret itself never sits in the file). `auth_scheme` is prefixed with a space
    /// (`Bearer <key>`); empty sends the key alone.
    #[serde(default = "default_auth_header")]
    pub auth_header: String,
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default = "default_auth_scheme")]
    pub auth_scheme: String,
    /// Whole-request timeout.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Texts per request.
    #[serde(default = "default_max_batch")]
    pub max_batch: usize,
    /// Requests in flight at once (per call).
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: usize,
    /// Retries per request after the first attempt, on transient failures.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    #[serde(default = "default_retry_base_ms")]
    pub retry_base_ms: u64,
    #[serde(default = "default_retry_max_ms")]
    pub retry_max_ms: u64,
    /// Consecutive transient failures that open the circuit breaker, and how long it stays
    /// open before one trial request.
    #[serde(default = "default_breaker_failures")]
    pub breaker_failures: u32,
    #[serde(default = "default_breaker_cooldown_ms")]
    pub breaker_cooldown_ms: u64,
}

fn default_auth_header() -> String {
    "Authorization".into()
}
fn default_auth_scheme() -> String {
    "Bearer".into()
}
fn default_timeout_ms() -> u64 {
    30_000
}
fn default_max_batch() -> usize {
    64
}
fn default_max_in_flight() -> usize {
    4
}
fn default_max_retries() -> u32 {
    5
}
fn default_retry_base_ms() -> u64 {
    250
}
fn default_retry_max_ms() -> u64 {
    20_000
}
fn default_breaker_failures() -> u32 {
    5
}
fn default_breaker_cooldown_ms() -> u64 {
    10_000
}

impl ProviderConfig {
    /// A provider with every optional setting at its default.
    pub fn new(provider: ProviderApi, url: &str, model: &str, dimensions: usize) -> Self {
        ProviderConfig {
            provider,
            url: url.into(),
            model: model.into(),
            dimensions,
            query_prefix: String::new(),
            document_prefix: String::new(),
            auth_header: default_auth_header(),
            api_key_env: None,
            auth_scheme: default_auth_scheme(),
            timeout_ms: default_timeout_ms(),
            max_batch: default_max_batch(),
            max_in_flight: default_max_in_flight(),
            max_retries: default_max_retries(),
            retry_base_ms: default_retry_base_ms(),
            retry_max_ms: default_retry_max_ms(),
            breaker_failures: default_breaker_failures(),
            breaker_cooldown_ms: default_breaker_cooldown_ms(),
        }
    }

    /// The same provider for query embeddings: one retry and at most a 10 s timeout, so that
    /// a query fails fast (503) during an outage instead of waiting out ingestion's retries.
    fn for_queries(&self) -> ProviderConfig {
        ProviderConfig {
            max_retries: self.max_retries.min(1),
            timeout_ms: self.timeout_ms.min(10_000),
            ..self.clone()
        }
    }

    /// The rule a value breaks, as `(key, reason)`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err(("url", "must start with http:// or https://".into()));
        }
        if self.provider != ProviderApi::Tei && self.model.trim().is_empty() {
            return Err(("model", format!("is required for {}", self.provider.name())));
        }
        for (key, value) in [
            ("dimensions", self.dimensions),
            ("max_batch", self.max_batch),
            ("max_in_flight", self.max_in_flight),
            ("timeout_ms", self.timeout_ms as usize),
            ("breaker_failures", self.breaker_failures as usize),
        ] {
            if value == 0 {
                return Err((key, "must be at least 1".into()));
            }
        }
        if self.retry_base_ms > self.retry_max_ms {
            return Err(("retry_base_ms", "must not exceed retry_max_ms".into()));
        }
        Ok(())
    }
}

/// The longest `Retry-After` honoured as given.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// What went wrong with one request.
enum Failure {
    /// Worth retrying; `wait` is the provider's `Retry-After`, if it sent one.
    Transient {
        reason: String,
        wait: Option<Duration>,
    },
    Permanent(String),
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    texts: AtomicU64,
    retries: AtomicU64,
    transient_failures: AtomicU64,
    permanent_failures: AtomicU64,
    breaker_opened: AtomicU64,
    rate_limited: AtomicU64,
}

/// The vectors of one request, or why it failed.
type BatchResult = Result<Vec<Vec<f32>>, EmbedError>;

pub struct HttpEmbedder {
    id: String,
    config: ProviderConfig,
    /// What goes before each text this client embeds: the configured document prefix, or
    /// the query prefix for the query client.
    prefix: String,
    endpoint: String,
    authorization: Option<String>,
    agent: ureq::Agent,
    backoff: Backoff,
    breaker: CircuitBreaker,
    counters: Counters,
}

impl HttpEmbedder {
    /// The client that embeds chunks (with `document_prefix`). The credential is read from
    /// `api_key_env` now, so a missing variable is a start-up error, not a failure at the
    /// first document.
    pub fn new(name: &str, config: ProviderConfig) -> Result<Self, EmbedError> {
        let prefix = config.document_prefix.clone();
        Self::with_prefix(name, config, prefix)
    }

    /// The client that embeds queries: `query_prefix`, and a query's patience (one retry, a
    /// short timeout). Its id is the chunk client's, so an index built by one is searched by
    /// the other.
    pub fn for_queries(name: &str, config: &ProviderConfig) -> Result<Self, EmbedError> {
        Self::with_prefix(name, config.for_queries(), config.query_prefix.clone())
    }

    fn with_prefix(name: &str, config: ProviderConfig, prefix: String) -> Result<Self, EmbedError> {
        let model_err = |reason: String| EmbedError::Model {
            path: format!("embedders.{name}"),
            reason,
        };
        config
            .check()
            .map_err(|(key, reason)| model_err(format!("{key} {reason}")))?;
        let authorization = match &config.api_key_env {
            None => None,
            Some(var) => {
                let key = std::env::var(var)
                    .map_err(|_| model_err(format!("api_key_env names {var}, which is not set")))?;
                Some(if config.auth_scheme.is_empty() {
                    key
                } else {
                    format!("{} {key}", config.auth_scheme)
                })
            }
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_millis(config.timeout_ms)))
            .http_status_as_error(false)
            .max_idle_connections_per_host(config.max_in_flight)
            .build()
            .into();
        let mut id = match config.provider {
            ProviderApi::Tei if config.model.is_empty() => format!("tei:{name}"),
            api => format!("{}:{}", api.name(), config.model),
        };
        // The prefixes change every vector, so they are part of the id an index records: an
        // index built without them (or with others) refuses queries made with them.
        if !(config.query_prefix.is_empty() && config.document_prefix.is_empty()) {
            id = format!(
                "{id} (query prefix {:?}, document prefix {:?})",
                config.query_prefix, config.document_prefix
            );
        }
        Ok(HttpEmbedder {
            id,
            prefix,
            endpoint: format!(
                "{}{}",
                config.url.trim_end_matches('/'),
                config.provider.path()
            ),
            authorization,
            agent,
            backoff: Backoff {
                base: Duration::from_millis(config.retry_base_ms),
                max: Duration::from_millis(config.retry_max_ms),
            },
            breaker: CircuitBreaker::new(
                config.breaker_failures,
                Duration::from_millis(config.breaker_cooldown_ms),
            ),
            config,
            counters: Counters::default(),
        })
    }

    pub fn breaker_state(&self) -> BreakerState {
        self.breaker.state()
    }

    /// One request, no retries.
    fn send(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Failure> {
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        self.counters
            .texts
            .fetch_add(texts.len() as u64, Ordering::Relaxed);
        let mut request = self.agent.post(&self.endpoint);
        if let Some(value) = &self.authorization {
            request = request.header(self.config.auth_header.as_str(), value.as_str());
        }
        let body = self.config.provider.request(&self.config.model, texts);
        let mut response = match request.send_json(&body) {
            Ok(r) => r,
            Err(e) => {
                return Err(Failure::Transient {
                    reason: format!("request failed: {e}"),
                    wait: None,
                })
            }
        };
        let status = response.status().as_u16();
        if status == 200 {
            let value: Value = response
                .body_mut()
                .read_json()
                .map_err(|e| Failure::Permanent(format!("the answer is not JSON: {e}")))?;
            return self
                .vectors(&value, texts.len())
                .map_err(Failure::Permanent);
        }
        let wait = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, SystemTime::now()));
        let detail = response
            .body_mut()
            .with_config()
            .limit(512)
            .read_to_string()
            .unwrap_or_default();
        let reason = format!("HTTP {status}: {}", detail.trim());
        match status {
            429 => {
                self.counters.rate_limited.fetch_add(1, Ordering::Relaxed);
                Err(Failure::Transient { reason, wait })
            }
            408 | 500..=599 => Err(Failure::Transient { reason, wait }),
            _ => Err(Failure::Permanent(reason)),
        }
    }

    /// Checks the count and dimensions of an answer, and normalises the vectors.
    fn vectors(&self, value: &Value, expected: usize) -> Result<Vec<Vec<f32>>, String> {
        let mut vectors = self.config.provider.parse(value)?;
        if vectors.len() != expected {
            return Err(format!(
                "sent {expected} texts, got {} vectors back",
                vectors.len()
            ));
        }
        if let Some(v) = vectors.iter().find(|v| v.len() != self.config.dimensions) {
            return Err(format!(
                "got a {}-dimensional vector, configured dimensions are {}",
                v.len(),
                self.config.dimensions
            ));
        }
        vectors.iter_mut().for_each(|v| l2_normalize(v));
        Ok(vectors)
    }

    /// One batch with retries, behind the breaker.
    fn send_with_retries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut last = String::from("circuit breaker open");
        for attempt in 0..=self.config.max_retries {
            let mut wait = None;
            if self.breaker.allow(Instant::now()) {
                match self.send(texts) {
                    Ok(vectors) => {
                        self.breaker.success();
                        return Ok(vectors);
                    }
                    Err(Failure::Permanent(reason)) => {
                        // The provider is up and answered: it counts as a success for the
                        // breaker, and retrying the same texts would fail the same way.
                        self.breaker.success();
                        self.counters
                            .permanent_failures
                            .fetch_add(1, Ordering::Relaxed);
                        tracing::error!(embedder = %self.id, %reason, "embedding request rejected");
                        return Err(EmbedError::Rejected {
                            provider: self.id.clone(),
                            reason,
                        });
                    }
                    Err(Failure::Transient { reason, wait: w }) => {
                        self.counters
                            .transient_failures
                            .fetch_add(1, Ordering::Relaxed);
                        if self.breaker.failure(Instant::now()) {
                            self.counters.breaker_opened.fetch_add(1, Ordering::Relaxed);
                            if let Some(m) = crate::telemetry::metrics() {
                                m.embedder_circuit_opened_total
                                    .with_label_values(&[self.id.as_str()])
                                    .inc();
                            }
                            tracing::warn!(embedder = %self.id, %reason, "circuit breaker opened");
                        }
                        last = reason;
                        wait = w;
                    }
                }
            } else {
                last = "circuit breaker open".into();
            }
            if attempt == self.config.max_retries {
                break;
            }
            // The provider's Retry-After is honoured as given (up to MAX_RETRY_AFTER, a guard
            // against absurd values); otherwise exponential backoff with jitter.
            let delay = wait
                .map(|w| w.min(MAX_RETRY_AFTER))
                .unwrap_or_else(|| self.backoff.delay(attempt + 1));
            tracing::warn!(embedder = %self.id, reason = %last, retry_in = ?delay, "embedding request failed; retrying");
            self.counters.retries.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(delay);
        }
        Err(EmbedError::Unavailable {
            provider: self.id.clone(),
            reason: last,
        })
    }
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimensions(&self) -> usize {
        self.config.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefixed: Vec<String>;
        let texts: Vec<&str> = if self.prefix.is_empty() {
            texts.to_vec()
        } else {
            prefixed = texts
                .iter()
                .map(|t| format!("{}{t}", self.prefix))
                .collect();
            prefixed.iter().map(String::as_str).collect()
        };
        let batches: Vec<&[&str]> = texts.chunks(self.config.max_batch).collect();
        let results: Vec<Mutex<Option<BatchResult>>> =
            batches.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let failed = std::sync::atomic::AtomicBool::new(false);
        let workers = self.config.max_in_flight.min(batches.len());
        // Up to `max_in_flight` requests at once; each worker takes the next batch until
        // none are left or one has failed (its error is the call's error).
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= batches.len() || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let result = self.send_with_retries(batches[i]);
                    failed.fetch_or(result.is_err(), Ordering::Relaxed);
                    *results[i].lock().expect("result slot") = Some(result);
                });
            }
        });
        let mut out = Vec::with_capacity(texts.len());
        let mut first_error = None;
        for slot in results {
            match slot.into_inner().expect("result slot") {
                Some(Ok(vectors)) => out.extend(vectors),
                // A permanent error wins over a transient one: the batch cannot succeed.
                Some(Err(e)) if first_error.as_ref().is_none_or(EmbedError::is_transient) => {
                    first_error = Some(e)
                }
                Some(Err(_)) | None => {}
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    fn report(&self) -> Value {
        let c = &self.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let breaker = match self.breaker.state() {
            BreakerState::Closed { .. } => "closed",
            BreakerState::Open { .. } => "open",
            BreakerState::HalfOpen => "half_open",
        };
        json!({
            "embedder": self.id,
            "endpoint": self.endpoint,
            "requests": load(&c.requests),
            "texts": load(&c.texts),
            "retries": load(&c.retries),
            "rate_limited": load(&c.rate_limited),
            "transient_failures": load(&c.transient_failures),
            "permanent_failures": load(&c.permanent_failures),
            "breaker_opened": load(&c.breaker_opened),
            "breaker": breaker,
        })
    }
}
