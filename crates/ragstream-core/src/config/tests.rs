//! Tests of the configuration loading and validation.

use super::*;
use std::collections::BTreeMap;

fn write(text: &str) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), text).unwrap();
    f
}

#[test]
fn defaults_load_without_a_file() {
    let c = Config::load_from(None, vec![]).unwrap();
    assert_eq!(c.limits.max_top_k, 100);
}

#[test]
fn file_overrides_defaults_and_env_overrides_file() {
    let f = write("[limits]\nmax_top_k = 20\n[storage]\ndata_dir = \"/tmp/x\"\n");
    let c = Config::load_from(Some(f.path()), vec![]).unwrap();
    assert_eq!(c.limits.max_top_k, 20);
    assert_eq!(c.storage.data_dir, PathBuf::from("/tmp/x"));
    let env = vec![
        ("RAGSTREAM_LIMITS_MAX_TOP_K".to_string(), "30".to_string()),
        ("RAGSTREAM_STORAGE_DATA_DIR".to_string(), "123".to_string()),
        ("PATH".to_string(), "/bin".to_string()),
    ];
    let c = Config::load_from(Some(f.path()), env).unwrap();
    assert_eq!(c.limits.max_top_k, 30);
    assert_eq!(c.storage.data_dir, PathBuf::from("123"));
}

#[test]
fn bad_file_names_file_key_and_reason() {
    let f = write("[limits]\nmax_top_k = \"many\"\n");
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert_eq!(e.source_name, f.path().display().to_string());
    assert_eq!(e.key, "limits.max_top_k");
    assert!(e.reason.contains("invalid type"), "{}", e.reason);
}

#[test]
fn unknown_key_in_file_is_an_error() {
    let f = write("[limits]\nmax_topk = 3\n");
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert!(e.reason.contains("max_topk"), "{e}");
}

#[test]
fn bad_env_values_name_the_variable() {
    let env = vec![("RAGSTREAM_LIMITS_MAX_TOP_K".to_string(), "x".to_string())];
    let e = Config::load_from(None, env).unwrap_err();
    assert_eq!(
        e.source_name,
        "environment variable RAGSTREAM_LIMITS_MAX_TOP_K"
    );
    assert_eq!(e.key, "limits.max_top_k");
    // A value of the right type that a rule or an enum refuses names the variable too,
    // even with a file loaded: the file's value is not the one refused.
    let f = write("[index.keyword]\nwriter_memory_mb = 64\n");
    for (var, raw, key) in [
        ("WRITER_MEMORY_MB", "14", "index.keyword.writer_memory_mb"),
        (
            "DISJUNCTION_SEARCH",
            "wand",
            "index.keyword.disjunction_search",
        ),
    ] {
        let var = format!("RAGSTREAM_INDEX__KEYWORD__{var}");
        let e =
            Config::load_from(Some(f.path()), vec![(var.clone(), raw.to_string())]).unwrap_err();
        assert_eq!(e.key, key);
        assert_eq!(e.source_name, format!("environment variable {var}"));
    }
    // An error about a key no variable set still names the file.
    let bad_file = write("[chunking]\nmax_tokens = 0\n");
    let env = vec![("RAGSTREAM_LIMITS_MAX_TOP_K".to_string(), "30".to_string())];
    let e = Config::load_from(Some(bad_file.path()), env).unwrap_err();
    assert_eq!(e.key, "chunking.max_tokens");
    assert_eq!(e.source_name, bad_file.path().display().to_string());
}

#[test]
fn variables_that_name_no_key_are_ignored_and_reported() {
    let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (config, report) = Config::load_reporting(
        None,
        env(&[
            ("RAGSTREAM_MODELS", "/models"),
            ("RAGSTREAM_BIN", "/usr/bin/ragstream"),
            ("RAGSTREAM_LIMITS_MAX_TOP_K__DEEPER", "1"),
            ("RAGSTREAM_", "x"),
            ("RAGSTREAM_LIMITS_MAX_TOP_K", "30"),
            ("OTHER_TOOL", "y"),
        ]),
    )
    .unwrap();
    assert_eq!(config.limits.max_top_k, 30);
    assert_eq!(
        report.ignored_variables,
        [
            "RAGSTREAM_",
            "RAGSTREAM_BIN",
            "RAGSTREAM_LIMITS_MAX_TOP_K__DEEPER",
            "RAGSTREAM_MODELS"
        ]
    );
    assert_eq!(
        report.sources,
        [
            "built-in defaults",
            "environment variable RAGSTREAM_LIMITS_MAX_TOP_K"
        ]
    );
}

