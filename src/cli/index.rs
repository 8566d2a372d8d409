//! `ragstream index …`: index administration.

use std::path::PathBuf;
use std::time::Instant;

use clap::Subcommand;
use serde_json::json;

use super::{failure, index_name, load_embedder, lock_data_dir, usage, Failure};
use crate::config::Config;
use crate::embedding::Embedder;
use crate::engine::Engine;

#[derive(Subcommand)]
pub enum IndexCommand {
    /// Every index under the data directory with its figures, as `GET /v1/indexes` lists
    /// them (JSON).
    List,
    /// Version, document and chunk counts of an index.
    Stats {
        /// The index.
        name: String,
    },
    /// Rebuild every vector of an index with another embedder, as one new version; the index
    /// then belongs to that embedder (older versions keep theirs). Needs exclusive write
    /// access: stop a daemon that ingests into this index first.
    Reembed {
        /// The index.
        name: String,
        /// all-minilm-l6-v2, static, hashing, or the name of an [embedders.<name>] section.
        #[arg(long)]
        embedder: String,
    },
    /// One maintenance pass, as the daemon's maintenance actor runs them: compact small
    /// fragments, remove chunks soft-deleted past `index.maintenance.purge_deleted_after_seconds`,
    /// make the keyword merges that ended searchable (a new version, same chunks), prune
    /// versions beyond `index.retain_versions`. Merges the pass starts finish before it
    /// exits; the next pass makes them searchable. Prints what it did.
    Maintain {
        /// The index.
        name: String,
    },
    /// Build the vector index anew on the newest version with the configured `index.vector_*`
    /// build settings (type, partitions, sub-vectors, HNSW graph), as one new version: how
    /// changed settings take effect. Needs exclusive write access, as `reembed`: stop a
    /// daemon that ingests into this index first.
    RebuildVectors {
        /// The index.
        name: String,
    },
    /// Keep a version from pruning under a name (a Lance tag); the newest version if
    /// `--version` is not given.
    Tag {
        /// The index.
        name: String,
        /// The tag's name.
        tag: String,
        /// The version to keep (default: the newest).
        #[arg(long)]
        version: Option<u64>,
    },
    /// Delete an index: it stops answering at once and its files are removed. Documents
    /// produced to it later make a new index of that name. Needs exclusive write access, as
    /// `reembed`: a running daemon deletes with `DELETE /v1/indexes/{index}` instead.
    Delete {
        /// The index.
        name: String,
    },
    /// Remove a tag; its version is pruned by the next retention pass if it is old.
    Untag {
        /// The index.
        name: String,
        /// The tag to remove.
        tag: String,
    },
    /// Measure which centre `auto` should start from on this index, on judged queries of its
    /// domain (BEIR queries.jsonl and a qrels TSV), and store the best one.
    Calibrate {
        /// The index.
        name: String,
        /// Judged queries of the index's domain (BEIR queries.jsonl); without them, the
        /// index calibrates on queries it cuts from its own chunks.
        #[arg(long, requires = "qrels")]
        queries: Option<PathBuf>,
        /// Their judgments (BEIR qrels TSV).
        #[arg(long, requires = "queries")]
        qrels: Option<PathBuf>,
    },
}

