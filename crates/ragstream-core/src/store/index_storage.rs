//! Where indexes live: under a local data directory (the default), or under a prefix of an
//! object store (`storage.uri = "s3://bucket/prefix"`).
//!
//! On an object store, each index keeps there what every daemon must see: its Lance
//! datasets, its `index.json` and the published files of its keyword index
//! (`keyword/`, see `index::keyword_mirror`). What is per-process stays in the local data
//! directory: the keyword index's working copy or cache, the embedding cache, the resident
//! vectors' scratch files.
//!
//! Lance opens the datasets by URI with [`IndexStorage::storage_options`]; the other files
//! go through one [`ObjectStore`] built from the same options, so both reach the store with
//! the same endpoint and credentials.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::TryStreamExt;
use lance_io::object_store::{ObjectStore, ObjectStoreParams, ObjectStoreRegistry};
use object_store::path::Path as ObjectPath;
use object_store::ObjectStoreExt;

use super::StoreError;
use crate::model::IndexName;

/// The marker a ragstream prefix holds, written by the first daemon that uses it.
const MARKER: &str = "ragstream.json";
const MARKER_BODY: &[u8] = b"{\"format\": 1}\n";

/// URI schemes this build reaches (Lance's `aws`, `gcp` and `azure` features, and local
/// files).
const SCHEMES: &[&str] = &["s3", "gs", "az", "file"];