#[test]
fn kubernetes_service_links_are_ignored_even_when_they_name_a_section() {
    let env: Vec<(String, String)> = [
        "RAGSTREAM_KAFKA_SERVICE_HOST",
        "RAGSTREAM_KAFKA_SERVICE_PORT",
        "RAGSTREAM_KAFKA_SERVICE_PORT_BROKER",
        "RAGSTREAM_KAFKA_PORT",
        "RAGSTREAM_HTTP_PORT_8080_TCP",
        "RAGSTREAM_HTTP_PORT_8080_TCP_ADDR",
    ]
    .iter()
    .map(|k| (k.to_string(), "10.0.0.1".to_string()))
    .collect();
    let (_, report) = Config::load_reporting(None, env.clone()).unwrap();
    let mut expected: Vec<String> = env.into_iter().map(|(k, _)| k).collect();
    expected.sort();
    assert_eq!(report.ignored_variables, expected);
}

#[test]
fn a_variable_naming_a_section_but_no_key_in_it_is_refused() {
    let var = "RAGSTREAM_LIMITS_MAX_TOPK";
    let e = Config::load_from(None, [(var.to_string(), "30".to_string())]).unwrap_err();
    assert_eq!(e.key, "limits.max_topk", "{e}");
    assert_eq!(e.source_name, format!("environment variable {var}"), "{e}");
    assert!(e.reason.contains("max_top_k"), "the keys are listed: {e}");
    // A variable that reaches below a key that holds no table.
    let var = "RAGSTREAM_LIMITS__MAX_TOP_K__DEEPER";
    let e = Config::load_from(None, [(var.to_string(), "30".to_string())]).unwrap_err();
    assert_eq!(e.key, "limits.max_top_k", "{e}");
    assert_eq!(e.source_name, format!("environment variable {var}"), "{e}");
    assert!(e.reason.contains("invalid type"), "{e}");
}

#[test]
fn tables_and_lists_take_a_toml_value_and_text_keys_keep_digits() {
    let env = vec![
        (
            "RAGSTREAM_KAFKA_CLIENT".to_string(),
            r#"{ "security.protocol" = "SASL_SSL", "sasl.mechanism" = "PLAIN" }"#.to_string(),
        ),
        ("RAGSTREAM_KAFKA_GROUP_ID".to_string(), "0042".to_string()),
        (
            "RAGSTREAM_CONTRACTS_TENANT_SCOPED".to_string(),
            "true".to_string(),
        ),
    ];
    let c = Config::load_from(None, env).unwrap();
    assert_eq!(c.kafka.client["security.protocol"], "SASL_SSL");
    assert_eq!(c.kafka.client["sasl.mechanism"], "PLAIN");
    assert_eq!(
        c.kafka.group_id, "0042",
        "text stays text, leading zeros included"
    );
    assert!(c.contracts.tenant_scoped);
    // A number with a fraction keeps every digit, with a default or without one, and a key
    // without a default that wants text takes the digits as text.
    let env = vec![
        (
            "RAGSTREAM_INDEX__VECTOR__RESIDENT_HAMMING_SHARE".to_string(),
            "0.05".to_string(),
        ),
        (
            "RAGSTREAM_RETRIEVERS__R__INDEX".to_string(),
            "default".to_string(),
        ),
        (
            "RAGSTREAM_RETRIEVERS__R__ALPHA".to_string(),
            "0.35".to_string(),
        ),
        ("RAGSTREAM_RERANKER_MODEL".to_string(), "1.5".to_string()),
    ];
    let c = Config::load_from(None, env).unwrap();
    assert_eq!(c.index.vector.resident_hamming_share, 0.05);
    assert_eq!(c.retrievers["r"].alpha, Some(0.35));
    assert_eq!(c.reranker.model.as_deref(), Some("1.5"));
    // The same in a file, written as text.
    let f = write("[index.vector]\nresident_hamming_share = \"0.05\"\n");
    let c = Config::load_from(Some(f.path()), Vec::new()).unwrap();
    assert_eq!(c.index.vector.resident_hamming_share, 0.05);
    let var = "RAGSTREAM_KAFKA_CLIENT";
    let e = Config::load_from(None, [(var.to_string(), "SASL_SSL".to_string())]).unwrap_err();
    assert_eq!(e.key, "kafka.client");
    assert_eq!(e.source_name, format!("environment variable {var}"));
    assert!(e.reason.contains("TOML"), "{e}");
}

