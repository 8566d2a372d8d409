//! A fresh clone reuses the shared target directory's build of the same content: see the
//! package's own `build.rs` at the repository's root.
fn main() {
    println!("cargo:rerun-if-env-changed=RS_SOURCE_TREE");
    let tree = std::env::var("RS_SOURCE_TREE").unwrap_or_default();
    println!("cargo:rustc-env=RS_SOURCE_TREE={tree}");
}
