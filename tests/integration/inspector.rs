//! The inspector page (`/ui`) and the API reference (`/docs`) in a real browser: Debian's
//! Chromium, driven by a script in `tests/browser/` (playwright-core, installed by
//! `scripts/setup`) against a live daemon. `inspect.mjs` uses the inspector with tokens
//! configured and takes screenshots; `api-docs.mjs` opens the API reference. Each script
//! acts as a user would and reports the rendered page; the tests assert on that report.
//!
//! `UPDATE_SCREENSHOTS=1` writes the screenshots into `docs/images/` (the ones the
//! README and docs show) instead of a temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::daemon::{curl, start_daemon_with, wait_for};

const TOKEN: &str = "inspector-secret";

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

/// Runs `script` of `tests/browser` with `args` and returns its report, once it has checked
/// what every script reports: no script error, no policy violation, no request to another
/// origin.
fn run_browser_script(script: &str, args: &[&str]) -> Value {
    assert!(
        browser_dir().join("node_modules/playwright-core").is_dir(),
        "tests/browser/node_modules is missing: run scripts/setup"
    );
    let out = Command::new("node")
        .current_dir(browser_dir())
        .arg(script)
        .args(args)
        .output()
        .expect("node runs (scripts/setup installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON report");
    for list in ["page_errors", "policy_violations", "outside_requests"] {
        assert_eq!(report[list], json!([]), "{script}: {list}: {report}");
    }
    report
}

