//! Shared helpers: engines over temporary data directories.

use std::path::Path;
use std::sync::Arc;

use ragstream::config::Config;
use ragstream::embedding::{Embedder, HashingEmbedder};
use ragstream::index::DocumentOp;
use ragstream::model::{Document, IndexName};
use ragstream::Engine;

pub fn config(data_dir: &Path) -> Config {
    let mut c = Config::default();
    c.storage.data_dir = data_dir.to_path_buf();
    c.model.embedder = "hashing".into();
    c
}

pub fn hashing_engine(data_dir: &Path) -> Engine {
    engine_with(config(data_dir))
}

pub fn engine_with(config: Config) -> Engine {
    Engine::new(
        config,
        Arc::new(HashingEmbedder::new(384)) as Arc<dyn Embedder>,
    )
}

pub fn name(s: &str) -> IndexName {
    IndexName::parse(s).unwrap()
}

pub fn doc(id: &str, title: &str, text: &str) -> Document {
    Document {
        id: id.into(),
        title: Some(title.into()),
        text: Some(text.into()),
        ..Default::default()
    }
}

pub fn upserts(docs: Vec<Document>) -> Vec<DocumentOp> {
    docs.into_iter().map(DocumentOp::Upsert).collect()
}

pub fn delete(document_id: &str) -> DocumentOp {
    DocumentOp::Delete {
        document_id: document_id.into(),
    }
}

/// A small corpus with distinct vocabulary per document.
pub fn corpus() -> Vec<Document> {
    vec![
        doc(
            "apollo",
            "Apollo program",
            "The Apollo program landed astronauts on the Moon between 1969 and 1972.",
        ),
        doc(
            "bread",
            "Baking bread",
            "Bread dough rises because yeast ferments sugar into carbon dioxide.",
        ),
        doc(
            "rust",
            "Rust language",
            "Rust guarantees memory safety without a garbage collector through ownership.",
        ),
        doc(
            "tides",
            "Ocean tides",
            "Tides are caused by the gravitational pull of the Moon and the Sun on the oceans.",
        ),
        doc(
            "coffee",
            "Coffee brewing",
            "Espresso forces hot water through finely ground coffee under pressure.",
        ),
    ]
}

/// The model directory set up by scripts/setup.
pub fn model_dir() -> std::path::PathBuf {
    Config::load_from(None, Vec::new()).unwrap().model.dir
}

/// `contracts::answer` as an unrestricted caller (authentication off) on `index`.
pub async fn answer(
    e: &Engine,
    contract: ragstream::contracts::Contract,
    index: Option<IndexName>,
    body: &[u8],
) -> ragstream::contracts::Reply {
    ragstream::contracts::answer(
        e,
        &ragstream::auth::Caller::unrestricted(),
        contract,
        ragstream::contracts::Target::index(index),
        body,
    )
    .await
}

/// A bus request's headers: contract, index.
pub fn bus_headers(
    contract: Option<&str>,
    index: Option<&str>,
) -> ragstream::pipeline::query_handler::RequestHeaders {
    ragstream::pipeline::query_handler::RequestHeaders {
        contract: contract.map(str::to_string),
        index: index.map(str::to_string),
        ..Default::default()
    }
}

/// Waits (up to 60 s) until the background build has given `index` a vector index, nudging
/// the build after each poll as a later commit would.
pub async fn wait_for_vector_index(engine: &Engine, index: &Arc<ragstream::index::Index>) {
    let started = std::time::Instant::now();
    while ragstream::index::vector_index::coverage(&index.lance().latest())
        .await
        .unwrap()
        .0
        == 0
    {
        assert!(
            started.elapsed().as_secs() < 60,
            "no vector index after 60 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        engine.maintain_vector_index(index);
    }
    // The build commits to Lance, then tags the same version in the keyword store: until
    // then a query pinned to the new version answers `version_unavailable`.
    while index.keyword().latest_version().unwrap() != Some(index.latest_version()) {
        assert!(
            started.elapsed().as_secs() < 60,
            "the keyword store did not reach the vector index's version"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Runs `cmd`, which must succeed; the failure message names the command and holds what it
/// printed.
pub fn succeeded(cmd: &mut std::process::Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert_succeeded(&format!("{cmd:?}"), &out);
    out
}

/// Asserts that the command named `what` exited successfully; the failure message holds what
/// it printed.
pub fn assert_succeeded(what: &str, out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// kcat as `scripts/setup` installs it: Debian's, run against a librdkafka that the embedded
/// broker (nisshi) accepts. Plain `kcat` where the wrapper is missing.
pub fn kcat_program() -> std::path::PathBuf {
    let wrapper = std::path::Path::new(&std::env::var_os("HOME").unwrap_or_default())
        .join(".cache/ragstream/bin/kcat");
    if wrapper.is_file() {
        wrapper
    } else {
        "kcat".into()
    }
}
