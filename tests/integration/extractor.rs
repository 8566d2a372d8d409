//! The triple extractor against a chat-completions server on 127.0.0.1: outages are waited
//! out, malformed answers (not JSON, wrong schema) lose no document, refusals dead-letter,
//! and extracted triples reach the graph through the writer.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpResponse, HttpServer};
use ragstream::graph::extractor::{ExtractError, ExtractorConfig, HttpExtractor, TripleExtractor};
use ragstream::index::DocumentOp;
use ragstream::pipeline::actor::{mailbox, Actor};
use ragstream::pipeline::assignment::Assignment;
use ragstream::pipeline::checkpoints::Checkpoints;
use ragstream::pipeline::events::DocumentEvent;
use ragstream::pipeline::index_writer::IndexWriter;
use ragstream::pipeline::triple_extractor::TripleExtraction;
use ragstream::pipeline::{IndexWork, PlannedBatch, SourcedEvent};
use serde_json::{json, Value};

use crate::common::{doc, name};

/// One scripted answer; unscripted requests get the triples the text states as
/// "<Subject> <verb>s <object>." sentences.
#[derive(Clone)]
enum Answer {
    Status(u16),
    Content(&'static str),
}

#[derive(Clone)]
struct ChatServer {
    url: String,
    script: Arc<Mutex<VecDeque<Answer>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

fn facts_in(text: &str) -> Value {
    let triples: Vec<Value> = text
        .split('.')
        .filter_map(|sentence| {
            let words: Vec<&str> = sentence.split_whitespace().collect();
            (words.len() == 3)
                .then(|| json!({"subject": words[0], "relation": words[1], "object": words[2]}))
        })
        .collect();
    json!({"triples": triples})
}

async fn chat(state: web::Data<ChatServer>, body: web::Json<Value>) -> HttpResponse {
    state.requests.lock().unwrap().push(body.0.clone());
    let content = match state.script.lock().unwrap().pop_front() {
        Some(Answer::Status(s)) => {
            return HttpResponse::build(actix_web::http::StatusCode::from_u16(s).unwrap())
                .body("scripted")
        }
        Some(Answer::Content(c)) => c.to_string(),
        None => {
            let text = body["messages"][1]["content"].as_str().unwrap_or_default();
            facts_in(text).to_string()
        }
    };
    HttpResponse::Ok().json(json!({"choices": [{"index": 0,
        "message": {"role": "assistant", "content": content}}]}))
}

impl ChatServer {
    fn start() -> ChatServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let state = ChatServer {
            url: format!("http://{}", listener.local_addr().unwrap()),
            script: Arc::default(),
            requests: Arc::default(),
        };
        let data = web::Data::new(state.clone());
        // Its own thread and runtime: usable from async tests and from plain daemon tests.
        std::thread::spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                HttpServer::new(move || {
                    App::new()
                        .app_data(data.clone())
                        .route("/v1/chat/completions", web::post().to(chat))
                })
                .workers(1)
                .listen(listener)
                .unwrap()
                .run()
                .await
            })
        });
        state
    }

    fn script(&self, answers: impl IntoIterator<Item = Answer>) {
        self.script.lock().unwrap().extend(answers);
    }

    fn extractor(&self) -> HttpExtractor {
        HttpExtractor::new(&ExtractorConfig {
            enabled: true,
            url: self.url.clone(),
            model: "test-model".into(),
            timeout_ms: 5000,
            ..Default::default()
        })
        .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_sends_a_json_schema_prompt_and_sorts_failures() {
    let server = ChatServer::start();
    let x = server.extractor();
    let run = |text: &'static str| {
        let x = server.extractor();
        tokio::task::spawn_blocking(move || x.extract(text))
    };
    let t = run("Pancreas produces insulin.").await.unwrap().unwrap();
    assert_eq!(
        (
            t[0].subject.as_str(),
            t[0].relation.as_str(),
            t[0].object.as_str()
        ),
        ("Pancreas", "produces", "insulin")
    );
    let sent = server.requests.lock().unwrap()[0].clone();
    assert_eq!(sent["model"], "test-model");
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(
        sent["response_format"]["json_schema"]["schema"],
        ragstream::graph::extractor::schema()
    );
    server.script([
        Answer::Status(503),
        Answer::Status(400),
        Answer::Content("I think the pancreas makes insulin."),
        Answer::Content(r#"{"triples": [{"subject": "A"}]}"#),
    ]);
    let outcomes: Vec<Result<_, ExtractError>> = {
        let mut v = Vec::new();
        for _ in 0..4 {
            v.push(run("x").await.unwrap());
        }
        v
    };
    assert!(matches!(outcomes[0], Err(ExtractError::Unavailable(_))));
    assert!(matches!(outcomes[1], Err(ExtractError::Refused(_))));
    assert!(matches!(outcomes[2], Err(ExtractError::Malformed(_))));
    assert!(matches!(outcomes[3], Err(ExtractError::Malformed(_))));
    drop(x);
}

fn event(offset: i64, d: ragstream::model::Document) -> SourcedEvent {
    SourcedEvent {
        event: DocumentEvent {
            index: name("kb"),
            op: DocumentOp::Upsert(d),
        },
        topic: "docs".into(),
        partition: 0,
        offset,
        produced_at_ms: None,
        trace: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extracted_triples_reach_the_graph_and_malformed_output_loses_nothing() {
    let server = ChatServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut config = crate::common::config(dir.path());
    config.graph.enabled = true;
    let engine = Arc::new(crate::common::engine_with(config));
    let kb = name("kb");
    let index = engine.create_index(&kb).await.unwrap();
    let docs = vec![
        doc("pancreas", "Pancreas", "Pancreas produces insulin."),
        doc("noisy", "Noisy", "Liver stores glycogen."),
        doc("outage", "Outage", "Insulin regulates glucose."),
    ];
    let ops: Vec<DocumentOp> = docs.iter().cloned().map(DocumentOp::Upsert).collect();
    let plan = index.writer().plan(ops, engine.chunker()).await.unwrap();
    // Requests go document by document (ids in order: noisy, outage, pancreas): "noisy" gets
    // output that is not JSON and then output that breaks the schema (one retry allowed), so
    // it is kept without extracted triples; "outage" first meets a 503.
    server.script([
        Answer::Content("Sure! Liver stores glycogen."),
        Answer::Content(r#"{"facts": []}"#),
        Answer::Status(503),
    ]);
    let (next, [_, mut inbox]) = mailbox("test-next", 1);
    let mut stage = TripleExtraction {
        extractor: Arc::new(server.extractor()),
        malformed_retries: 1,
        dead_letters: None,
        next,
    };
    let batch = PlannedBatch {
        work: vec![IndexWork {
            index: kb.clone(),
            events: docs
                .into_iter()
                .enumerate()
                .map(|(i, d)| event(i as i64, d))
                .collect(),
            rows: plan.rows,
            triples: plan.graph.triples,
        }],
        next_offsets: BTreeMap::from([("docs:0".to_string(), 3)]),
        epochs: BTreeMap::new(),
        ..Default::default()
    };
    stage.handle(batch).await.unwrap();
    let out = inbox.recv().await.unwrap();
    let work = &out.work[0];
    assert_eq!(work.events.len(), 3, "no document is lost");
    let mut chunked: Vec<&str> = work.rows.iter().map(|r| r.document_id.as_str()).collect();
    chunked.sort();
    assert_eq!(chunked, vec!["noisy", "outage", "pancreas"]);
    let facts: Vec<(&str, &str)> = work
        .triples
        .iter()
        .map(|t| (t.document_id.as_str(), t.relation.as_str()))
        .collect();
    assert!(facts.contains(&("pancreas", "produces")), "{facts:?}");
    assert!(
        facts.contains(&("outage", "regulates")),
        "the outage was waited out"
    );
    assert!(!facts.iter().any(|(d, _)| *d == "noisy"));
    assert_eq!(server.requests.lock().unwrap().len(), 5);

    // The writer commits them (re-planning from the events, which carry the extracted
    // triples), and graph retrieval finds them.
    let assignment = Arc::new(Assignment::new(HashMap::new()));
    assignment.assign("docs:0");
    let mut out = out;
    out.epochs = BTreeMap::from([("docs:0".to_string(), assignment.epoch("docs:0").unwrap())]);
    let mut writer = IndexWriter {
        engine: engine.clone(),
        checkpoints: Arc::new(Checkpoints::default()),
        assignment,
        monitor: None,
        health: None,
    };
    writer.handle(out).await.unwrap();
    let (found, _) = engine
        .graph_lookup(&kb, "What does the pancreas produce?", None, 1)
        .await
        .unwrap();
    let relations: Vec<&str> = found
        .relations
        .iter()
        .map(|r| r.relation.as_str())
        .collect();
    assert_eq!(relations, vec!["produces"]);
    assert_eq!(engine.stats(&kb).await.unwrap().documents, 3);
}

#[test]
fn the_daemon_extracts_triples_from_documents_it_consumes() {
    use crate::daemon::{curl, kcat_produce, start_daemon_with, upsert, wait_for};
    let server = ChatServer::start();
    let d = start_daemon_with(&[
        ("RAGSTREAM_GRAPH_ENABLED", "true"),
        ("RAGSTREAM_EXTRACTOR_ENABLED", "true"),
        ("RAGSTREAM_EXTRACTOR_URL", &server.url),
        ("RAGSTREAM_EXTRACTOR_MODEL", "test-model"),
    ]);
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[upsert("pancreas", "Pancreas produces insulin.")],
    );
    let url = format!("{}/v1/indexes/kb/rag/query", d.http);
    let ask = || {
        curl(&[
            "-X",
            "POST",
            "-d",
            r#"{"query": "What does the pancreas make?"}"#,
            &url,
        ])
        .1
    };
    wait_for("the extracted relation", || {
        ask()["kg"].as_array().is_some_and(|kg| !kg.is_empty())
    });
    assert_eq!(
        ask()["kg"],
        json!([{"subject": "Pancreas", "relation": "produces", "object": "insulin"}])
    );
    let sent = server.requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "one chunk, one request");
    assert_eq!(
        sent[0]["messages"][1]["content"],
        "Pancreas produces insulin."
    );
}
