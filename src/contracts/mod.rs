//! One adapter per contract (docs/contracts/). Adapters map a wire shape to engine
//! requests and engine results back; no retrieval logic lives here.
//!
//! Every transport (HTTP, the bus) calls [`answer`] with the contract the request speaks, so a
//! request gets the same answer whichever way it arrives.

pub mod c000_retrieval_calls;
pub mod c001_rag_searcher;
pub mod c002_retrieval_api;
pub mod c003_ai_core;
pub mod c004_retriever;
pub mod diff;
pub mod explain;
pub mod hydrate;
pub mod ingest_request;
pub mod wire;

use serde_json::Value;

use crate::auth::{AuthError, Caller, Scope};
use crate::engine::{Engine, EngineError};
use crate::model::{IndexName, ValidationError};
use wire::index_admin::{IndexList, IndexListEntry, UnreadableIndex};

/// The contract a request speaks: the HTTP route, or the bus header `contract`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// `{"retrieval": {...}}` → `{"retrieval_calls": [...]}`.
    C000,
    /// RagSearcher triplets: `{query, top_k}` → `{results, kg, rewrite_terms}`.
    C001,
    /// Retrieval API query on the index the route (or the bus header `index`) names.
    C002,
    /// AI Core `RetrieveInput` → `RetrieveOutput`.
    C003,
    /// A named retriever: `{query, messages?}` → `[document]`.
    C004,
    /// Why targets were or were not retrieved by a 002 (or 000) query on the index the route
    /// (or the bus header `index`) names.
    Explain,
    /// One query at two versions of the index the route (or the bus header `index`) names.
    Diff,
}

impl Contract {
    pub const ALL: [Contract; 7] = [
        Contract::C000,
        Contract::C001,
        Contract::C002,
        Contract::C003,
        Contract::C004,
        Contract::Explain,
        Contract::Diff,
    ];

    /// The contract's number, as the bus header and metrics name it.
    pub fn label(self) -> &'static str {
        match self {
            Contract::C000 => "000",
            Contract::C001 => "001",
            Contract::C002 => "002",
            Contract::C003 => "003",
            Contract::C004 => "004",
            Contract::Explain => "explain",
            Contract::Diff => "diff",
        }
    }

    /// The bus header value (`000` to `004`, `explain` or `diff`); absent means 000.
    pub fn from_header(value: Option<&str>) -> Option<Contract> {
        match value.map(str::trim) {
            None | Some("") | Some("000") => Some(Contract::C000),
            Some("001") => Some(Contract::C001),
            Some("002") => Some(Contract::C002),
            Some("003") => Some(Contract::C003),
            Some("004") => Some(Contract::C004),
            Some("explain") => Some(Contract::Explain),
            Some("diff") => Some(Contract::Diff),
            Some(_) => None,
        }
    }
}

/// A contract's answer: the body, the HTTP status it maps to (the bus carries the body alone),
/// and the version it was answered from (sent as a header where the body has no place for it).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub index_version: Option<u64>,
}

impl Reply {
    /// A 200 answer written from its wire type.
    pub(crate) fn typed(body: &impl serde::Serialize, index_version: Option<u64>) -> Reply {
        match serde_json::to_value(body) {
            Ok(body) => Reply {
                status: 200,
                body,
                index_version,
            },
            Err(e) => error_reply(&EngineError::Internal(format!("answer not written: {e}"))),
        }
    }
}

/// What a request is addressed to besides its body: the index a route (or the bus header
/// `index`) names — none for 000, whose body names it; required for 002; the configured
/// default for 001 and 003 when absent — or, for 004, the retriever (route or bus header
/// `retriever`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Target {
    pub index: Option<IndexName>,
    pub retriever: Option<String>,
}

impl Target {
    pub fn index(index: Option<IndexName>) -> Target {
        Target {
            index,
            retriever: None,
        }
    }
}

