//! The scripts that build the held-out corpora of other domains (docs/evaluation.md), run as a
//! user runs them, and `eval beir` reading what they wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::cli::ragstream_bench;
use crate::common::succeeded;

fn script(name: &str) -> Command {
    let mut cmd = Command::new("python3");
    cmd.arg(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name),
    );
    cmd
}

fn lines(path: PathBuf) -> Vec<Value> {
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `eval beir --json` with the hashing embedder on `beir`: the test queries' report.
fn eval(data: &Path, beir: &Path) -> Value {
    let out = succeeded(
        ragstream_bench(data)
            .args(["eval", "beir", "--json", "--data"])
            .arg(beir),
    );
    let reports: Value = serde_json::from_slice(&out.stdout).unwrap();
    reports[0].clone()
}

fn words(n: usize, word: &str) -> String {
    (0..n)
        .map(|i| format!("{word}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn write_crate(registry: &Path, dir: &str, cargo_toml: &str, readme: Option<&str>) {
    let dir = registry.join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("Cargo.toml"), cargo_toml).unwrap();
    if let Some(readme) = readme {
        std::fs::write(dir.join("README.md"), readme).unwrap();
    }
}

#[test]
fn crates_corpus_takes_each_crates_newest_readme_without_its_description() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("registry");
    let long = words(60, "parser");
    write_crate(
        &registry,
        "foo-1.9.0",
        "[package]\nname = \"foo\"\nversion = \"1.9.0\"\ndescription = \"An old description of foo\"\n",
        Some(&long),
    );
    write_crate(
        &registry,
        "foo-1.10.0",
        "[package]\nname = \"foo\"\nversion = \"1.10.0\"\ndescription = \"Fast parsing of   foo files.\"\n",
        Some(&format!(
            "# foo\n\n[![badge](https://x/b.svg)](https://x)\n\nFast parsing of foo files.\n\n\
             ```rust\nlet hidden_code = 1;\n```\n\nSee [the guide](https://x/guide). {long}\n"
        )),
    );
    write_crate(
        &registry,
        "bar-0.1.0",
        "[package]\nname = \"bar\"\nversion = \"0.1.0\"\ndescription = \"Bars for every occasion\"\nreadme = \"docs/BAR.md\"\n",
        None,
    );
    std::fs::create_dir_all(registry.join("bar-0.1.0/docs")).unwrap();
    std::fs::write(registry.join("bar-0.1.0/docs/BAR.md"), words(55, "counter")).unwrap();
    // Each of these is skipped: a README too short, a description inherited from a
    // workspace, no README, `readme = false`, a Cargo.toml that does not parse.
    write_crate(
        &registry,
        "short-0.1.0",
        "[package]\nname = \"short\"\nversion = \"0.1.0\"\ndescription = \"A short one here\"\n",
        Some("too few words"),
    );
    write_crate(
        &registry,
        "inherits-0.1.0",
        "[package]\nname = \"inherits\"\nversion = \"0.1.0\"\ndescription.workspace = true\n",
        Some(&long),
    );
    write_crate(
        &registry,
        "noreadme-0.1.0",
        "[package]\nname = \"noreadme\"\nversion = \"0.1.0\"\ndescription = \"Nothing to read here\"\n",
        None,
    );
    write_crate(
        &registry,
        "off-0.1.0",
        "[package]\nname = \"off\"\nversion = \"0.1.0\"\ndescription = \"Readme turned off here\"\nreadme = false\n",
        Some(&long),
    );
    write_crate(&registry, "broken-0.1.0", "[package\nname=", Some(&long));

    let out = dir.path().join("crates");
    succeeded(script("make-crates-corpus").arg(&out).arg(&registry));

    let corpus = lines(out.join("corpus.jsonl"));
    let ids: Vec<&str> = corpus.iter().map(|d| d["_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["bar", "foo"], "{corpus:?}");
    let foo = &corpus[1];
    assert_eq!(foo["title"], "foo");
    let text = foo["text"].as_str().unwrap();
    assert!(text.starts_with("foo See the guide. parser0 "), "{text}");
    assert!(
        !text.contains("Fast parsing"),
        "the copied description is taken out"
    );
    assert!(
        !text.contains("hidden_code") && !text.contains("badge"),
        "{text}"
    );
    assert!(
        !text.contains("old description"),
        "the newest version's README"
    );
    let queries = lines(out.join("queries.jsonl"));
    assert_eq!(queries[1]["_id"], "foo");
    assert_eq!(queries[1]["text"], "Fast parsing of foo files.");
    assert_eq!(
        std::fs::read_to_string(out.join("qrels/test.tsv")).unwrap(),
        "query-id\tcorpus-id\tscore\nbar\tbar\t1\nfoo\tfoo\t1\n"
    );

    let report = eval(&dir.path().join("data"), &out);
    assert_eq!(report["dataset"], out.display().to_string(), "{report}");
    for method in report["methods"].as_array().unwrap() {
        assert_eq!(method["queries"], 2, "{method}");
    }
}

#[test]
fn appstream_corpus_takes_each_component_with_an_english_summary_and_description() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("Components-amd64.yml");
    std::fs::write(
        &catalogue,
        "---\nFile: DEP-11\nVersion: '1.0'\n\
         ---\nID: org.example.Painter\nName:\n  C: Painter\nSummary:\n  C: Paint pictures\n\
         Description:\n  C: <p>Draw &amp; paint with brushes.</p><ul><li>Layers</li></ul>\n\
         ---\nID: org.example.Silent\nName:\n  C: Silent\nSummary:\n  de: Nur Deutsch\n\
         Description:\n  de: <p>Keine englische Beschreibung hier vorhanden.</p>\n\
         ---\nID: org.example.Painter\nName:\n  C: Painter again\nSummary:\n  C: A duplicate id\n\
         Description:\n  C: <p>The same component listed a second time.</p>\n",
    )
    .unwrap();
    let out = dir.path().join("appstream");
    succeeded(script("make-appstream-corpus").arg(&out).arg(&catalogue));

    let corpus = lines(out.join("corpus.jsonl"));
    assert_eq!(corpus.len(), 1, "{corpus:?}");
    assert_eq!(corpus[0]["title"], "Painter");
    assert_eq!(corpus[0]["text"], "Draw & paint with brushes. - Layers");
    let queries = lines(out.join("queries.jsonl"));
    assert_eq!(queries[0]["text"], "Paint pictures");
    assert_eq!(
        std::fs::read_to_string(out.join("qrels/test.tsv")).unwrap(),
        format!(
            "query-id\tcorpus-id\tscore\n{}\t{}\t1\n",
            queries[0]["_id"].as_str().unwrap(),
            corpus[0]["_id"].as_str().unwrap()
        )
    );

    let report = eval(&dir.path().join("data"), &out);
    assert_eq!(report["dataset"], out.display().to_string(), "{report}");
    let keyword = report["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["method"] == "keyword")
        .unwrap();
    assert_eq!(keyword["ndcg_at_10"], 1.0, "one document, found: {keyword}");
}
