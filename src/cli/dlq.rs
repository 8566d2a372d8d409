//! `ragstream dlq …`: the dead-letter topic (`kafka::dead_letter_replay`).

use clap::Subcommand;

use super::{failure, usage, Failure};
use crate::config::Config;
use crate::kafka::dead_letter_replay::{replay, Selection};

#[derive(Subcommand)]
pub enum DlqCommand {
    /// Re-send dead letters to the documents topic with their key, payload and original
    /// headers; prints a JSON report. Without a selection, every letter. Needs
    /// kafka.brokers (a running daemon prints its embedded broker's address).
    Replay {
        /// Only letters with this error.code (repeatable).
        #[arg(long = "code")]
        codes: Vec<String>,
        /// Only letters with this message key (repeatable).
        #[arg(long = "key")]
        keys: Vec<String>,
        /// Only this partition of the dead-letter topic.
        #[arg(long)]
        partition: Option<i32>,
        /// Only letters at or after this offset of the dead-letter topic.
        #[arg(long)]
        from_offset: Option<i64>,
        /// Only letters at or before this offset.
        #[arg(long)]
        to_offset: Option<i64>,
        /// Bearer token for the re-sent events' authorization header (needed when tokens
        /// are configured: a dead letter never keeps the original's).
        #[arg(long, env = "RAGSTREAM_REPLAY_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Report what would be re-sent, and send nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub async fn run(config: Config, command: DlqCommand) -> Result<(), Failure> {
    let DlqCommand::Replay {
        codes,
        keys,
        partition,
        from_offset,
        to_offset,
        token,
        dry_run,
    } = command;
    let bootstrap = config.kafka.brokers.trim();
    if bootstrap.is_empty() {
        return Err(usage(
            "set kafka.brokers (RAGSTREAM_KAFKA_BROKERS) to the cluster's bootstrap servers; a running daemon prints its embedded broker's as `kafka bootstrap: …`",
        ));
    }
    if let (Some(from), Some(to)) = (from_offset, to_offset) {
        if from > to {
            return Err(usage(format!(
                "--from-offset {from} is after --to-offset {to}"
            )));
        }
    }
    let selection = Selection {
        codes,
        keys,
        partition,
        from_offset,
        to_offset,
    };
    let report = replay(
        &config.kafka,
        bootstrap,
        &selection,
        token.as_deref(),
        dry_run,
    )
    .await
    .map_err(failure)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("a report serialises")
    );
    Ok(())
}
