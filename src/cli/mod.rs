//! The command lines: `ragstream` (the daemon and its administration) and `ragstream-bench`
//! (the benchmarks), one file per command. Each command is a thin edge over the library: it
//! parses its arguments, calls the library and maps errors to an exit code once, here.

pub mod config;
pub mod dlq;
pub mod explain;
pub mod index;
pub mod ingest;
pub mod model;
pub mod query;
pub mod schema;
pub mod serve;

use std::future::Future;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::Config;
use crate::embedding::Embedder;
use crate::engine::EngineError;
use crate::model::IndexName;
use crate::telemetry::traces::{LogFormat, Telemetry};

/// A failure at the command-line edge, with its exit code.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        let code = if matches!(e, EngineError::Invalid(_)) {
            2
        } else {
            1
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

/// A runtime failure (exit code 1).
pub fn failure(e: impl std::fmt::Display) -> Failure {
    Failure {
        code: 1,
        message: e.to_string(),
    }
}

/// A refused command line or input (exit code 2).
pub fn usage(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

/// Logs to stderr (the filter from `RAGSTREAM_LOG`, default `warn,lance=error`; the format
/// from `RAGSTREAM_LOG_FORMAT`, `text` or `json`), metrics on or off, and the trace exporter,
/// as `[telemetry]` says. The returned guard flushes traces at exit.
pub fn init_telemetry(config: &Config) -> Result<Telemetry, Failure> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RAGSTREAM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,lance=error"));
    let format = match std::env::var("RAGSTREAM_LOG_FORMAT") {
        Err(_) => LogFormat::Text,
        Ok(f) => LogFormat::parse(&f).ok_or_else(|| {
            usage(format!(
                "RAGSTREAM_LOG_FORMAT is {f:?}: expected text or json"
            ))
        })?,
    };
    crate::telemetry::metrics::set_recording(config.telemetry.metrics);
    let telemetry =
        Telemetry::new(&config.telemetry, format, filter).map_err(|e| usage(e.to_string()))?;
    tracing::dispatcher::set_global_default(telemetry.dispatch.clone())
        .map_err(|e| failure(format!("cannot install the log subscriber: {e}")))?;
    Ok(telemetry)
}

pub fn load_embedder(config: &Config) -> Result<Arc<dyn Embedder>, Failure> {
    crate::embedders::configured(config).map_err(failure)
}

/// How a bench or eval command hands over its report: a table for people by default;
/// `--json` prints the report as JSON on stdout instead (as `query --json` does);
/// `--out FILE` also writes it to FILE.
#[derive(clap::Args, Debug, Clone)]
pub struct ReportArgs {
    /// Print the report as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
}

impl ReportArgs {
    /// Whether the table is printed (not with `--json`).
    pub fn table(&self) -> bool {
        !self.json
    }

    /// Prints the report with `--json`, and writes it to `--out` when given.
    pub fn finish(&self, report: &impl serde::Serialize) -> Result<(), Failure> {
        let text = serde_json::to_string_pretty(report).expect("a report serialises");
        if self.json {
            println!("{text}");
        }
        if let Some(path) = &self.out {
            std::fs::write(path, text).map_err(|e| failure(format!("{}: {e}", path.display())))?;
        }
        Ok(())
    }
}

/// Commands that write an index hold the data directory's lock (see `data_dir`): a second
/// writer is refused, naming the one that holds it.
pub fn lock_data_dir(
    config: &Config,
    command: &str,
) -> Result<crate::data_dir::DataDirLock, Failure> {
    crate::data_dir::DataDirLock::acquire(&config.storage.data_dir, command).map_err(failure)
}

pub fn index_name(name: &str) -> Result<IndexName, Failure> {
    IndexName::parse(name).map_err(|e| usage(format!("--index {e}")))
}

/// The configuration (defaults, the file, the environment), telemetry started as it says, and
/// background work's priority set before anything builds rayon's global pool.
pub fn start(config_file: Option<&Path>) -> Result<(Config, Telemetry), Failure> {
    let (config, loaded) = Config::load(config_file).map_err(|e| usage(e.to_string()))?;
    let telemetry = init_telemetry(&config)?;
    tracing::info!(sources = %loaded.sources.join(", "), "configuration loaded");
    for variable in &loaded.ignored_variables {
        tracing::warn!(%variable, "names no configuration key: ignored");
    }
    for moved in &loaded.moved_keys {
        tracing::warn!(%moved, "configuration key moved");
    }
    crate::runtime::background::configure(config.index.maintenance.background_priority);
    Ok((config, telemetry))
}

/// Runs a command on a fresh runtime; a failure is printed and becomes the exit code.
pub fn execute(command: impl Future<Output = Result<(), Failure>>) -> ExitCode {
    // Before any thread starts: see runtime/lance_cpu_pool.rs.
    crate::runtime::lance_cpu_pool::configure();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