/// Why `storage.uri` cannot name a store, without touching it.
pub fn check_uri(uri: &str) -> Result<(), String> {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return Err("must be a URI such as s3://bucket/prefix or file:///path".into());
    };
    if !SCHEMES.contains(&scheme) {
        return Err(format!(
            "scheme {scheme}:// is not supported by this build; use one of {}",
            SCHEMES
                .iter()
                .map(|s| format!("{s}://"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if rest.trim_matches('/').is_empty() {
        return Err("names no bucket or path".into());
    }
    Ok(())
}

/// Where Lance finds one dataset: its URI, and the object store's options (`None` for a
/// local path).
#[derive(Debug, Clone)]
pub struct DatasetLocation {
    pub uri: String,
    pub storage_options: Option<HashMap<String, String>>,
}

impl DatasetLocation {
    /// A local dataset (tests, tools).
    pub fn local(path: &Path) -> Self {
        DatasetLocation {
            uri: path.to_string_lossy().into_owned(),
            storage_options: None,
        }
    }

    /// On an object store, where other processes may commit to the dataset too: commits
    /// there are strict (`store::strict_commit`).
    pub fn is_shared(&self) -> bool {
        self.storage_options.is_some()
    }

    /// Opens the dataset with the store's options.
    pub fn builder(&self) -> lance::dataset::builder::DatasetBuilder {
        let builder = lance::dataset::builder::DatasetBuilder::from_uri(&self.uri);
        match &self.storage_options {
            Some(options) => builder.with_storage_options(options.clone()),
            None => builder,
        }
    }

    /// The store's options for `WriteParams::store_params`.
    pub fn store_params(&self) -> Option<ObjectStoreParams> {
        self.storage_options
            .as_ref()
            .map(|options| ObjectStoreParams {
                storage_options_accessor: Some(Arc::new(
                    lance_io::object_store::StorageOptionsAccessor::with_static_options(
                        options.clone(),
                    ),
                )),
                ..Default::default()
            })
    }
}

/// Names of the indexes under a local data directory, sorted.
pub fn list_local_indexes(data_dir: &Path) -> Vec<IndexName> {
    let mut names: Vec<IndexName> = std::fs::read_dir(data_dir.join("indexes"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("index.json").is_file())
        .filter_map(|e| IndexName::parse(&e.file_name().to_string_lossy()).ok())
        .collect();
    names.sort();
    names
}

/// Where indexes live.
#[derive(Clone)]
pub enum IndexStorage {
    /// `<data_dir>/indexes/<name>/`.
    Local { data_dir: PathBuf },
    /// `<uri>/indexes/<name>/`, with per-process files under `data_dir`.
    Object(Arc<ObjectRoot>),
}

/// An object-store prefix, opened.
pub struct ObjectRoot {
    uri: String,
    options: HashMap<String, String>,
    store: Arc<ObjectStore>,
    base: ObjectPath,
    data_dir: PathBuf,
}

impl IndexStorage {
    /// Opens what `storage` names. On an object store, checks that the prefix can be
    /// written and read (a probe object, written, read back and removed) and that it is a
    /// ragstream prefix (or empty), so that a wrong endpoint, bad credentials or another
    /// system's data stop start-up with the key to fix, before anything is written.
    pub async fn open(
        data_dir: &Path,
        uri: Option<&str>,
        options: &std::collections::BTreeMap<String, String>,
        registry: Arc<ObjectStoreRegistry>,
    ) -> Result<IndexStorage, StoreError> {
        let Some(uri) = uri else {
            return Ok(IndexStorage::Local {
                data_dir: data_dir.to_path_buf(),
            });
        };
        let uri = uri.trim_end_matches('/').to_string();
        let unusable = |reason: String| StoreError::Storage {
            uri: uri.clone(),
            reason,
        };
        check_uri(&uri).map_err(unusable)?;
        let options: HashMap<String, String> = options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let params = DatasetLocation {
            uri: uri.clone(),
            storage_options: Some(options.clone()),
        }
        .store_params()
        .unwrap_or_default();
        let (store, base) = ObjectStore::from_uri_and_params(registry, &uri, &params)
            .await
            .map_err(|e| unusable(format!("cannot open it: {e}")))?;
        let root = ObjectRoot {
            uri,
            options,
            store,
            base,
            data_dir: data_dir.to_path_buf(),
        };
        root.check().await?;
        Ok(IndexStorage::Object(Arc::new(root)))
    }

    /// The local data directory (the whole store, or its per-process part).
    pub fn data_dir(&self) -> &Path {
        match self {
            IndexStorage::Local { data_dir } => data_dir,
            IndexStorage::Object(root) => &root.data_dir,
        }
    }

    /// Where index `name` keeps its per-process files (and, locally, everything).
    pub fn local_dir(&self, name: &IndexName) -> PathBuf {
        self.data_dir().join("indexes").join(name.as_str())
    }

    /// The object store, when indexes live on one.
    pub fn object(&self) -> Option<&Arc<ObjectRoot>> {
        match self {
            IndexStorage::Local { .. } => None,
            IndexStorage::Object(root) => Some(root),
        }
    }

    /// Where Lance finds dataset `dataset` (`chunks.lance`, …) of index `name`.
    pub fn dataset(&self, name: &IndexName, dataset: &str) -> DatasetLocation {
        match self {
            IndexStorage::Local { .. } => {
                DatasetLocation::local(&self.local_dir(name).join(dataset))
            }
            IndexStorage::Object(root) => DatasetLocation {
                uri: format!("{}/indexes/{}/{dataset}", root.uri, name.as_str()),
                storage_options: Some(root.options.clone()),
            },
        }
    }

    /// What the store says of itself in logs: the URI or the directory.
    pub fn describe(&self) -> String {
        match self {
            IndexStorage::Local { data_dir } => data_dir.display().to_string(),
            IndexStorage::Object(root) => root.uri.clone(),
        }
    }

    /// The bytes of `index.json` of index `name`, or `None` when it has none.
    pub async fn read_info(&self, name: &IndexName) -> Result<Option<Vec<u8>>, StoreError> {
        match self {
            IndexStorage::Local { .. } => {
                match std::fs::read(self.local_dir(name).join("index.json")) {
                    Ok(bytes) => Ok(Some(bytes)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e.into()),
                }
            }
            IndexStorage::Object(root) => root.read(&root.index_path(name, "index.json")).await,
        }
    }

    /// Writes `index.json` of index `name` whole: a rename locally, one PUT on an object
    /// store (both atomic: a reader sees the old file or the new one).
    pub async fn write_info(&self, name: &IndexName, bytes: &[u8]) -> Result<(), StoreError> {
        match self {
            IndexStorage::Local { .. } => {
                let dir = self.local_dir(name);
                std::fs::create_dir_all(&dir)?;
                let tmp = dir.join("index.json.tmp");
                std::fs::write(&tmp, bytes)?;
                std::fs::rename(&tmp, dir.join("index.json"))?;
                Ok(())
            }
            IndexStorage::Object(root) => {
                root.put(&root.index_path(name, "index.json"), bytes.to_vec())
                    .await
            }
        }
    }

    /// Removes `index.json` of index `name` from the object store: the index is no longer
    /// listed or opened (its data goes with [`ObjectRoot::remove_index`]). Locally the
    /// directory is moved instead (`index::deleted`).
    pub async fn forget(&self, name: &IndexName) -> Result<(), StoreError> {
        match self {
            IndexStorage::Local { .. } => Ok(()),
            IndexStorage::Object(root) => root.delete(&root.index_path(name, "index.json")).await,
        }
    }

    /// Names of the indexes, sorted.
    pub async fn list_indexes(&self) -> Result<Vec<IndexName>, StoreError> {
        let mut names: Vec<IndexName> = match self {
            IndexStorage::Local { data_dir } => list_local_indexes(data_dir),
            IndexStorage::Object(root) => {
                let indexes = root.base.clone().join("indexes");
                let listed = root
                    .store
                    .inner
                    .list_with_delimiter(Some(&indexes))
                    .await
                    .map_err(|e| StoreError::ObjectStore(format!("listing {indexes}: {e}")))?;
                let mut names = Vec::new();
                for prefix in listed.common_prefixes {
                    let Some(name) = prefix.filename().and_then(|n| IndexName::parse(n).ok())
                    else {
                        continue;
                    };
                    if root
                        .read(&prefix.clone().join("index.json"))
                        .await?
                        .is_some()
                    {
                        names.push(name);
                    }
                }
                names
            }
        };
        names.sort();
        Ok(names)
    }
}

impl ObjectRoot {
    /// Lance's handle on the store (the same endpoint and credentials as the datasets).
    pub fn store(&self) -> &Arc<ObjectStore> {
        &self.store
    }

    /// The prefix's URI (`s3://bucket/prefix`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// `<prefix>/<file>`.
    pub fn path(&self, file: &str) -> ObjectPath {
        self.base.clone().join(file)
    }

    /// `<prefix>/indexes/<name>/<file>`.
    pub fn index_path(&self, name: &IndexName, file: &str) -> ObjectPath {
        let mut path = self.base.clone().join("indexes").join(name.as_str());
        for part in file.split('/') {
            path = path.join(part);
        }
        path
    }

    /// The whole object at `path`, or `None` when there is none.
    pub async fn read(&self, path: &ObjectPath) -> Result<Option<Vec<u8>>, StoreError> {
        match self.store.inner.get(path).await {
            Ok(got) => Ok(Some(
                got.bytes()
                    .await
                    .map_err(|e| StoreError::ObjectStore(format!("reading {path}: {e}")))?
                    .to_vec(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(StoreError::ObjectStore(format!("reading {path}: {e}"))),
        }
    }

    /// Writes `bytes` at `path` whole.
    pub async fn put(&self, path: &ObjectPath, bytes: Vec<u8>) -> Result<(), StoreError> {
        self.store
            .inner
            .put(path, bytes.into())
            .await
            .map_err(|e| StoreError::ObjectStore(format!("writing {path}: {e}")))?;
        Ok(())
    }

    /// Removes the object at `path` (gone already is fine).
    pub async fn delete(&self, path: &ObjectPath) -> Result<(), StoreError> {
        match self.store.inner.delete(path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError::ObjectStore(format!("deleting {path}: {e}"))),
        }
    }

    /// File names directly under `dir` (`<prefix>/indexes/<name>/<dir>`), with their sizes.
    pub async fn list_files(
        &self,
        name: &IndexName,
        dir: &str,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let prefix = self.index_path(name, dir);
        let listed = self
            .store
            .inner
            .list_with_delimiter(Some(&prefix))
            .await
            .map_err(|e| StoreError::ObjectStore(format!("listing {prefix}: {e}")))?;
        Ok(listed
            .objects
            .into_iter()
            .filter_map(|o| Some((o.location.filename()?.to_string(), o.size)))
            .collect())
    }

    /// Removes everything index `name` holds on the object store.
    pub async fn remove_index(&self, name: &IndexName) -> Result<(), StoreError> {
        let prefix = self.base.clone().join("indexes").join(name.as_str());
        let paths: Vec<ObjectPath> = self
            .store
            .inner
            .list(Some(&prefix))
            .map_ok(|o| o.location)
            .try_collect()
            .await
            .map_err(|e| StoreError::ObjectStore(format!("listing {prefix}: {e}")))?;
        for path in paths {
            self.delete(&path).await?;
        }
        Ok(())
    }

    /// The start-up check of [`IndexStorage::open`].
    async fn check(&self) -> Result<(), StoreError> {
        let unusable = |reason: String| StoreError::Storage {
            uri: self.uri.clone(),
            reason,
        };
        let marker = self.base.clone().join(MARKER);
        match self.store.inner.get(&marker).await {
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) => {
                // A new prefix, or one holding something else: refuse the second.
                let listed = self
                    .store
                    .inner
                    .list_with_delimiter(Some(&self.base))
                    .await
                    .map_err(|e| unusable(format!("cannot list it: {e}")))?;
                // Another daemon starting on the same new prefix writes the marker, its
                // probes, and soon `indexes/`: those are no reason to refuse.
                let ours = |p: &ObjectPath| {
                    p.filename()
                        .is_some_and(|f| f == MARKER || f.starts_with(".probe-"))
                };
                let has_indexes = listed
                    .common_prefixes
                    .iter()
                    .any(|p| p.filename() == Some("indexes"));
                let mut found: Vec<String> = listed
                    .objects
                    .iter()
                    .filter(|o| !ours(&o.location))
                    .map(|o| o.location.to_string())
                    .chain(
                        listed
                            .common_prefixes
                            .iter()
                            .filter(|p| p.filename() != Some("indexes"))
                            .map(|p| format!("{p}/")),
                    )
                    .take(3)
                    .collect();
                if has_indexes && self.read(&marker).await?.is_none() {
                    found.push(format!("{}/", self.base.clone().join("indexes")));
                }
                if !found.is_empty() {
                    return Err(unusable(format!(
                        "the prefix holds data that is not ragstream's ({}) and no {MARKER}; give ragstream a prefix of its own",
                        found.join(", ")
                    )));
                }
                self.store
                    .inner
                    .put(&marker, MARKER_BODY.to_vec().into())
                    .await
                    .map_err(|e| unusable(format!("cannot write to it: {e}")))?;
            }
            Err(e) => return Err(unusable(format!("cannot read from it: {e}"))),
        }
        // Written, read back and removed: credentials that may read but not write, or a
        // store that accepts writes it does not keep, stop start-up here.
        let probe = self
            .base
            .clone()
            .join(format!(".probe-{}", uuid::Uuid::new_v4().simple()).as_str());
        let body = probe.to_string().into_bytes();
        self.store
            .inner
            .put(&probe, body.clone().into())
            .await
            .map_err(|e| unusable(format!("cannot write to it: {e}")))?;
        let back = self
            .read(&probe)
            .await
            .map_err(|e| unusable(format!("cannot read back what was written: {e}")))?;
        self.delete(&probe)
            .await
            .map_err(|e| unusable(e.to_string()))?;
        if back.as_deref() != Some(body.as_slice()) {
            return Err(unusable(
                "an object written could not be read back the same".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_checked_before_anything_is_reached() {
        assert!(check_uri("s3://bucket/prefix").is_ok());
        assert!(check_uri("file:///tmp/x").is_ok());
        assert!(check_uri("bucket/prefix").unwrap_err().contains("URI"));
        assert!(check_uri("gs://b/p").is_ok());
        assert!(check_uri("az://container/p").is_ok());
        assert!(check_uri("hdfs://b/p")
            .unwrap_err()
            .contains("not supported"));
        assert!(check_uri("s3://").unwrap_err().contains("no bucket"));
    }

    #[tokio::test]
    async fn a_file_uri_stores_index_files_and_lists_indexes() {
        let tmp = tempfile::tempdir().unwrap();
        let uri = format!("file://{}/store", tmp.path().display());
        let local = tmp.path().join("local");
        let no_options = Default::default();
        let open = || IndexStorage::open(&local, Some(&uri), &no_options, Arc::default());
        std::fs::create_dir_all(tmp.path().join("store")).unwrap();
        let storage = open().await.unwrap();
        let name = IndexName::parse("docs").unwrap();
        assert_eq!(storage.read_info(&name).await.unwrap(), None);
        assert!(storage.list_indexes().await.unwrap().is_empty());
        storage.write_info(&name, b"{}").await.unwrap();
        assert_eq!(
            storage.read_info(&name).await.unwrap().as_deref(),
            Some(&b"{}"[..])
        );
        assert_eq!(storage.list_indexes().await.unwrap(), vec![name.clone()]);
        assert!(storage
            .dataset(&name, "chunks.lance")
            .uri
            .ends_with("/store/indexes/docs/chunks.lance"));
        storage.forget(&name).await.unwrap();
        assert!(storage.list_indexes().await.unwrap().is_empty());
        // Opened again: the marker is there, and no probe object was left behind.
        let again = open().await.unwrap();
        assert!(again.list_indexes().await.unwrap().is_empty());
        let left: Vec<_> = std::fs::read_dir(tmp.path().join("store"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".probe"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[tokio::test]
    async fn a_prefix_holding_other_data_is_refused_at_open() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("someone-elses.parquet"), b"x").unwrap();
        let uri = format!("file://{}", tmp.path().display());
        let local = tmp.path().join("local");
        let opened =
            IndexStorage::open(&local, Some(&uri), &Default::default(), Arc::default()).await;
        let Err(e) = opened else {
            panic!("a foreign prefix was accepted")
        };
        let message = e.to_string();
        assert!(message.contains("storage.uri"), "{message}");
        assert!(message.contains("someone-elses.parquet"), "{message}");
    }
}
