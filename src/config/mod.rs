//! Typed configuration: built-in defaults, then `config/ragstream.toml` (or `--config FILE`),
//! then environment variables `RAGSTREAM_<SECTION>_<KEY>`. Every bad input stops start-up with
//! the source (file or variable), the key and the reason.

mod moved_keys;
mod secrets;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::chunking::ChunkerConfig;
use crate::model::DocumentLimits;

/// Embedders that need no `[embedders.<name>]` section.
pub const BUILT_IN_EMBEDDERS: &[&str] = &["all-minilm-l6-v2", "static", "hashing"];

/// Environment variables with the `RAGSTREAM_` prefix that are not config keys.
const NON_KEY_VARIABLES: &[&str] = &[
    "RAGSTREAM_CONFIG",
    "RAGSTREAM_LOG",
    "RAGSTREAM_LOG_FORMAT",
    "RAGSTREAM_FAILPOINT",
    "RAGSTREAM_REPLAY_TOKEN",
];

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// What `ragstream serve` runs (`[serve]`).
    pub serve: ServeConfig,
    pub storage: StorageConfig,
    pub model: ModelConfig,
    pub chunking: ChunkingSection,
    pub index: IndexConfig,
    pub limits: LimitsConfig,
    pub kafka: KafkaConfig,
    pub http: HttpConfig,
    /// Defaults of the contract adapters whose requests name no index (001, 003).
    pub contracts: ContractsConfig,
    /// Named retrievers of contract 004 (`[retrievers.<name>]`).
    pub retrievers:
        std::collections::BTreeMap<String, crate::retrieval::retrievers::RetrieverConfig>,
    /// The optional reranker (`[reranker]`, off by default) contract 002 queries use.
    pub reranker: crate::retrieval::rerank::RerankerConfig,
    /// Bearer tokens, tenants and scopes (`[[auth.tokens]]`); none configured = auth off.
    pub auth: crate::auth::AuthConfig,
    /// Named HTTP embedding providers (`[embedders.<name>]`); `model.embedder` may name one.
    pub embedders: std::collections::BTreeMap<String, crate::embedding::http::ProviderConfig>,
    /// Metrics and traces (`[telemetry]`).
    pub telemetry: crate::telemetry::TelemetryConfig,
    /// Knowledge-graph retrieval (`[graph]`).
    pub graph: crate::graph::GraphConfig,
    /// The optional triple-extraction stage (`[extractor]`, off by default).
    pub extractor: crate::graph::extractor::ExtractorConfig,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KafkaConfig {
    /// Bootstrap servers of a real cluster; empty starts the embedded broker.
    pub brokers: String,
    pub documents_topic: String,
    pub queries_topic: String,
    pub dlq_topic: String,
    /// Reply topic created with the embedded broker.
    pub replies_topic: String,
    /// Where a writer on an object store announces each version it published
    /// (`{"index", "index_version", "committed_at"}`), so that query replicas refresh at
    /// once rather than at their next poll.
    pub versions_topic: String,
    /// The topics a bus query may name in `reply-to`: comma-separated glob patterns (`*`
    /// matches any run of characters). The documents, queries and dead-letter topics are
    /// never allowed, nor the versions topic, whatever the patterns say.
    pub reply_topics: String,
    pub group_id: String,
    /// Partitions of the topics the embedded broker creates.
    pub partitions: i32,
    /// The embedded broker's retention: bytes each partition's log keeps in memory. Past
    /// it the oldest messages are deleted, read or not, as `retention.bytes` does on a real
    /// broker; a consumer that had not read them reports them in
    /// `ragstream_kafka_messages_lost_total`.
    pub embedded_retention_bytes: u64,
    /// How much the ingest consumer prefetches from Kafka (librdkafka's
    /// `queued.max.messages.kbytes`): memory held for the backlog. Below the default a
    /// backlog drains slower, and a quiet partition beside it is no fresher (BENCHMARKS.md,
    /// "Freshness beside a draining backlog").
    pub consumer_queue_kbytes: u32,
    /// A batch commits when it holds this many documents, or this many chunks...
    pub batch_max_documents: usize,
    pub batch_max_chunks: usize,
    /// ...or when its first message is this old.
    pub batch_max_ms: u64,
    pub max_message_bytes: usize,
    /// On SIGTERM/SIGINT, how long the pipeline may take to commit the batches in flight.
    pub shutdown_grace_ms: u64,
    /// A pipeline stage holding one batch this long makes `/healthz` unhealthy.
    pub stall_after_ms: u64,
    /// Extra librdkafka settings passed through verbatim (security.protocol, sasl.*, ssl.*).
    pub client: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContractsConfig {
    /// The index `POST /v1/rag/query` (001) and `POST /v1/ai/rag/query/` (003) search.
    pub default_index: String,
    /// Contract 003's `ToolContext.visibility_override_allowed`: whether callers may see
    /// `all`/`deleted`. A request's own flag is honoured only when this allows it.
    pub visibility_override_allowed: bool,
    /// Contract 003: a tenant-scoped router answers an empty result with `matches: []`
    /// instead of `NotFoundError`.
    pub tenant_scoped: bool,
}

impl Default for ContractsConfig {
    fn default() -> Self {
        ContractsConfig {
            default_index: "default".into(),
            visibility_override_allowed: false,
            tenant_scoped: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    /// `host:port`; port 0 picks a free port (announced on start).
    pub bind: String,
    pub max_body_bytes: usize,
}

impl Default for KafkaConfig {
    fn default() -> Self {
        KafkaConfig {
            brokers: String::new(),
            documents_topic: "ragstream.documents".into(),
            queries_topic: "ragstream.queries".into(),
            dlq_topic: "ragstream.dlq".into(),
            replies_topic: "ragstream.replies".into(),
            versions_topic: "ragstream.versions".into(),
            reply_topics: "ragstream.replies*".into(),
            group_id: "ragstream".into(),
            partitions: 4,
            embedded_retention_bytes: 256 << 20,
            consumer_queue_kbytes: 16384,
            batch_max_documents: 256,
            batch_max_chunks: 1024,
            batch_max_ms: 200,
            shutdown_grace_ms: 20_000,
            stall_after_ms: 300_000,
            max_message_bytes: 2 << 20,
            client: Default::default(),
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            bind: "127.0.0.1:8080".into(),
            max_body_bytes: 4 << 20,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// `all` (the default): ingestion, maintenance and queries. `ingest`: no queries over
    /// the bus. `query`: a query replica, reading the indexes on `storage.uri` that a
    /// writer commits; no ingestion, no maintenance, and a data directory of its own for
    /// its cache.
    pub role: Role,
}

/// What a daemon does (`serve.role`, `ragstream serve --role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[default]
    All,
    Ingest,
    Query,
}

impl Role {
    /// Whether this daemon writes indexes (ingestion and maintenance).
    pub fn writes(self) -> bool {
        self != Role::Query
    }

    /// Whether this daemon answers queries from the bus.
    pub fn answers_bus_queries(self) -> bool {
        self != Role::Ingest
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    /// Where indexes live: `<data_dir>/indexes/<name>/{chunks.lance,keyword}`. With `uri`
    /// set, it holds only what is per-process: the keyword index's working copy or cache,
    /// the embedding cache and the resident vectors' scratch files.
    pub data_dir: PathBuf,
    /// Indexes on an object store: `s3://bucket/prefix` (S3 and S3-compatible stores),
    /// `gs://bucket/prefix` (Google Cloud Storage), `az://container/prefix` (Azure Blob
    /// Storage) or `file:///path`. The Lance datasets live there, and every keyword commit is
    /// published there. Unset: indexes live under `data_dir`.
    pub uri: Option<String>,
    /// Options of the object store, by Lance's names (`aws_endpoint`, `aws_region`,
    /// `google_service_account`, `azure_storage_account_name`, `allow_http`, …). A key
    /// `<option>_env` names the environment variable that holds the option, which keeps
    /// secrets out of files. Unset options come from the store's standard variables
    /// (`AWS_*`, `GOOGLE_*`, `AZURE_*`).
    pub options: std::collections::BTreeMap<String, String>,
    /// The most a query replica keeps of downloaded keyword files, in MiB; the newest
    /// version's files are always kept, older versions' are fetched again when asked for.
    pub cache_max_mb: u64,
    /// How often a query replica looks for versions the writer committed.
    pub poll_interval_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// `all-minilm-l6-v2` (the local transformer), `static` (the model2vec model distilled
    /// from it) or `hashing` (model-free word hashing, for tests and smoke runs).
    pub embedder: String,
    /// Directory holding `model.safetensors`, `tokenizer.json` and `config.json`.
    pub dir: PathBuf,
    /// Directory of the static model (`ragstream model distill` writes it).
    pub static_dir: PathBuf,
    /// Texts per forward pass.
    pub batch_size: usize,
    /// Inputs longer than this many word pieces are truncated (the model was trained on 256).
    pub max_sequence_tokens: usize,
    /// Extra latency added to every embedding call (0 = none): simulates a slow provider for
    /// backpressure tests and benchmarks.
    pub simulated_latency_ms: u64,
    /// Keep chunk vectors in `<data_dir>/embedding-cache.redb`, keyed by embedder and text, so
    /// that re-ingesting unchanged or moved text never embeds it again.
    pub cache: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChunkingSection {
    pub max_tokens: usize,
    pub overlap_tokens: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    /// How many of the newest versions stay queryable; older ones are pruned by maintenance
    /// passes, and by writes once a tenth more have piled up.
    pub retain_versions: u64,
    /// Documents per ingest batch on the command line (one batch = one version).
    pub ingest_batch_documents: usize,
    /// Lance's caches, shared by every index of the process: opened index partitions and
    /// pages (vector and id indexes), and manifests and file metadata. Both are budgets by
    /// entry weight, not a limit on the process's memory.
    pub lance_index_cache_mb: usize,
    pub lance_metadata_cache_mb: usize,
    /// `[index.vector]`: how the vector index is built and searched.
    pub vector: crate::index::vector_index::VectorIndexSettings,
    /// `[index.keyword]`: how the keyword index writes, merges and searches.
    pub keyword: crate::index::KeywordSettings,
    /// `[index.maintenance]`: when maintenance runs and what it does.
    pub maintenance: crate::index::maintenance::MaintenanceSettings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    pub max_document_bytes: usize,
    pub max_document_id_bytes: usize,
    pub max_top_k: usize,
    pub max_query_bytes: usize,
    /// A query not answered in this time gets a timeout error and its work is abandoned.
    pub query_timeout_ms: u64,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            data_dir: PathBuf::from("data"),
            uri: None,
            options: Default::default(),
            cache_max_mb: 2048,
            poll_interval_ms: 1000,
        }
    }
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            embedder: "all-minilm-l6-v2".into(),
            dir: PathBuf::from("~/.cache/ragstream/models/all-MiniLM-L6-v2"),
            static_dir: PathBuf::from("~/.cache/ragstream/models/all-MiniLM-L6-v2-static"),
            batch_size: 32,
            max_sequence_tokens: 256,
            simulated_latency_ms: 0,
            cache: true,
        }
    }
}

impl Default for ChunkingSection {
    fn default() -> Self {
        let d = ChunkerConfig::default();
        ChunkingSection {
            max_tokens: d.max_tokens,
            overlap_tokens: d.overlap_tokens,
        }
    }
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            retain_versions: 100,
            ingest_batch_documents: 512,
            lance_index_cache_mb: 1024,
            lance_metadata_cache_mb: 256,
            vector: Default::default(),
            keyword: Default::default(),
            maintenance: Default::default(),
        }
    }
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_document_bytes: 1 << 20,
            max_document_id_bytes: 512,
            max_top_k: 100,
            max_query_bytes: 8192,
            query_timeout_ms: 10_000,
        }
    }
}

