//! The names of contract 002's retrieval profiles. An index stores its default profile, so the
//! name lives here; what each profile does is `retrieval::profiles`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(
    rename = "RetrievalProfile",
    description = "auto: chosen by query analysis; exact: semantic weight 0.2; balanced: 0.5; \
                   semantic: 0.8."
)]
pub enum Profile {
    Auto,
    Exact,
    Balanced,
    Semantic,
}
