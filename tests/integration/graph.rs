//! Knowledge-graph retrieval through contract 001 and the engine: a small hand-written corpus
//! whose documents state triples.

use ragstream::contracts::Contract;
use ragstream::index::DocumentOp;
use ragstream::model::{Document, EntityAliases, Triple};
use serde_json::{json, Value};

use crate::common::{answer, config, doc, engine_with, name};

fn triple(subject: &str, relation: &str, object: &str) -> Triple {
    Triple {
        subject: subject.into(),
        relation: relation.into(),
        object: object.into(),
        chunk: None,
    }
}

/// pancreas —produces→ insulin —regulates→ glucose —fuels→ brain —part_of→ nervous system,
/// each fact stated by a different document.
fn corpus() -> Vec<Document> {
    let with = |mut d: Document, triples: Vec<Triple>| {
        d.triples = triples;
        d
    };
    let mut glucose = with(
        doc("glucose", "Glucose", "Glucose fuels the brain."),
        vec![triple("Glucose", "fuels", "Brain")],
    );
    glucose.entities = vec![EntityAliases {
        name: "Glucose".into(),
        aliases: vec!["blood sugar".into()],
    }];
    vec![
        with(
            doc("pancreas", "Pancreas", "The pancreas makes insulin."),
            vec![triple("Pancreas", "produces", "Insulin")],
        ),
        with(
            doc(
                "insulin",
                "Insulin",
                "Insulin regulates glucose in the blood.",
            ),
            vec![triple("Insulin", "regulates", "Glucose")],
        ),
        glucose,
        with(
            doc("brain", "Brain", "The brain belongs to the nervous system."),
            vec![triple("Brain", "part_of", "Nervous System")],
        ),
    ]
}

async fn engine(dir: &std::path::Path, graph: bool) -> ragstream::Engine {
    let mut c = config(dir);
    c.graph.enabled = graph;
    c.contracts.default_index = "kb".into();
    let e = engine_with(c);
    let ops = corpus().into_iter().map(DocumentOp::Upsert).collect();
    e.write(&name("kb"), ops).await.unwrap();
    e
}

async fn ask(e: &ragstream::Engine, body: Value) -> Value {
    let reply = answer(e, Contract::C001, None, body.to_string().as_bytes()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

fn relations(body: &Value) -> Vec<String> {
    let mut r: Vec<String> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["component_type"] == "relation")
        .map(|h| {
            format!(
                "{} {} {}",
                h["subject"].as_str().unwrap(),
                h["relation"].as_str().unwrap(),
                h["object"].as_str().unwrap()
            )
        })
        .collect();
    r.sort();
    r
}

#[tokio::test]
async fn a_named_entity_returns_its_relations_within_the_depth_and_not_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), true).await;
    let q = |depth: u64| json!({"query": "What does the pancreas do?", "top_k": 50, "structural_depth": depth});

    let one = ask(&e, q(1)).await;
    assert_eq!(relations(&one), vec!["Pancreas produces Insulin"]);
    assert_eq!(one["rewrite_terms"], json!(["pancreas"]));
    assert_eq!(
        one["kg"],
        json!([{"subject": "Pancreas", "relation": "produces", "object": "Insulin"}])
    );
    let hit = one["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["component_type"] == "relation")
        .unwrap();
    assert_eq!(hit["metadata"]["collection"], "kb");

    let two = ask(&e, q(2)).await;
    assert_eq!(
        relations(&two),
        vec!["Insulin regulates Glucose", "Pancreas produces Insulin"]
    );
    assert_eq!(two["kg"].as_array().unwrap().len(), 2);
    // Depth 3 reaches the brain; depth 2 did not.
    let three = ask(&e, q(3)).await;
    assert!(relations(&three).contains(&"Glucose fuels Brain".to_string()));
    assert!(!relations(&three)
        .iter()
        .any(|r| r.contains("Nervous System")));
    // Chunk hits are still there, merged with the relations.
    assert!(two["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h.get("component_type").is_none() && h["content"].is_string()));
}

#[tokio::test]
async fn graph_mode_off_is_the_contracts_fast_mode() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), false).await;
    let body = ask(
        &e,
        json!({"query": "What does the pancreas do?", "top_k": 50, "structural_depth": 2}),
    )
    .await;
    assert!(relations(&body).is_empty());
    assert!(body["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h.get("subject").is_none()));
    assert_eq!(body["kg"], json!([]));
    assert_eq!(body["rewrite_terms"], json!([]));
    // Graph mode on, but the request opts out.
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), true).await;
    let body = ask(
        &e,
        json!({"query": "What does the pancreas do?", "fast_mode": true}),
    )
    .await;
    assert!(relations(&body).is_empty());
    assert_eq!(body["rewrite_terms"], json!([]));
}