impl ChunkingSection {
    pub fn chunker(&self) -> ChunkerConfig {
        ChunkerConfig {
            max_tokens: self.max_tokens,
            overlap_tokens: self.overlap_tokens,
        }
    }
}

impl LimitsConfig {
    pub fn document(&self) -> DocumentLimits {
        DocumentLimits {
            max_document_bytes: self.max_document_bytes,
            max_id_bytes: self.max_document_id_bytes,
        }
    }
}

/// A bad configuration: where it came from, which key, and why.
#[derive(Debug, thiserror::Error)]
#[error("bad configuration in {source_name}: key `{key}`: {reason}")]
pub struct ConfigError {
    pub source_name: String,
    pub key: String,
    pub reason: String,
}

/// Where a configuration came from, for the start-up log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// The built-in defaults, the file (if any), then each variable that set a key.
    pub sources: Vec<String>,
    /// `RAGSTREAM_*` variables that name no configuration key: ignored, and logged.
    pub ignored_variables: Vec<String>,
    /// Keys set by a name they have moved from (`config/moved_keys.rs`): loaded, and logged.
    pub moved_keys: Vec<String>,
}

impl Config {
    /// The configuration as TOML, every secret (tokens, passwords, API keys, any key naming
    /// a secret, `[kafka.client]` entries included) replaced by `<redacted>`.
    pub fn redacted_toml(&self) -> String {
        let mut value = toml::Value::try_from(self).expect("a configuration serialises");
        secrets::redact(&mut value);
        toml::to_string_pretty(&value).expect("a TOML table serialises")
    }

