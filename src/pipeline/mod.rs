//! The streaming pipeline: Kafka → IngestSource → IndexWriter (chunk, embed, commit), and the
//! QueryHandler answering requests from the bus. Stages are tasks that own their state and
//! pass typed messages over bounded channels; the retrieval logic stays in the library.

pub mod events;
pub mod index_writer;
pub mod ingest_source;
pub mod query_handler;

use std::collections::BTreeMap;

use events::DocumentEvent;

/// A valid event and where it was read.
#[derive(Debug, Clone)]
pub struct SourcedEvent {
    pub event: DocumentEvent,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// `"topic:partition"`, the checkpoint key.
pub fn partition_key(topic: &str, partition: i32) -> String {
    format!("{topic}:{partition}")
}

/// What IngestSource hands to IndexWriter: events in offset order, and for every partition the
/// batch touched (poison messages included) the next offset to read once it is committed.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub events: Vec<SourcedEvent>,
    pub next_offsets: BTreeMap<String, i64>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.next_offsets.is_empty()
    }
}
