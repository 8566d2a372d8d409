//! The names of contract 002's retrieval profiles. An index stores its default profile, so the
//! name lives here; what each profile does is `retrieval::profiles`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    Auto,
    Exact,
    Balanced,
    Semantic,
}
