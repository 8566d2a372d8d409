//! A scriptable embedding provider on 127.0.0.1 speaking the OpenAI, TEI or Ollama API: it
//! records every request and answers from a script (errors, delays, wrong shapes), then with
//! real vectors (the hashing embedder of each text, so answers are checkable).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use ragstream::embedding::http::ProviderApi;
use ragstream::embedding::{Embedder, HashingEmbedder};
use serde_json::{json, Value};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A status with an optional `Retry-After` value.
    Status(u16, Option<&'static str>),
    /// Answer correctly, but only after this long (longer than the client's timeout).
    Slow(Duration),
    /// Vectors of this many dimensions.
    Dimensions(usize),
    /// A 200 whose body is not JSON.
    NotJson,
}

/// A request as the provider saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
    pub at: Instant,
}

struct State {
    api: ProviderApi,
    dimensions: usize,
    script: VecDeque<Reply>,
    /// Every request gets 503 until then (an outage).
    down_until: Option<Instant>,
    /// A request holding a text with this marker gets 400 (a permanent, per-text failure).
    reject_marker: Option<String>,
    seen: Vec<Seen>,
}

#[derive(Clone)]
pub struct FakeProvider {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FakeProvider {
    /// Starts on a free port; call inside a multi-threaded tokio runtime.
    pub fn start(api: ProviderApi, dimensions: usize) -> FakeProvider {
        let state = Arc::new(Mutex::new(State {
            api,
            dimensions,
            script: VecDeque::new(),
            down_until: None,
            reject_marker: None,
            seen: Vec::new(),
        }));
        let shared = web::Data::from(state.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(shared.clone())
                .app_data(web::PayloadConfig::new(64 << 20))
                .default_service(web::to(handle))
        })
        .workers(2)
        .bind(("127.0.0.1", 0))
        .unwrap();
        let addr = server.addrs()[0];
        tokio::spawn(server.run());
        FakeProvider {
            url: format!("http://{addr}"),
            state,
        }
    }

    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().unwrap().script.extend(replies);
    }

    /// Answers 503 to everything for `d`.
    pub fn down_for(&self, d: Duration) {
        self.state.lock().unwrap().down_until = Some(Instant::now() + d);
    }

    /// Ends an outage.
    pub fn up(&self) {
        self.state.lock().unwrap().down_until = None;
    }

    /// Answers 400 to any request holding a text that contains `marker`.
    pub fn reject_texts_containing(&self, marker: &str) {
        self.state.lock().unwrap().reject_marker = Some(marker.to_string());
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// Texts of every request, in arrival order.
    pub fn texts(&self) -> Vec<Vec<String>> {
        self.seen()
            .iter()
            .map(|s| {
                let input = s.body.get("input").or_else(|| s.body.get("inputs"));
                input
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|t| t.as_str().unwrap_or_default().to_string())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect()
    }
}

/// The vectors the provider answers for `texts` (before the client normalises them: the
/// hashing embedder's are unit length already).
pub fn expected(dimensions: usize, texts: &[&str]) -> Vec<Vec<f32>> {
    HashingEmbedder::new(dimensions).embed(texts).unwrap()
}

async fn handle(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<Mutex<State>>,
) -> HttpResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (api, reply, dimensions) = {
        let mut s = state.lock().unwrap();
        s.seen.push(Seen {
            path: req.path().to_string(),
            authorization: req
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            body: body.clone(),
            at: Instant::now(),
        });
        let down = s.down_until.is_some_and(|t| Instant::now() < t);
        let rejected = s
            .reject_marker
            .as_ref()
            .is_some_and(|m| body.to_string().contains(m.as_str()));
        let reply = if down {
            Some(Reply::Status(503, None))
        } else if rejected {
            Some(Reply::Status(400, None))
        } else {
            s.script.pop_front()
        };
        (s.api, reply, s.dimensions)
    };
    if req.path() != api.path() {
        return HttpResponse::NotFound().body("no such route");
    }
    let mut dims = dimensions;
    match reply {
        Some(Reply::Status(code, retry_after)) => {
            let mut r = HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap());
            if let Some(v) = retry_after {
                r.insert_header(("Retry-After", v));
            }
            return r.body(format!("scripted {code}"));
        }
        Some(Reply::Slow(d)) => tokio::time::sleep(d).await,
        Some(Reply::Dimensions(d)) => dims = d,
        Some(Reply::NotJson) => return HttpResponse::Ok().body("<html>gateway</html>"),
        None => {}
    }
    let texts: Vec<String> = body
        .get(if api == ProviderApi::Tei {
            "inputs"
        } else {
            "input"
        })
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = expected(dims, &refs);
    let answer = match api {
        ProviderApi::Openai => json!({
            "object": "list",
            "model": body["model"],
            // reversed on purpose: clients must use `index`
            "data": vectors.iter().enumerate().rev()
                .map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v}))
                .collect::<Vec<_>>(),
        }),
        ProviderApi::Tei => json!(vectors),
        ProviderApi::Ollama => json!({"model": body["model"], "embeddings": vectors}),
    };
    HttpResponse::Ok().json(answer)
}
