//! `ragstream-bench eval …`: retrieval quality (docs/evaluation.md).

use std::path::PathBuf;

use clap::Subcommand;

use ragstream::cli::index::print_calibration;
use ragstream::cli::{failure, index_name, load_embedder, Failure, ReportArgs};
use ragstream::config::Config;
use ragstream::engine::Engine;
use ragstream::retrieval::SearchMethod;

#[derive(Subcommand)]
pub enum EvalCommand {
    /// Index BEIR datasets and report nDCG@10, Recall@100 and latency per method, in one
    /// table.
    Beir {
        /// A BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv); repeat for more.
        #[arg(long, required = true)]
        data: Vec<PathBuf>,
        /// Index name (with several datasets, `<index>-1`, `<index>-2`, …).
        #[arg(long, default_value = "beir-eval")]
        index: String,
        /// Also score each dataset's long-query variant: its cited documents as queries. It is
        /// built from the test split (`long`) and, without --calibrate, also from every
        /// judged split (`long-all`: qrels/test.tsv and qrels/train.tsv).
        #[arg(long)]
        long_queries: bool,
        /// First calibrate `auto` on queries the index cuts from its own chunks (no
        /// judgments seen) and store the centre; the test queries are then scored with it.
        #[arg(long, conflicts_with = "calibrate")]
        self_calibrate: bool,
        #[command(flatten)]
        output: ReportArgs,
        /// First calibrate `auto` on the training queries (qrels/train.tsv) and store the
        /// centre in the index; the test queries are then scored with it. With
        /// --long-queries, the passage weight is measured on the training split's long
        /// queries (without documents that are test long queries too).
        #[arg(long)]
        calibrate: bool,
    },
}

/// Runs one `eval` subcommand.
pub async fn run(config: Config, command: EvalCommand) -> Result<(), Failure> {
    match command {
        EvalCommand::Beir {
            data,
            index,
            long_queries,
            self_calibrate,
            output,
            calibrate,
        } => {
            use crate::eval::beir::Calibrate;
            let calibrate = match (calibrate, self_calibrate) {
                (true, _) => Calibrate::Judged,
                (_, true) => Calibrate::Synthetic,
                _ => Calibrate::No,
            };
            let engine = Engine::new(config.clone(), load_embedder(&config)?);
            let methods = eval_methods();
            let mut reports = Vec::new();
            for (n, dir) in data.iter().enumerate() {
                let name = if data.len() == 1 {
                    index_name(&index)?
                } else {
                    index_name(&format!("{index}-{}", n + 1))?
                };
                let scored = crate::eval::beir::evaluate(
                    &engine,
                    dir,
                    &name,
                    &methods,
                    calibrate,
                    long_queries,
                    true,
                )
                .await
                .map_err(failure)?;
                if let Some(c) = scored
                    .first()
                    .and_then(|r| r.calibration.as_ref())
                    .filter(|_| output.table())
                {
                    print_calibration(c);
                }
                if let Some(r) = scored.first().filter(|_| output.table()) {
                    println!(
                        "{}: auto ran from centre {}, passages at {}; the profiles fused with {}",
                        r.dataset,
                        r.auto_center,
                        r.auto_passage_weight,
                        r.fusion.name()
                    );
                }
                reports.extend(scored);
            }
            if output.table() {
                print_eval(&reports);
            }
            output.finish(&reports)?;
        }
    }
    Ok(())
}

/// What `eval beir` scores: each method as contract 000 runs it, each contract 002 profile,
/// and the hybrid profiles with each other way of fusing the branches.
fn eval_methods() -> Vec<crate::eval::beir::EvalMethod> {
    use crate::eval::beir::EvalMethod;
    use ragstream::retrieval::fusion::BranchFusion;
    use ragstream::retrieval::profiles::Profile;
    let mut methods = vec![
        EvalMethod::Method(SearchMethod::Semantic),
        EvalMethod::Method(SearchMethod::Keyword),
        EvalMethod::Method(SearchMethod::Hybrid),
        EvalMethod::Profile(Profile::Exact),
        EvalMethod::Profile(Profile::Balanced),
        EvalMethod::Profile(Profile::Semantic),
        EvalMethod::Profile(Profile::Auto),
    ];
    for profile in [Profile::Balanced, Profile::Auto] {
        for fusion in &BranchFusion::ALL[1..] {
            methods.push(EvalMethod::Fused(profile, *fusion));
        }
    }
    methods
}

/// One table for every dataset and query set, then nDCG@10 by query length.
fn print_eval(reports: &[crate::eval::beir::EvalReport]) {
    for r in reports.iter().filter(|r| r.queries == "test") {
        println!(
            "{} · index {} · {} documents · {} chunks · index_version {}",
            r.dataset, r.index, r.documents, r.chunks, r.index_version
        );
        if let Some(rate) = r.ingest_chunks_per_second {
            println!(
                "ingest: {} chunks in {:.1} s ({:.1} chunks/s)",
                r.chunks_written, r.ingest_seconds, rate
            );
        }
    }
    let dataset = |r: &crate::eval::beir::EvalReport| {
        let name = std::path::Path::new(&r.dataset)
            .file_name()
            .map_or(r.dataset.clone(), |n| n.to_string_lossy().into_owned());
        format!("{name} ({}, {} q)", r.queries, r.methods[0].queries)
    };
    println!(
        "{:<28} {:<26} {:>8} {:>11} {:>9} {:>9}",
        "dataset", "method", "nDCG@10", "Recall@100", "p50 ms", "p99 ms"
    );
    for r in reports {
        for m in &r.methods {
            println!(
                "{:<28} {:<26} {:>8.4} {:>11.4} {:>9.1} {:>9.1}",
                dataset(r),
                m.method,
                m.ndcg_at_10,
                m.recall_at_100,
                m.latency_p50_ms,
                m.latency_p99_ms
            );
        }
    }
    let gaps: Vec<_> = reports
        .iter()
        .filter_map(|r| r.auto_against_best.as_ref().map(|g| (r, g)))
        .collect();
    if !gaps.is_empty() {
        println!(
            "auto against the best fixed profile (nDCG@10, paired by query, ± one standard error):"
        );
        for (r, g) in gaps {
            println!(
                "{:<28} {:<26} {:+.4} ± {:.4}",
                dataset(r),
                g.best_profile,
                g.auto_minus_best.mean,
                g.auto_minus_best.standard_error
            );
        }
    }
    println!("nDCG@10 by query length (words):");
    for r in reports {
        for m in &r.methods {
            let buckets: Vec<String> = m
                .by_query_length
                .iter()
                .map(|b| format!("{} {:.4} ({} q)", b.words, b.ndcg_at_10, b.queries))
                .collect();
            println!("{:<28} {:<26} {}", dataset(r), m.method, buckets.join("  "));
        }
    }
}
