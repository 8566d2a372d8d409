# Sourced by the scripts: one cargo target directory outside the clone, shared by every run
# and every fresh clone on this machine (the Lance/DataFusion tree takes ~15 min cold).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/ragstream/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