    /// Loads defaults, then `file` if given (it must exist), else `config/ragstream.toml` if it
    /// exists, then the process environment; with what was loaded from where.
    pub fn load(file: Option<&Path>) -> Result<(Config, LoadReport), ConfigError> {
        let default_file = Path::new("config/ragstream.toml");
        let file = match file {
            Some(f) => Some(f),
            None if default_file.exists() => Some(default_file),
            None => None,
        };
        Self::load_reporting(file, std::env::vars())
    }

    /// As [`Config::load`], with the environment given explicitly (for tests).
    pub fn load_from(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        Self::load_reporting(file, env).map(|(config, _)| config)
    }

    /// As [`Config::load_from`], with what was loaded from where and the warnings.
    pub fn load_reporting(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(Config, LoadReport), ConfigError> {
        let mut report = LoadReport {
            sources: vec!["built-in defaults".to_string()],
            ..LoadReport::default()
        };
        let mut table = toml::Value::try_from(Config::default()).expect("defaults serialise");
        let mut source_name = "built-in defaults".to_string();
        if let Some(path) = file {
            source_name = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
                source_name: source_name.clone(),
                key: "-".into(),
                reason: format!("cannot read the file: {e}"),
            })?;
            let mut file_table: toml::Value = toml::from_str(&text).map_err(|e| ConfigError {
                source_name: source_name.clone(),
                key: "-".into(),
                reason: e.message().to_string(),
            })?;
            let moved =
                moved_keys::move_keys(&mut file_table).map_err(|(key, reason)| ConfigError {
                    source_name: source_name.clone(),
                    key,
                    reason,
                })?;
            report
                .moved_keys
                .extend(moved.into_iter().map(|m| format!("{source_name}: {m}")));
            // Deserialise the file alone first so that its errors name the file.
            check::<Config>(&file_table, &source_name)?;
            merge(&mut table, file_table);
            report.sources.push(source_name.clone());
        }
        let env: Vec<(String, String)> = env.into_iter().collect();
        let every_variable: std::collections::HashMap<String, String> =
            env.iter().cloned().collect();
        let mut env: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, _)| {
                k.starts_with("RAGSTREAM_") && !NON_KEY_VARIABLES.contains(&k.as_str())
            })
            .collect();
        env.sort();
        // Which variable set each key: an error about that key names the variable, not the
        // file (whose value it replaced).
        let mut set_by = std::collections::HashMap::new();
        for (var, raw) in env {
            if is_service_link(&var) {
                report.ignored_variables.push(var);
                continue;
            }
            if let Some(new) = env_path(&var).and_then(|p| moved_keys::new_path(&p)) {
                report.moved_keys.push(format!(
                    "environment variable {var} sets {}; use {}",
                    new.join("."),
                    moved_keys::variable(&new)
                ));
            }
            match apply_env(&mut table, &var, &raw)? {
                Some(key) => {
                    // Two names for one key (`_` and `__`, or a moved key's old and new
                    // names): which value was meant is not guessed.
                    if let Some(other) = set_by.get(&key) {
                        return Err(ConfigError {
                            source_name: env_source(&var),
                            key,
                            reason: format!("is also set by {other}; keep one of the two"),
                        });
                    }
                    set_by.insert(key, var.clone());
                    report.sources.push(env_source(&var));
                }
                None => report.ignored_variables.push(var),
            }
        }
        let named = |mut e: ConfigError| {
            if let Some(var) = set_by.get(&e.key) {
                e.source_name = env_source(var);
            }
            e
        };
        let mut config: Config = check(&table, &source_name).map_err(named)?;
        config.storage.data_dir = expand_home(&config.storage.data_dir);
        config.model.dir = expand_home(&config.model.dir);
        config.model.static_dir = expand_home(&config.model.static_dir);
        config.validate(&source_name).map_err(named)?;
        secrets::resolve_indirect("kafka.client", &mut config.kafka.client, &every_variable)
            .and_then(|()| {
                secrets::resolve_indirect(
                    "storage.options",
                    &mut config.storage.options,
                    &every_variable,
                )
            })
            .map_err(|(key, reason)| ConfigError {
                source_name: source_name.clone(),
                key,
                reason,
            })
            .map_err(named)?;
        Ok((config, report))
    }

    fn validate(&self, source_name: &str) -> Result<(), ConfigError> {
        let bad = |key: &str, reason: &str| {
            Err(ConfigError {
                source_name: source_name.to_string(),
                key: key.into(),
                reason: reason.into(),
            })
        };
        if let Some(uri) = &self.storage.uri {
            if let Err(reason) = crate::store::index_storage::check_uri(uri) {
                return bad("storage.uri", &reason);
            }
        }
        if self.storage.poll_interval_ms == 0 {
            return bad("storage.poll_interval_ms", "must be at least 1");
        }
        if self.chunking.max_tokens == 0 {
            return bad("chunking.max_tokens", "must be at least 1");
        }
        if self.chunking.overlap_tokens >= self.chunking.max_tokens {
            return bad(
                "chunking.overlap_tokens",
                "must be below chunking.max_tokens",
            );
        }
        for (name, provider) in &self.embedders {
            if BUILT_IN_EMBEDDERS.contains(&name.as_str()) {
                return bad(
                    &format!("embedders.{name}"),
                    "is the name of a built-in embedder",
                );
            }
            if let Err((key, reason)) = provider.check() {
                return bad(&format!("embedders.{name}.{key}"), &reason);
            }
        }
        if !BUILT_IN_EMBEDDERS.contains(&self.model.embedder.as_str())
            && !self.embedders.contains_key(&self.model.embedder)
        {
            return bad(
                "model.embedder",
                "must be all-minilm-l6-v2, static, hashing or the name of an [embedders.<name>] section",
            );
        }
        if self.model.batch_size == 0 {
            return bad("model.batch_size", "must be at least 1");
        }
        if !(8..=512).contains(&self.model.max_sequence_tokens) {
            return bad("model.max_sequence_tokens", "must be between 8 and 512");
        }
        if self.limits.max_top_k == 0 {
            return bad("limits.max_top_k", "must be at least 1");
        }
        if self.index.retain_versions == 0 {
            return bad("index.retain_versions", "must be at least 1");
        }
        if self.index.maintenance.min_small_fragments < 2 {
            return bad(
                "index.maintenance.compaction_min_fragments",
                "must be at least 2",
            );
        }
        if let Some((key, reason)) = self.index.keyword.problem() {
            return bad(&format!("index.{key}"), reason);
        }
        if self.index.maintenance.target_rows == 0 {
            return bad(
                "index.maintenance.compaction_target_rows",
                "must be at least 1",
            );
        }
        if self.kafka.partitions < 1 {
            return bad("kafka.partitions", "must be at least 1");
        }
        if self.kafka.embedded_retention_bytes < self.kafka.max_message_bytes as u64 {
            return bad(
                "kafka.embedded_retention_bytes",
                "must be at least kafka.max_message_bytes",
            );
        }
        if !(1..=2_097_151).contains(&self.kafka.consumer_queue_kbytes) {
            return bad(
                "kafka.consumer_queue_kbytes",
                "must be between 1 and 2097151 (librdkafka's range)",
            );
        }
        if self.kafka.batch_max_documents == 0 {
            return bad("kafka.batch_max_documents", "must be at least 1");
        }
        if self.kafka.batch_max_chunks == 0 {
            return bad("kafka.batch_max_chunks", "must be at least 1");
        }
        if self
            .kafka
            .reply_topics
            .split(',')
            .all(|p| p.trim().is_empty())
        {
            return bad(
                "kafka.reply_topics",
                "must name at least one pattern, for example ragstream.replies*",
            );
        }
        if self.kafka.stall_after_ms == 0 {
            return bad("kafka.stall_after_ms", "must be at least 1");
        }
        if self.limits.query_timeout_ms == 0 {
            return bad("limits.query_timeout_ms", "must be at least 1");
        }
        if self.limits.max_query_bytes == 0 {
            return bad("limits.max_query_bytes", "must be at least 1");
        }
        if self.http.bind.parse::<std::net::SocketAddr>().is_err() {
            return bad("http.bind", "must be host:port, for example 127.0.0.1:8080");
        }
        if let Err((key, reason)) =
            crate::retrieval::retrievers::check(&self.retrievers, self.limits.max_top_k)
        {
            return bad(&key, &reason);
        }
        if crate::model::IndexName::parse(&self.contracts.default_index).is_err() {
            return bad("contracts.default_index", "is not a valid index name");
        }
        if let Err((key, reason)) = self.reranker.check() {
            return bad(&format!("reranker.{key}"), &reason);
        }
        if let Err((key, reason)) = self.auth.check() {
            return bad(&key, &reason);
        }
        if let Err((key, reason)) = self.telemetry.check() {
            return bad(&key, &reason);
        }
        if let Err((key, reason)) = self.graph.check() {
            return bad(&key, &reason);
        }
        if let Err((key, reason)) = self.extractor.check() {
            return bad(&key, &reason);
        }
        if let Err((key, reason)) = self.index.vector.check(None) {
            return bad(&key, &reason);
        }
        if self.index.ingest_batch_documents == 0 {
            return bad("index.ingest_batch_documents", "must be at least 1");
        }
        Ok(())
    }
}

