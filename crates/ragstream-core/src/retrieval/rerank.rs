//! Reranking: a cross-encoder's second opinion on the top hits of a search.
//!
//! Retrieval scores each chunk on its own (a vector, BM25); a reranker reads the query and a
//! candidate together, which orders the top of a result list better but costs a model pass
//! per candidate, so only the first `candidates` hits go to it. The model runs in its own
//! server: Hugging Face text-embeddings-inference (`POST /rerank`) or anything speaking
//! Cohere's `POST /v1/rerank` (Cohere, Jina, vLLM, LiteLLM…). One [`HttpReranker`] speaks both
//! ([`RerankApi`] holds what differs).
//!
//! A reranker sits on the query path, so it fails fast: one attempt within `timeout_ms`, no
//! retries, no circuit breaker. What a failure means (answer in retrieval order, or fail the
//! query) is the caller's decision; this module only says precisely what went wrong.
//!
//! The client is blocking (`ureq`), like the embedding providers: callers run it on the
//! blocking pool, never on an async worker.

use std::io::Read;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The most candidates one query may send: each is a model pass while the caller waits.
pub const MAX_CANDIDATES: usize = 1000;

/// The largest answer read. A thousand `{index, score}` items are under 100 kB; anything far
/// bigger is not a rerank answer.
const MAX_ANSWER_BYTES: u64 = 4 << 20;

/// How much of an error answer is kept: enough for the server's reason, bounded so that an
/// error page cannot flood the log.
const EXCERPT_BYTES: u64 = 512;

/// Scores how relevant each text is to a query.
pub trait Reranker: Send + Sync {
    /// Stable identifier for logs and reports (for example `tei:http://127.0.0.1:8081`).
    fn id(&self) -> &str;

    /// One relevance score per text, in the order of `texts`; higher is more relevant.
    /// Scores are comparable within one call, not necessarily across calls or rerankers.
    fn rerank(&self, query: &str, texts: &[&str]) -> Result<Vec<f64>, RerankError>;

    /// How many of a query's best fused hits it reorders.
    fn candidates(&self) -> usize;
}

#[derive(Debug, thiserror::Error)]
pub enum RerankError {
    /// The configuration cannot make a client (no URL, an unset `api_key_env`…).
    #[error("reranker configuration: `{key}` {reason}")]
    Config { key: String, reason: String },
    /// No answer: connection refused, DNS failure, timeout, a connection cut mid-answer.
    #[error("reranker {reranker} is unreachable: {reason}")]
    Unreachable { reranker: String, reason: String },
    /// The server answered with a non-2xx status; `body` is the start of its answer.
    #[error("reranker {reranker} answered HTTP {status}: {body}")]
    Status {
        reranker: String,
        status: u16,
        body: String,
    },
    /// A 2xx whose body is not the API's shape (not JSON, no results, a non-number score).
    #[error("reranker {reranker} sent a malformed answer: {reason}")]
    Malformed { reranker: String, reason: String },
    /// A well-formed answer that does not score every text exactly once: too few or too many
    /// scores, an index out of range, an index twice.
    #[error("reranker {reranker} did not score each text once: {reason}")]
    Mismatch { reranker: String, reason: String },
}

/// Which rerank API the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RerankApi {
    /// Hugging Face text-embeddings-inference `POST /rerank`.
    #[default]
    Tei,
    /// Cohere-compatible `POST /v1/rerank` (Cohere, Jina, vLLM, LiteLLM…).
    Cohere,
}

