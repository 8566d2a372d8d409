//! A partition with a backlog does not hold up another: each partition is read from its own
//! queue, in turn. A live document produced to a quiet partition while 20,000 documents of
//! a backfill wait on the other is searchable before the backfill has drained.

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
    let backlog: Vec<String> = (0..BACKLOG)
        .map(|i| {
            json!({"schema_version": 1, "op": "upsert", "index": "backfill",
                "document": {"id": format!("b{i}"), "text": format!("Backfill document {i}.")}})
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
    kcat_produce(&d.bootstrap, "ragstream.documents", &["-p", "0"], &[live]);
    wait_for_state_within("the live document", Duration::from_secs(300), || {
        let n = documents(&d.http, "live");
        (n == 1, format!("{n} live documents"))
    });
    let backfilled = documents(&d.http, "backfill");
    assert!(
        backfilled < BACKLOG as u64,
        "the live document waited for the whole backfill ({backfilled} of {BACKLOG} indexed first)"
    );
}