#[tokio::test]
async fn aliases_and_typos_link_and_widen_the_keyword_branch() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), true).await;
    let body = ask(&e, json!({"query": "blood sugar", "top_k": 50})).await;
    assert_eq!(body["rewrite_terms"], json!(["glucose"]));
    // The glucose document never says "blood sugar": the expansion found it.
    assert!(body["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["content"] == "Glucose fuels the brain."));
    let body = ask(&e, json!({"query": "where is insulen made", "top_k": 50})).await;
    assert_eq!(body["rewrite_terms"], json!(["insulin"]));
    assert!(relations(&body).contains(&"Pancreas produces Insulin".to_string()));
}

#[tokio::test]
async fn deleting_a_document_removes_its_relations_but_a_pinned_version_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), true).await;
    let kb = name("kb");
    let before = e.index(&kb).await.unwrap().latest_version();
    e.write(
        &kb,
        vec![DocumentOp::Delete {
            document_id: "pancreas".into(),
        }],
    )
    .await
    .unwrap();
    let body = ask(
        &e,
        json!({"query": "What does the pancreas do?", "top_k": 50, "structural_depth": 2}),
    )
    .await;
    assert!(
        !relations(&body).iter().any(|r| r.contains("produces")),
        "{body}"
    );
    // The old version still holds the deleted document's relation.
    let (old, _) = e
        .graph_lookup(&kb, "What does insulin do?", Some(before), 1)
        .await
        .unwrap();
    let facts: Vec<String> = old.relations.iter().map(|r| r.relation.clone()).collect();
    assert!(facts.contains(&"produces".to_string()), "{facts:?}");
    let (now, _) = e
        .graph_lookup(&kb, "What does insulin do?", None, 1)
        .await
        .unwrap();
    let facts: Vec<String> = now.relations.iter().map(|r| r.relation.clone()).collect();
    assert_eq!(facts, vec!["regulates".to_string()]);

    // Re-upserting a document with other triples replaces its facts.
    let mut insulin = corpus().remove(1);
    insulin.triples = vec![triple("Insulin", "lowers", "Glucose")];
    e.write(&kb, vec![DocumentOp::Upsert(insulin)])
        .await
        .unwrap();
    let (now, _) = e
        .graph_lookup(&kb, "What does insulin do?", None, 1)
        .await
        .unwrap();
    let facts: Vec<String> = now.relations.iter().map(|r| r.relation.clone()).collect();
    assert_eq!(facts, vec!["lowers".to_string()]);
}

#[tokio::test]
async fn bad_triples_are_refused_with_the_field() {
    let mut d = doc("x", "X", "text");
    d.triples = vec![triple("A", " ", "B")];
    let e = d.validate(&Default::default()).unwrap_err();
    assert_eq!(e.field, "triples[0].relation");
    let parsed: Result<Document, _> = serde_json::from_value(json!({"id": "x", "text": "t",
        "triples": [{"subject": "A", "relation": "r", "object": "B", "weight": 1}]}));
    assert!(parsed.is_err(), "unknown triple fields are refused");
}

#[test]
fn triples_sent_through_kafka_come_back_from_contract_001_over_http() {
    use crate::daemon::{curl, kcat_produce, start_daemon_with, wait_for};
    let d = start_daemon_with(&[("RAGSTREAM_GRAPH_ENABLED", "true")]);
    let event = json!({"schema_version": 1, "op": "upsert", "index": "kb", "document": {
        "id": "pancreas", "text": "The pancreas makes insulin.",
        "triples": [{"subject": "Pancreas", "relation": "produces", "object": "Insulin"}]}});
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[event.to_string()],
    );
    let url = format!("{}/v1/indexes/kb/rag/query", d.http);
    let ask = || {
        curl(&[
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "-d",
            r#"{"query": "What does the pancreas make?", "top_k": 5}"#,
            &url,
        ])
    };
    wait_for("the document to be searchable", || {
        ask().1["results"].as_array().is_some_and(|r| !r.is_empty())
    });
    let (code, body) = ask();
    assert_eq!(code, 200, "{body}");
    assert_eq!(relations(&body), vec!["Pancreas produces Insulin"]);
    assert_eq!(body["rewrite_terms"], json!(["pancreas"]));
}

#[tokio::test]
async fn contract_002_returns_relations_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    // Graph mode of 001 off: 002's opt-in does not depend on it.
    let e = engine(dir.path(), false).await;
    let ask = |body: Value| {
        let e = &e;
        async move {
            let reply = answer(
                e,
                Contract::C002,
                Some(name("kb")),
                body.to_string().as_bytes(),
            )
            .await;
            assert_eq!(reply.status, 200, "{}", reply.body);
            reply.body
        }
    };
    let plain = ask(json!({"query": "What does the pancreas do?"})).await;
    assert!(plain.get("relations").is_none() && plain.get("rewrite_terms").is_none());
    let graph = ask(json!({"query": "What does the pancreas do?", "graph_depth": 2})).await;
    let facts: Vec<&str> = graph["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["relation"].as_str().unwrap())
        .collect();
    assert_eq!(facts.len(), 2, "{graph}");
    assert!(facts.contains(&"produces") && facts.contains(&"regulates"));
    assert_eq!(graph["relations"][0]["depth"], 1);
    assert_eq!(graph["rewrite_terms"], json!(["pancreas"]));
    let reply = answer(
        &e,
        Contract::C002,
        Some(name("kb")),
        json!({"query": "q", "graph_depth": 9})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.body["error"]["field"], "graph_depth");
}

