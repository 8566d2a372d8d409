//! The curl examples on the contract pages (`docs/contracts/*.md`) run against a live daemon,
//! so a page cannot show a request the daemon refuses. Each example must answer 2xx, or the
//! status and error code its comment line shows (`# {"error":{"code":"…"…}}   (HTTP 400)`).

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::daemon::{curl, kcat_produce, start_daemon_with, wait_for};

/// One example: the curl command, and what its comment says it answers (none: a 2xx).
struct Example {
    page: String,
    command: String,
    expected: Option<(u16, String)>,
}

/// The curl commands of a page's `sh` blocks. A command runs on while its line ends with `\`
/// or a single quote is open.
fn examples(page: &str, text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_sh = false;
    let mut command: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        if let Some(mut c) = command.take() {
            c.push('\n');
            c.push_str(line);
            if line.ends_with('\\') || c.matches('\'').count() % 2 == 1 {
                command = Some(c);
            } else {
                out.push(Example {
                    page: page.to_string(),
                    command: c,
                    expected: None,
                });
            }
            continue;
        }
        if line.starts_with("curl ") {
            if line.ends_with('\\') || line.matches('\'').count() % 2 == 1 {
                command = Some(line.to_string());
            } else {
                out.push(Example {
                    page: page.to_string(),
                    command: line.to_string(),
                    expected: None,
                });
            }
        } else if let (Some(rest), Some(last)) = (line.strip_prefix("# "), out.last_mut()) {
            let status = rest
                .rsplit_once("(HTTP ")
                .and_then(|(_, s)| s.trim_end_matches(')').parse().ok());
            let code = rest
                .split_once(r#""code":""#)
                .and_then(|(_, s)| s.split('"').next())
                .map(str::to_string);
            if let (Some(status), Some(code)) = (status, code) {
                last.expected = Some((status, code));
            }
        }
    }
    out
}

#[test]
fn every_curl_example_on_the_contract_pages_answers_as_the_page_says() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ragstream.toml");
    std::fs::write(
        &config,
        "[contracts]\ndefault_index = \"kb\"\n\n\
         [retrievers.manuals]\nindex = \"kb\"\nmethod = \"hybrid\"\ntop_k = 3\n",
    )
    .unwrap();
    let d = start_daemon_with(&[("RAGSTREAM_CONFIG", config.to_str().unwrap())]);
    // The pages' examples ask about a pump manual in project "plant", tagged "pumps".
    let event = |id: &str, text: &str| {
        json!({"schema_version": 1, "op": "upsert", "index": "kb", "document": {
            "id": id, "title": "P-200 Pump Manual", "text": text,
            "uri": format!("https://example.com/manuals/{id}.pdf"),
            "project_id": "plant", "tags": ["pumps", "maintenance"]}})
        .to_string()
    };
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[],
        &[
            event(
                "pump-manual",
                "Lubricate the bearings every 500 operating hours. Replace the mechanical \
                 seal when it leaks.",
            ),
            event(
                "valve-guide",
                "Bearing maintenance for valves: inspect yearly.",
            ),
        ],
    );
    wait_for("the sample documents", || {
        curl(&[&format!("{}/v1/indexes/kb/stats", d.http)]).1["documents"] == 2
    });

    let pages = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/contracts");
    let mut all = Vec::new();
    for entry in std::fs::read_dir(&pages).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            all.extend(examples(&name, &std::fs::read_to_string(&path).unwrap()));
        }
    }
    for page in ["000", "001", "002", "003", "004"] {
        assert!(
            all.iter().any(|e| e.page.starts_with(page)),
            "no curl example found on contract {page}'s page"
        );
    }
    for example in &all {
        let command =
            example.command.replace("http://127.0.0.1:8080", &d.http) + " -w '\n%{http_code}'";
        let out = Command::new("sh").args(["-c", &command]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let (body, status) = text.rsplit_once('\n').unwrap_or(("", "0"));
        let status: u16 = status.trim().parse().unwrap_or(0);
        let body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        match &example.expected {
            None => assert!(
                (200..300).contains(&status),
                "{}: {status} {body}\n{}",
                example.page,
                example.command
            ),
            Some((want, code)) => {
                assert_eq!(
                    status, *want,
                    "{}: {body}\n{}",
                    example.page, example.command
                );
                assert_eq!(body["error"]["code"], code.as_str(), "{}", example.command);
            }
        }
    }
}