/// A refusal in the structured error shape every contract shares.
pub fn auth_reply(e: &AuthError) -> Reply {
    Reply {
        status: e.status(),
        body: wire::error::ErrorBody::new(e.code(), e.to_string()).to_value(),
        index_version: None,
    }
}

/// The indexes a request reads, so that the caller can be checked before anything is
/// searched. Names that do not parse are left to the adapter's own validation error.
fn indexes_read(
    engine: &Engine,
    contract: Contract,
    target: &Target,
    body: &[u8],
) -> Vec<IndexName> {
    let default_index = || IndexName::parse(&engine.config().contracts.default_index).ok();
    match contract {
        Contract::C000 => serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| {
                v.pointer("/retrieval/index")
                    .and_then(Value::as_str)
                    .and_then(|s| IndexName::parse(s).ok())
            })
            .into_iter()
            .collect(),
        Contract::C001 | Contract::C003 => target
            .index
            .clone()
            .or_else(default_index)
            .into_iter()
            .collect(),
        Contract::C002 | Contract::Explain | Contract::Diff => {
            target.index.clone().into_iter().collect()
        }
        Contract::C004 => target
            .retriever
            .as_deref()
            .map(|name| crate::retrieval::retrievers::indexes_of(&engine.config().retrievers, name))
            .unwrap_or_default(),
    }
}

/// Answers `body` as `contract` for `caller`, who must be allowed to read every index the
/// request touches.
pub async fn answer(
    engine: &Engine,
    caller: &Caller,
    contract: Contract,
    target: Target,
    body: &[u8],
) -> Reply {
    for index in indexes_read(engine, contract, &target, body) {
        if let Err(e) = caller.authorize(&index, Scope::Read) {
            return auth_reply(&e);
        }
    }
    let limit = engine.config().limits.query_timeout_ms;
    let answered = tokio::time::timeout(
        std::time::Duration::from_millis(limit),
        dispatch(engine, caller, contract, target, body),
    )
    .await;
    answered.unwrap_or_else(|_| {
        tracing::warn!(
            contract = contract.label(),
            limit_ms = limit,
            "query timed out"
        );
        let e = EngineError::Timeout { after_ms: limit };
        match contract {
            Contract::C003 => c003_ai_core::error_reply(&c003_ai_core::RetrieveError::Engine(
                c003_ai_core::EngineErrorText {
                    code: "query_timeout",
                    message: e.to_string(),
                },
            )),
            _ => error_reply(&e),
        }
    })
}

/// Whether the caller may see deleted chunks: with authentication on, the token's scope (the
/// caller's context, contract 003's `ToolContext.visibility_override_allowed`); without it,
/// the configuration.
fn visibility_override(engine: &Engine, caller: &Caller) -> bool {
    if engine.auth().enabled() {
        caller.has_scope(Scope::VisibilityOverride)
    } else {
        engine.config().contracts.visibility_override_allowed
    }
}

/// Answers an authorised request as its contract.
async fn dispatch(
    engine: &Engine,
    caller: &Caller,
    contract: Contract,
    target: Target,
    body: &[u8],
) -> Reply {
    let index = target.index;
    // 004 reads its body itself (its errors have their own rules).
    let value = if contract == Contract::C004 {
        Value::Null
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(v) => v,
            Err(e) => {
                let e =
                    EngineError::from(ValidationError::new("body", format!("is not JSON: {e}")));
                return match contract {
                    Contract::C003 => c003_ai_core::error_reply(
                        &c003_ai_core::RetrieveError::Input(e.to_string()),
                    ),
                    _ => error_reply(&e),
                };
            }
        }
    };
    let default_index = || {
        IndexName::parse(&engine.config().contracts.default_index)
            .expect("validated with the configuration")
    };
    match contract {
        Contract::C000 => c000_retrieval_calls::answer(engine, &value).await,
        Contract::C001 => {
            c001_rag_searcher::answer(engine, &index.unwrap_or_else(default_index), &value).await
        }
        Contract::C002 => match index {
            Some(index) => c002_retrieval_api::query(engine, &index, &value).await,
            None => error_reply(
                &ValidationError::new("index", "is required (route or bus header)").into(),
            ),
        },
        Contract::C003 => {
            let override_ok = visibility_override(engine, caller);
            let index = index.unwrap_or_else(default_index);
            c003_ai_core::answer(engine, &index, &value, override_ok).await
        }
        Contract::Explain | Contract::Diff => match index {
            Some(index) if contract == Contract::Explain => {
                explain::answer(engine, &index, &value, visibility_override(engine, caller)).await
            }
            Some(index) => diff::answer(engine, &index, &value).await,
            None => error_reply(
                &ValidationError::new("index", "is required (route or bus header)").into(),
            ),
        },
        Contract::C004 => match target.retriever {
            Some(name) => c004_retriever::answer(engine, &name, body).await,
            None => error_reply(
                &ValidationError::new("retriever", "is required (route or bus header)").into(),
            ),
        },
    }
}

