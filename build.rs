//! Cargo decides by its files' times whether this package is stale, and a fresh clone dates
//! every file now: each clone built everything again, though the shared target directory
//! held the build of the same content. `scripts/setup` dates a fresh clone's files back, and
//! `scripts/env.sh` names the working tree's content in `RS_SOURCE_TREE`: other
//! content is another build, whatever the files' times.
fn main() {
    println!("cargo:rerun-if-env-changed=RS_SOURCE_TREE");
    let tree = std::env::var("RS_SOURCE_TREE").unwrap_or_default();
    println!("cargo:rustc-env=RS_SOURCE_TREE={tree}");
}
