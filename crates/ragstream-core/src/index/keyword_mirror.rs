//! The keyword index on an object store.
//!
//! tantivy never changes a segment file once written, and every commit of an index has a
//! snapshot (`meta.v<N>.json`, see `versioned_directory`) naming the files it reads. So the
//! writer publishes its local keyword directory by copying, after each commit, the files a
//! snapshot needs and then the snapshot itself ([`publish`]): a reader that finds
//! `meta.v<N>.json` in the store finds every file of version N. What the writer's retention
//! dropped locally is removed from the store too.
//!
//! A query replica reads through a local cache ([`KeywordCache`]): version N's files are
//! fetched the first time N is served (the snapshot last, so a half-fetched version is
//! never opened), and older versions' files are evicted when the cache outgrows its limit.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use object_store::ObjectStoreExt;

use super::keyword_store::snapshot_files;
use super::versioned_directory::snapshot_name;
use crate::model::IndexName;
use crate::store::index_storage::ObjectRoot;
use crate::store::StoreError;

/// Where an index's keyword files live on the object store, under its prefix.
const REMOTE_DIR: &str = "keyword";
/// Files read into memory whole; larger ones go up in parts of this size.
const PART_BYTES: usize = 16 << 20;

fn version_of(file: &str) -> Option<u64> {
    file.strip_prefix("meta.v")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// Copies to the store the snapshots of `local` (the writer's keyword directory) that it
/// lacks, each after the files it needs, and removes from the store the snapshots and files
/// the local directory no longer has. Returns the versions published.
pub async fn publish(
    root: &ObjectRoot,
    name: &IndexName,
    local: &Path,
) -> Result<Vec<u64>, StoreError> {
    let remote: BTreeMap<String, u64> = root
        .list_files(name, REMOTE_DIR)
        .await?
        .into_iter()
        .collect();
    let local_versions = local_snapshots(local)?;
    let mut uploaded: BTreeSet<String> = BTreeSet::new();
    let mut published = Vec::new();
    let mut needed: BTreeSet<String> = BTreeSet::new();
    for &version in &local_versions {
        let meta_name = snapshot_name(version);
        let meta = std::fs::read(local.join(&meta_name))?;
        let files = snapshot_files(&meta)?;
        let present: Vec<String> = files
            .into_iter()
            .filter(|f| local.join(f).is_file())
            .collect();
        needed.extend(present.iter().cloned());
        if remote.contains_key(&meta_name) {
            continue;
        }
        for file in &present {
            let size = std::fs::metadata(local.join(file))?.len();
            if remote.get(file) == Some(&size) || uploaded.contains(file) {
                continue;
            }
            upload(
                root,
                &root.index_path(name, &format!("{REMOTE_DIR}/{file}")),
                &local.join(file),
            )
            .await?;
            uploaded.insert(file.clone());
        }
        if !local.join(&meta_name).is_file() {
            // Dropped by retention while its files went up: not published.
            continue;
        }
        root.put(
            &root.index_path(name, &format!("{REMOTE_DIR}/{meta_name}")),
            meta,
        )
        .await?;
        published.push(version);
    }
    // Retention follows the writer's: snapshots first, so that no reader finds a snapshot
    // whose files are gone.
    let kept: BTreeSet<u64> = local_versions.iter().copied().collect();
    let newest_local = local_versions.last().copied().unwrap_or(0);
    let mut newer_remote = false;
    for file in remote.keys() {
        // Versions newer than this writer's are another writer's: never this one's to drop.
        if version_of(file).is_some_and(|v| v > newest_local) {
            newer_remote = true;
            continue;
        }
        if version_of(file).is_some_and(|v| !kept.contains(&v)) {
            root.delete(&root.index_path(name, &format!("{REMOTE_DIR}/{file}")))
                .await?;
        }
    }
    for file in remote.keys().filter(|_| !newer_remote) {
        if version_of(file).is_none() && !needed.contains(file) {
            root.delete(&root.index_path(name, &format!("{REMOTE_DIR}/{file}")))
                .await?;
        }
    }
    Ok(published)
}

/// A writer whose local keyword directory is empty (a new machine, a lost disk) or behind
/// what was published (another writer held the prefix meanwhile) starts from what was
/// published: every published version is fetched, and the newest becomes the live commit,
/// so that the keyword store goes on where it stopped rather than being rebuilt from Lance
/// with no older versions. A directory behind is set aside first.
pub async fn restore(
    root: &Arc<ObjectRoot>,
    name: &IndexName,
    local: &Path,
) -> Result<(), StoreError> {
    let cache = KeywordCache::new(root.clone(), name.clone(), local.to_path_buf(), u64::MAX);
    let published = cache.published().await?;
    let Some(&newest_published) = published.last() else {
        return Ok(());
    };
    // The live commit is written last: a restore cut short is done again.
    if local.join("meta.json").is_file() {
        let newest_local = local_snapshots(local)?.last().copied().unwrap_or(0);
        if newest_local >= newest_published {
            return Ok(());
        }
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let aside = local.with_file_name(format!("keyword.behind-{seconds}"));
        tracing::warn!(index = %name, newest_local, newest_published, moved_to = %aside.display(),
            "the local keyword index is behind the published one; it is set aside");
        std::fs::rename(local, &aside)?;
    }
    for &version in &published {
        match cache.ensure(version, BTreeSet::new).await {
            // Pruned by the writer's retention meanwhile.
            Err(StoreError::KeywordSnapshotMissing(_)) => {}
            other => other?,
        }
    }
    let Some(newest) = local_snapshots(local)?.last().copied() else {
        return Ok(());
    };
    let meta = std::fs::read(local.join(snapshot_name(newest)))?;
    write_whole(local, "meta.json", &meta)?;
    tracing::info!(index = %name, versions = published.len(), newest,
        "keyword index restored from the object store");
    Ok(())
}

/// Versions with a snapshot in `dir`, ascending.
fn local_snapshots(dir: &Path) -> Result<Vec<u64>, StoreError> {
    let mut versions = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                if let Some(v) = version_of(&entry?.file_name().to_string_lossy()) {
                    versions.push(v);
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    versions.sort_unstable();
    Ok(versions)
}

async fn upload(
    root: &ObjectRoot,
    path: &object_store::path::Path,
    file: &Path,
) -> Result<(), StoreError> {
    let size = std::fs::metadata(file)?.len() as usize;
    if size <= PART_BYTES {
        return root.put(path, std::fs::read(file)?).await;
    }
    let failed = |e: object_store::Error| StoreError::ObjectStore(format!("writing {path}: {e}"));
    let upload = root
        .store()
        .inner
        .put_multipart(path)
        .await
        .map_err(failed)?;
    let mut parts = object_store::WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
    let mut reader = std::fs::File::open(file)?;
    let mut buffer = vec![0u8; PART_BYTES];
    loop {
        let n = reader.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        parts.wait_for_capacity(4).await.map_err(failed)?;
        parts.write(&buffer[..n]);
    }
    parts.finish().await.map_err(failed)?;
    Ok(())
}

/// A query replica's local copy of keyword versions it serves.
pub struct KeywordCache {
    root: Arc<ObjectRoot>,
    name: IndexName,
    dir: PathBuf,
    max_bytes: u64,
    /// One fetch or eviction at a time.
    busy: tokio::sync::Mutex<()>,
}

impl KeywordCache {
    pub fn new(root: Arc<ObjectRoot>, name: IndexName, dir: PathBuf, max_bytes: u64) -> Self {
        KeywordCache {
            root,
            name,
            dir,
            max_bytes,
            busy: tokio::sync::Mutex::new(()),
        }
    }

    /// The directory tantivy reads.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Versions whose snapshot the writer has published, ascending.
    pub async fn published(&self) -> Result<Vec<u64>, StoreError> {
        let mut versions: Vec<u64> = self
            .root
            .list_files(&self.name, REMOTE_DIR)
            .await?
            .into_iter()
            .filter_map(|(f, _)| version_of(&f))
            .collect();
        versions.sort_unstable();
        Ok(versions)
    }

    /// Makes version `version` readable from [`KeywordCache::dir`], fetching what is
    /// missing; then evicts older versions while the cache is over its limit, never one
    /// `in_use` gives (read once the fetch is done) nor the newest. A version the store has
    /// no snapshot of, or dropped while it was fetched, is
    /// [`StoreError::KeywordSnapshotMissing`].
    pub async fn ensure(
        &self,
        version: u64,
        in_use: impl Fn() -> BTreeSet<u64>,
    ) -> Result<(), StoreError> {
        let meta_name = snapshot_name(version);
        if self.dir.join(&meta_name).is_file() {
            return Ok(());
        }
        let _busy = self.busy.lock().await;
        if self.dir.join(&meta_name).is_file() {
            return Ok(());
        }
        let remote = |file: &str| {
            self.root
                .index_path(&self.name, &format!("{REMOTE_DIR}/{file}"))
        };
        let Some(meta) = self.root.read(&remote(&meta_name)).await? else {
            return Err(StoreError::KeywordSnapshotMissing(version));
        };
        std::fs::create_dir_all(&self.dir)?;
        for file in snapshot_files(&meta)? {
            if !self.dir.join(&file).is_file() {
                self.download(&remote(&file), &file).await?;
            }
        }
        // The writer's retention removes a snapshot before its files: one still there
        // after the files were fetched had every file it needs (and `refresh` opens it
        // before showing it).
        if self.root.read(&remote(&meta_name)).await?.is_none() {
            return Err(StoreError::KeywordSnapshotMissing(version));
        }
        write_whole(&self.dir, &meta_name, &meta)?;
        let mut keep = in_use();
        keep.insert(version);
        self.evict(&keep)?;
        Ok(())
    }

    /// Fetches one file into the cache (under a temporary name, renamed when whole). A file
    /// a snapshot lists that the store does not have is skipped: tantivy lists candidates.
    async fn download(
        &self,
        path: &object_store::path::Path,
        file: &str,
    ) -> Result<(), StoreError> {
        let failed =
            |e: object_store::Error| StoreError::ObjectStore(format!("reading {path}: {e}"));
        let got = match self.root.store().inner.get(path).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => return Ok(()),
            Err(e) => return Err(failed(e)),
        };
        let partial = self.dir.join(format!("{file}.part"));
        let mut out = std::fs::File::create(&partial)?;
        let mut stream = got.into_stream();
        while let Some(bytes) = stream.next().await {
            out.write_all(&bytes.map_err(failed)?)?;
        }
        out.sync_all()?;
        std::fs::rename(&partial, self.dir.join(file))?;
        Ok(())
    }

    /// While the cache holds more than its limit, drops the oldest snapshot not in `keep`
    /// (nor the newest), then every file no remaining snapshot needs.
    fn evict(&self, keep: &BTreeSet<u64>) -> Result<(), StoreError> {
        loop {
            if dir_bytes(&self.dir)? <= self.max_bytes {
                return Ok(());
            }
            let versions = local_snapshots(&self.dir)?;
            let newest = versions.last().copied();
            let Some(oldest) = versions
                .iter()
                .copied()
                .find(|v| !keep.contains(v) && Some(*v) != newest)
            else {
                return Ok(());
            };
            std::fs::remove_file(self.dir.join(snapshot_name(oldest)))?;
            let mut needed = BTreeSet::new();
            for v in local_snapshots(&self.dir)? {
                needed.extend(snapshot_files(&std::fs::read(
                    self.dir.join(snapshot_name(v)),
                )?)?);
            }
            for entry in std::fs::read_dir(&self.dir)? {
                let entry = entry?;
                let file = entry.file_name().to_string_lossy().into_owned();
                let bookkeeping = file.starts_with("meta.") || file.starts_with('.');
                if !bookkeeping && !needed.contains(&file) && entry.file_type()?.is_file() {
                    std::fs::remove_file(entry.path())?;
                }
            }
        }
    }
}

/// Bytes of the regular files directly in `dir`.
fn dir_bytes(dir: &Path) -> Result<u64, StoreError> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

/// Writes `dir/name` under a temporary name, then renames it.
fn write_whole(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
    let partial = dir.join(format!("{name}.part"));
    let mut out = std::fs::File::create(&partial)?;
    out.write_all(bytes)?;
    out.sync_all()?;
    std::fs::rename(&partial, dir.join(name))?;
    Ok(())
}
