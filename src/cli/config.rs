//! `ragstream config …`: the effective configuration, or a file checked.

use std::path::PathBuf;

use clap::Subcommand;

use super::{usage, Failure};
use crate::config::Config;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration (defaults, then the file, then `RAGSTREAM_*`
    /// variables) as TOML, every secret shown as `<redacted>`.
    Show,
    /// Check a configuration file as `serve` would load it (with the current environment):
    /// prints `ok` or the error naming the source, the key and the rule (exit code 2). Keys
    /// set by a name they have moved from are listed as warnings.
    Check {
        /// The configuration file.
        file: PathBuf,
    },
}

/// Runs one `config` subcommand.
pub async fn run(config: Config, command: ConfigCommand) -> Result<(), Failure> {
    match command {
        ConfigCommand::Show => print!("{}", config.redacted_toml()),
        ConfigCommand::Check { file } => {
            let (_, loaded) = Config::load_reporting(Some(&file), std::env::vars())
                .map_err(|e| usage(e.to_string()))?;
            for moved in &loaded.moved_keys {
                eprintln!("warning: {moved}");
            }
            println!("ok: {}", file.display());
        }
    }
    Ok(())
}
