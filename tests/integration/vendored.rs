//! Each vendored crate's version names its content: `+ragstream.` and the first hex digits
//! of a hash over its files (its `Cargo.toml` with the version left out). Cargo keys a
//! crate's build by its version, so a changed patch is a new build, whatever the files'
//! times; that is what lets `scripts/setup` date a fresh clone's files back, and the clone
//! reuse the shared target directory's build of the same patch (vendor/README.md).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const CRATES: [&str; 2] = ["lance-core", "lance-encoding"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The manifest's `[package]` version line, and the manifest with that version blanked.
fn version_and_rest(manifest: &str) -> (String, String) {
    let line = manifest
        .lines()
        .find(|l| l.starts_with("version = \""))
        .expect("a version line");
    let version = line["version = \"".len()..line.len() - 1].to_string();
    (version, manifest.replacen(line, "version = \"\"", 1))
}

fn content_hash(root: &Path) -> String {
    let mut paths = Vec::new();
    files(root, &mut paths);
    paths.sort();
    let mut hash = Sha256::new();
    for path in paths {
        let relative = path.strip_prefix(root).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let bytes = if relative == Path::new("Cargo.toml") {
            version_and_rest(std::str::from_utf8(&bytes).unwrap())
                .1
                .into_bytes()
        } else {
            bytes
        };
        hash.update(relative.to_string_lossy().as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    hex::encode(hash.finalize())[..10].to_string()
}

#[test]
fn every_vendored_crate_version_names_its_content() {
    let vendor = Path::new(env!("CARGO_MANIFEST_DIR")).join("vendor");
    for name in CRATES {
        let root = vendor.join(name);
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let (version, _) = version_and_rest(&manifest);
        let expected = format!("ragstream.{}", content_hash(&root));
        assert!(
            version.ends_with(&expected),
            "vendor/{name}: its files changed; set its version's build metadata to end in \
             `{expected}` (Cargo.toml, then `cargo update -p {name}`): {version}"
        );
    }
}