#[tokio::test]
async fn graph_versions_are_pruned_with_the_index_versions_that_name_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.index.retain_versions = 2;
    let e = engine_with(c);
    let kb = name("kb");
    let manifests = || {
        std::fs::read_dir(dir.path().join("indexes/kb/triples.lance/_versions"))
            .unwrap()
            .count()
    };
    for round in 0..6 {
        let mut d = doc(
            "d",
            "D",
            &format!("Round {round}: the pancreas makes insulin."),
        );
        d.triples = vec![triple("Pancreas", &format!("step_{round}"), "Insulin")];
        e.write(&kb, vec![DocumentOp::Upsert(d)]).await.unwrap();
    }
    let index = e.index(&kb).await.unwrap();
    let latest = index.latest_version();
    assert!(
        manifests() <= 3,
        "graph versions are pruned: {} left",
        manifests()
    );
    // The oldest retained index version still answers with its own graph.
    let (old, _) = e
        .graph_lookup(&kb, "pancreas", Some(latest - 1), 1)
        .await
        .unwrap();
    assert_eq!(old.relations[0].relation, "step_4");
    let (now, _) = e.graph_lookup(&kb, "pancreas", None, 1).await.unwrap();
    assert_eq!(now.relations[0].relation, "step_5");
}

#[tokio::test]
async fn documents_without_triples_leave_the_graph_alone() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), true).await;
    let kb = name("kb");
    let manifests = || {
        std::fs::read_dir(dir.path().join("indexes/kb/triples.lance/_versions"))
            .unwrap()
            .count()
    };
    let before = manifests();
    e.write(
        &kb,
        vec![DocumentOp::Upsert(doc(
            "plain",
            "Plain",
            "No facts stated here.",
        ))],
    )
    .await
    .unwrap();
    assert_eq!(
        manifests(),
        before,
        "no graph commit for a document without triples"
    );
    // The new index version still names the graph: relations are found at it.
    let (found, _) = e.graph_lookup(&kb, "pancreas", None, 1).await.unwrap();
    assert_eq!(found.relations.len(), 1);
}

#[tokio::test]
async fn explain_follows_a_graph_query_and_names_the_terms_the_graph_added() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), false).await;
    let kb = name("kb");
    let query = json!({"query": "What does blood sugar do?", "top_k": 1, "graph_depth": 1});
    let explain = |request: Value| {
        let e = &e;
        let kb = &kb;
        async move {
            let body = json!({"request": request,
                "targets": [{"document_id": "glucose"}, {"document_id": "insulin"}]});
            let reply = ragstream::contracts::explain::answer(e, kb, &body, false).await;
            assert_eq!(reply.status, 200, "{}", reply.body);
            reply.body
        }
    };
    let with_graph = explain(query.clone()).await;
    assert_eq!(with_graph["keyword_expansion"], json!(["glucose"]));
    // Explain returns what the graph query returned.
    let answered = answer(
        &e,
        Contract::C002,
        Some(kb.clone()),
        query.to_string().as_bytes(),
    )
    .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    assert_eq!(
        with_graph["results"][0]["chunk_id"],
        answered.body["results"][0]["chunk_id"]
    );
    assert_eq!(with_graph["index_version"], answered.body["index_version"]);
    // Without the graph, the glucose document holds none of the query's terms; with it, it
    // holds the expansion's, whose BM25 parts make its keyword score.
    let mut plain = query.clone();
    plain.as_object_mut().unwrap().remove("graph_depth");
    let without = explain(plain).await;
    assert_eq!(without["keyword_expansion"], json!([]));
    let keyword = |v: &Value, t: usize| v["targets"][t]["chunks"][0]["keyword"].clone();
    assert_eq!(
        keyword(&without, 0)["matched_terms"],
        json!([]),
        "{without}"
    );
    let glucose = keyword(&with_graph, 0);
    assert_eq!(
        glucose["matched_terms"].as_array().unwrap().len(),
        1,
        "{glucose}"
    );
    let parts: f64 = glucose["term_scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["score"].as_f64().unwrap())
        .sum();
    let score = glucose["score"].as_f64().unwrap();
    assert!((parts - score).abs() < 1e-4, "{glucose}");
    // The target the query did not return says the graph's terms reached it.
    let missed = (0..2)
        .map(|t| &with_graph["targets"][t])
        .find(|t| t["chunks"][0]["rank"].is_null())
        .expect("top_k 1 leaves one target out");
    let verdict = missed["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("the graph's expansion matched"),
        "{verdict}"
    );
}