#[test]
fn double_underscores_nest_and_optional_keys_can_be_set() {
    let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let c = Config::load_from(
        None,
        env(&[
            ("RAGSTREAM_INDEX__RETAIN_VERSIONS", "7"),
            ("RAGSTREAM_RERANKER_MODEL", "123"),
            ("RAGSTREAM_RERANKER__API_KEY_ENV", "RERANK_KEY"),
        ]),
    )
    .unwrap();
    assert_eq!(c.index.retain_versions, 7);
    // An optional text key takes digits as text.
    assert_eq!(c.reranker.model.as_deref(), Some("123"));
    assert_eq!(c.reranker.api_key_env.as_deref(), Some("RERANK_KEY"));
    // A provider defined from the environment alone, key by key.
    let c = Config::load_from(
        None,
        env(&[
            ("RAGSTREAM_EMBEDDERS__REMOTE__PROVIDER", "openai"),
            ("RAGSTREAM_EMBEDDERS__REMOTE__URL", "http://127.0.0.1:9/v1"),
            ("RAGSTREAM_EMBEDDERS__REMOTE__MODEL", "m"),
            ("RAGSTREAM_EMBEDDERS__REMOTE__DIMENSIONS", "8"),
        ]),
    );
    let c = c.unwrap();
    assert_eq!(c.embedders["remote"].dimensions, 8);
    // A value no reading of which the key's type takes names the variable and the key.
    let var = "RAGSTREAM_EMBEDDERS__REMOTE__DIMENSIONS";
    let e = Config::load_from(None, env(&[(var, "many")])).unwrap_err();
    assert_eq!(e.key, "embedders.remote.dimensions");
    assert_eq!(e.source_name, format!("environment variable {var}"));
}

#[test]
fn semantic_rules_are_checked() {
    let f = write("[chunking]\nmax_tokens = 10\noverlap_tokens = 10\n");
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert_eq!(e.key, "chunking.overlap_tokens");
}

#[test]
fn keyword_store_settings_are_checked_and_reach_the_store() {
    let env = |k: &str, v: &str| vec![(format!("RAGSTREAM_INDEX__KEYWORD__{k}"), v.to_string())];
    let e = Config::load_from(None, env("WRITER_MEMORY_MB", "14")).unwrap_err();
    assert_eq!(e.key, "index.keyword.writer_memory_mb");
    let e = Config::load_from(None, env("MERGE_MIN_SEGMENTS", "1")).unwrap_err();
    assert_eq!(e.key, "index.keyword.merge_min_segments");
    let c = Config::load_from(None, env("MERGE_MIN_SEGMENTS", "0")).unwrap();
    assert_eq!(c.index.keyword.merge_min_segments, 0);
    let c = Config::load_from(None, env("WRITER_MEMORY_MB", "16")).unwrap();
    assert_eq!(c.index.keyword.writer_memory_bytes, 16 << 20);
    let c = Config::load_from(None, env("MERGE_MAX_DOCS", "40000")).unwrap();
    assert_eq!(c.index.keyword.merge_max_docs, 40_000);
    let c = Config::load_from(None, env("MAX_QUERY_TERMS", "12")).unwrap();
    assert_eq!(c.index.keyword.max_query_terms, 12);
    let c = Config::load_from(None, env("DISJUNCTION_SEARCH", "max_score")).unwrap();
    assert_eq!(
        c.index.keyword.disjunction_search,
        crate::index::DisjunctionSearch::MaxScore
    );
    let e = Config::load_from(None, env("DISJUNCTION_SEARCH", "wand")).unwrap_err();
    assert_eq!(e.key, "index.keyword.disjunction_search");
}

#[test]
fn the_background_priority_is_checked() {
    use crate::runtime::background::BackgroundPriority;
    let env = |v: &str| {
        vec![(
            "RAGSTREAM_INDEX__MAINTENANCE__BACKGROUND_PRIORITY".to_string(),
            v.to_string(),
        )]
    };
    let priority =
        |v: &str| Config::load_from(None, env(v)).map(|c| c.index.maintenance.background_priority);
    assert_eq!(
        Config::load_from(None, vec![])
            .unwrap()
            .index
            .maintenance
            .background_priority,
        BackgroundPriority::Idle
    );
    assert_eq!(priority("low").unwrap(), BackgroundPriority::Low);
    assert_eq!(priority("normal").unwrap(), BackgroundPriority::Normal);
    assert_eq!(
        priority("nice").unwrap_err().key,
        "index.maintenance.background_priority"
    );
}

