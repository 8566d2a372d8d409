//! Operating ragstream: Prometheus metrics, OpenTelemetry traces with W3C context carried
//! through Kafka and HTTP headers, and the logs that lead to them.

pub mod metrics;
pub mod propagation;
pub mod traces;

pub use metrics::metrics;
use serde::{Deserialize, Serialize};

/// `[telemetry]`: what the process records and where traces go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// Record Prometheus metrics (`GET /metrics`); off answers 404 there and counts nothing.
    pub metrics: bool,
    /// Export traces over OTLP/HTTP (protobuf). Off by default.
    pub traces: bool,
    /// The collector: its base URL (`/v1/traces` is appended) or the full traces URL.
    pub traces_endpoint: String,
    /// Share of new traces sampled, 0 to 1; a producer's `traceparent` decision is kept.
    pub traces_sampling_ratio: f64,
    /// How often queued spans are sent.
    pub traces_export_interval_ms: u64,
    /// Timeout of one export request.
    pub traces_timeout_ms: u64,
    /// `service.name` of the spans.
    pub service_name: String,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        TelemetryConfig {
            metrics: true,
            traces: false,
            traces_endpoint: "http://127.0.0.1:4318".into(),
            traces_sampling_ratio: 1.0,
            traces_export_interval_ms: 5000,
            traces_timeout_ms: 10_000,
            service_name: "ragstream".into(),
        }
    }
}

impl TelemetryConfig {
    /// The first bad key and why.
    pub fn check(&self) -> Result<(), (String, String)> {
        let bad = |k: &str, r: &str| Err((format!("telemetry.{k}"), r.to_string()));
        if !(0.0..=1.0).contains(&self.traces_sampling_ratio) {
            return bad("traces_sampling_ratio", "must be between 0 and 1");
        }
        let scheme_ok = self.traces_endpoint.starts_with("http://")
            || self.traces_endpoint.starts_with("https://");
        if !scheme_ok || self.traces_endpoint.parse::<http::Uri>().is_err() {
            return bad(
                "traces_endpoint",
                "must be an http:// or https:// URL, for example http://127.0.0.1:4318",
            );
        }
        if self.traces_export_interval_ms == 0 {
            return bad("traces_export_interval_ms", "must be at least 1");
        }
        if self.traces_timeout_ms == 0 {
            return bad("traces_timeout_ms", "must be at least 1");
        }
        if self.service_name.trim().is_empty() {
            return bad("service_name", "must not be empty");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_bad_values_name_their_key() {
        assert_eq!(TelemetryConfig::default().check(), Ok(()));
        let cases = [
            (
                TelemetryConfig {
                    traces_sampling_ratio: 1.5,
                    ..Default::default()
                },
                "telemetry.traces_sampling_ratio",
            ),
            (
                TelemetryConfig {
                    traces_endpoint: "collector:4318".into(),
                    ..Default::default()
                },
                "telemetry.traces_endpoint",
            ),
            (
                TelemetryConfig {
                    traces_export_interval_ms: 0,
                    ..Default::default()
                },
                "telemetry.traces_export_interval_ms",
            ),
        ];
        for (config, key) in cases {
            assert_eq!(config.check().unwrap_err().0, key);
        }
    }
}
