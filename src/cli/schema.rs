//! `ragstream schema`: the JSON Schemas of what travels on the bus (`http::json_schema`).

use std::path::PathBuf;

use clap::Args;

use super::{failure, usage, Failure};
use crate::http::json_schema::{schema, PUBLISHED};

#[derive(Args)]
pub struct SchemaArgs {
    /// The schema to print (for example document-event, query-002, reply-002, dead-letter);
    /// without one, the list of names.
    name: Option<String>,
    /// Write every schema into this directory as NAME.json instead.
    #[arg(long, conflicts_with = "name")]
    out: Option<PathBuf>,
}

pub async fn run(args: SchemaArgs) -> Result<(), Failure> {
    if let Some(dir) = args.out {
        std::fs::create_dir_all(&dir).map_err(|e| failure(format!("{}: {e}", dir.display())))?;
        for p in PUBLISHED {
            let path = dir.join(format!("{}.json", p.name));
            std::fs::write(&path, pretty(p.name))
                .map_err(|e| failure(format!("{}: {e}", path.display())))?;
        }
        return Ok(());
    }
    match args.name {
        None => {
            for p in PUBLISHED {
                println!("{:<15} {}", p.name, p.description);
            }
            Ok(())
        }
        Some(name) if schema(&name).is_some() => {
            print!("{}", pretty(&name));
            Ok(())
        }
        Some(name) => Err(usage(format!(
            "no schema is called {name:?}; `ragstream schema` lists them"
        ))),
    }
}

/// A published schema as the files in `docs/schemas/` hold it.
pub fn pretty(name: &str) -> String {
    let value = schema(name).expect("a published name");
    format!("{}\n", serde_json::to_string_pretty(&value).expect("json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copies_in_docs_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schemas");
        for p in PUBLISHED {
            let path = dir.join(format!("{}.json", p.name));
            let kept = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                kept == pretty(p.name),
                "{} differs from the schema: run `ragstream schema --out docs/schemas`",
                path.display()
            );
        }
        let files = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(
            files,
            PUBLISHED.len(),
            "docs/schemas holds a schema no longer published"
        );
    }
}
