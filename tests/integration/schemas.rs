//! The published JSON Schemas (`docs/schemas/`, `ragstream schema`) hold for what a live
//! daemon really sends and takes: document events produced with kcat, every contract's
//! request and reply, an error, and a dead letter's headers. Python's `jsonschema` (draft
//! 2020-12; `scripts/setup` installs it) is the validator, so the check is independent of
//! the code that wrote the schemas.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::daemon::{curl, kcat_count, kcat_produce, start_daemon_with, upsert, wait_for};

/// Fails with the validator's message unless `instance` matches the schema `name`.
pub fn assert_valid(name: &str, instance: &Value) {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schemas/{name}.json"));
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             schema = json.load(open(sys.argv[1]))\n\
             jsonschema.Draft202012Validator.check_schema(schema)\n\
             jsonschema.Draft202012Validator(schema).validate(json.loads(sys.argv[2]))",
            schema.to_str().unwrap(),
            &instance.to_string(),
        ])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{name} refuses {instance}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn assert_invalid(name: &str, instance: &Value) {
    let result = std::panic::catch_unwind(|| assert_valid(name, instance));
    assert!(result.is_err(), "{name} accepts {instance}");
}

#[test]
fn what_the_daemon_sends_and_takes_matches_the_published_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ragstream.toml");
    std::fs::write(
        &config,
        "[contracts]\ndefault_index = \"kb\"\n\n\
         [retrievers.docs]\nindex = \"kb\"\nmethod = \"hybrid\"\ntop_k = 2\n",
    )
    .unwrap();
    let d = start_daemon_with(&[("RAGSTREAM_CONFIG", config.to_str().unwrap())]);

    // Document events: the ones produced are valid; a schema refuses what the daemon refuses.
    let events = [
        upsert("volcano", "Magma erupts from volcanoes as lava."),
        upsert("glacier", "Glaciers carve valleys out of rock."),
    ];
    for e in &events {
        assert_valid("document-event", &serde_json::from_str(e).unwrap());
    }
    assert_invalid(
        "document-event",
        &json!({"schema_version": 1, "op": "upsert", "index": "kb"}),
    );
    assert_invalid(
        "document-event",
        &json!({"schema_version": 2, "op": "delete", "index": "kb", "document_id": "x"}),
    );
    // A delete names its document, by document_id or by the document's id, and nothing more.
    for delete in [
        json!({"schema_version": 1, "op": "delete", "index": "kb", "document_id": "x"}),
        json!({"schema_version": 1, "op": "delete", "index": "kb", "document": {"id": "x"}}),
    ] {
        assert_valid("document-event", &delete);
    }
    for delete in [
        json!({"schema_version": 1, "op": "delete", "index": "kb"}),
        json!({"schema_version": 1, "op": "delete", "index": "kb", "document_id": " "}),
        json!({"schema_version": 1, "op": "delete", "index": "kb", "document": {"title": "t"}}),
    ] {
        assert_invalid("document-event", &delete);
    }
    // A newer producer's extra envelope field is allowed by both.
    let newer = json!({"schema_version": 1, "op": "upsert", "index": "kb", "producer": "v9",
        "document": {"id": "basalt", "text": "Basalt is cooled lava."}});
    assert_valid("document-event", &newer);
    // One event with a field the document does not have: a dead letter.
    let poison = json!({"schema_version": 1, "op": "upsert", "index": "kb",
        "document": {"id": "bad", "text": "t", "colour": "red"}});
    assert_invalid("document-event", &poison);
    let mut lines: Vec<String> = events.to_vec();
    lines.push(newer.to_string());
    lines.push(poison.to_string());
    kcat_produce(&d.bootstrap, "ragstream.documents", &[], &lines);
    wait_for("three documents", || {
        curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["documents"] == 3
    });
    wait_for("a dead letter", || {
        kcat_count(&d.bootstrap, "ragstream.dlq") == 1
    });
    let newest = curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["index_version"].clone();

    // Every contract: the request is valid, the reply is valid.
    let post = |path: &str, body: &Value| {
        curl(&[
            "-X",
            "POST",
            "-d",
            &body.to_string(),
            &format!("{}{path}", d.http),
        ])
    };
    let chunk_of_volcano = {
        let (_, v) = post("/v1/indexes/kb/query", &json!({"query": "magma"}));
        v["results"][0]["chunk_id"].clone()
    };
    let cases = [
        (
            "000",
            "/v1/retrieve",
            json!({"retrieval": {"index": "kb", "query": "lava", "search_method": "hybrid"}}),
        ),
        (
            "001",
            "/v1/rag/query",
            json!({"query": "lava magma", "top_k": 1}),
        ),
        (
            "002",
            "/v1/indexes/kb/query",
            json!({"query": "glacier valleys", "debug": true}),
        ),
        (
            "003",
            "/v1/ai/rag/query/",
            json!({"query": "magma", "hybrid": {"top_k": 1, "min_sim": 0}}),
        ),
        // The contract's leniencies: the schema takes what the server takes.
        (
            "003",
            "/v1/ai/rag/query/",
            json!({"query": "magma", "hybrid": {"top_k": 1.0, "min_sim": 0, "alpha": null},
                "visibility_override_allowed": " YES "}),
        ),
        (
            "003",
            "/v1/ai/rag/query/",
            json!({"query": "magma", "hybrid": {"min_sim": 0},
                "visibility_override_allowed": 1.0}),
        ),
        (
            "004",
            "/v1/retrievers/docs/retrieve",
            json!({"query": "rock valleys"}),
        ),
        (
            "explain",
            "/v1/indexes/kb/explain",
            json!({"request": {"query": "lava"}, "targets": [{"document_id": "glacier"}, {"chunk_id": chunk_of_volcano}]}),
        ),
        (
            "diff",
            "/v1/indexes/kb/diff",
            json!({"request": {"query": "lava"}, "from_version": 1, "to_version": newest}),
        ),
    ];
    for (contract, path, request) in cases {
        assert_valid(&format!("query-{contract}"), &request);
        let (status, reply) = post(path, &request);
        assert_eq!(status, 200, "{contract}: {reply}");
        assert_valid(&format!("reply-{contract}"), &reply);
    }
    // A request a contract refuses: the schema refuses it too, and the error is valid.
    let bad = json!({"query": "lava", "top_k": 0});
    assert_invalid("query-002", &bad);
    assert_invalid(
        "query-003",
        &json!({"hybrid": {}, "visibility_override_allowed": "maybe"}),
    );
    let (status, error) = post("/v1/indexes/kb/query", &bad);
    assert_eq!(status, 400);
    assert_valid("error", &error);

    // The dead letter's headers, as kcat reads them.
    let out = Command::new(crate::common::kcat_program())
        .args([
            "-C",
            "-b",
            &d.bootstrap,
            "-t",
            "ragstream.dlq",
            "-c",
            "1",
            "-e",
            "-J",
        ])
        .output()
        .unwrap();
    let letter: Value = serde_json::from_slice(&out.stdout).expect("one dead letter as JSON");
    let pairs = letter["headers"].as_array().expect("headers");
    let headers: serde_json::Map<String, Value> = pairs
        .chunks(2)
        .map(|kv| (kv[0].as_str().unwrap().to_string(), kv[1].clone()))
        .collect();
    assert_eq!(headers["error.code"], "schema_violation", "{letter}");
    assert_valid("dead-letter", &Value::Object(headers));
}