fn check<T: serde::de::DeserializeOwned>(
    table: &toml::Value,
    source_name: &str,
) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(table.clone()).map_err(|e| ConfigError {
        source_name: source_name.to_string(),
        key: e.path().to_string(),
        reason: e.inner().to_string(),
    })
}

fn merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

/// How an error names the environment variable that set the key it is about.
fn env_source(var: &str) -> String {
    format!("environment variable {var}")
}

/// The key a variable names: `RAGSTREAM_<SECTION>_<KEY>` for a key of a section
/// (`RAGSTREAM_LIMITS_MAX_TOP_K` is `limits.max_top_k`), or `RAGSTREAM_<A>__<B>__<C>` for any
/// depth (`RAGSTREAM_EMBEDDERS__OPENAI__API_KEY_ENV` is `embedders.openai.api_key_env`).
fn env_path(var: &str) -> Option<Vec<String>> {
    let rest = var.strip_prefix("RAGSTREAM_")?.to_ascii_lowercase();
    let parts: Vec<String> = if rest.contains("__") {
        rest.split("__").map(str::to_string).collect()
    } else {
        let (section, key) = rest.split_once('_')?;
        vec![section.to_string(), key.to_string()]
    };
    (parts.len() >= 2 && parts.iter().all(|p| !p.is_empty())).then_some(parts)
}

