//! The libraries' top-level modules form layers: a module may use the ones below it, never one
//! above. The check reads every `crate::<module>` path in each library's sources (test modules
//! aside: a test may build its fixtures from anything) and fails on any cycle, naming the
//! modules in it and one file for each edge. Between the crates, cargo itself keeps the
//! engine (`ragstream-core`) from using the daemon. docs/architecture.md ("Where the code
//! lives") lists the layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `from` module → `to` module → one file that makes the edge.
type Edges = BTreeMap<String, BTreeMap<String, String>>;

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to; `None` for the crate roots.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The module names that follow `crate::` in `code`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    code.match_indices("crate::")
        .filter(|(at, _)| {
            // `ragstream::crate::` does not occur; a preceding identifier character means
            // another path (`$crate::`, `some_crate::`).
            !code[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
        .filter_map(|(at, m)| {
            let rest = &code[at + m.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (end > 0).then(|| rest[..end].to_string())
        })
        .collect()
}

fn edges(src: &Path) -> Edges {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut edges = Edges::new();
    for file in files {
        let Some(from) = top_module(src, &file) else {
            continue;
        };
        let code = std::fs::read_to_string(&file).expect("a source file is readable");
        // Unit tests sit at the end of their file, in `mod tests`.
        let code = code.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        for to in crate_paths(code) {
            if to != from {
                let shown = file
                    .strip_prefix(src)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert(shown);
            }
        }
    }
    edges
}

/// A cycle through `start`, if there is one, as the modules along it.
fn cycle_from(edges: &Edges, start: &str) -> Option<Vec<String>> {
    fn walk(
        edges: &Edges,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in edges.get(at).into_iter().flat_map(|m| m.keys()) {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(edges, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(edges, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn the_engine_modules_import_no_module_that_imports_them() {
    no_cycles_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/ragstream-core/src"));
}

#[test]
fn the_daemon_modules_import_no_module_that_imports_them() {
    no_cycles_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
}

fn no_cycles_in(src: &Path) {
    let edges = edges(src);
    assert!(
        edges.len() > 5,
        "the scan of {} found too few modules to mean anything: {edges:?}",
        src.display()
    );
    let cycles: Vec<String> = edges
        .keys()
        .filter_map(|m| cycle_from(&edges, m))
        .map(|cycle| {
            let steps: Vec<String> = cycle
                .iter()
                .zip(cycle.iter().cycle().skip(1))
                .map(|(a, b)| format!("{a} -> {b} ({})", edges[a][b]))
                .collect();
            steps.join(", ")
        })
        .collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_check_finds_a_planted_cycle() {
    let mut edges = Edges::new();
    for (a, b) in [("index", "store"), ("store", "graph"), ("graph", "index")] {
        edges
            .entry(a.into())
            .or_default()
            .insert(b.into(), "planted.rs".into());
    }
    let cycle = cycle_from(&edges, "index").expect("a cycle");
    assert_eq!(cycle, ["index", "store", "graph"]);
    assert_eq!(
        crate_paths("use crate::store::rows; x = $crate::y; crate::model::Z"),
        BTreeSet::from(["store".to_string(), "model".to_string()])
    );
}
