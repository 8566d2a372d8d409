//! What can go wrong answering a search; the engine wraps it (`EngineError: From`), keeping
//! each kind's wire code.

use crate::embedding::EmbedError;
use crate::model::ValidationError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    #[error("invalid request: {0}")]
    Invalid(#[from] ValidationError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("internal error: {0}")]
    Internal(String),
}
