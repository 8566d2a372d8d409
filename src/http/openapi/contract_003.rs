//! Component schemas of contract 003 (AI Core).

use super::*;

// ----- contract 003 --------------------------------------------------------------------------

pub(super) fn contract_003_schemas() -> Vec<(&'static str, Value)> {
    let visibilities = [Visibility::Active, Visibility::All, Visibility::Deleted];
    vec![
        ("RetrieveInput", retrieve_input_schema()),
        ("HybridParameters", hybrid_parameters_schema()),
        (
            "RetrieveOutput",
            object(
                &["matches", "meta"],
                vec![
                    (
                        "matches",
                        array(
                            schema_ref("RetrieveMatch"),
                            "Best first; empty only when the router is tenant-scoped.",
                        ),
                    ),
                    ("meta", schema_ref("RetrieveMeta")),
                ],
            ),
        ),
        ("RetrieveMatch", retrieve_match_schema()),
        ("MatchMeta", match_meta_schema()),
        ("RetrieveMeta", retrieve_meta_schema()),
        ("RetrieveRouting", retrieve_routing_schema()),
        (
            "Visibility",
            enumeration(
                visibilities.iter().map(|v| json!(v.name())).collect(),
                "active: live documents; deleted: soft-deleted ones; all: both.",
            ),
        ),
    ]
}

fn retrieve_input_schema() -> Value {
    let selector = "Trimmed and lower-cased; empty is unset. Reported in `meta.routing`.";
    let flag_words = ["true", "1", "yes", "on", "false", "0", "no", "off", ""];
    let schema = object(
        &["hybrid"],
        vec![
            (
                "query",
                json!({
                    "type": "string",
                    "default": "",
                    "description": "Not trimmed. An empty query still runs and matches nothing \
                        (NotFoundError unless the router is tenant-scoped).",
                }),
            ),
            (
                "filters",
                ref_described(
                    "FilterBag",
                    "Must be a mapping (`filters must be a mapping when provided`); null values \
                     are dropped.",
                ),
            ),
            ("process", nullable("string", selector)),
            ("doc_class", nullable("string", selector)),
            (
                "collection_id",
                nullable(
                    "string",
                    "Trimmed (case kept); empty is unset. Reported in `meta.routing` and applied \
                     as the exact-match filter `collection_id`.",
                ),
            ),
            ("workflow_id", nullable("string", selector)),
            (
                "visibility",
                json!({
                    "type": ["string", "null"],
                    "enum": ["active", "all", "deleted", "", null],
                    "default": "active",
                    "description": "Case-insensitive and trimmed; absent, null or empty is \
                        active. all and deleted need the visibility override, else active is \
                        enforced and `rag.visibility.override_denied` is logged.",
                }),
            ),
            (
                "visibility_override_allowed",
                json!({
                    "anyOf": [
                        {"type": "boolean"},
                        {"type": "null"},
                        {"type": "integer", "enum": [0, 1]},
                        {"type": "string", "enum": flag_words},
                    ],
                    "description": "coerce_bool_flag: booleans, 0/1 and their usual spellings \
                        (case-insensitive). Absent or null inherits the caller's context (the \
                        token's visibility_override scope, or \
                        `contracts.visibility_override_allowed` without authentication); it can \
                        decline the override, never grant more than the context allows.",
                }),
            ),
            ("hybrid", schema_ref("HybridParameters")),
            (
                "top_k",
                nullable(
                    "integer",
                    "Overrides hybrid.top_k; clamped to 1..10, never refused.",
                ),
            ),
        ],
    );
    described(
        schema,
        "AI Core's RetrieveInput. Other keys are ignored. Search is hybrid.",
    )
}

fn hybrid_parameters_schema() -> Value {
    let pool = format!("raised to at least 1 (the engine fetches at most {MAX_POOL} a stage).");
    let schema = closed(object(
        &[],
        vec![
            (
                "alpha",
                defaulted(
                    "number",
                    json!(0.7),
                    "The semantic weight of fusion; clamped to 0..1.",
                ),
            ),
            (
                "min_sim",
                defaulted(
                    "number",
                    json!(0.15),
                    "Matches scoring below it are dropped; clamped to 0..1.",
                ),
            ),
            (
                "top_k",
                defaulted("integer", json!(5), "Matches wanted; clamped to 1..10."),
            ),
            (
                "vec_limit",
                defaulted(
                    "integer",
                    json!(50),
                    &format!("The vector candidate pool; {pool}"),
                ),
            ),
            (
                "lex_limit",
                defaulted(
                    "integer",
                    json!(50),
                    &format!("The lexical candidate pool; {pool}"),
                ),
            ),
            (
                "trgm_limit",
                number(
                    "A trigram threshold, clamped to 0..1. Accepted for compatibility: \
                     ragstream has no trigram stage.",
                ),
            ),
            (
                "max_candidates",
                json!({
                    "type": "integer",
                    "description": "Fused candidates kept before min_sim and \
                        diversification. Default max(vec_limit, lex_limit); raised to at least \
                        top_k, vec_limit and lex_limit.",
                }),
            ),
            (
                "diversify_strength",
                defaulted(
                    "number",
                    json!(0.3),
                    "MMR strength, clamped to 0..1 (lambda = 1 − strength; 0 keeps the plain \
                     ranking).",
                ),
            ),
        ],
    ));
    described(
        schema,
        "Required. Only these keys: any other is refused (InputError `Unknown hybrid \
               parameter(s): a, b`). Numbers are clamped, never refused; `meta` reports the \
               values used.",
    )
}