#[test]
fn hnsw_graph_settings_are_checked_and_reach_the_vector_index() {
    let env = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (format!("RAGSTREAM_INDEX__VECTOR__{k}"), v.to_string()))
            .collect::<Vec<_>>()
    };
    let e = Config::load_from(None, env(&[("HNSW_M", "1")])).unwrap_err();
    assert_eq!(e.key, "index.vector.hnsw_m");
    let too_narrow = [("HNSW_M", "32"), ("HNSW_EF_CONSTRUCTION", "16")];
    let e = Config::load_from(None, env(&too_narrow)).unwrap_err();
    assert_eq!(e.key, "index.vector.hnsw_m");
    let set = [("HNSW_M", "32"), ("HNSW_EF_CONSTRUCTION", "300")];
    let v = Config::load_from(None, env(&set)).unwrap().index.vector;
    assert_eq!((v.hnsw_m, v.hnsw_ef_construction), (32, 300));
}

#[test]
fn limits_that_would_refuse_everything_are_refused() {
    for key in [
        "limits.max_query_bytes",
        "limits.max_document_bytes",
        "limits.max_document_id_bytes",
        "kafka.max_message_bytes",
        "http.max_body_bytes",
    ] {
        let var = format!("RAGSTREAM_{}", key.replace('.', "__").to_uppercase());
        let e = Config::load_from(None, [(var, "0".to_string())]).unwrap_err();
        assert_eq!(e.key, key, "{e}");
    }
    let extractor = |timeout: &str| {
        [
            ("ENABLED", "true"),
            ("URL", "http://127.0.0.1:9"),
            ("MODEL", "m"),
            ("TIMEOUT_MS", timeout),
        ]
        .map(|(k, v)| (format!("RAGSTREAM_EXTRACTOR__{k}"), v.to_string()))
    };
    let e = Config::load_from(None, extractor("0")).unwrap_err();
    assert_eq!(e.key, "extractor.timeout_ms", "{e}");
    assert!(Config::load_from(None, extractor("1")).is_ok());
}

#[test]
fn the_rebuild_share_is_checked() {
    let var = |v: &str| {
        vec![(
            "RAGSTREAM_INDEX__VECTOR__REBUILD_SHARE".to_string(),
            v.into(),
        )]
    };
    let e = Config::load_from(None, var("-0.5")).unwrap_err();
    assert_eq!(e.key, "index.vector.rebuild_share", "{e}");
    let f = write("[index.vector]\nrebuild_share = nan\n");
    let e = Config::load_from(Some(f.path()), Vec::new()).unwrap_err();
    assert_eq!(e.key, "index.vector.rebuild_share", "{e}");
    let v = Config::load_from(None, var("2.5")).unwrap().index.vector;
    assert_eq!(
        v.rebuild_unindexed_share, 2.5,
        "more unindexed than indexed rows is a share"
    );
}

#[test]
fn resident_search_settings_are_checked_and_reach_the_vector_index() {
    let env = |k: &str, v: &str| vec![(format!("RAGSTREAM_INDEX__VECTOR__{k}"), v.to_string())];
    let e = Config::load_from(None, env("RESIDENT_HAMMING_SHARE", "1.5")).unwrap_err();
    assert_eq!(e.key, "index.vector.resident_hamming_share");
    let e = Config::load_from(None, env("RESIDENT_SHORTLIST", "-1")).unwrap_err();
    assert_eq!(e.key, "index.vector.resident_shortlist");
    let v = Config::load_from(None, env("RESIDENT_SHORTLIST", "0"))
        .unwrap()
        .index
        .vector;
    assert_eq!(
        v.resident_search().shortlist,
        0,
        "0 turns the resident search off"
    );
    let v = Config::load_from(None, env("RESIDENT_HAMMING_SHARE", "0.05"))
        .unwrap()
        .index
        .vector;
    assert_eq!(v.resident_search().hamming_share, 0.05);
    assert_eq!(v.resident_search().shortlist, 2000);
}

