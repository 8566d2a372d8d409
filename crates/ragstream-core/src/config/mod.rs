//! Typed configuration: built-in defaults, then `config/ragstream.toml` (or `--config FILE`),
//! then environment variables `RAGSTREAM_<SECTION>_<KEY>`, layered by figment. Every bad input
//! stops start-up with the source (file or variable), the key and the reason.

mod environment;
mod layer;
mod moved_keys;
mod secrets;

use std::path::{Path, PathBuf};

use figment::Figment;
use serde::{Deserialize, Serialize};

use environment::Variables;
use layer::Layer;

use crate::chunking::ChunkerConfig;
use crate::model::DocumentLimits;

/// Embedders that need no `[embedders.<name>]` section.
pub const BUILT_IN_EMBEDDERS: &[&str] = &["all-minilm-l6-v2", "static", "hashing"];

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
    /// The reply topic the daemon creates when missing.
    pub replies_topic: String,
    /// Where a writer on an object store announces each version it published
    /// (`{"index", "index_version", "committed_at"}`), so that query replicas refresh at
    /// once rather than at their next poll.
    pub versions_topic: String,
    /// The topics a bus query may name in `reply-to`: comma-separated glob patterns (`*`
    /// matches any run of characters). The documents, queries and dead-letter topics are
    /// never allowed, nor the versions topic, whatever the patterns say.
    pub reply_topics: String,
    /// How many missing reply topics one daemon run may create (for callers who
    /// authenticate); 0 creates none: reply topics are made beforehand.
    pub reply_topics_create_max: usize,
    pub group_id: String,
    /// Partitions of the documents and queries topics the daemon creates when missing.
    pub partitions: i32,
    /// The embedded broker's program (nisshi); empty: the copy `scripts/setup` installs,
    /// else `nisshi` on the PATH.
    pub embedded_broker: String,
    /// The embedded broker's port on 127.0.0.1; 0: the port of its last run if free, else
    /// any free port.
    pub embedded_port: u16,
    /// The embedded broker's retention: bytes each partition of the topics it creates keeps
    /// on disk (`retention.bytes`); 0 keeps everything. Past it the oldest messages are
    /// deleted, read or not; a consumer that had not read them reports them in
    /// `ragstream_kafka_messages_lost_total`.
    pub embedded_retention_bytes: u64,
    /// How much the ingest consumer prefetches from Kafka (librdkafka's
    /// `queued.max.messages.kbytes`): memory held for the backlog. Below the default a
    /// backlog drains slower (BENCHMARKS.md, "Freshness beside a draining backlog").
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
            reply_topics_create_max: 100,
            group_id: "ragstream".into(),
            partitions: 4,
            embedded_broker: String::new(),
            embedded_port: 0,
            embedded_retention_bytes: 0,
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
    /// Word pieces the model reads at once (it was trained on 256). A longer text is cut into
    /// windows of this many and embedded as their token-weighted mean.
    pub max_sequence_tokens: usize,
    /// Extra latency added to every embedding call (0 = none): simulates a slow provider for
    /// backpressure tests and benchmarks.
    pub simulated_latency_ms: u64,
    /// Keep chunk vectors in `<data_dir>/embedding-cache.redb`, keyed by embedder and text, so
    /// that re-ingesting unchanged or moved text never embeds it again.
    pub cache: bool,
    /// The embedding cache's size limit, keys and vectors (0: no limit). Vectors not used
    /// for a while are dropped first.
    pub cache_max_mb: u64,
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
            cache_max_mb: 4096,
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
    /// a secret, and every `[kafka.client]` entry but a few harmless ones) replaced by
    /// `<redacted>`.
    pub fn redacted_toml(&self) -> String {
        let mut value = toml::Value::try_from(self).expect("a configuration serialises");
        secrets::redact_config(&mut value);
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
    ///
    /// figment merges the layers (defaults, the file, one layer per variable) and reads the
    /// result leniently: a variable's text becomes the number or boolean its key wants, and
    /// stays text for a text key (`RAGSTREAM_RERANKER_MODEL=123`).
    pub fn load_reporting(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(Config, LoadReport), ConfigError> {
        const DEFAULTS: &str = "built-in defaults";
        let defaults = toml::Table::try_from(Config::default()).expect("defaults serialise");
        let mut report = LoadReport {
            sources: vec![DEFAULTS.to_string()],
            ..LoadReport::default()
        };
        let mut base = Figment::from(Layer::table(DEFAULTS, &defaults));
        let mut source_name = DEFAULTS.to_string();
        if let Some(path) = file {
            source_name = path.display().to_string();
            let (mut table, moved) = read_file(path)?;
            exact_fractions(&mut table, &defaults);
            report
                .moved_keys
                .extend(moved.into_iter().map(|m| format!("{source_name}: {m}")));
            base = base.merge(Layer::table(&source_name, &table));
            report.sources.push(source_name.clone());
        }
        let env: Vec<(String, String)> = env.into_iter().collect();
        let mut variables = Variables::read(&defaults, &env)?;
        report
            .sources
            .extend(variables.settings.iter().map(|s| s.source_name()));
        report.ignored_variables.clone_from(&variables.ignored);
        report.moved_keys.extend(variables.moved.iter().cloned());
        let mut config = extract(&base, &mut variables, &source_name)?;
        // An error about a key a variable set names the variable, not the file whose value
        // it replaced.
        let named = |mut e: ConfigError| {
            if let Some(s) = variables.setting_of(&e.key) {
                e.source_name = s.source_name();
            }
            e
        };
        config.storage.data_dir = expand_home(&config.storage.data_dir);
        config.model.dir = expand_home(&config.model.dir);
        config.model.static_dir = expand_home(&config.model.static_dir);
        config.validate(&source_name).map_err(named)?;
        let every_variable: std::collections::HashMap<String, String> = env.into_iter().collect();
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
        if self.kafka.embedded_retention_bytes != 0
            && self.kafka.embedded_retention_bytes < self.kafka.max_message_bytes as u64
        {
            return bad(
                "kafka.embedded_retention_bytes",
                "must be 0 (keep everything) or at least kafka.max_message_bytes",
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
        // A size limit of 0 would refuse every document, message, query or request.
        for (key, limit) in [
            ("limits.max_query_bytes", self.limits.max_query_bytes),
            ("limits.max_document_bytes", self.limits.max_document_bytes),
            (
                "limits.max_document_id_bytes",
                self.limits.max_document_id_bytes,
            ),
            ("kafka.max_message_bytes", self.kafka.max_message_bytes),
            ("http.max_body_bytes", self.http.max_body_bytes),
        ] {
            if limit == 0 {
                return bad(key, "must be at least 1");
            }
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

/// Reads the merged layers (`base`, then one per variable) into a [`Config`]. An error names
/// the layer that gave the bad value, else `fallback_source`.
fn extract(
    base: &Figment,
    variables: &mut Variables,
    fallback_source: &str,
) -> Result<Config, ConfigError> {
    loop {
        let layers = variables.settings.iter().fold(base.clone(), |f, s| {
            f.merge(Layer::key(s.source_name(), &s.path, s.value.clone()))
        });
        let e = match layers.extract_lossy() {
            Ok(config) => return Ok(config),
            Err(e) => e
                .into_iter()
                .next()
                .expect("a figment error holds one at least"),
        };
        // A number read from a variable for a key without a default, which wants text
        // (`RAGSTREAM_RERANKER_MODEL=1.5`): the text it is.
        if let Some(s) =
            (variables.settings.iter_mut()).find(|s| s.guessed_number && s.path == e.path)
        {
            s.value = s.text.clone().into();
            s.guessed_number = false;
            continue;
        }
        let key = e.path.join(".");
        let hint = matches!(e.kind, figment::error::Kind::UnknownField(..))
            .then(|| variables.setting_of(&key)?.nested_hint.as_ref())
            .flatten();
        return Err(ConfigError {
            source_name: e
                .metadata
                .as_ref()
                .map_or_else(|| fallback_source.to_string(), |m| m.name.to_string()),
            reason: match hint {
                Some(hint) => format!("{}; {hint}", e.kind),
                None => e.kind.to_string(),
            },
            key,
        });
    }
}

/// A file's table, with the keys that moved put in their new places (and a warning for each).
fn read_file(path: &Path) -> Result<(toml::Table, Vec<String>), ConfigError> {
    let error = |key: String, reason: String| ConfigError {
        source_name: path.display().to_string(),
        key,
        reason,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| error("-".into(), format!("cannot read the file: {e}")))?;
    let mut table: toml::Table =
        toml::from_str(&text).map_err(|e| error("-".into(), e.message().to_string()))?;
    let moved = moved_keys::move_keys(&mut table).map_err(|(key, reason)| error(key, reason))?;
    Ok((table, moved))
}

/// A number written as text where the default is a number with a fraction
/// (`resident_hamming_share = "0.05"`), read as an `f64` here: figment's lenient reading
/// goes through `f32` and would lose digits. Other text is left to figment.
fn exact_fractions(table: &mut toml::Table, defaults: &toml::Table) {
    for (key, value) in table.iter_mut() {
        match (value, defaults.get(key)) {
            (toml::Value::Table(inner), Some(toml::Value::Table(default))) => {
                exact_fractions(inner, default)
            }
            (value @ toml::Value::String(_), Some(toml::Value::Float(_))) => {
                if let Some(f) = value.as_str().and_then(|s| s.trim().parse::<f64>().ok()) {
                    *value = toml::Value::Float(f);
                }
            }
            _ => {}
        }
    }
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
