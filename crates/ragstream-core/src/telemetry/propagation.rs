//! W3C trace context (`traceparent`, `tracestate`) across Kafka and HTTP: read from the
//! headers of what arrives, written into the headers of what is sent, so that a producer's
//! trace continues through ingestion and a bus query's trace continues into its reply.

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::Context;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rdkafka::message::{Header, Headers, OwnedHeaders};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The trace context carried by `get` (a header lookup by lower-case name); empty when the
/// headers carry none or a malformed one (a bad `traceparent` starts a new trace, never fails
/// a message).
pub fn extract(get: impl Fn(&str) -> Option<String>) -> Context {
    let fields: Vec<(String, String)> = ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|k| get(k).map(|v| (k.to_string(), v)))
        .collect();
    if fields.is_empty() {
        return Context::new();
    }
    TraceContextPropagator::new().extract(&Fields(fields))
}

/// The trace context of a Kafka message's headers.
pub fn from_kafka(headers: Option<&impl Headers>) -> Context {
    let Some(headers) = headers else {
        return Context::new();
    };
    extract(|name| {
        headers
            .iter()
            .find(|h| h.key.eq_ignore_ascii_case(name))
            .and_then(|h| h.value)
            .and_then(|v| std::str::from_utf8(v).ok())
            .map(str::to_string)
    })
}

/// `headers` with the trace context of `cx` added (unchanged when `cx` holds no valid span).
pub fn into_kafka(cx: &Context, headers: OwnedHeaders) -> OwnedHeaders {
    let mut fields = Fields(Vec::new());
    TraceContextPropagator::new().inject_context(cx, &mut fields);
    // An empty `tracestate` is left out rather than sent blank.
    let fields = fields.0.iter().filter(|(_, v)| !v.is_empty());
    fields.fold(headers, |h, (k, v)| {
        h.insert(Header {
            key: k.as_str(),
            value: Some(v.as_str()),
        })
    })
}

/// Makes `span` continue the trace of `parent` (if it holds one) and records the span's
/// `trace_id` and `span_id` fields, which the logs print. Call it before the span is entered.
///
/// With traces off the span has no OpenTelemetry identity of its own; it then records the
/// parent's trace id (if any), so logs still lead to the producer's trace.
pub fn follow(span: &tracing::Span, parent: &Context) {
    if parent.span().span_context().is_valid() {
        // Fails only when traces are off (no OpenTelemetry layer): nothing to link then.
        let _ = span.set_parent(parent.clone());
    }
    let own = span.context();
    let ids = own.span().span_context().clone();
    if ids.is_valid() {
        span.record("trace_id", tracing::field::display(ids.trace_id()));
        span.record("span_id", tracing::field::display(ids.span_id()));
    } else if parent.span().span_context().is_valid() {
        let trace = parent.span().span_context().trace_id();
        span.record("trace_id", tracing::field::display(trace));
    }
}

/// The trace context of the current span (empty when traces are off), for what the current
/// work sends on.
pub fn current() -> Context {
    tracing::Span::current().context()
}

/// Header fields in a list: the carrier the propagator reads from and writes to.
struct Fields(Vec<(String, String)>);

impl Extractor for Fields {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_str()).collect()
    }
}

impl Injector for Fields {
    fn set(&mut self, key: &str, value: String) {
        self.0.push((key.to_string(), value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_traceparent_round_trips_through_kafka_headers() {
        let headers = OwnedHeaders::new().insert(Header {
            key: "traceparent",
            value: Some(PARENT),
        });
        let cx = from_kafka(Some(&headers));
        let sc = cx.span().span_context().clone();
        assert!(sc.is_valid() && sc.is_remote() && sc.is_sampled());
        assert_eq!(
            sc.trace_id(),
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap()
        );
        let out = into_kafka(&cx, OwnedHeaders::new());
        let written: Vec<(String, String)> = out
            .iter()
            .map(|h| {
                (
                    h.key.to_string(),
                    String::from_utf8(h.value.unwrap().to_vec()).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            written,
            vec![("traceparent".to_string(), PARENT.to_string())]
        );
    }

    #[test]
    fn missing_or_malformed_context_starts_nothing() {
        assert!(!from_kafka(None::<&OwnedHeaders>)
            .span()
            .span_context()
            .is_valid());
        let bad = OwnedHeaders::new().insert(Header {
            key: "traceparent",
            value: Some("00-nothex-00f067aa0ba902b7-01"),
        });
        assert!(!from_kafka(Some(&bad)).span().span_context().is_valid());
        // Nothing valid to write: the headers stay as they were.
        assert_eq!(into_kafka(&Context::new(), OwnedHeaders::new()).count(), 0);
    }

    /// Log lines written inside a span that `follow`ed a producer's context, as JSON.
    fn logged_inside_followed_span(with_traces: bool) -> String {
        use opentelemetry::trace::TracerProvider as _;
        use tracing_subscriber::layer::SubscriberExt;

        #[derive(Clone, Default)]
        struct Buffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let out = buffer.clone();
        let logs = tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_writer(move || out.clone());
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let otel = with_traces
            .then(|| tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let subscriber = tracing_subscriber::registry().with(logs).with(otel);
        tracing::subscriber::with_default(subscriber, || {
            let headers = OwnedHeaders::new().insert(Header {
                key: "traceparent",
                value: Some(PARENT),
            });
            let span = tracing::info_span!(
                "consume",
                trace_id = tracing::field::Empty,
                span_id = tracing::field::Empty
            );
            follow(&span, &from_kafka(Some(&headers)));
            span.in_scope(|| tracing::warn!("poison message"));
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        text
    }

    #[test]
    fn logs_carry_the_trace_and_span_ids() {
        let line = logged_inside_followed_span(true);
        let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(v["span"]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        let span_id = v["span"]["span_id"].as_str().unwrap();
        assert_eq!(span_id.len(), 16);
        assert_ne!(
            span_id, "00f067aa0ba902b7",
            "the span's own id, not its parent's"
        );
        // Without an exporter the producer's trace id is still there to search for.
        let line = logged_inside_followed_span(false);
        let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(v["span"]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(v["span"].get("span_id").is_none());
    }

    #[test]
    fn tracestate_travels_with_traceparent() {
        let sc = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            true,
            TraceState::from_key_value([("vendor", "x1")]).unwrap(),
        );
        let cx = Context::new().with_remote_span_context(sc);
        let out = into_kafka(&cx, OwnedHeaders::new());
        let back = from_kafka(Some(&out));
        assert_eq!(
            back.span().span_context().trace_state().get("vendor"),
            Some("x1")
        );
    }
}