#[test]
fn moved_keys_still_load_with_a_warning_naming_their_new_place() {
    // The flat keys of earlier releases, in a file and in the environment.
    let f = write(
        "[index]\nvector_nprobes = 7\nkeyword_max_query_terms = 9\ncompaction_min_fragments = 3\n",
    );
    let env = vec![(
        "RAGSTREAM_INDEX_VECTOR_INDEX_MIN_ROWS".to_string(),
        "500".to_string(),
    )];
    let (c, report) = Config::load_reporting(Some(f.path()), env).unwrap();
    assert_eq!(c.index.vector.nprobes, 7);
    assert_eq!(c.index.keyword.max_query_terms, 9);
    assert_eq!(c.index.maintenance.min_small_fragments, 3);
    assert_eq!(c.index.vector.min_rows, 500);
    let warnings = report.moved_keys.join("\n");
    for expected in [
        "index.vector_nprobes has moved to index.vector.nprobes",
        "index.compaction_min_fragments has moved to index.maintenance.compaction_min_fragments",
        "index.keyword_max_query_terms has moved to index.keyword.max_query_terms",
        "RAGSTREAM_INDEX_VECTOR_INDEX_MIN_ROWS sets index.vector.min_rows; use RAGSTREAM_INDEX__VECTOR__MIN_ROWS",
    ] {
        assert!(warnings.contains(expected), "{warnings}");
    }
    // A moved key's errors name its new place and the variable that set it.
    let bad = vec![("RAGSTREAM_INDEX_VECTOR_HNSW_M".to_string(), "1".to_string())];
    let e = Config::load_from(None, bad).unwrap_err();
    assert_eq!(e.key, "index.vector.hnsw_m");
    assert_eq!(
        e.source_name,
        "environment variable RAGSTREAM_INDEX_VECTOR_HNSW_M"
    );
    // Both names at once: which one was meant is not guessed.
    let f = write("[index]\nvector_ef = 10\n[index.vector]\nef = 20\n");
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert_eq!(e.key, "index.vector.ef");
    assert!(e.reason.contains("index.vector_ef"), "{e}");
    // Two variables for one key.
    let both = vec![
        ("RAGSTREAM_INDEX_VECTOR_EF".to_string(), "10".to_string()),
        ("RAGSTREAM_INDEX__VECTOR__EF".to_string(), "20".to_string()),
    ];
    let e = Config::load_from(None, both).unwrap_err();
    assert_eq!(e.key, "index.vector.ef");
    assert!(e.reason.contains("RAGSTREAM_INDEX"), "{e}");
    // A new nested key written with one underscore is pointed to its variable.
    let one = vec![(
        "RAGSTREAM_INDEX_VECTOR_MIN_ROWS".to_string(),
        "10".to_string(),
    )];
    let e = Config::load_from(None, one).unwrap_err();
    assert!(
        e.reason.contains("RAGSTREAM_INDEX__VECTOR__MIN_ROWS"),
        "{e}"
    );
    // The new sections refuse a key they do not have.
    let f = write("[index.vector]\nnprobe = 10\n");
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert!(e.reason.contains("nprobe"), "{e}");
}

#[test]
fn embedders_name_a_built_in_or_a_provider_section() {
    let f = write(
        "[model]\nembedder = \"remote\"\n[embedders.remote]\nprovider = \"tei\"\nurl = \"http://127.0.0.1:9\"\ndimensions = 8\n",
    );
    let c = Config::load_from(Some(f.path()), vec![]).unwrap();
    assert_eq!(c.embedders["remote"].max_batch, 64, "defaults fill in");
    let f = write("[model]\nembedder = \"nowhere\"\n");
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert_eq!(e.key, "model.embedder");
    let f = write(
        "[embedders.x]\nprovider = \"openai\"\nurl = \"ftp://h\"\nmodel = \"m\"\ndimensions = 8\n",
    );
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert_eq!(e.key, "embedders.x.url");
    let f = write("[embedders.x]\nprovider = \"cohere\"\nurl = \"http://h\"\ndimensions = 8\n");
    let e = Config::load_from(Some(f.path()), vec![]).unwrap_err();
    assert_eq!(e.key, "embedders.x.provider");
}

#[test]
fn missing_file_is_an_error() {
    let e = Config::load_from(Some(Path::new("/nonexistent/r.toml")), vec![]).unwrap_err();
    assert!(e.reason.contains("cannot read"));
}