impl RerankApi {
    pub fn name(self) -> &'static str {
        match self {
            RerankApi::Tei => "tei",
            RerankApi::Cohere => "cohere",
        }
    }

    /// Path appended to the configured base URL.
    pub fn path(self) -> &'static str {
        match self {
            RerankApi::Tei => "/rerank",
            RerankApi::Cohere => "/v1/rerank",
        }
    }

    fn request(self, model: Option<&str>, query: &str, texts: &[&str]) -> Value {
        match self {
            // TEI serves one model. `truncate` cuts an over-long query+text pair to the
            // model's window instead of failing the whole request (as the embedder does);
            // plain (sigmoid) scores and no echoed texts keep the answer small.
            RerankApi::Tei => json!({
                "query": query,
                "texts": texts,
                "truncate": true,
                "raw_scores": false,
                "return_text": false,
            }),
            RerankApi::Cohere => {
                // `top_n` = all: every text needs a score, not just the best few.
                let mut body = json!({"query": query, "documents": texts, "top_n": texts.len()});
                // Cohere requires a model; self-hosted servers speaking its API may serve
                // one and not want it, so it is sent only when configured.
                if let Some(model) = model {
                    body["model"] = json!(model);
                }
                body
            }
        }
    }

    /// The `(index, score)` pairs of a successful answer, in the server's order. An answer
    /// of another shape is an error message.
    fn parse(self, body: &Value) -> Result<Vec<(u64, f64)>, String> {
        let (items, score_key) = match self {
            RerankApi::Tei => (
                body.as_array()
                    .ok_or("expected an array of {index, score}")?,
                "score",
            ),
            RerankApi::Cohere => (
                body.get("results")
                    .and_then(Value::as_array)
                    .ok_or("the answer has no `results` array")?,
                "relevance_score",
            ),
        };
        items
            .iter()
            .enumerate()
            .map(|(position, item)| -> Result<(u64, f64), String> {
                let index = item
                    .get("index")
                    .and_then(Value::as_u64)
                    .ok_or(format!("result {position} has no integer `index`"))?;
                let score = item
                    .get(score_key)
                    .and_then(Value::as_f64)
                    .filter(|s| s.is_finite())
                    .ok_or(format!("result {position} has no numeric `{score_key}`"))?;
                Ok((index, score))
            })
            .collect()
    }
}

/// Puts scores back in input order. Servers may sort by relevance, so order means nothing;
/// `index` says which text a score belongs to, and each of the `count` texts needs exactly
/// one.
fn in_input_order(scored: &[(u64, f64)], count: usize) -> Result<Vec<f64>, String> {
    if scored.len() != count {
        return Err(format!("sent {count} texts, got {} scores", scored.len()));
    }
    let mut scores: Vec<Option<f64>> = vec![None; count];
    for &(index, score) in scored {
        let slot = usize::try_from(index)
            .ok()
            .filter(|&i| i < count)
            .ok_or(format!("index {index} is out of range for {count} texts"))?;
        if scores[slot].replace(score).is_some() {
            return Err(format!("index {index} is scored twice"));
        }
    }
    // As many scores as texts, all in range, none twice: every slot is filled. Checked
    // anyway rather than unwrapped.
    scores
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.ok_or(format!("text {i} has no score")))
        .collect()
}

/// `[reranker]`-style settings for one rerank server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RerankerConfig {
    /// Off by default: reranking needs a server that ragstream does not start.
    pub enabled: bool,
    /// `tei` or `cohere`.
    pub api: RerankApi,
    /// Base URL, for example `http://127.0.0.1:8081`; the API's path is appended.
    pub url: String,
    /// Model name, sent to Cohere-style servers (TEI serves one model).
    pub model: Option<String>,
    /// The environment variable holding a bearer token (the secret never sits in the file).
    pub api_key_env: Option<String>,
    /// Whole-request timeout. Short, because a query waits for it.
    pub timeout_ms: u64,
    /// How many of the top hits are sent to the reranker.
    pub candidates: usize,
}

impl Default for RerankerConfig {
    fn default() -> Self {
        RerankerConfig {
            enabled: false,
            api: RerankApi::Tei,
            url: String::new(),
            model: None,
            api_key_env: None,
            timeout_ms: 5_000,
            // TEI's default --max-client-batch-size: one request, accepted as configured.
            candidates: 32,
        }
    }
}

impl RerankerConfig {
    /// The rule a value breaks, as `(key, reason)`. The URL is required only when enabled
    /// (the default section has none); the numbers are checked either way, since their
    /// defaults are valid and a bad value is a mistake worth reporting before it is enabled.
    pub fn check(&self) -> Result<(), (String, String)> {
        let bad = |key: &str, reason: &str| Err((key.to_string(), reason.to_string()));
        if self.enabled {
            if let Err(reason) = check_url(&self.url) {
                return bad("url", reason);
            }
            // A missing credential is a start-up error, like the auth tokens' `token_env`.
            if let Some(var) = &self.api_key_env {
                if std::env::var(var).map_or(true, |v| v.trim().is_empty()) {
                    return bad("api_key_env", &format!("names {var}, which is not set"));
                }
            }
        }
        if self.timeout_ms == 0 {
            return bad("timeout_ms", "must be at least 1");
        }
        if !(1..=MAX_CANDIDATES).contains(&self.candidates) {
            return bad("candidates", "must be between 1 and 1000");
        }
        Ok(())
    }
}

fn check_url(url: &str) -> Result<(), &'static str> {
    if url.trim().is_empty() {
        return Err("is required when the reranker is enabled");
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err("must start with http:// or https://");
    }
    Ok(())
}