#[test]
fn the_inspector_page_works_in_a_real_browser() {
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        config.path(),
        format!(
            r#"
[[auth.tokens]]
name = "inspector"
token = "{TOKEN}"
tenant = "acme"
indexes = ["kb"]
scopes = ["read", "write"]
"#
        ),
    )
    .unwrap();
    let d = start_daemon_with(&[("RAGSTREAM_CONFIG", config.path().to_str().unwrap())]);
    let url = |p: &str| format!("{}{p}", d.http);
    let auth = format!("Authorization: Bearer {TOKEN}");
    let post = |path: &str, body: &Value| {
        curl(&[
            "-X",
            "POST",
            "-H",
            &auth,
            "-d",
            &body.to_string(),
            &url(path),
        ])
    };
    let stats = || curl(&["-H", &auth, &url("/v1/indexes/kb/stats")]).1;

    // Version 1: five documents. Version 2: one added, one deleted.
    let docs = |items: &[(&str, &str)]| json!({"documents": items.iter().map(|(id, text)| json!({"id": id, "title": id, "text": text})).collect::<Vec<_>>()});
    let first = docs(&[
        ("lava1", "Volcanoes erupt lava and ash when magma rises."),
        (
            "lava2",
            "Basalt lava flows cool into columns near the volcano.",
        ),
        ("glacier", "Glaciers carve valleys over centuries."),
        ("pump", "Lubricate the pump bearings every 500 hours."),
        ("sea", "Sea levels rise as the ice sheets melt."),
    ]);
    assert_eq!(post("/v1/indexes/kb/documents", &first).0, 202);
    wait_for("version 1", || stats()["documents"] == 5);
    let v1 = stats()["index_version"].as_u64().unwrap();
    let second = json!({
        "documents": [{"id": "lava3", "title": "lava3", "text": "Lava lakes glow at night in the volcano crater."}],
        "deletes": ["lava2"],
    });
    assert_eq!(post("/v1/indexes/kb/documents", &second).0, 202);
    wait_for("version 2", || {
        let s = stats();
        s["documents"] == 5 && s["deleted_documents"] == 1
    });
    let v2 = stats()["index_version"].as_u64().unwrap();
    assert!(v2 > v1);

    let query = "lava volcano";
    let shots_kept = std::env::var_os("UPDATE_SCREENSHOTS").is_some();
    let temp_shots = tempfile::tempdir().unwrap();
    let shots = if shots_kept {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/images")
    } else {
        temp_shots.path().to_path_buf()
    };
    std::fs::create_dir_all(&shots).unwrap();
    let scenario = json!({"index": "kb", "query": query, "top_k": 2, "missing_document": "glacier",
        "from_version": v1, "to_version": v2});
    // Nothing broke, nothing outside the daemon was asked for (run_browser_script).
    let report = run_browser_script(
        "inspect.mjs",
        &[
            &d.http,
            TOKEN,
            shots.to_str().unwrap(),
            &scenario.to_string(),
        ],
    );
    eprintln!(
        "inspector: first contentful paint {} ms",
        report["first_contentful_paint_ms"]
    );

    // The token is needed, and once typed the index is listed with its counts.
    let refused = report["error_without_token"].as_str().unwrap();
    assert!(refused.starts_with("401"), "{refused}");
    assert_eq!(report["error_after_token"], false);
    assert!(report["index_info"]
        .as_str()
        .unwrap()
        .starts_with("5 documents"));

    // The page shows what the API answers, with a bar per signal as wide as its score.
    let api = post(
        "/v1/indexes/kb/query",
        &json!({"query": query, "top_k": 2, "debug": true, "index_version": v2}),
    )
    .1;
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{report}");
    for (shown, answered) in results.iter().zip(api["results"].as_array().unwrap()) {
        assert_eq!(shown["chunk_id"], answered["chunk_id"]);
        assert_eq!(shown["document_id"], answered["document_id"]);
        for (signal, field) in [
            ("semantic", "semantic"),
            ("keyword", "lexical"),
            ("final", "final"),
        ] {
            let value = answered["score_detail"][field].as_f64().unwrap();
            let bar = &shown["signals"][signal];
            assert!((bar["value"].as_f64().unwrap() - value).abs() < 1e-9);
            let width: f64 = bar["width"]
                .as_str()
                .and_then(|w| w.strip_suffix('%'))
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("{signal}'s bar has no width: {bar}"));
            assert!(
                (width - value.clamp(0.0, 1.0) * 100.0).abs() <= 0.05,
                "{bar}"
            );
        }
    }
    assert!(report["results_meta"]
        .as_str()
        .unwrap()
        .starts_with(&format!("version {v2}, 2 results")));

    // The first result opened in its document; its explanation; the missing document's.
    assert_eq!(report["opened_chunk"], results[0]["chunk_id"]);
    assert!(report["why_first"]
        .as_str()
        .unwrap()
        .starts_with("ranked 1st"));
    let missing = &report["why_missing"];
    assert_eq!(missing["presence"], "in_version");
    assert!(
        missing["verdict"]
            .as_str()
            .unwrap()
            .starts_with("not returned"),
        "{missing}"
    );
    assert_eq!(missing["chunk_rows"], 1);
    // Its row shows the weights that would return it, as its verdict words them.
    let verdict = missing["verdict"].as_str().unwrap();
    let weights = missing["cells"][5].as_str().unwrap();
    match verdict.split_once("a semantic weight of ") {
        Some((_, rest)) => assert_eq!(
            Some(weights),
            rest.split(" would return it").next(),
            "{missing}"
        ),
        None => assert_eq!(weights, "none", "{missing}"),
    }

    // The page's link reopens that view in a new tab: same query, pinned to the version that
    // answered, same results, same explanation.
    let linked = &report["linked"];
    assert_eq!(linked["query"], scenario["query"], "{report}");
    assert_eq!(linked["version"], v2.to_string(), "{report}");
    let shown: Vec<&Value> = results.iter().map(|r| &r["chunk_id"]).collect();
    let relinked: Vec<&Value> = linked["results"].as_array().unwrap().iter().collect();
    assert_eq!(relinked, shown, "{report}");
    assert_eq!(linked["verdict"], missing["verdict"], "{report}");

    // The comparison: lava3 entered (added), lava2 left (deleted).
    let diff = &report["diff"];
    let has = |kind: &str, document: &str, cause: &str| {
        diff[kind].as_array().unwrap().iter().any(|l| {
            l.as_str().unwrap().starts_with(document) && l.as_str().unwrap().ends_with(cause)
        })
    };
    assert!(has("entered", "lava3", "added"), "{diff}");
    assert!(has("left", "lava2", "deleted"), "{diff}");

    // A version that does not exist: the daemon's structured error, shown on the page.
    let unknown = report["error_for_unknown_version"].as_str().unwrap();
    assert!(unknown.starts_with("4"), "{unknown}");
    assert!(unknown.contains("index_version"), "{unknown}");

    for name in ["inspector-results", "inspector-explain", "inspector-diff"] {
        let png = std::fs::read(shots.join(format!("{name}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{name} is not a PNG");
    }
}

/// The API reference (`/docs`): Swagger UI, bundled in the binary, renders one operation per
/// route of the daemon's own OpenAPI document, asks nothing of any other host, and breaks no
/// rule of its content security policy.
#[test]
fn the_api_reference_renders_every_route_offline() {
    let d = start_daemon_with(&[]);
    let report = run_browser_script("api-docs.mjs", &[&d.http]);
    let (status, document) = curl(&[&format!("{}/openapi.json", d.http)]);
    assert_eq!(status, 200);
    assert!(
        report["title"]
            .as_str()
            .unwrap()
            .contains(document["info"]["title"].as_str().unwrap()),
        "{report}"
    );
    let mut documented: Vec<String> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, operations)| {
            operations
                .as_object()
                .unwrap()
                .keys()
                .map(move |method| format!("{} {path}", method.to_uppercase()))
        })
        .collect();
    let mut shown: Vec<String> = report["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let (method, path) = o.as_str().unwrap().trim().split_once(' ').unwrap();
            format!("{} {}", method.trim().to_uppercase(), path.trim())
        })
        .collect();
    documented.sort();
    shown.sort();
    assert!(!shown.is_empty());
    assert_eq!(shown, documented, "{report}");
    assert_eq!(report["authorize_button"], true, "{report}");
    assert_eq!(report["opened_shows_request_body"], true, "{report}");
}
