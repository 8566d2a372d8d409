//! One writer per object-store prefix. A writing daemon holds `<prefix>/writer.json` and
//! renews it every third of the lease (`storage.writer_lease_ms`); a second writer finds
//! it and refuses to start, naming the holder.
//!
//! No clocks are compared between machines: a lease is alive if it changes within one
//! lease period. A writer that finds one watches it for that long and takes it over only if
//! it did not change (its holder died), with a conditional write that fails if another
//! writer took it first. A holder that cannot renew within two thirds of the lease refuses
//! every write from then on and stops (`daemon`), a third of the lease before another
//! writer may take over. Strict on S3 (conditional writes); on `file://`,
//! where the store has no conditional update, renewals overwrite.

use std::sync::Arc;
use std::time::{Duration, Instant};

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStoreExt, PutMode, PutOptions, UpdateVersion};
use serde::{Deserialize, Serialize};

use super::index_storage::ObjectRoot;
use super::StoreError;

const LEASE: &str = "writer.json";

/// What the lease object says.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Holder {
    holder: String,
    started_at: String,
    renewals: u64,
}

/// A held lease.
pub struct WriterLease {
    root: Arc<ObjectRoot>,
    path: ObjectPath,
    holder: Holder,
    version: UpdateVersion,
    lease: Duration,
    last_renewed: Instant,
}

