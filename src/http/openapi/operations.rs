//! Component schemas of the operations routes (health, readiness, metrics, this document).

use super::*;

// ----- operations ----------------------------------------------------------------------------

pub(super) fn operations_schemas() -> Vec<(&'static str, Value)> {
    let pipeline = object(
        &["restarts", "last_failure"],
        vec![
            (
                "restarts",
                integer(0, "Supervised restarts of the ingest pipeline."),
            ),
            (
                "last_failure",
                nullable("string", "Why it last restarted; null if never."),
            ),
        ],
    );
    let problems = json!({
        "type": "array",
        "description": "Every problem a part of the daemon reports now.",
        "items": object(
            &["part", "impact", "reason", "since"],
            vec![
                ("part", string("Which part: `storage`, `pipeline.stalled`, `pipeline.commits.<index>`, `pipeline.restarts`, `queries.restarts`, `maintenance.restarts`, `dead_letters`.")),
                ("impact", json!({"type": "string", "enum": ["unhealthy", "unready"],
                    "description": "`unhealthy` fails /healthz, `unready` fails /readyz."})),
                ("reason", string("What is wrong, in words.")),
                ("since", string("When the part first reported it (RFC 3339, UTC).")),
            ],
        ),
    });
    vec![
        (
            "Health",
            object(
                &["status", "problems", "pipeline", "embedding"],
                vec![
                    (
                        "status",
                        json!({"type": "string", "enum": ["ok", "unhealthy"]}),
                    ),
                    ("problems", problems.clone()),
                    ("pipeline", pipeline),
                    (
                        "embedding",
                        json!({"description": "The embedder's report; its shape depends on the \
                            embedder (with the cache: `{embedder, cache: {hits, misses, \
                            hit_ratio, entries}}`)."}),
                    ),
                ],
            ),
        ),
        (
            "Ready",
            object(
                &["status", "problems"],
                vec![
                    ("status", json!({"type": "string", "const": "ready"})),
                    ("problems", problems),
                ],
            ),
        ),
        (
            "MetricsText",
            json!({"type": "string", "description": "Prometheus text exposition format 0.0.4."}),
        ),
        (
            "OpenApiDocument",
            json!({"type": "object", "description": "This OpenAPI 3.1 document."}),
        ),
    ]
}