/// Whether `var` is one of the variables Kubernetes sets for a service whose name starts with
/// `ragstream-` (`RAGSTREAM_KAFKA_SERVICE_HOST`, `RAGSTREAM_HTTP_PORT_8080_TCP_ADDR` for
/// services `ragstream-kafka`, `ragstream-http`): never a key, though it may name a section.
fn is_service_link(var: &str) -> bool {
    let parts: Vec<&str> = var.split('_').collect();
    parts
        .windows(2)
        .any(|w| w == ["SERVICE", "HOST"] || w == ["SERVICE", "PORT"])
        || parts.last() == Some(&"PORT")
        || parts.windows(3).any(|w| {
            w[0] == "PORT"
                && !w[1].is_empty()
                && w[1].bytes().all(|b| b.is_ascii_digit())
                && ["TCP", "UDP", "SCTP"].contains(&w[2])
        })
}

/// Sets the key `var` names to `raw` and returns it (`limits.max_top_k`), or `None` when
/// `var` names no section of the configuration: such a variable is reported and ignored,
/// since other tools share the prefix (a compose file's `RAGSTREAM_MODELS`, a script's
/// `RAGSTREAM_BIN`). A variable that names a section but no key in it is an error.
/// The value is read with the type of the key's default; a key without one (an optional
/// key, or one in a table the defaults do not hold) takes it as TOML (a number, a boolean,
/// a list) or else as text, whichever the configuration's types accept.
fn apply_env(table: &mut toml::Value, var: &str, raw: &str) -> Result<Option<String>, ConfigError> {
    let Some(path) = env_path(var) else {
        return Ok(None);
    };
    let path = moved_keys::new_path(&path).unwrap_or(path);
    let dotted = path.join(".");
    let err = |reason: String| ConfigError {
        source_name: env_source(var),
        key: dotted.clone(),
        reason,
    };
    let slot = path
        .iter()
        .try_fold(&mut *table, |t, k| t.get_mut(k.as_str()));
    let Some(slot) = slot else {
        let set = set_without_default(table, &path, raw).map_err(err)?;
        // Inside a section of the configuration, a name that is no key is a misspelt key:
        // ignoring it would run with the default the operator meant to change.
        if set.is_none() {
            if let Some(toml::Value::Table(section)) = table.get(path[0].as_str()) {
                let keys: Vec<&str> = section.keys().map(String::as_str).collect();
                // `RAGSTREAM_INDEX_VECTOR_NPROBES` for `index.vector.nprobes`: a key of a
                // sub-table needs `__` between the levels.
                let nested = keys
                    .iter()
                    .find(|k| section[**k].is_table() && path[1].starts_with(&format!("{k}_")))
                    .map(|k| {
                        let rest = &path[1][k.len() + 1..];
                        format!(
                            "; for [{}.{k}] {rest}, use {}",
                            path[0],
                            moved_keys::variable(&[path[0].clone(), k.to_string(), rest.into()])
                        )
                    })
                    .unwrap_or_default();
                return Err(err(format!(
                    "names no key of [{}]; its keys include {}{nested}",
                    path[0],
                    keys.join(", ")
                )));
            }
        }
        return Ok(set);
    };
    let value = match slot {
        toml::Value::String(_) => toml::Value::String(raw.to_string()),
        toml::Value::Integer(_) => raw
            .trim()
            .parse::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| err(format!("expected an integer, got {raw:?}")))?,
        toml::Value::Float(_) => raw
            .trim()
            .parse::<f64>()
            .map(toml::Value::Float)
            .map_err(|_| err(format!("expected a number, got {raw:?}")))?,
        toml::Value::Boolean(_) => raw
            .trim()
            .parse::<bool>()
            .map(toml::Value::Boolean)
            .map_err(|_| err(format!("expected true or false, got {raw:?}")))?,
        _ => toml_value(raw).ok_or_else(|| err(format!("expected a TOML value, got {raw:?}")))?,
    };
    *slot = value;
    Ok(Some(dotted))
}