impl WriterLease {
    /// Takes the prefix's lease for `holder` (`pid 7 on host-a`), waiting one lease period
    /// when another holder's lease exists to tell a live one from a dead one.
    pub async fn acquire(
        root: Arc<ObjectRoot>,
        holder: String,
        lease: Duration,
    ) -> Result<WriterLease, StoreError> {
        let path = root.path(LEASE);
        let held = |by: &str| StoreError::Storage {
            uri: root.uri().to_string(),
            reason: format!(
                "another writer holds it ({by}); stop it first, or give this daemon --role \
                 query (a writer that died frees it {} ms after its last renewal: \
                 storage.writer_lease_ms)",
                lease.as_millis()
            ),
        };
        let lease_holder = Holder {
            holder,
            started_at: crate::model::now_timestamp(),
            renewals: 0,
        };
        let body = serde_json::to_vec(&lease_holder).expect("a lease serialises");
        let mode = match root.store().inner.get(&path).await {
            Err(object_store::Error::NotFound { .. }) => PutMode::Create,
            Err(e) => return Err(failed(&path, e)),
            Ok(found) => {
                let seen = version_of(&found.meta);
                let by = found
                    .bytes()
                    .await
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Holder>(&b).ok())
                    .map_or_else(|| "holder unknown".to_string(), |h| h.holder);
                tracing::info!(holder = %by, wait_ms = lease.as_millis() as u64,
                    "the store has a writer's lease; waiting a lease period to see whether it is renewed");
                tokio::time::sleep(lease).await;
                match root.store().inner.head(&path).await {
                    Ok(meta) if version_of(&meta) != seen => return Err(held(&by)),
                    Ok(_) => PutMode::Update(seen),
                    Err(object_store::Error::NotFound { .. }) => PutMode::Create,
                    Err(e) => return Err(failed(&path, e)),
                }
            }
        };
        let taken = put(&root, &path, body, mode).await;
        let version = match taken {
            Ok(put) => UpdateVersion {
                e_tag: put.e_tag,
                version: put.version,
            },
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => {
                return Err(held("another daemon took it at the same time"));
            }
            Err(e) => return Err(failed(&path, e)),
        };
        Ok(WriterLease {
            root,
            path,
            holder: lease_holder,
            version,
            lease,
            last_renewed: Instant::now(),
        })
    }

    /// How often [`WriterLease::renew`] must run.
    pub fn renew_every(&self) -> Duration {
        self.lease / 3
    }

    /// Renews the lease. `Ok(true)`: writes may go on (renewed, or a failed try still within
    /// two thirds of the lease, tried again next time). `Ok(false)`: not renewed for two
    /// thirds of the lease, so writes must pause until a renewal succeeds, which it does
    /// only if nobody took the lease meanwhile. `Err`: taken over; this writer must stop.
    pub async fn renew(&mut self) -> Result<bool, StoreError> {
        self.holder.renewals += 1;
        let body = serde_json::to_vec(&self.holder).expect("a lease serialises");
        let mode = PutMode::Update(self.version.clone());
        // Bounded: the store's own retries may take minutes, past the lease.
        let deadline = (self.lease * 2 / 3)
            .saturating_sub(self.last_renewed.elapsed())
            .max(self.lease / 3);
        let attempt = tokio::time::timeout(deadline, put(&self.root, &self.path, body, mode)).await;
        let error = match attempt {
            Ok(Ok(put)) => {
                self.version = UpdateVersion {
                    e_tag: put.e_tag,
                    version: put.version,
                };
                self.last_renewed = Instant::now();
                return Ok(true);
            }
            Ok(Err(object_store::Error::Precondition { .. })) => {
                if self.still_ours().await {
                    // An earlier try of this very renewal went through.
                    self.renew_version().await?;
                    return Ok(true);
                }
                return Err(StoreError::Storage {
                    uri: self.root.uri().to_string(),
                    reason:
                        "this writer's lease was taken over by another writer; it stops writing"
                            .into(),
                });
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no answer in time".to_string(),
        };
        // Not renewed this time: the holder is what it was.
        self.holder.renewals -= 1;
        tracing::warn!(error = %error, unrenewed_ms = self.last_renewed.elapsed().as_millis() as u64,
            "renewing the writer's lease failed; trying again");
        Ok(self.last_renewed.elapsed() < self.lease * 2 / 3)
    }

    /// Whether the stored lease is this holder's latest renewal.
    async fn still_ours(&self) -> bool {
        let Ok(found) = self.root.store().inner.get(&self.path).await else {
            return false;
        };
        let Ok(bytes) = found.bytes().await else {
            return false;
        };
        serde_json::from_slice::<Holder>(&bytes).is_ok_and(|h| {
            h.holder == self.holder.holder
                && h.started_at == self.holder.started_at
                && h.renewals == self.holder.renewals
        })
    }

    /// Takes the stored lease's version as this holder's (after [`Self::still_ours`]).
    async fn renew_version(&mut self) -> Result<(), StoreError> {
        let meta = self
            .root
            .store()
            .inner
            .head(&self.path)
            .await
            .map_err(|e| failed(&self.path, e))?;
        self.version = version_of(&meta);
        self.last_renewed = Instant::now();
        Ok(())
    }

    /// Gives the lease up (a clean stop): the next writer starts without waiting.
    pub async fn release(self) {
        if let Err(e) = self.root.delete(&self.path).await {
            tracing::warn!(error = %e, "releasing the writer's lease failed; the next writer waits a lease period");
        }
    }
}

/// Writes the lease with `mode`; a store without conditional updates (`file://`)
/// overwrites instead.
async fn put(
    root: &ObjectRoot,
    path: &ObjectPath,
    body: Vec<u8>,
    mode: PutMode,
) -> Result<object_store::PutResult, object_store::Error> {
    let options = PutOptions {
        mode,
        ..Default::default()
    };
    let store = &root.store().inner;
    match store.put_opts(path, body.clone().into(), options).await {
        Err(object_store::Error::NotImplemented { .. }) => store.put(path, body.into()).await,
        other => other,
    }
}

fn version_of(meta: &object_store::ObjectMeta) -> UpdateVersion {
    UpdateVersion {
        e_tag: meta.e_tag.clone(),
        version: meta.version.clone(),
    }
}

fn failed(path: &ObjectPath, e: object_store::Error) -> StoreError {
    StoreError::ObjectStore(format!("the writer's lease {path}: {e}"))
}
