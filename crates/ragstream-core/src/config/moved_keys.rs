//! Keys that moved. Earlier releases kept every index setting flat in `[index]`; the vector
//! index's, the keyword index's and maintenance's now live in `[index.vector]`,
//! `[index.keyword]` and `[index.maintenance]`, which deserialise straight into the settings
//! types of those modules. An old key still loads, in a file or in the environment, with a
//! warning naming its new place.

/// Each old key and where it lives now.
const MOVED: &[(&str, &str)] = &[
    ("index.vector_index_type", "index.vector.type"),
    ("index.vector_index_min_rows", "index.vector.min_rows"),
    ("index.id_index_min_rows", "index.vector.id_min_rows"),
    ("index.vector_index_partitions", "index.vector.partitions"),
    ("index.vector_index_sub_vectors", "index.vector.sub_vectors"),
    (
        "index.vector_index_rebuild_share",
        "index.vector.rebuild_share",
    ),
    ("index.vector_nprobes", "index.vector.nprobes"),
    ("index.vector_refine_factor", "index.vector.refine_factor"),
    ("index.vector_ef", "index.vector.ef"),
    ("index.vector_hnsw_m", "index.vector.hnsw_m"),
    (
        "index.vector_hnsw_ef_construction",
        "index.vector.hnsw_ef_construction",
    ),
    (
        "index.vector_resident_shortlist",
        "index.vector.resident_shortlist",
    ),
    (
        "index.vector_resident_hamming_share",
        "index.vector.resident_hamming_share",
    ),
    (
        "index.keyword_writer_memory_mb",
        "index.keyword.writer_memory_mb",
    ),
    (
        "index.keyword_merge_min_segments",
        "index.keyword.merge_min_segments",
    ),
    (
        "index.keyword_merge_max_docs",
        "index.keyword.merge_max_docs",
    ),
    (
        "index.keyword_max_query_terms",
        "index.keyword.max_query_terms",
    ),
    (
        "index.keyword_disjunction_search",
        "index.keyword.disjunction_search",
    ),
    (
        "index.maintenance_interval_ms",
        "index.maintenance.interval_ms",
    ),
    (
        "index.background_priority",
        "index.maintenance.background_priority",
    ),
    (
        "index.compaction_min_fragments",
        "index.maintenance.compaction_min_fragments",
    ),
    (
        "index.compaction_target_rows",
        "index.maintenance.compaction_target_rows",
    ),
    (
        "index.purge_deleted_after_seconds",
        "index.maintenance.purge_deleted_after_seconds",
    ),
];

/// Where the key at `path` lives now, if it moved.
pub fn new_path(path: &[String]) -> Option<Vec<String>> {
    let dotted = path.join(".");
    MOVED
        .iter()
        .find(|(old, _)| *old == dotted)
        .map(|(_, new)| new.split('.').map(str::to_string).collect())
}

/// The variable that sets `path` now (`RAGSTREAM_INDEX__VECTOR__NPROBES`).
pub fn variable(path: &[String]) -> String {
    format!("RAGSTREAM_{}", path.join("__").to_ascii_uppercase())
}

/// Moves each old key of a file's `table` to its new place, with a warning for each. Setting
/// a key in both places is an error, as (the new key, the reason): which one was meant?
pub fn move_keys(table: &mut toml::Table) -> Result<Vec<String>, (String, String)> {
    let mut warnings = Vec::new();
    for (old, new) in MOVED {
        let (section, key) = old.split_once('.').expect("a dotted key");
        let Some(value) = table
            .get_mut(section)
            .and_then(toml::Value::as_table_mut)
            .and_then(|s| s.remove(key))
        else {
            continue;
        };
        let path: Vec<&str> = new.split('.').collect();
        let (leaf, parents) = path.split_last().expect("a dotted key");
        let mut t = &mut *table;
        for p in parents {
            t = t
                .entry(*p)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| (new.to_string(), format!("{p} must be a table")))?;
        }
        if t.contains_key(*leaf) {
            return Err((
                new.to_string(),
                format!("is also set by its old name {old}; keep only {new}"),
            ));
        }
        t.insert(leaf.to_string(), value);
        warnings.push(format!("key {old} has moved to {new}; it still loads"));
    }
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_moved_key_has_a_place_in_the_configuration_and_its_old_one_is_gone() {
        let defaults = toml::Value::try_from(crate::config::Config::default()).unwrap();
        let at = |dotted: &str| {
            dotted
                .split('.')
                .try_fold(&defaults, |t, k| t.get(k))
                .is_some()
        };
        for (old, new) in MOVED {
            assert!(at(new), "{new} is not a key of the configuration");
            assert!(!at(old), "{old} is still a key of the configuration");
        }
    }
}