/// `raw` as a TOML value (`30`, `true`, `["a", "b"]`, `{ k = 1 }`), if it is one.
fn toml_value(raw: &str) -> Option<toml::Value> {
    toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
}

/// Sets a key the defaults do not hold: `Ok(None)` when the configuration has no such key,
/// the reason when it refuses both readings of `raw`. An error elsewhere (another table's
/// field still missing, say) is left to the final check, which names its own source.
fn set_without_default(
    table: &mut toml::Value,
    path: &[String],
    raw: &str,
) -> Result<Option<String>, String> {
    let dotted = path.join(".");
    let mut refused = None;
    for value in [toml_value(raw), Some(toml::Value::String(raw.to_string()))]
        .into_iter()
        .flatten()
    {
        let mut trial = table.clone();
        let (key, parents) = path.split_last().expect("at least two parts");
        let mut parent = &mut trial;
        for p in parents {
            let Some(t) = parent.as_table_mut() else {
                return Ok(None);
            };
            parent = t
                .entry(p.as_str())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        }
        let Some(t) = parent.as_table_mut() else {
            return Ok(None);
        };
        t.insert(key.clone(), value);
        match check::<Config>(&trial, "") {
            // The key, or a table on its path, is not one the configuration has.
            Err(e)
                if e.reason.starts_with("unknown field")
                    && (e.key == dotted || dotted.starts_with(&format!("{}.", e.key))) =>
            {
                return Ok(None)
            }
            Err(e) if e.key == dotted => refused = Some(e.reason),
            _ => {
                *table = trial;
                return Ok(Some(dotted));
            }
        }
    }
    Err(refused.unwrap_or_else(|| format!("cannot read {raw:?}")))
}

/// Expands a leading `~/` to `$HOME`.
pub fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests;
