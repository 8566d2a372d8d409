//! The embedder of an engine opened without a model (`Engine::for_administration`): index
//! administration reads and rewrites indexes, never embeds. Anything that would embed
//! through it fails with a permanent error instead of writing vectors of some other model.

use super::{EmbedError, Embedder};

#[derive(Debug, Default)]
pub struct NoModel;

impl Embedder for NoModel {
    fn id(&self) -> &str {
        "none"
    }

    fn dimensions(&self) -> usize {
        0
    }

    fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Err(EmbedError::Rejected {
            provider: "none".into(),
            reason: "this command opens indexes without a model and cannot embed".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_refuses_to_embed_for_good() {
        let e = NoModel.embed(&["text"]).unwrap_err();
        assert!(!e.is_transient(), "{e}");
        assert!(e.to_string().contains("without a model"), "{e}");
    }
}
