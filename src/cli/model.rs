//! `ragstream model …`: embedding models.

use std::path::PathBuf;

use clap::Subcommand;

use super::{failure, Failure};
use crate::config::Config;

#[derive(Subcommand)]
pub enum ModelCommand {
    /// Distil the static (model2vec) model from the all-MiniLM-L6-v2 files; deterministic.
    Distill {
        /// all-MiniLM-L6-v2 directory (default: model.dir).
        #[arg(long)]
        from: Option<PathBuf>,
        /// Output directory (default: model.static_dir).
        #[arg(long)]
        to: Option<PathBuf>,
    },
}

/// Runs one `model` subcommand.
pub async fn run(config: Config, command: ModelCommand) -> Result<(), Failure> {
    match command {
        ModelCommand::Distill { from, to } => {
            let from = from.unwrap_or_else(|| config.model.dir.clone());
            let to = to.unwrap_or_else(|| config.model.static_dir.clone());
            let report = tokio::task::spawn_blocking(move || {
                crate::embedding::distill::distill(&from, &to, None)
            })
            .await
            .map_err(failure)?
            .map_err(failure)?;
            println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        }
    }
    Ok(())
}