/// The keys of `table` and its sub-tables, dotted (`index.vector.nprobes`), with their values;
/// arrays of tables (`[[auth.tokens]]`) and empty tables count as values.
fn flatten(prefix: &str, table: &toml::Table, out: &mut BTreeMap<String, toml::Value>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Table(inner) if !inner.is_empty() => flatten(&path, inner, out),
            _ => {
                out.insert(path, value.clone());
            }
        }
    }
}

/// Tables a file fills with entries of its own: documented by example, without defaults.
const FREE_FORM: &[&str] = &[
    "storage.options",
    "kafka.client",
    "embedders",
    "retrievers",
    "auth",
];

fn is_free_form(key: &str) -> bool {
    FREE_FORM
        .iter()
        .any(|free| key == *free || key.starts_with(&format!("{free}.")))
}

/// Every key with its built-in default, as a file writes it (`~` not yet expanded).
fn built_in_defaults() -> BTreeMap<String, toml::Value> {
    let defaults = toml::Table::try_from(Config::default()).unwrap();
    let mut out = BTreeMap::new();
    flatten("", &defaults, &mut out);
    out
}

/// A file of the repository, by its path from the root (this crate is `crates/ragstream-core`).
fn repository_file(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_shipped_file_states_every_built_in_default() {
    let text = repository_file("config/ragstream.toml");
    let mut stated = BTreeMap::new();
    flatten("", &text.parse::<toml::Table>().unwrap(), &mut stated);
    let defaults = built_in_defaults();
    let unstated: Vec<&String> = defaults
        .keys()
        .filter(|k| !is_free_form(k) && !stated.contains_key(*k))
        .collect();
    assert!(
        unstated.is_empty(),
        "config/ragstream.toml leaves out {unstated:?}"
    );
    let file = write(&text);
    assert_eq!(
        Config::load_from(Some(file.path()), vec![]).unwrap(),
        Config::load_from(None, vec![]).unwrap(),
        "config/ragstream.toml sets a value other than the built-in default"
    );
}

/// docs/configuration.md: a `## \`[section]\`` heading, then a table whose rows start
/// `| \`key\` | default |`. Sections named with `<name>` or `[[…]]` describe entries a file
/// adds, which have no built-in default.
#[test]
fn the_configuration_page_lists_every_key_with_its_default() {
    let page = repository_file("docs/configuration.md");
    let mut documented: BTreeMap<String, String> = BTreeMap::new();
    let mut section: Option<String> = None;
    for line in page.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading
                .strip_prefix("`[")
                .and_then(|h| h.strip_suffix("]`"))
                .filter(|h| !h.contains('<') && !h.starts_with('['))
                .map(str::to_string);
            continue;
        }
        let (Some(section), Some(row)) = (&section, line.strip_prefix("| `")) else {
            continue;
        };
        let cells: Vec<&str> = row.split(" | ").collect();
        let key = cells[0].trim_end_matches('`');
        let default = cells[1].trim_matches('`');
        documented.insert(format!("{section}.{key}"), default.to_string());
    }
    let defaults = built_in_defaults();
    for (key, value) in &defaults {
        if is_free_form(key) {
            continue;
        }
        let shown = documented
            .get(key)
            .unwrap_or_else(|| panic!("docs/configuration.md does not list {key}"));
        let expected = match value {
            toml::Value::Array(a) if a.is_empty() => "[]".to_string(),
            other => other.to_string(),
        };
        assert_eq!(
            shown, &expected,
            "docs/configuration.md: the default of {key}"
        );
    }
    for (key, shown) in &documented {
        if defaults.contains_key(key) {
            continue;
        }
        // A key without a default: setting it must get past the check for unknown keys
        // (to a type error, at worst).
        assert!(
            ["unset", "none", "required"].contains(&shown.as_str()),
            "docs/configuration.md lists {key} (default {shown}), which the configuration does not have"
        );
        let (section, name) = key.rsplit_once('.').unwrap();
        let file = write(&format!("[{section}]\n{name} = \"x\"\n"));
        if let Err(e) = Config::load_from(Some(file.path()), vec![]) {
            let e = e.to_string();
            assert!(
                !e.contains("unknown field"),
                "docs/configuration.md lists {key}, which the configuration does not have: {e}"
            );
        }
    }
}
