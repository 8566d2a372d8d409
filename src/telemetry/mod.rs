//! Operating ragstream: Prometheus metrics (traces and dashboards follow).

pub mod metrics;

pub use metrics::metrics;
