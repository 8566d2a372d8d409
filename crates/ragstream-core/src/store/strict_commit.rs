//! A Lance commit that lands only as the version right after the one its change was read
//! at. Lance's own commit rebases a change over whatever was committed meanwhile when the
//! two look compatible; for two processes writing one index on an object store that would
//! let a writer that lost the index commit on top of its new owner's work (rows twice, a
//! checkpoint going back). A strict commit fails instead ([`StoreError::ChangedElsewhere`]),
//! and the writer reads the newest version again before deciding anything.
//!
//! The manifest of version N+1 is written with the store's conditional create (as Lance
//! does), so of two writers that read version N only one lands; the handler below refuses
//! the rebased attempt that Lance would otherwise make as N+2.

use std::sync::Arc;

use lance::dataset::transaction::Transaction;
use lance::dataset::CommitBuilder;
use lance::Dataset;
use lance_io::object_store::ObjectStore;
use lance_table::format::{IndexMetadata, Manifest, Transaction as TableTransaction};
use lance_table::io::commit::{
    CommitError, CommitHandler, ManifestLocation, ManifestNamingScheme, ManifestWriter,
};
use object_store::path::Path;

use super::index_storage::DatasetLocation;
use super::StoreError;

/// Commits `transaction`, read at `read`, as version `read + 1` or not at all.
pub async fn commit_next(
    location: &DatasetLocation,
    read: Arc<Dataset>,
    transaction: Transaction,
) -> Result<Dataset, StoreError> {
    let read_version = read.version_id();
    let inner =
        lance_table::io::commit::commit_handler_from_url(&location.uri, &location.store_params())
            .await?;
    let handler = Arc::new(NextVersionOnly {
        inner,
        version: read_version + 1,
    });
    CommitBuilder::new(read)
        .with_commit_handler(handler)
        .with_max_retries(0)
        .execute(transaction)
        .await
        .map_err(|e| match e {
            lance::Error::CommitConflict { .. }
            | lance::Error::RetryableCommitConflict { .. }
            | lance::Error::IncompatibleTransaction { .. }
            | lance::Error::TooMuchWriteContention { .. } => StoreError::ChangedElsewhere {
                dataset: location.uri.clone(),
                read_version,
            },
            e => e.into(),
        })
}

/// The store's own commit handler, refusing every version but one.
#[derive(Debug)]
struct NextVersionOnly {
    inner: Arc<dyn CommitHandler>,
    version: u64,
}

#[async_trait::async_trait]
impl CommitHandler for NextVersionOnly {
    fn is_version_not_found_definitive(&self) -> bool {
        self.inner.is_version_not_found_definitive()
    }

    fn propagate_commit_error_after_success(&self) -> bool {
        self.inner.propagate_commit_error_after_success()
    }

    async fn resolve_latest_location(
        &self,
        base_path: &Path,
        object_store: &ObjectStore,
    ) -> lance_core::Result<ManifestLocation> {
        self.inner
            .resolve_latest_location(base_path, object_store)
            .await
    }

    async fn resolve_version_location(
        &self,
        base_path: &Path,
        version: u64,
        object_store: &dyn object_store::ObjectStore,
    ) -> lance_core::Result<ManifestLocation> {
        self.inner
            .resolve_version_location(base_path, version, object_store)
            .await
    }

    async fn commit(
        &self,
        manifest: &mut Manifest,
        indices: Option<Vec<IndexMetadata>>,
        base_path: &Path,
        object_store: &ObjectStore,
        manifest_writer: ManifestWriter,
        naming_scheme: ManifestNamingScheme,
        transaction: Option<TableTransaction>,
    ) -> Result<ManifestLocation, CommitError> {
        if manifest.version != self.version {
            // Another commit came between the read and this one.
            return Err(CommitError::CommitConflict);
        }
        self.inner
            .commit(
                manifest,
                indices,
                base_path,
                object_store,
                manifest_writer,
                naming_scheme,
                transaction,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, RecordBatch, RecordBatchIterator};
    use arrow_schema::{DataType, Field, Schema};
    use lance::dataset::{InsertBuilder, WriteMode, WriteParams};

    fn batch(values: &[i32]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int32, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(values.to_vec()))]).unwrap()
    }

    async fn append(read: &Arc<Dataset>, values: &[i32]) -> Transaction {
        let params = WriteParams {
            mode: WriteMode::Append,
            ..Default::default()
        };
        InsertBuilder::new(read.clone())
            .with_params(&params)
            .execute_uncommitted(vec![batch(values)])
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_change_read_before_another_commit_is_refused_where_lance_would_merge_it() {
        let dir = tempfile::tempdir().unwrap();
        let location = DatasetLocation::local(&dir.path().join("t.lance"));
        let first = batch(&[1]);
        let schema = first.schema();
        Dataset::write(
            RecordBatchIterator::new(vec![Ok(first)], schema),
            &location.uri,
            None,
        )
        .await
        .unwrap();
        let mine = Arc::new(location.builder().load().await.unwrap());
        let theirs = Arc::new(location.builder().load().await.unwrap());
        assert_eq!(mine.version_id(), 1);

        // With nothing in between, the strict commit lands as the next version.
        let next = commit_next(&location, theirs.clone(), append(&theirs, &[2]).await)
            .await
            .unwrap();
        assert_eq!(next.version_id(), 2);

        // A change read at version 1 after version 2 landed: refused, nothing written.
        let stale = append(&mine, &[3]).await;
        match commit_next(&location, mine.clone(), stale.clone()).await {
            Err(StoreError::ChangedElsewhere { read_version, .. }) => assert_eq!(read_version, 1),
            other => panic!(
                "expected ChangedElsewhere, got {:?}",
                other.map(|d| d.version_id())
            ),
        }
        let newest = location.builder().load().await.unwrap();
        assert_eq!(newest.version_id(), 2);
        assert_eq!(newest.count_rows(None).await.unwrap(), 2);

        // Lance's own commit would have merged it on top.
        let merged = CommitBuilder::new(mine).execute(stale).await.unwrap();
        assert_eq!(merged.version_id(), 3);
    }
}
