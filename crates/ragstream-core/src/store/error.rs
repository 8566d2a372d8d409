//! What can go wrong reading or writing the stores (Lance datasets, the keyword index).

use crate::embedding::EmbedError;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("lance: {0}")]
    Lance(#[from] lance::Error),
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("index_version {requested} is not available: the oldest retained version is {oldest} and the latest is {latest}")]
    VersionUnavailable {
        requested: u64,
        oldest: u64,
        latest: u64,
    },
    #[error("the keyword index has no snapshot of version {0}")]
    KeywordSnapshotMissing(u64),
    #[error("index {0} does not exist")]
    UnknownIndex(String),
    #[error("index {index} was created for embedder {recorded} ({recorded_dimensions}-d), not {given} ({given_dimensions}-d)")]
    EmbedderMismatch {
        index: String,
        recorded: String,
        recorded_dimensions: usize,
        given: String,
        given_dimensions: usize,
    },
    /// `storage.uri` names a store that cannot be used (checked at start-up).
    #[error("storage.uri {uri}: {reason}")]
    Storage { uri: String, reason: String },
    /// A write reached a daemon that serves queries only.
    #[error("index {0} is read-only here: this daemon is a query replica (serve.role = query); its writer takes writes")]
    ReadOnly(String),
    /// Another process committed to the dataset after this writer read it: nothing was
    /// written; read the newest version and decide again.
    #[error("{dataset} changed after version {read_version} was read (another writer committed); nothing was written")]
    ChangedElsewhere { dataset: String, read_version: u64 },
    /// This daemon's claim on the index is older than the one its newest commit was made
    /// under: the index's partitions moved to another daemon, which writes it now.
    #[error("index {index} is written by another daemon now ({holder}, ownership epoch {epoch}, later than this daemon's {ours}); this daemon's batch is not committed")]
    NotOwner {
        index: String,
        holder: String,
        epoch: u64,
        ours: u64,
    },
    /// Maintenance of an index on an object store that another daemon writes.
    #[error("index {0} is written by another daemon (the owner of its Kafka partition); only the owner changes it")]
    NotOwned(String),
    /// An object-store request failed (the store down, credentials revoked).
    #[error("object store: {0}")]
    ObjectStore(String),
    #[error("corrupt index data: {0}")]
    Corrupt(String),
    #[error("a search task failed: {0}")]
    TaskFailed(String),
    /// The embedder failed while the store was rewriting vectors (`index reembed`).
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

impl StoreError {
    /// Whether the storage failed a request (an object store down, unreachable or timing
    /// out; a disk failing) rather than the data or the request being wrong. Lance reports
    /// every object-store failure as an I/O error, so on local storage this is the disk's.
    pub fn is_storage_failure(&self) -> bool {
        match self {
            StoreError::ObjectStore(_) | StoreError::Lance(lance::Error::Timeout { .. }) => true,
            // Lance also reports undecodable data as I/O: only a failing store or disk
            // counts.
            StoreError::Lance(lance::Error::IO { source, .. }) => {
                source.downcast_ref::<object_store::Error>().is_some()
                    || source.downcast_ref::<std::io::Error>().is_some()
            }
            _ => false,
        }
    }
}

impl From<tantivy::directory::error::OpenDirectoryError> for StoreError {
    fn from(e: tantivy::directory::error::OpenDirectoryError) -> Self {
        StoreError::Tantivy(e.into())
    }
}

impl From<tantivy::query::QueryParserError> for StoreError {
    fn from(e: tantivy::query::QueryParserError) -> Self {
        StoreError::Tantivy(e.into())
    }
}
