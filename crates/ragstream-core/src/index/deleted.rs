//! Deleted indexes. Deleting moves an index's directory out of `indexes/` at once (a rename:
//! nothing lists or opens it from then on) into `deleted/`, whose directories maintenance
//! removes. A small record stays behind: the Kafka checkpoint the index had reached. Events
//! before it were in the deleted index; if the pipeline reads them again (a restart resumes
//! at the oldest checkpoint of any index), they are skipped instead of bringing the deleted
//! documents back. Events after it make a new index of that name.
//!
//! On an object store, the index's `index.json` is removed at once and its objects right
//! after (`Engine::delete_index`); its local files take the path above.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{IndexStorage, StoredCheckpoint};
use crate::model::IndexName;
use crate::store::StoreError;

/// What stays of a deleted index.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    deleted_at: String,
    checkpoint: StoredCheckpoint,
}

fn deleted_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("deleted")
}

fn record_path(data_dir: &Path, name: &IndexName) -> PathBuf {
    deleted_dir(data_dir).join(format!("{name}.json"))
}

/// Moves index `name`'s directory aside and records `checkpoint` for it. The record is
/// written first: a crash between the two leaves the index listed, and deleting it again
/// finishes the job.
pub fn retire(
    storage: &IndexStorage,
    name: &IndexName,
    checkpoint: StoredCheckpoint,
) -> Result<(), StoreError> {
    let data_dir = storage.data_dir();
    let graveyard = deleted_dir(data_dir);
    std::fs::create_dir_all(&graveyard)?;
    let deleted_at = crate::model::now_timestamp();
    let record = serde_json::to_vec_pretty(&Record {
        deleted_at: deleted_at.clone(),
        checkpoint,
    })
    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let path = record_path(data_dir, name);
    let partial = path.with_extension("json.partial");
    // Durable before the index moves: a move that outlives a power loss must find it.
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&partial)?;
        file.write_all(&record)?;
        file.sync_all()?;
    }
    std::fs::rename(&partial, &path)?;
    std::fs::File::open(&graveyard)?.sync_all()?;
    let unique = deleted_at.replace([':', '.'], "-");
    match std::fs::rename(
        storage.local_dir(name),
        graveyard.join(format!("{name}.{unique}")),
    ) {
        // On an object store the index may have no local files yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && storage.object().is_some() => {}
        moved => moved?,
    }
    Ok(())
}

/// The checkpoint a deleted index of this name had reached, if one was deleted.
pub fn checkpoint(
    data_dir: &Path,
    name: &IndexName,
) -> Result<Option<StoredCheckpoint>, StoreError> {
    let path = record_path(data_dir, name);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice::<Record>(&bytes)
            .map(|r| Some(r.checkpoint))
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Removes the directories of deleted indexes (the records stay); returns how many.
pub fn purge(data_dir: &Path) -> Result<usize, StoreError> {
    let mut removed = 0;
    let entries = match std::fs::read_dir(deleted_dir(data_dir)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path)?;
            removed += 1;
        }
    }
    Ok(removed)
}
