//! A code comment that backs a rule with a measurement names the file (BENCHMARKS.md or
//! docs/benchmark-history.md) and, in quotes after it, the section that holds it. Sections
//! move to the history when newer figures replace them; this test fails on a citation whose
//! section is not where it says.

use std::path::Path;

use crate::layering::rust_files;

fn headings(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .collect()
}

/// A file's comments as one line: each comment's text after its `//`, `///` or `//!`.
fn comment_text(source: &str) -> String {
    source
        .lines()
        .filter_map(|l| l.find("//").map(|at| &l[at..]))
        .map(|c| c.trim_start_matches('/').trim_start_matches('!').trim())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn every_cited_benchmark_section_is_where_the_comment_says() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = [
        ("BENCHMARKS.md", headings(&repo.join("BENCHMARKS.md"))),
        (
            "docs/benchmark-history.md",
            headings(&repo.join("docs/benchmark-history.md")),
        ),
    ];
    let mut sources = Vec::new();
    for dir in ["src", "crates", "tests"] {
        rust_files(&repo.join(dir), &mut sources);
    }
    let citation =
        regex::Regex::new(r#"(BENCHMARKS\.md|docs/benchmark-history\.md),? "([^"]+)""#).unwrap();
    let (mut checked, mut wrong) = (0, Vec::new());
    for source in &sources {
        let text = comment_text(&std::fs::read_to_string(source).unwrap());
        for c in citation.captures_iter(&text) {
            let (file, title) = (&c[1], c[2].trim_end_matches(['.', ',']));
            let (_, heads) = files.iter().find(|(f, _)| *f == file).unwrap();
            checked += 1;
            if !heads.iter().any(|h| h.starts_with(title)) {
                wrong.push(format!("{}: {file}, \"{title}\"", source.display()));
            }
        }
    }
    assert!(checked >= 10, "the citations were found ({checked})");
    assert!(
        wrong.is_empty(),
        "sections not found:\n{}",
        wrong.join("\n")
    );
}