/// Records an answered request in the query metrics: its duration, and its error code when
/// it failed. Each transport calls it once per request.
pub fn observe(contract: Contract, transport: &str, started: std::time::Instant, reply: &Reply) {
    let Some(m) = crate::telemetry::metrics() else {
        return;
    };
    m.query_duration_seconds
        .with_label_values(&[contract.label(), transport])
        .observe(started.elapsed().as_secs_f64());
    if reply.status >= 400 {
        let code = reply.body["error"]["code"].as_str().unwrap_or("unknown");
        m.query_errors_total
            .with_label_values(&[contract.label(), transport, code])
            .inc();
    }
}

/// Every index under the data directory that `caller` may read, each with its stats, as
/// `GET /v1/indexes` and `ragstream index list` answer: `{"indexes": [...]}`. An index that
/// cannot be opened is listed with its error, so one damaged index hides no other.
pub async fn index_list(engine: &Engine, caller: &Caller) -> IndexList {
    let detail = |e: &EngineError| c000_retrieval_calls::error_body(e).error;
    let names = match engine.list_indexes().await {
        Ok(names) => names,
        Err(e) => {
            return IndexList {
                indexes: Vec::new(),
                error: Some(detail(&e)),
            }
        }
    };
    let mut indexes = Vec::new();
    for name in names {
        if caller.authorize(&name, Scope::Read).is_err() {
            continue;
        }
        indexes.push(match engine.stats(&name).await {
            Ok(s) => IndexListEntry::Stats(s),
            Err(e) => IndexListEntry::Unreadable(UnreadableIndex {
                error: detail(&e),
                index: name,
            }),
        });
    }
    IndexList {
        indexes,
        error: None,
    }
}

/// The structured error every contract but 003 answers with: `{"error": {"code", "message",
/// "field"?}}`, with the status its code maps to.
pub fn error_reply(e: &EngineError) -> Reply {
    let body = c000_retrieval_calls::error_body(e);
    Reply {
        status: status_of(&body.error.code),
        body: body.to_value(),
        index_version: None,
    }
}

/// Every error code a query can answer with, and its HTTP status.
pub const ERROR_CODES: &[(&str, u16)] = &[
    ("invalid_request", 400),
    ("InputError", 400),
    ("unauthenticated", 401),
    ("forbidden", 403),
    ("index_not_found", 404),
    ("NotFoundError", 404),
    ("retriever_not_found", 404),
    ("embedder_mismatch", 409),
    ("read_only_replica", 409),
    ("write_conflict", 409),
    ("version_unavailable", 410),
    ("internal", 500),
    ("index_damaged", 500),
    ("embedder_unavailable", 503),
    ("query_timeout", 503),
    ("storage_unavailable", 503),
    // A bus request read after its deadline (`pipeline::query_handler`).
    ("deadline_exceeded", 504),
];

/// The HTTP status of an error code (500 for a code not in [`ERROR_CODES`]).
pub fn status_of(code: &str) -> u16 {
    ERROR_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(500, |(_, status)| *status)
}
