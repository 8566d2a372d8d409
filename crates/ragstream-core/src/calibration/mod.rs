//! Calibrating `auto` for one index, on judged queries or on queries cut from its own
//! chunks, and the IR metrics that score it. The maintenance actor and `ragstream index
//! calibrate` run it; the evaluation in `ragstream-bench eval` builds on it.

pub mod calibrate;
pub mod judgments;
pub mod method;
pub mod metrics;
pub mod synthetic;

use crate::engine::EngineError;

pub use calibrate::Calibration;
pub use judgments::{BeirQuery, LeftOut};
pub use method::EvalMethod;
pub use metrics::{Qrels, Run};

/// Why a calibration (or a judged run) could not be made: a data file that cannot be read,
/// or the engine's own error.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("{path}: {reason}")]
    Data { path: String, reason: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
}
