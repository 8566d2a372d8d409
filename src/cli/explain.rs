//! `ragstream explain`: why documents, chunks or snippets were or were not retrieved by a
//! query, as `POST /v1/indexes/{index}/explain` answers it (JSON).

use serde_json::{json, Value};

use super::{load_embedder, usage, Failure};
use crate::config::Config;
use crate::engine::Engine;

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The index the query searches.
    #[arg(long)]
    index: String,
    /// The query, as contract 002 takes it.
    text: String,
    /// A document to explain (repeat for more).
    #[arg(long = "document")]
    documents: Vec<String>,
    /// A chunk to explain (repeat for more).
    #[arg(long = "chunk")]
    chunks: Vec<String>,
    /// A snippet of text to find in the index and explain (repeat for more).
    #[arg(long = "snippet")]
    snippets: Vec<String>,
    /// The retrieval profile: auto, exact, balanced or semantic (default: the index's).
    #[arg(long)]
    profile: Option<String>,
    /// Results the query returns.
    #[arg(long, default_value_t = 10)]
    top_k: u64,
    /// Explain at this index version (default: the newest).
    #[arg(long)]
    version: Option<u64>,
    /// A contract 002 filter KEY=VALUE (VALUE is JSON if it parses, else a string).
    #[arg(long = "filter")]
    filters: Vec<String>,
}

pub async fn run(config: Config, args: ExplainArgs) -> Result<(), Failure> {
    let index = super::index_name(&args.index)?;
    let mut filters = serde_json::Map::new();
    for f in &args.filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| usage(format!("--filter {f:?}: expected KEY=VALUE")))?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::from(v));
        filters.insert(k.to_string(), value);
    }
    let mut request = json!({"query": args.text, "top_k": args.top_k});
    if !filters.is_empty() {
        request["filters"] = Value::Object(filters);
    }
    if let Some(p) = &args.profile {
        request["retrieval_profile"] = json!(p);
    }
    if let Some(v) = args.version {
        request["index_version"] = json!(v);
    }
    let targets: Vec<Value> = (args.documents.iter())
        .map(|d| json!({"document_id": d}))
        .chain(args.chunks.iter().map(|c| json!({"chunk_id": c})))
        .chain(args.snippets.iter().map(|s| json!({"text": s})))
        .collect();
    if targets.is_empty() {
        return Err(usage(
            "name at least one target: --document ID, --chunk ID or --snippet TEXT",
        ));
    }
    let engine = Engine::new(config.clone(), load_embedder(&config)?);
    let body = json!({"request": request, "targets": targets});
    // The command line reads the data directory itself: nothing is hidden from it.
    let reply = crate::contracts::explain::answer(&engine, &index, &body, true).await;
    println!(
        "{}",
        serde_json::to_string_pretty(&reply.body).expect("json")
    );
    match reply.status {
        200 => Ok(()),
        400 => Err(usage(format!(
            "the request was refused: {}",
            reply.body["error"]
        ))),
        _ => Err(Failure {
            code: 1,
            message: reply.body["error"]["message"]
                .as_str()
                .unwrap_or("explain failed")
                .to_string(),
        }),
    }
}