/// A [`Reranker`] served over HTTP by a TEI or Cohere-style server.
pub struct HttpReranker {
    id: String,
    api: RerankApi,
    endpoint: String,
    model: Option<String>,
    authorization: Option<String>,
    agent: ureq::Agent,
    candidates: usize,
}

impl HttpReranker {
    /// A client for `config`. The credential is read from `api_key_env` now, so that a
    /// missing variable is a start-up error, not a failure at the first query.
    pub fn new(config: &RerankerConfig) -> Result<Self, RerankError> {
        let config_err = |key: &str, reason: String| RerankError::Config {
            key: key.to_string(),
            reason,
        };
        config
            .check()
            .map_err(|(key, reason)| config_err(&key, reason))?;
        // `check` leaves the URL alone while disabled; a client needs one either way.
        check_url(&config.url).map_err(|reason| config_err("url", reason.to_string()))?;
        let authorization = match &config.api_key_env {
            None => None,
            Some(var) => {
                let key = std::env::var(var).map_err(|_| {
                    config_err("api_key_env", format!("names {var}, which is not set"))
                })?;
                Some(format!("Bearer {}", key.trim()))
            }
        };
        // An empty model is no model: `model = ""` in a file must not send `"model": ""`.
        let model = config
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        let base = config.url.trim_end_matches('/');
        let id = match (config.api, &model) {
            (RerankApi::Cohere, Some(m)) => format!("cohere:{m}"),
            (api, _) => format!("{}:{base}", api.name()),
        };
        // Statuses are read, not raised: an error answer's body says why.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_millis(config.timeout_ms)))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(HttpReranker {
            candidates: config.candidates,
            id,
            api: config.api,
            endpoint: format!("{base}{}", config.api.path()),
            model,
            authorization,
            agent,
        })
    }

    /// One request and its JSON answer. No retries, on purpose: a query is waiting, and
    /// answering it in retrieval order now beats a reranked answer after a second timeout.
    fn post(&self, body: &Value) -> Result<Value, RerankError> {
        let mut request = self.agent.post(&self.endpoint);
        if let Some(value) = &self.authorization {
            request = request.header("Authorization", value.as_str());
        }
        let mut response = request.send_json(body).map_err(|e| self.unreachable(e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(RerankError::Status {
                reranker: self.id.clone(),
                status,
                body: excerpt(response.body_mut()),
            });
        }
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => {
                    self.malformed(format!("the answer exceeds {MAX_ANSWER_BYTES} bytes"))
                }
                e => self.unreachable(e),
            })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| self.malformed(format!("the answer is not JSON: {e}")))
    }

    fn unreachable(&self, e: ureq::Error) -> RerankError {
        RerankError::Unreachable {
            reranker: self.id.clone(),
            reason: e.to_string(),
        }
    }

    fn malformed(&self, reason: String) -> RerankError {
        RerankError::Malformed {
            reranker: self.id.clone(),
            reason,
        }
    }
}

/// The start of an error answer, as text.
fn excerpt(body: &mut ureq::Body) -> String {
    let mut bytes = Vec::new();
    // A failure while reading keeps what was read: the status is the error, this is detail.
    let _ = body.as_reader().take(EXCERPT_BYTES).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).trim().to_string()
}

impl Reranker for HttpReranker {
    fn id(&self) -> &str {
        &self.id
    }

    fn candidates(&self) -> usize {
        self.candidates
    }

