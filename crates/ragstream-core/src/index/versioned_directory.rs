//! A tantivy `Directory` that keeps every retained commit point readable.
//!
//! tantivy keeps one live `meta.json` and garbage-collects segment files the newest commit no
//! longer needs. To answer a query pinned to an older `index_version` with the exact BM25
//! statistics it had, this wrapper
//!
//! - copies `meta.json` to `meta.v<payload>.json` the first time a commit with that payload
//!   (the Lance version) is written; later rewrites for the same payload (merges) never
//!   replace the snapshot;
//! - defers every file deletion (lock files excepted): files are removed only by
//!   [`VersionedDirectory::retain`], once no retained snapshot references them;
//! - when pinned to a version, serves that snapshot as `meta.json`, so `Index::open` sees the
//!   index exactly as it was committed.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

const META: &str = "meta.json";

/// File name of the snapshot of the commit with payload `version`.
pub fn snapshot_name(version: u64) -> String {
    format!("meta.v{version}.json")
}

#[derive(Debug, Clone)]
pub struct VersionedDirectory {
    root: PathBuf,
    inner: MmapDirectory,
    pinned: Option<u64>,
}

impl VersionedDirectory {
    pub fn open(root: &Path) -> tantivy::Result<Self> {
        std::fs::create_dir_all(root)?;
        Ok(VersionedDirectory {
            root: root.to_path_buf(),
            inner: MmapDirectory::open(root)?,
            pinned: None,
        })
    }

    /// The same directory, reading `meta.json` from the snapshot of `version`.
    pub fn pinned(&self, version: u64) -> Self {
        VersionedDirectory {
            pinned: Some(version),
            ..self.clone()
        }
    }

    /// Versions that have a snapshot on disk, ascending.
    pub fn versions(&self) -> io::Result<Vec<u64>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.root)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            if let Some(v) = name
                .strip_prefix("meta.v")
                .and_then(|r| r.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
            {
                out.push(v);
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Drops snapshots of versions not in `keep` and deletes every file that neither a kept
    /// snapshot nor the live `meta.json` references — of `only`, when given, and otherwise
    /// of the whole directory. `referenced` lists the segment files of the kept snapshots
    /// and the live commit (computed by the caller, which can open them). Must run while no
    /// writer is adding documents; while a merge runs, `only` must leave out what it writes.
    pub fn retain(
        &self,
        keep: &BTreeSet<u64>,
        referenced: &BTreeSet<PathBuf>,
        only: Option<&BTreeSet<PathBuf>>,
    ) -> io::Result<()> {
        for v in self.versions()? {
            if !keep.contains(&v) {
                remove_if_exists(&self.root.join(snapshot_name(v)))?;
            }
        }
        for entry in std::fs::read_dir(&self.root)? {
            let entry = entry?;
            let name = PathBuf::from(entry.file_name());
            let s = name.to_string_lossy();
            let is_bookkeeping =
                s.starts_with("meta.") || s.starts_with('.') || s.ends_with(".lock");
            let deletable = only.is_none_or(|only| only.contains(&name));
            if !is_bookkeeping
                && deletable
                && !referenced.contains(&name)
                && entry.file_type()?.is_file()
            {
                remove_if_exists(&entry.path())?;
            }
        }
        Ok(())
    }
}

fn remove_if_exists(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

fn payload_of(meta: &[u8]) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(meta).ok()?;
    v.get("payload")?.as_str()?.parse().ok()
}

impl Directory for VersionedDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        // Lock files must go, or the next writer finds the index locked. Everything else
        // waits for `retain`.
        if path.to_string_lossy().ends_with(".lock") {
            self.inner.delete(path)
        } else {
            Ok(())
        }
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        match self.pinned {
            Some(v) if path == Path::new(META) => self.inner.exists(Path::new(&snapshot_name(v))),
            _ => self.inner.exists(path),
        }
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.inner.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        match self.pinned {
            Some(v) if path == Path::new(META) => {
                self.inner.atomic_read(Path::new(&snapshot_name(v)))
            }
            _ => self.inner.atomic_read(path),
        }
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        if self.pinned.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "a pinned keyword snapshot is read-only",
            ));
        }
        if path == Path::new(META) {
            if let Some(version) = payload_of(data) {
                let snapshot = PathBuf::from(snapshot_name(version));
                if !self.inner.exists(&snapshot).unwrap_or(false) {
                    self.inner.atomic_write(&snapshot, data)?;
                }
            }
        }
        self.inner.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.inner.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn retain_deletes_only_the_files_it_may_and_never_a_referenced_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = VersionedDirectory::open(tmp.path()).unwrap();
        for f in [
            "old.idx",
            "live.idx",
            "merging.idx",
            "meta.v1.json",
            "meta.v2.json",
        ] {
            std::fs::write(tmp.path().join(f), b"x").unwrap();
        }
        let keep = BTreeSet::from([2]);
        let referenced = BTreeSet::from([PathBuf::from("live.idx")]);

        // While a merge writes `merging.idx`, only the dropped snapshot's files may go.
        let only = BTreeSet::from([PathBuf::from("old.idx"), PathBuf::from("live.idx")]);
        dir.retain(&keep, &referenced, Some(&only)).unwrap();
        assert_eq!(
            names(tmp.path()),
            BTreeSet::from([
                "live.idx".into(),
                "merging.idx".into(),
                "meta.v2.json".into()
            ])
        );

        // With nothing in flight, whatever nothing references goes.
        dir.retain(&keep, &referenced, None).unwrap();
        assert_eq!(
            names(tmp.path()),
            BTreeSet::from(["live.idx".into(), "meta.v2.json".into()])
        );
    }
}
