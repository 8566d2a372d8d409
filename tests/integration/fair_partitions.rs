//! A partition with a backlog does not hold up another: each partition is read from its own
//! queue, in turn. A live document produced to a quiet partition while 20,000 documents of
//! a backfill wait on the other is searchable after a few of the backfill's batches, not
//! after the backfill's prefetch.

use std::time::Duration;

use serde_json::json;

use crate::daemon::{curl, kcat_produce, start_daemon_with, wait_for_state_within};

const BACKLOG: usize = 20_000;

fn documents(http: &str, index: &str) -> u64 {
    curl(&[&format!("{http}/v1/indexes/{index}/stats")]).1["documents"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn a_live_document_beside_a_backlog_is_searchable_before_the_backlog_drains() {
    // Small batches: the backfill takes many commits, so it drains long after the live
    // document could be read.
    let d = start_daemon_with(&[("RAGSTREAM_KAFKA_BATCH_MAX_DOCUMENTS", "50")]);
    // About a kilobyte each: the backfill (about 20 MB) is more than the consumer's prefetch
    // (`kafka.consumer_queue_kbytes`), which one queue for every partition would put ahead
    // of the live document.
    let filler = "filler words about nothing in particular ".repeat(25);
    let backlog: Vec<String> = (0..BACKLOG)
        .map(|i| {
            json!({"schema_version": 1, "op": "upsert", "index": "backfill",
                "document": {"id": format!("b{i}"), "text": format!("Backfill document {i}. {filler}")}})
            .to_string()
        })
        .collect();
    kcat_produce(&d.bootstrap, "ragstream.documents", &["-p", "1"], &backlog);
    wait_for_state_within("the backfill to start", Duration::from_secs(120), || {
        let n = documents(&d.http, "backfill");
        (n > 0, format!("{n} documents"))
    });

    let live = json!({"schema_version": 1, "op": "upsert", "index": "live",
        "document": {"id": "fresh", "text": "A correction that must be found at once."}})
    .to_string();
    let before = documents(&d.http, "backfill");
    kcat_produce(&d.bootstrap, "ragstream.documents", &["-p", "0"], &[live]);
    wait_for_state_within("the live document", Duration::from_secs(300), || {
        let n = documents(&d.http, "live");
        (n == 1, format!("{n} live documents"))
    });
    // Read in turn, the live document waits for the few batches already in the pipeline;
    // behind one queue, for the whole prefetch of the backfill.
    let meanwhile = documents(&d.http, "backfill") - before;
    assert!(
        meanwhile < (BACKLOG / 4) as u64,
        "the live document waited for {meanwhile} backfill documents"
    );
}

/// A partition with a backlog is read into the bulk lane and, near its end, into the live
/// lane, once its bulk batches are committed. Every partition reaches its end: none is left
/// waiting for a batch that is already committed, and no document is lost or taken twice.
#[test]
fn every_partition_drains_to_its_end_through_both_lanes() {
    // As many as the test daemons are started with.
    const PARTITIONS: usize = 2;
    const PER_PARTITION: usize = 300;
    // Small batches: a partition is live within one batch (10 messages) of its end.
    let d = start_daemon_with(&[("RAGSTREAM_KAFKA_BATCH_MAX_DOCUMENTS", "10")]);
    for p in 0..PARTITIONS {
        let docs: Vec<String> = (0..PER_PARTITION)
            .map(|i| {
                json!({"schema_version": 1, "op": "upsert", "index": "drain",
                    "document": {"id": format!("p{p}-{i}"), "text": format!("Document {i} of partition {p}.")}})
                .to_string()
            })
            .collect();
        kcat_produce(
            &d.bootstrap,
            "ragstream.documents",
            &["-p", &p.to_string()],
            &docs,
        );
    }
    let all = (PARTITIONS * PER_PARTITION) as u64;
    wait_for_state_within("every document", Duration::from_secs(180), || {
        let n = documents(&d.http, "drain");
        (n == all, format!("{n} of {all} documents"))
    });
    let (_, stats) = curl(&[&format!("{}/v1/indexes/drain/stats", d.http)]);
    // One chunk per document, in both stores: none taken twice.
    assert_eq!(stats["chunks"], all, "{stats}");
    assert_eq!(stats["keyword_chunks"], all, "{stats}");
}
