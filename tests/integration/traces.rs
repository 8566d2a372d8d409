//! Traces end to end: a daemon exports OTLP/HTTP to a receiver in this test process; a
//! document produced by kcat with a `traceparent` header and a bus query with one must each
//! come back as one trace: produce → consume → chunk → embed → commit, and request → reply.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;

use crate::daemon::{kcat_consume, kcat_produce, start_daemon_with, upsert, wait_for};

/// An OTLP/HTTP receiver on 127.0.0.1: decodes every `POST /v1/traces` body and keeps the
/// spans, answering 200 as a collector does.
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let kept = spans.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = kept.clone();
                std::thread::spawn(move || serve(stream, &kept));
            }
        });
        Receiver { url, spans }
    }

    fn in_trace(&self, trace_id: &[u8]) -> Vec<Span> {
        let spans = self.spans.lock().unwrap();
        spans
            .iter()
            .filter(|s| s.trace_id == trace_id)
            .cloned()
            .collect()
    }
}

/// One connection: HTTP/1.1 requests, kept alive, until the client closes it.
fn serve(stream: TcpStream, kept: &Mutex<Vec<Span>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        assert!(
            request_line.starts_with("POST /v1/traces"),
            "{request_line}"
        );
        let request = ExportTraceServiceRequest::decode(body.as_slice()).expect("OTLP protobuf");
        let mut spans = kept.lock().unwrap();
        for resource in request.resource_spans {
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
        drop(spans);
        writer
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n")
            .unwrap();
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn names(spans: &[Span]) -> BTreeSet<String> {
    spans.iter().map(|s| s.name.clone()).collect()
}

#[test]
fn a_traceparent_continues_through_ingestion_and_a_bus_query_into_its_reply() {
    let receiver = Receiver::start();
    let d = start_daemon_with(&[
        ("RAGSTREAM_TELEMETRY_TRACES", "true"),
        ("RAGSTREAM_TELEMETRY_TRACES_ENDPOINT", &receiver.url),
        ("RAGSTREAM_TELEMETRY_TRACES_EXPORT_INTERVAL_MS", "100"),
    ]);

    // A producer's trace: kcat sends the document with the producer's span as parent.
    let ingest_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let producer_span = "00f067aa0ba902b7";
    kcat_produce(
        &d.bootstrap,
        "ragstream.documents",
        &[
            "-H",
            &format!("traceparent=00-{ingest_trace}-{producer_span}-01"),
        ],
        &[upsert("volcano", "Magma erupts from volcanoes as lava.")],
    );
    let stages = ["consume", "chunk", "embed", "commit"];
    wait_for("the document's trace through every stage", || {
        let got = names(&receiver.in_trace(&hex(ingest_trace)));
        stages.iter().all(|s| got.contains(*s))
    });
    let spans = receiver.in_trace(&hex(ingest_trace));
    let consume = spans.iter().find(|s| s.name == "consume").unwrap();
    assert_eq!(
        consume.parent_span_id,
        hex(producer_span),
        "consume continues the producer's span"
    );
    // Each later stage is a child of the consume span (the trace reads as a chain of stages).
    for stage in ["chunk", "embed", "commit"] {
        let s = spans.iter().find(|s| s.name == stage).unwrap();
        assert_eq!(s.parent_span_id, consume.span_id, "{stage}");
        assert!(s.end_time_unix_nano >= s.start_time_unix_nano);
    }
    let commit = spans.iter().find(|s| s.name == "commit").unwrap();
    assert!(
        commit.attributes.iter().any(|a| a.key == "index_version"),
        "the commit span names the version it made: {:?}",
        commit.attributes
    );

    // A bus query's trace continues into its reply (and its phases are in it).
    let query_trace = "0af7651916cd43dd8448eb211c80319c";
    let client_span = "b7ad6b7169203331";
    let query = json!({"retrieval": {"index": "kb", "query": "magma lava",
        "search_method": "hybrid", "top_k": 2}});
    kcat_produce(
        &d.bootstrap,
        "ragstream.queries",
        &[
            "-H",
            "reply-to=ragstream.replies",
            "-H",
            "correlation-id=traced-1",
            "-H",
            &format!("traceparent=00-{query_trace}-{client_span}-01"),
        ],
        &[query.to_string()],
    );
    let replies = kcat_consume(&d.bootstrap, "ragstream.replies", 1);
    let (headers, body) = replies[0].split_once('\t').unwrap();
    assert!(body.contains("volcano"), "{body}");
    let reply_parent = headers
        .split(',')
        .find_map(|h| h.strip_prefix("traceparent="))
        .unwrap_or_else(|| panic!("the reply carries a traceparent: {headers}"));
    assert!(
        reply_parent.starts_with(&format!("00-{query_trace}-")),
        "the reply continues the request's trace: {reply_parent}"
    );
    wait_for("the query's spans", || {
        let got = names(&receiver.in_trace(&hex(query_trace)));
        [
            "query",
            "search",
            "analysis",
            "embed_query",
            "semantic",
            "keyword",
            "fusion",
            "reply",
        ]
        .iter()
        .all(|s| got.contains(*s))
    });
    let spans = receiver.in_trace(&hex(query_trace));
    let request = spans.iter().find(|s| s.name == "query").unwrap();
    assert_eq!(request.parent_span_id, hex(client_span));
    let reply = spans.iter().find(|s| s.name == "reply").unwrap();
    assert_eq!(reply.parent_span_id, request.span_id);
    assert!(
        reply_parent.contains(&hex_string(&reply.span_id)),
        "the reply's traceparent names the reply span"
    );
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
