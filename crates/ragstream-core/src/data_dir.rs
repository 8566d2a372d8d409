//! The data directory's owner and health.
//!
//! One process writes a data directory at a time: tantivy allows one writer per index, and
//! two ingesting daemons would fight over partitions and checkpoints. The writer holds an
//! exclusive `flock` on `<data_dir>/ragstream.lock` for its whole life; the file names the
//! holder (pid, command, start time), so a second writer refuses to start and says who has
//! it. The kernel drops the lock when the holder exits, however it exits (SIGKILL included),
//! so there is never a stale lock to clean up.
//!
//! [`probe`] checks that the directory can really be written (create, write, fsync,
//! remove): start-up refuses an unusable directory, and the daemon keeps probing so that a
//! disk that fills up or turns read-only later shows in `/readyz`.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The lock file's name inside the data directory.
pub const LOCK_FILE: &str = "ragstream.lock";

#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("data directory {dir} is in use by another ragstream process ({holder}); stop it, or give this one its own storage.data_dir")]
    Locked { dir: PathBuf, holder: String },
    #[error("data directory {dir} is not usable: {reason}")]
    Unusable { dir: PathBuf, reason: String },
}

/// An exclusive hold on a data directory, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    path: PathBuf,
}

impl DataDirLock {
    /// Creates the directory if needed, checks that it can be written, and takes its lock.
    pub fn acquire(dir: &Path, command: &str) -> Result<DataDirLock, DataDirError> {
        let unusable = |reason: String| DataDirError::Unusable {
            dir: dir.to_path_buf(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(|e| unusable(format!("cannot create it: {e}")))?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| unusable(format!("cannot open {}: {e}", path.display())))?;
        // SAFETY: flock on a file descriptor this function owns; no memory is shared.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if locked != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(DataDirError::Locked {
                    dir: dir.to_path_buf(),
                    holder: if holder.is_empty() {
                        "holder unknown".into()
                    } else {
                        holder.to_string()
                    },
                });
            }
            return Err(unusable(format!("cannot lock {}: {err}", path.display())));
        }
        let started = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let holder = format!(
            "pid {}, ragstream {command}, started {started}",
            std::process::id()
        );
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(holder.as_bytes()))
            .and_then(|()| file.sync_all())
            .map_err(|e| unusable(format!("cannot write {}: {e}", path.display())))?;
        probe(dir).map_err(unusable)?;
        Ok(DataDirLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether `dir` can be written now: a small file is created, written, synced and removed.
/// The error says which step failed and why (no space, read-only, gone, not a directory).
pub fn probe(dir: &Path) -> Result<(), String> {
    let path = dir.join(".ragstream-probe");
    let written = File::create(&path)
        .and_then(|mut f| {
            f.write_all(b"ragstream writes here\n")?;
            f.sync_all()
        })
        .map_err(|e| format!("cannot write {}: {e}", path.display()));
    let _ = std::fs::remove_file(&path);
    written
}

/// Writes `bytes` to `path` whole or not at all: a synced temporary file renamed over it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_named_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path(), "serve").unwrap();
        assert!(first.path().ends_with(LOCK_FILE));
        // flock locks belong to the open file description: a second open in the same
        // process conflicts exactly as another process's would.
        match DataDirLock::acquire(dir.path(), "ingest") {
            Err(DataDirError::Locked { holder, .. }) => {
                assert!(
                    holder.contains(&format!("pid {}", std::process::id())),
                    "{holder}"
                );
                assert!(holder.contains("ragstream serve"), "{holder}");
            }
            other => panic!("expected Locked, got {other:?}"),
        }
        drop(first);
        DataDirLock::acquire(dir.path(), "ingest").unwrap();
    }

    #[test]
    fn a_directory_that_cannot_be_written_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, b"x").unwrap();
        let under_a_file = file.join("data");
        let err = DataDirLock::acquire(&under_a_file, "serve").unwrap_err();
        assert!(
            matches!(&err, DataDirError::Unusable { reason, .. } if reason.contains("cannot create")),
            "{err}"
        );
        assert!(probe(&under_a_file).is_err());
        assert!(probe(dir.path()).is_ok());
    }
}
