# Sourced by the scripts: one cargo target directory outside the clone, shared by every run
# and every fresh clone on this machine (the Lance/DataFusion tree takes ~15 min cold).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/ragstream/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# The working tree's content (tracked and untracked files, not ignored ones), for the build
# scripts (build.rs): with scripts/setup dating a fresh clone's files back, a clone reuses
# the shared build of the same content, and other content is another build.
ragstream_source_tree() {
  local root index
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  index="$(mktemp)"
  cp "$(git -C "$root" rev-parse --absolute-git-dir)/index" "$index" 2>/dev/null &&
    GIT_INDEX_FILE="$index" git -C "$root" add -A 2>/dev/null &&
    GIT_INDEX_FILE="$index" git -C "$root" write-tree 2>/dev/null
  rm -f "$index"
}
RS_SOURCE_TREE="$(ragstream_source_tree || true)"
export RS_SOURCE_TREE
unset -f ragstream_source_tree
