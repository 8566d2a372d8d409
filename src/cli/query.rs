//! `ragstream query`: one query, as contract 000 answers it.

use std::time::Instant;

use serde_json::{json, Value};

use super::{load_embedder, usage, Failure};
use crate::config::Config;
use crate::contracts::c000_retrieval_calls::{
    error_body, parse_request, render_response, RequestLimits,
};
use crate::engine::Engine;

#[derive(clap::Args)]
pub struct QueryArgs {
    /// The index.
    #[arg(long)]
    index: String,
    /// The query.
    text: String,
    /// How to search.
    #[arg(long, value_enum, default_value_t = Method::Semantic)]
    method: Method,
    /// Results to return.
    #[arg(long, default_value_t = 5)]
    top_k: u64,
    /// Semantic weight for hybrid search.
    #[arg(long)]
    alpha: Option<f64>,
    /// Answer from this index version.
    #[arg(long)]
    version: Option<u64>,
    /// Apply `normalize` query preprocessing.
    #[arg(long)]
    normalize: bool,
    /// Exact-match filter KEY=VALUE (VALUE is JSON if it parses, else a string).
    #[arg(long = "filter")]
    filters: Vec<String>,
    /// Print the contract 000 response (JSON) instead of a table.
    #[arg(long)]
    json: bool,
}

pub async fn run(config: Config, args: QueryArgs) -> Result<(), Failure> {
    let QueryArgs {
        index,
        text,
        method,
        top_k,
        alpha,
        version,
        normalize,
        filters,
        json: as_json,
    } = args;

    let mut bag = serde_json::Map::new();
    for f in &filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| usage(format!("--filter {f:?}: expected KEY=VALUE")))?;
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::from(v));
        bag.insert(k.to_string(), value);
    }
    let mut body = json!({"retrieval": {
        "index": index, "query": text, "top_k": top_k, "filters": bag,
        "search_method": method.name(),
        "query_preprocessing": if normalize { "normalize" } else { "none" },
    }});
    if let Some(a) = alpha {
        body["retrieval"]["hybrid_alpha"] = json!(a);
    }
    if let Some(v) = version {
        body["retrieval"]["index_version"] = json!(v);
    }
    let limits = RequestLimits {
        max_top_k: config.limits.max_top_k,
        max_query_bytes: config.limits.max_query_bytes,
    };
    let engine = Engine::new(config.clone(), load_embedder(&config)?);
    let started = Instant::now();
    let outcome = match parse_request(&body, limits) {
        Ok((name, request)) => engine
            .search(&name, &request)
            .await
            .map(|result| (name, request, result)),
        Err(e) => Err(e.into()),
    };
    let (name, request, result) = match outcome {
        Ok(ok) => ok,
        Err(e) if as_json => {
            println!("{}", error_body(&e).to_value());
            return Err(e.into());
        }
        Err(e) => return Err(e.into()),
    };
    let latency = started.elapsed().as_secs_f64() * 1000.0;
    let query_id = uuid::Uuid::new_v4().to_string();
    if as_json {
        let response = render_response(&name, &request, &result, &query_id, latency);
        println!("{}", serde_json::to_string_pretty(&response).expect("json"));
    } else {
        println!(
            "index {} @ version {} · {} · {} result(s) · {:.1} ms",
            name,
            result.index_version,
            method.name(),
            result.hits.len(),
            latency
        );
        for (i, hit) in result.hits.iter().enumerate() {
            let snippet: String = hit.row.text.chars().take(160).collect();
            println!(
                "{:>2}. {:.4}  {} #{}  {}\n    {}",
                i + 1,
                hit.score,
                hit.row.document_id,
                hit.row.chunk_index,
                hit.row.title.as_deref().unwrap_or(""),
                snippet.replace('\n', " ")
            );
        }
    }

    Ok(())
}

/// How `query` searches.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Method {
    Semantic,
    Keyword,
    Hybrid,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Semantic => "semantic",
            Method::Keyword => "keyword",
            Method::Hybrid => "hybrid",
        }
    }
}