fn retrieve_match_schema() -> Value {
    let sources = vec![json!("vector"), json!("lexical"), json!("hybrid")];
    object(
        &["id", "text", "score", "source", "hash", "citation", "meta"],
        vec![
            (
                "id",
                string(
                    "The id of the document the chunk belongs to (`meta.chunk_id` is the \
                     chunk's own).",
                ),
            ),
            ("text", string("The chunk's text.")),
            (
                "score",
                number("alpha·semantic + (1 − alpha)·lexical, each normalised."),
            ),
            (
                "source",
                enumeration(
                    sources,
                    "Which candidate list held the chunk: the vector one, the lexical one or \
                     both.",
                ),
            ),
            ("hash", matching("^[0-9a-f]{64}$", "SHA-256 of text, hex.")),
            (
                "citation",
                string(
                    "`<source> · S.<page> · Abschnitt <innermost section>`; the source is the \
                     title, else source_name, uri or document id.",
                ),
            ),
            ("meta", schema_ref("MatchMeta")),
        ],
    )
}

fn match_meta_schema() -> Value {
    let parent = object(
        &["id", "heading", "content"],
        vec![
            (
                "id",
                matching(
                    "^section-[0-9a-f]{16}$",
                    "Stable: derived from the document and the section path.",
                ),
            ),
            ("heading", string("The section's heading.")),
            (
                "content",
                string("The section's text (its chunks stitched, overlap removed), cut at 4000 characters."),
            ),
        ],
    );
    let own = object(
        &["chunk_id", "parent_ids", "parents"],
        vec![
            ("chunk_id", string("The chunk's id.")),
            ("parent_ids", strings("The ids of `parents`, in order.")),
            (
                "parents",
                array(parent, "One per enclosing section, outermost first."),
            ),
        ],
    );
    json!({
        "allOf": [schema_ref("ChunkMetadata"), own],
        "description": "The chunk's metadata (as contract 000's) plus its id and its enclosing \
            sections.",
    })
}

fn retrieve_meta_schema() -> Value {
    object(
        &[
            "routing",
            "took_ms",
            "alpha",
            "min_sim",
            "top_k_effective",
            "matches_returned",
            "max_candidates_effective",
            "vector_candidates",
            "lexical_candidates",
            "deleted_matches_blocked",
            "visibility_effective",
            "diversify_strength",
        ],
        vec![
            ("routing", schema_ref("RetrieveRouting")),
            ("took_ms", integer(0, "Milliseconds.")),
            ("alpha", unit_number("The alpha applied, after clamping.")),
            (
                "min_sim",
                unit_number("The cutoff applied, after clamping."),
            ),
            (
                "top_k_effective",
                json!({
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 10,
                    "description": "The top_k applied, after clamping.",
                }),
            ),
            (
                "matches_returned",
                integer(0, "Matches returned, after diversification."),
            ),
            (
                "max_candidates_effective",
                integer(1, "The fused candidate pool (at least top_k)."),
            ),
            (
                "vector_candidates",
                integer(0, "Vector candidates before fusion."),
            ),
            (
                "lexical_candidates",
                integer(0, "Lexical candidates before fusion."),
            ),
            (
                "deleted_matches_blocked",
                integer(
                    0,
                    "Deleted chunks that would have been among the matches had active not been \
                     enforced (0 for all and deleted).",
                ),
            ),
            ("visibility_effective", schema_ref("Visibility")),
            (
                "diversify_strength",
                unit_number("The strength applied, after clamping."),
            ),
        ],
    )
}

fn retrieve_routing_schema() -> Value {
    object(
        &[
            "profile",
            "vector_space_id",
            "process",
            "doc_class",
            "collection_id",
            "workflow_id",
        ],
        vec![
            ("profile", string("The embedding profile: `standard`.")),
            ("vector_space_id", string("`rag/<index>`.")),
            (
                "process",
                nullable("string", "As normalised; null when unset."),
            ),
            (
                "doc_class",
                nullable("string", "As normalised; null when unset."),
            ),
            (
                "collection_id",
                nullable("string", "As normalised; null when unset."),
            ),
            (
                "workflow_id",
                nullable("string", "As normalised; null when unset."),
            ),
        ],
    )
}
