//! OpenTelemetry traces: `tracing` spans exported over OTLP/HTTP (protobuf) when
//! `telemetry.traces` is on, and the log subscriber they share a registry with.
//!
//! Spans are `tracing` spans everywhere in the code; the `tracing-opentelemetry` layer turns
//! the ones of this crate into OpenTelemetry spans. Logs print the `trace_id` and `span_id`
//! fields that [`super::propagation::follow`] records on the spans that start or continue a
//! trace (a consumed message, a query), so a log line leads to its trace.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracerProvider,
};
use opentelemetry_sdk::Resource;
use tracing::{Metadata, Subscriber};
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use super::TelemetryConfig;

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

impl LogFormat {
    pub fn parse(s: &str) -> Option<LogFormat> {
        match s {
            "text" => Some(LogFormat::Text),
            "json" => Some(LogFormat::Json),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    #[error("telemetry.traces_endpoint {endpoint:?}: {reason}")]
    Exporter { endpoint: String, reason: String },
}

/// The process's subscriber and, when traces are on, the provider that exports them. Keep it
/// alive while the process runs: dropping it flushes the spans not yet sent.
pub struct Telemetry {
    pub dispatch: tracing::Dispatch,
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Logs as `format`, filtered by `filter` (an `EnvFilter` directive string), plus the
    /// OTLP exporter when `config.traces` is on.
    pub fn new(
        config: &TelemetryConfig,
        format: LogFormat,
        filter: EnvFilter,
    ) -> Result<Telemetry, TracesError> {
        let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
        let logs = match format {
            LogFormat::Text => logs.boxed(),
            LogFormat::Json => logs.json().with_current_span(true).boxed(),
        };
        let logs = logs.with_filter(LogFilter { events: filter });
        let provider = config.traces.then(|| provider(config)).transpose()?;
        let otel = provider.as_ref().map(|p| {
            tracing_opentelemetry::layer()
                .with_tracer(p.tracer("ragstream"))
                .with_filter(Targets::new().with_target("ragstream", tracing::Level::INFO))
        });
        let subscriber = tracing_subscriber::registry().with(logs).with(otel);
        Ok(Telemetry {
            dispatch: tracing::Dispatch::new(subscriber),
            provider,
        })
    }

    /// Sends the spans still queued (tests and benchmarks read them right after).
    pub fn flush(&self) {
        if let Some(p) = &self.provider {
            let _ = p.force_flush();
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(p) = self.provider.take() {
            if let Err(e) = p.shutdown() {
                eprintln!("warning: flushing traces at exit failed: {e}");
            }
        }
    }
}

/// The OTLP endpoint for traces: `traces_endpoint` as given when it names the signal path,
/// else with `/v1/traces` appended (the collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`).
pub fn traces_url(endpoint: &str) -> String {
    let base = endpoint.trim_end_matches('/');
    if base.ends_with("/v1/traces") {
        base.to_string()
    } else {
        format!("{base}/v1/traces")
    }
}

fn provider(config: &TelemetryConfig) -> Result<SdkTracerProvider, TracesError> {
    let url = traces_url(&config.traces_endpoint);
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(UreqClient::new(Duration::from_millis(
            config.traces_timeout_ms,
        )))
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url.clone())
        .with_timeout(Duration::from_millis(config.traces_timeout_ms))
        .build()
        .map_err(|e| TracesError::Exporter {
            endpoint: url,
            reason: e.to_string(),
        })?;
    let batches = BatchSpanProcessor::builder(exporter)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_scheduled_delay(Duration::from_millis(config.traces_export_interval_ms))
                .build(),
        )
        .build();
    Ok(SdkTracerProvider::builder()
        .with_span_processor(batches)
        // A producer's sampling decision (the traceparent flag) is kept; new traces are
        // sampled at the configured ratio.
        .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            config.traces_sampling_ratio,
        ))))
        .with_resource(
            Resource::builder()
                .with_service_name(config.service_name.clone())
                .build(),
        )
        .build())
}

/// Log lines pass `events` (`RAGSTREAM_LOG`); this crate's spans are always kept, so that a
/// warning logged inside a query or a pipeline stage carries its trace and span ids even when
/// the filter would drop the span's own level.
struct LogFilter {
    events: EnvFilter,
}

fn own_span(meta: &Metadata<'_>) -> bool {
    meta.is_span() && meta.target().starts_with("ragstream")
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Filter<S> for LogFilter {
    fn enabled(&self, meta: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        own_span(meta) || Filter::enabled(&self.events, meta, cx)
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        if own_span(meta) {
            tracing::subscriber::Interest::always()
        } else {
            Filter::<S>::callsite_enabled(&self.events, meta)
        }
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        cx: Context<'_, S>,
    ) {
        Filter::on_new_span(&self.events, attrs, id, cx)
    }

    fn on_enter(&self, id: &tracing::span::Id, cx: Context<'_, S>) {
        Filter::on_enter(&self.events, id, cx)
    }

    fn on_exit(&self, id: &tracing::span::Id, cx: Context<'_, S>) {
        Filter::on_exit(&self.events, id, cx)
    }

    fn on_close(&self, id: tracing::span::Id, cx: Context<'_, S>) {
        Filter::on_close(&self.events, id, cx)
    }
}

/// The exporter's HTTP client: ureq, blocking, which suits the batch processor (it exports
/// from its own thread, outside any async runtime).
#[derive(Debug)]
struct UreqClient {
    agent: ureq::Agent,
}

impl UreqClient {
    fn new(timeout: Duration) -> UreqClient {
        UreqClient {
            agent: ureq::Agent::config_builder()
                .timeout_global(Some(timeout))
                .http_status_as_error(false)
                .build()
                .into(),
        }
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for UreqClient {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let request = http::Request::from_parts(parts, body.to_vec());
        let mut response = self.agent.run(request)?;
        let status = response.status();
        let body = response
            .body_mut()
            .with_config()
            .limit(4 << 20)
            .read_to_vec()?;
        Ok(http::Response::builder()
            .status(status)
            .body(bytes::Bytes::from(body))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_path_is_appended_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector:4318/"),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector:4318/v1/traces"),
            "http://collector:4318/v1/traces"
        );
    }

    #[test]
    fn log_formats_parse() {
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("text"), Some(LogFormat::Text));
        assert_eq!(LogFormat::parse("xml"), None);
    }
}
