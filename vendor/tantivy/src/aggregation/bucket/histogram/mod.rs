mod date_histogram;
mod histogram;
pub use date_histogram::*;
pub use histogram::*;