    fn rerank(&self, query: &str, texts: &[&str]) -> Result<Vec<f64>, RerankError> {
        // Nothing to order; some servers reject an empty list, so do not ask.
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let started = Instant::now();
        let body = self.api.request(self.model.as_deref(), query, texts);
        let answer = self.post(&body)?;
        let scored = self.api.parse(&answer).map_err(|r| self.malformed(r))?;
        let scores =
            in_input_order(&scored, texts.len()).map_err(|reason| RerankError::Mismatch {
                reranker: self.id.clone(),
                reason,
            })?;
        tracing::debug!(reranker = %self.id, texts = texts.len(), elapsed = ?started.elapsed(), "reranked");
        Ok(scores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::sync::mpsc;

    /// A request as the server saw it.
    struct Seen {
        request_line: String,
        /// Names lowercased (HTTP names are case-insensitive), values as sent.
        headers: Vec<(String, String)>,
        body: Value,
    }

    impl Seen {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        }
    }

    /// A one-shot HTTP server on 127.0.0.1: answers the first request with `status` and
    /// `body`, then hands the request over the channel.
    fn serve_once(status: &'static str, body: String) -> (String, mpsc::Receiver<Seen>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let Ok(seen) = read_request(&mut stream) else {
                return;
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes());
            let _ = stream.flush();
            let _ = tx.send(seen);
        });
        (url, rx)
    }

    fn read_request(stream: &mut TcpStream) -> std::io::Result<Seen> {
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(i) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            bytes.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
        let mut lines = head.lines();
        let request_line = lines.next().unwrap_or_default().to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let length = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        while bytes.len() < head_end + length {
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
        let body =
            serde_json::from_slice(&bytes[head_end..head_end + length]).unwrap_or(Value::Null);
        Ok(Seen {
            request_line,
            headers,
            body,
        })
    }

    fn seen(rx: &mpsc::Receiver<Seen>) -> Seen {
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the server saw a request")
    }

    fn config(api: RerankApi, url: &str) -> RerankerConfig {
        RerankerConfig {
            enabled: true,
            api,
            url: url.to_string(),
            timeout_ms: 2_000,
            ..RerankerConfig::default()
        }
    }

    #[test]
    fn tei_scores_come_back_in_input_order() {
        let answer = json!([
            {"index": 2, "score": 0.75},
            {"index": 0, "score": 0.25},
            {"index": 1, "score": 0.5}
        ]);
        let (url, rx) = serve_once("200 OK", answer.to_string());
        // A trailing slash on the base URL must not double the path's.
        let r = HttpReranker::new(&config(RerankApi::Tei, &format!("{url}/"))).unwrap();
        let scores = r.rerank("which?", &["a", "b", "c"]).unwrap();
        assert_eq!(scores, vec![0.25, 0.5, 0.75]);

        let s = seen(&rx);
        assert!(
            s.request_line.starts_with("POST /rerank "),
            "{}",
            s.request_line
        );
        assert_eq!(
            s.body,
            json!({
                "query": "which?",
                "texts": ["a", "b", "c"],
                "truncate": true,
                "raw_scores": false,
                "return_text": false
            })
        );
        assert_eq!(s.header("authorization"), None);
        assert_eq!(r.id(), format!("tei:{url}"));
    }

    #[test]
    fn cohere_sends_model_and_key_and_reads_relevance_scores() {
        let var = "RERANK_TEST_KEY_COHERE_4F2A9";
        std::env::set_var(var, "sekret");
        let answer = json!({
            "id": "x",
            "results": [
                {"index": 1, "relevance_score": 0.875},
                {"index": 0, "relevance_score": 0.125}
            ],
            "meta": {}
        });
        let (url, rx) = serve_once("200 OK", answer.to_string());
        let mut c = config(RerankApi::Cohere, &url);
        c.model = Some("rerank-v3.5".into());
        c.api_key_env = Some(var.into());
        let r = HttpReranker::new(&c).unwrap();
        assert_eq!(r.rerank("q", &["a", "b"]).unwrap(), vec![0.125, 0.875]);

        let s = seen(&rx);
        assert!(
            s.request_line.starts_with("POST /v1/rerank "),
            "{}",
            s.request_line
        );
        assert_eq!(
            s.body,
            json!({"model": "rerank-v3.5", "query": "q", "documents": ["a", "b"], "top_n": 2})
        );
        assert_eq!(s.header("authorization"), Some("Bearer sekret"));
        assert_eq!(r.id(), "cohere:rerank-v3.5");
    }

    #[test]
    fn an_error_status_is_a_status_error_with_the_servers_reason() {
        let (url, rx) = serve_once("500 Internal Server Error", "model not loaded".into());
        let r = HttpReranker::new(&config(RerankApi::Tei, &url)).unwrap();
        match r.rerank("q", &["a"]) {
            Err(RerankError::Status { status, body, .. }) => {
                assert_eq!(status, 500);
                assert_eq!(body, "model not loaded");
            }
            other => panic!("expected a status error, got {other:?}"),
        }
        seen(&rx);
    }

    #[test]
    fn an_answer_that_is_not_json_or_not_the_shape_is_malformed() {
        for (api, answer) in [
            (RerankApi::Tei, "[{\"index\": 0, \"score\": "),
            (RerankApi::Tei, "{\"error\": \"x\"}"),
            (
                RerankApi::Cohere,
                "[{\"index\": 0, \"relevance_score\": 1.0}]",
            ),
            (RerankApi::Tei, "[{\"index\": 0, \"score\": \"high\"}]"),
        ] {
            let (url, rx) = serve_once("200 OK", answer.into());
            let r = HttpReranker::new(&config(api, &url)).unwrap();
            let got = r.rerank("q", &["a"]);
            assert!(
                matches!(got, Err(RerankError::Malformed { .. })),
                "{api:?} {answer}: {got:?}"
            );
            seen(&rx);
        }
    }

    #[test]
    fn a_missing_index_is_a_mismatch() {
        let answer = json!([{"index": 0, "score": 0.5}, {"index": 2, "score": 0.5}]);
        let (url, rx) = serve_once("200 OK", answer.to_string());
        let r = HttpReranker::new(&config(RerankApi::Tei, &url)).unwrap();
        let got = r.rerank("q", &["a", "b", "c"]);
        assert!(matches!(got, Err(RerankError::Mismatch { .. })), "{got:?}");
        seen(&rx);
    }

    #[test]
    fn every_text_must_be_scored_exactly_once() {
        assert_eq!(
            in_input_order(&[(1, 2.0), (0, 1.0)], 2).unwrap(),
            vec![1.0, 2.0]
        );
        assert!(
            in_input_order(&[(0, 1.0), (0, 2.0)], 2).is_err(),
            "index twice"
        );
        assert!(
            in_input_order(&[(0, 1.0), (2, 2.0)], 2).is_err(),
            "out of range"
        );
        assert!(in_input_order(&[(0, 1.0), (1, 2.0)], 3).is_err(), "too few");
        assert!(
            in_input_order(&[(0, 1.0), (1, 2.0)], 1).is_err(),
            "too many"
        );
    }

    #[test]
    fn empty_texts_make_no_request() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mut c = config(RerankApi::Tei, &url);
        c.timeout_ms = 500;
        let r = HttpReranker::new(&c).unwrap();
        assert_eq!(r.rerank("q", &[]).unwrap(), Vec::<f64>::new());
        // A request would have left a connection waiting in the listener's backlog.
        listener.set_nonblocking(true).unwrap();
        assert!(matches!(
            listener.accept(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
        ));
    }

    #[test]
    fn an_unset_key_variable_is_a_config_error() {
        let mut c = config(RerankApi::Tei, "http://127.0.0.1:1");
        c.api_key_env = Some("RERANK_TEST_KEY_UNSET_8C1D7".into());
        assert!(matches!(
            HttpReranker::new(&c),
            Err(RerankError::Config { key, .. }) if key == "api_key_env"
        ));
    }

    #[test]
    fn config_check_names_the_bad_key() {
        assert_eq!(
            RerankerConfig::default().check(),
            Ok(()),
            "disabled needs no URL"
        );
        let key = |c: RerankerConfig| c.check().err().map(|(k, _)| k);
        let on = |url: &str| config(RerankApi::Tei, url);
        assert_eq!(key(on("")), Some("url".to_string()));
        assert_eq!(key(on("127.0.0.1:8081")), Some("url".to_string()));
        let mut unset = on("http://127.0.0.1:1");
        unset.api_key_env = Some("RERANK_TEST_KEY_UNSET_8C1D7".into());
        assert_eq!(key(unset), Some("api_key_env".to_string()));
        assert_eq!(key(on("http://127.0.0.1:8081")), None);
        assert_eq!(
            key(RerankerConfig {
                timeout_ms: 0,
                ..on("http://x")
            }),
            Some("timeout_ms".to_string())
        );
        for candidates in [0, MAX_CANDIDATES + 1] {
            assert_eq!(
                key(RerankerConfig {
                    candidates,
                    ..on("http://x")
                }),
                Some("candidates".to_string())
            );
        }
        assert_eq!(
            key(RerankerConfig {
                candidates: MAX_CANDIDATES,
                ..on("http://x")
            }),
            None
        );
        // `new` refuses what `check` refuses.
        assert!(matches!(
            HttpReranker::new(&on("")),
            Err(RerankError::Config { key, .. }) if key == "url"
        ));
    }

    #[test]
    fn config_reads_from_toml_with_defaults_and_rejects_unknown_keys() {
        let c: RerankerConfig =
            toml::from_str("enabled = true\napi = \"cohere\"\nurl = \"http://h:1\"").unwrap();
        assert_eq!(c.api, RerankApi::Cohere);
        assert_eq!((c.timeout_ms, c.candidates), (5_000, 32));
        assert!(toml::from_str::<RerankerConfig>("top_k = 5").is_err());
        assert!(toml::from_str::<RerankerConfig>("api = \"openai\"").is_err());
    }
}