/// Runs one `index` subcommand.
pub async fn run(config: Config, command: IndexCommand) -> Result<(), Failure> {
    match command {
        IndexCommand::Delete { name } => {
            let name = index_name(&name)?;
            let _lock = lock_data_dir(&config, "index delete")?;
            let engine = Engine::for_administration(config.clone());
            let version = engine.delete_index(&name).await?;
            let purged = engine.purge_deleted_indexes()?;
            println!(
                "{}",
                json!({"index": name.as_str(), "index_version": version, "deleted": true,
                    "directories_removed": purged})
            );
        }
        IndexCommand::Stats { name } => {
            let name = index_name(&name)?;
            let engine = Engine::for_administration(config.clone());
            let stats = engine.stats(&name).await?;
            println!("{}", serde_json::to_string_pretty(&stats).expect("json"));
        }
        IndexCommand::List => {
            let engine = Engine::for_administration(config.clone());
            let caller = crate::auth::Caller::unrestricted();
            let list = crate::contracts::index_list(&engine, &caller).await;
            println!("{}", serde_json::to_string_pretty(&list).expect("json"));
        }
        IndexCommand::Maintain { name } => {
            let name = index_name(&name)?;
            let _lock = lock_data_dir(&config, "index maintain")?;
            let engine = Engine::for_administration(config.clone());
            let report = engine
                .index(&name)
                .await?
                .maintenance()
                .maintain(&config.index.maintenance)
                .await
                .map_err(crate::engine::EngineError::from)?;
            println!("{}", serde_json::to_string_pretty(&report).expect("json"));
        }
        IndexCommand::RebuildVectors { name } => {
            let name = index_name(&name)?;
            let _lock = lock_data_dir(&config, "index rebuild-vectors")?;
            let engine = Engine::for_administration(config.clone());
            let started = Instant::now();
            let (version, rows) = engine.rebuild_vector_index(&name).await?;
            let v = config.index.vector;
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({
                    "index": name.as_str(),
                    "index_version": version,
                    "rows": rows,
                    "seconds": started.elapsed().as_secs_f64(),
                    "settings": {
                        "vector_index_type": v.kind,
                        "vector_index_partitions": v.partitions,
                        "vector_index_sub_vectors": v.sub_vectors,
                        "vector_hnsw_m": v.hnsw_m,
                        "vector_hnsw_ef_construction": v.hnsw_ef_construction,
                    },
                }))
                .expect("json")
            );
        }
        IndexCommand::Tag { name, tag, version } => {
            let name = index_name(&name)?;
            let engine = Engine::for_administration(config.clone());
            let version = engine
                .index(&name)
                .await?
                .maintenance()
                .tag(&tag, version)
                .await
                .map_err(crate::engine::EngineError::from)?;
            println!(
                "{}",
                json!({"index": name.as_str(), "tag": tag, "index_version": version})
            );
        }
        IndexCommand::Untag { name, tag } => {
            let name = index_name(&name)?;
            let engine = Engine::for_administration(config.clone());
            engine
                .index(&name)
                .await?
                .maintenance()
                .untag(&tag)
                .await
                .map_err(crate::engine::EngineError::from)?;
            println!("{}", json!({"index": name.as_str(), "untagged": tag}));
        }
        IndexCommand::Reembed { name, embedder } => {
            let name = index_name(&name)?;
            let _lock = lock_data_dir(&config, "index reembed")?;
            let target = crate::embedders::load(&config, &embedder)
                .map_err(|e| usage(format!("--embedder {embedder}: {e}")))?;
            let engine = Engine::new(config.clone(), target.clone());
            let before = engine.index(&name).await?.info();
            let started = Instant::now();
            let version = engine.reembed(&name).await?;
            println!(
                "{}",
                json!({
                    "index": name.as_str(),
                    "from": {"embedder": before.embedder, "dimensions": before.dimensions},
                    "to": {"embedder": target.id(), "dimensions": target.dimensions()},
                    "index_version": version,
                    "embedding": engine.embedding_report(),
                    "seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
                })
            );
        }
        IndexCommand::Calibrate {
            name,
            queries,
            qrels,
        } => {
            use crate::calibration::{calibrate, judgments};
            use crate::index::CalibrationSource;
            let name = index_name(&name)?;
            let engine = Engine::new(config.clone(), load_embedder(&config)?);
            engine.index(&name).await?;
            // Always measured, so that a judged calibration is seen next to what the index
            // finds on its own.
            let synthetic = calibrate::on_own_queries(&engine, &name, true)
                .await
                .map_err(failure)?;
            match (queries, qrels) {
                (Some(queries), Some(qrels)) => {
                    let queries = judgments::read_queries(&queries).map_err(failure)?;
                    let qrels = judgments::read_qrels(&qrels).map_err(failure)?;
                    let judged = judgments::judged(&queries, &qrels);
                    if judged.is_empty() {
                        return Err(usage("no query in --queries is judged in --qrels"));
                    }
                    let c = calibrate::on_judged_queries(
                        &engine,
                        &name,
                        &judged,
                        &qrels,
                        crate::calibration::LeftOut::Nothing,
                        true,
                    )
                    .await
                    .map_err(failure)?;
                    calibrate::store(&engine, &name, &c, CalibrationSource::Judged)
                        .await
                        .map_err(failure)?;
                    if let Some(s) = &synthetic {
                        println!("on the index's own queries (not stored):");
                        print_calibration(s);
                    }
                    println!("on the judged queries (stored):");
                    print_calibration(&c);
                }
                _ => match &synthetic {
                    Some(c) => {
                        calibrate::store(&engine, &name, c, CalibrationSource::Synthetic)
                            .await
                            .map_err(failure)?;
                        println!("on the index's own queries (stored):");
                        print_calibration(c);
                        // Which centre queries start from is settled in one place
                        // (`IndexInfo::query_defaults`): a model's measured centre beats
                        // this one.
                        let handle = engine.index(&name).await?;
                        let in_force =
                            crate::retrieval::profiles::AutoStart::of(&handle.query_defaults())
                                .center;
                        if in_force != c.center {
                            println!(
                                "in force: {in_force}, the centre measured for {}; a \
                                 synthetic centre does not replace it",
                                handle.info().embedder
                            );
                        }
                    }
                    None => {
                        return Err(usage(
                            "the index has too few documents of two or more chunks to cut \
                             calibration queries from; give --queries and --qrels",
                        ))
                    }
                },
            }
        }
    }
    Ok(())
}

/// What a calibration measured, as a table, with what it stored marked.
pub fn print_calibration(c: &crate::calibration::Calibration) {
    println!("fusion, on every query (each at its own centre and passage weight):");
    for (fusion, ndcg) in &c.ndcg_at_10_by_fusion {
        let mark = if *fusion == c.fusion {
            "  <- stored"
        } else {
            ""
        };
        println!("  {:<10} nDCG@10 {ndcg:.4}{mark}", fusion.name());
    }
    println!(
        "auto's centre with {}, on {} sentence queries:",
        c.fusion.name(),
        c.queries
    );
    for (center, ndcg) in &c.ndcg_at_10_by_center {
        let mark = if *center == c.center {
            "  <- stored"
        } else {
            ""
        };
        println!("  centre {center:.1}  nDCG@10 {ndcg:.4}{mark}");
    }
    if c.passage_queries == 0 {
        return;
    }
    println!("and on {} passage queries:", c.passage_queries);
    for (weight, ndcg) in &c.ndcg_at_10_by_passage_weight {
        let mark = if Some(*weight) == c.passage_weight {
            "  <- stored"
        } else {
            ""
        };
        println!("  passage weight {weight:.1}  nDCG@10 {ndcg:.4}{mark}");
    }
    if c.passage_weight.is_none() {
        println!(
            "  too few passages to measure (fewer than {}): passages stay balanced",
            crate::calibration::calibrate::MIN_PASSAGE_QUERIES
        );
    }
}
