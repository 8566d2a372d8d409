//! Resident vectors: every row's vector held in memory as a sign code (one bit per
//! dimension, around the index's centre) and a byte code (one byte per dimension), so that
//! an unfiltered vector search over a large index is a scan of memory instead of a walk of
//! Lance's HNSW partitions.
//!
//! A search ranks every visible row by the Hamming distance of its sign code to the
//! query's, re-ranks the nearest `by_hamming` by the query's (floating-point) dot product
//! with their signs, then the best `by_signs` of those by the dot product with their byte
//! codes, and returns the best `k` row addresses; the caller reads those rows' vectors and
//! scores them exactly. Each row's chunk id, document id and chunk index are held beside its
//! codes, so a candidate needs only its vector read, and a chunk id leads to its rows without
//! Lance's id index (a hybrid query's keyword candidates). Nothing is trained but the centre, which the index records once: the codes
//! are a function of each vector, and what a search keeps is a function of the query and
//! the rows a version holds (ties go to the lower row address), so an answer pinned to a
//! retained version is the same whenever it is asked, after a restart too.
//!
//! Codes are kept per Lance fragment. A fragment's data files never change while it keeps its
//! id (compaction writes new fragments, deletes write deletion files), so a version's view is
//! its fragments' cached codes plus the deletion vectors of that version: a commit costs the
//! codes of the fragments it wrote, not a reload.
//!
//! Each fragment's rows are also copied, as its codes are taken, to a scratch file of its own
//! (unlinked: it goes when the codes go, or with the process): each row's exact vector, then
//! its other columns as stored. A candidate's vector, and a returned hit's text and metadata,
//! are then one `pread` each on the query's own thread: a Lance read by address costs a few
//! thread hand-offs per fragment it touches (its I/O and decode tasks), and those made a
//! hybrid query's reads cost by the fragments, not the rows (docs/benchmark-history.md,
//! "Candidates' vectors from scratch files"; BENCHMARKS.md, "Hits' rows from the scratch
//! files"). The files live in the page cache like Lance's own data, not in the process's
//! memory. A fragment whose file could not be written (no space, a read-only directory) has
//! its rows read from Lance, as before.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use futures::TryStreamExt;
use lance::dataset::fragment::FileFragment;
use lance::Dataset;

use super::rows::{
    batch_to_rows, batch_to_stored, columns_without_vector, CandidateRow, ChunkRow, StoredRow,
    ROW_ADDRESS_COLUMN, VECTOR_COLUMN,
};
use super::StoreError;
use crate::store::filters::Visibility;
use vector_codes as codes;

/// Views of recent versions kept built (queries pinned to one of them reuse it).
const VIEW_CACHE: usize = 4;

/// One fragment's rows, every physical row in offset order (deleted ones too: whether a row
/// is deleted depends on the version, and a view masks it).
struct FragmentCodes {
    id: u64,
    /// Physical offsets of the rows, ascending.
    offsets: Vec<u32>,
    /// Sign codes around the index's centre, `words` u64 per row; in buffers the kernel
    /// may back with huge pages (a search reads every sign code and some rows' bytes).
    signs: codes::CodeBuffer<u64>,
    /// Byte codes, `dimensions` per row, and each row's scale.
    bytes: codes::CodeBuffer<i8>,
    scales: Vec<f32>,
    /// Rows whose `deleted_at` is set (soft-deleted), one bit per row; `any_soft` if one is.
    soft_deleted: Vec<u64>,
    any_soft: bool,
    /// (hash of the chunk id, row) of every row, sorted once the fragment is read: finds a
    /// keyword hit's row without Lance's id index.
    ids: Vec<(u64, u32)>,
    /// Each row's chunk id, document id and chunk index: what a candidate is besides its
    /// vector, so that a query reads the vector column alone: a read by address costs by
    /// the column (docs/benchmark-history.md, "The rest of a hybrid query at a million
    /// chunks").
    chunk_ids: Strings,
    document_ids: Strings,
    chunk_indexes: Vec<u32>,
    /// Every row, written while the codes are taken and read back for candidates and hits.
    file: RowFile,
}

/// An unlinked scratch file of rows, one after another: each row's exact vector
/// (`dimensions` f32, native byte order), then its [`StoredRow`] as JSON. Buffered while rows
/// are pushed, then read by offset; `None` once it could not be made or written.
enum RowFile {
    /// The file, and where each row written so far ends in it.
    Writing(std::io::BufWriter<std::fs::File>, Vec<u64>),
    Sealed(std::fs::File, Vec<u64>),
    None,
}

impl RowFile {
    fn new(scratch: Option<&Path>, rows: usize) -> Self {
        match scratch.map(tempfile::tempfile_in) {
            Some(Ok(file)) => RowFile::Writing(
                std::io::BufWriter::with_capacity(1 << 20, file),
                Vec::with_capacity(rows),
            ),
            Some(Err(e)) => RowFile::failed(&e),
            None => RowFile::None,
        }
    }

    fn write(&mut self, vector: &[f32], row: &StoredRow) {
        if let RowFile::Writing(file, ends) = self {
            let columns = serde_json::to_vec(row).map_err(std::io::Error::other);
            let written = columns.and_then(|columns| {
                for x in vector {
                    file.write_all(&x.to_ne_bytes())?;
                }
                file.write_all(&columns)?;
                Ok(columns.len())
            });
            match written {
                Ok(n) => {
                    let start = ends.last().copied().unwrap_or(0);
                    ends.push(start + (vector.len() * 4 + n) as u64);
                }
                Err(e) => *self = RowFile::failed(&e),
            }
        }
    }

    fn seal(self) -> Self {
        match self {
            RowFile::Writing(file, ends) => match file.into_inner() {
                Ok(file) => RowFile::Sealed(file, ends),
                Err(e) => RowFile::failed(e.error()),
            },
            other => other,
        }
    }

    /// The file and where row `row` spans in it, once sealed.
    fn span(&self, row: usize) -> Option<(&std::fs::File, u64, u64)> {
        match self {
            RowFile::Sealed(file, ends) => {
                let start = if row == 0 { 0 } else { ends[row - 1] };
                Some((file, start, ends[row]))
            }
            _ => None,
        }
    }

    /// Row `row`'s exact vector; `None` without a file.
    fn vector(&self, row: usize, dimensions: usize) -> std::io::Result<Option<Vec<f32>>> {
        let Some((file, start, _)) = self.span(row) else {
            return Ok(None);
        };
        let mut bytes = vec![0u8; dimensions * 4];
        file.read_exact_at(&mut bytes, start)?;
        Ok(Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ))
    }

    /// Row `row`'s stored columns; `None` without a file.
    fn stored(&self, row: usize, dimensions: usize) -> Result<Option<StoredRow>, StoreError> {
        let Some((file, start, end)) = self.span(row) else {
            return Ok(None);
        };
        let from = start + (dimensions * 4) as u64;
        let mut bytes = vec![0u8; end.saturating_sub(from) as usize];
        file.read_exact_at(&mut bytes, from)?;
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| corrupt(&format!("a scratch file's row does not parse: {e}")))
    }

    fn bytes_in_memory(&self) -> usize {
        match self {
            RowFile::Writing(_, ends) | RowFile::Sealed(_, ends) => ends.len() * 8,
            RowFile::None => 0,
        }
    }

    /// No file: this fragment's candidates' vectors and hits' rows are read from Lance.
    /// Warned about once (a full disk would otherwise warn at every commit).
    fn failed(e: &std::io::Error) -> Self {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            tracing::warn!(error = %e, "a resident vectors scratch file could not be written; \
                the rows of such fragments are read from Lance");
        });
        RowFile::None
    }
}

/// Strings one after another in one buffer.
#[derive(Default)]
struct Strings {
    bytes: String,
    ends: Vec<usize>,
}

impl Strings {
    fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len());
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    fn bytes_in_memory(&self) -> usize {
        self.bytes.len() + self.ends.len() * std::mem::size_of::<usize>()
    }
}

impl FragmentCodes {
    /// Codes for a fragment of `rows` rows of `dimensions`-long vectors (more may be pushed),
    /// its rows copied to a scratch file in `scratch` (if given).
    fn new(id: u64, rows: usize, dimensions: usize, scratch: Option<&Path>) -> Self {
        FragmentCodes {
            id,
            offsets: Vec::new(),
            signs: codes::CodeBuffer::with_capacity(rows * codes::words(dimensions)),
            bytes: codes::CodeBuffer::with_capacity(rows * dimensions),
            scales: Vec::new(),
            soft_deleted: Vec::new(),
            any_soft: false,
            ids: Vec::new(),
            chunk_ids: Strings::default(),
            document_ids: Strings::default(),
            chunk_indexes: Vec::new(),
            file: RowFile::new(scratch, rows),
        }
    }

    fn push(&mut self, offset: u32, stored: &StoredRow, vector: &[f32], center: &[f32]) {
        self.file.write(vector, stored);
        let (chunk_id, document_id, chunk_index) = stored.ids();
        let soft_deleted = stored.is_deleted();
        let row = self.offsets.len();
        self.offsets.push(offset);
        self.ids.push((id_hash(chunk_id), row as u32));
        self.chunk_ids.push(chunk_id);
        self.document_ids.push(document_id);
        self.chunk_indexes.push(chunk_index);
        codes::push_signs(vector, center, &mut self.signs);
        let scale = codes::push_bytes(vector, &mut self.bytes);
        self.scales.push(scale);
        if row.is_multiple_of(64) {
            self.soft_deleted.push(0);
        }
        if soft_deleted {
            self.soft_deleted[row / 64] |= 1 << (row % 64);
            self.any_soft = true;
        }
    }

    fn len(&self) -> usize {
        self.offsets.len()
    }

    fn bytes_in_memory(&self) -> usize {
        self.offsets.len() * 4
            + self.signs.len() * 8
            + self.bytes.len()
            + self.scales.len() * 4
            + self.soft_deleted.len() * 8
            + self.ids.len() * std::mem::size_of::<(u64, u32)>()
            + self.chunk_ids.bytes_in_memory()
            + self.document_ids.bytes_in_memory()
            + self.chunk_indexes.len() * 4
            + self.file.bytes_in_memory()
    }

    /// The row at physical `offset`, if the fragment has one.
    fn row(&self, offset: u32) -> Option<usize> {
        self.offsets.binary_search(&offset).ok()
    }

    /// Orders the id hashes for [`FragmentCodes::rows_of`] and makes the vectors readable;
    /// called once every row is pushed.
    fn seal(mut self) -> Self {
        self.ids.sort_unstable();
        self.file = self.file.seal();
        self
    }

    /// The rows whose chunk id hashes as `chunk_id` does (two ids may share a hash: the
    /// caller compares the ids).
    fn rows_of(&self, chunk_id: &str) -> impl Iterator<Item = u32> + '_ {
        let h = id_hash(chunk_id);
        let start = self.ids.partition_point(|(x, _)| *x < h);
        self.ids[start..]
            .iter()
            .take_while(move |(x, _)| *x == h)
            .map(|(_, row)| *row)
    }

    /// Reads every physical row of `fragment` (deleted rows included), batch after batch
    /// (a fragment's text is not held in memory whole).
    async fn read(
        fragment: &FileFragment,
        center: &[f32],
        scratch: Option<&Path>,
    ) -> Result<Self, StoreError> {
        let mut columns = columns_without_vector();
        columns.push(VECTOR_COLUMN);
        let mut scanner = fragment.scan();
        scanner
            .project(&columns)?
            .with_row_address()
            // Lance returns deleted rows only beside row ids (null for those rows).
            .with_row_id()
            .include_deleted_rows()
            .scan_in_order(true);
        let mut batches = scanner.try_into_stream().await?;
        let rows = fragment.metadata().physical_rows.unwrap_or(0);
        let mut codes = FragmentCodes::new(fragment.id() as u64, rows, center.len(), scratch);
        while let Some(b) = batches.try_next().await? {
            codes.append(&b, center)?;
        }
        Ok(codes.seal())
    }

    fn append(&mut self, batch: &RecordBatch, center: &[f32]) -> Result<(), StoreError> {
        let dimensions = center.len();
        let addresses = batch
            .column_by_name(ROW_ADDRESS_COLUMN)
            .and_then(|c| c.as_primitive_opt::<arrow_array::types::UInt64Type>())
            .ok_or_else(|| corrupt("no u64 row address column"))?;
        let stored = batch_to_stored(batch).map_err(|e| corrupt(&e))?;
        let vectors = vectors_of(batch, dimensions)?;
        for (i, (vector, stored)) in vectors.zip(&stored).enumerate() {
            let offset = (addresses.value(i) & 0xFFFF_FFFF) as u32;
            self.push(offset, stored, vector, center);
        }
        Ok(())
    }
}

/// A chunk id's hash, for finding its row (the same in every process: nothing is stored).
fn id_hash(chunk_id: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = std::hash::DefaultHasher::new();
    h.write(chunk_id.as_bytes());
    h.finish()
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("resident vectors: {what}"))
}

/// The rows of the `dimensions`-long vector column of `batch`, each as a slice.
fn vectors_of(
    batch: &RecordBatch,
    dimensions: usize,
) -> Result<impl Iterator<Item = &[f32]>, StoreError> {
    let vectors = batch
        .column_by_name(VECTOR_COLUMN)
        .and_then(|c| c.as_fixed_size_list_opt())
        .ok_or_else(|| corrupt("no fixed-size-list vector column"))?;
    if vectors.value_length() as usize != dimensions {
        return Err(corrupt(&format!(
            "{}-d vectors where {dimensions} were expected",
            vectors.value_length()
        )));
    }
    let values = vectors
        .values()
        .as_primitive_opt::<arrow_array::types::Float32Type>()
        .ok_or_else(|| corrupt("vector values are not f32"))?
        .values();
    Ok((0..vectors.len()).map(move |i| {
        let start = vectors.value_offset(i) as usize;
        &values[start..start + dimensions]
    }))
}

/// The mean of the first `rows` vectors of `ds` (in fragment order): the centre sign codes
/// are taken around. Sign codes of embeddings taken around zero lose most of their meaning
/// (a model's vectors share a common direction); around the mean, a shortlist of the same
/// size holds far more of the true top 10 (docs/benchmark-history.md, "Resident vectors:
/// the semantic branch scans codes in memory").
pub async fn center_of(
    ds: &Dataset,
    dimensions: usize,
    rows: usize,
) -> Result<Vec<f32>, StoreError> {
    let mut scanner = ds.scan();
    scanner
        .project(&[VECTOR_COLUMN])?
        .scan_in_order(true)
        .limit(Some(rows as i64), None)?;
    let batches: Vec<RecordBatch> = scanner.try_into_stream().await?.try_collect().await?;
    let mut sum = vec![0f64; dimensions];
    let mut n = 0usize;
    for b in &batches {
        for v in vectors_of(b, dimensions)? {
            for (s, x) in sum.iter_mut().zip(v) {
                *s += f64::from(*x);
            }
            n += 1;
        }
    }
    Ok(sum
        .into_iter()
        .map(|s| (s / n.max(1) as f64) as f32)
        .collect())
}

/// What identifies a fragment's codes: its id, data files and overlay files (the same id
/// with other files — a column added, cells overlaid — is read again).
type FragmentKey = (u64, String);

fn fragment_key(fragment: &FileFragment) -> FragmentKey {
    let meta = fragment.metadata();
    let files = serde_json::to_string(&(&meta.files, &meta.overlays)).unwrap_or_default();
    (meta.id, files)
}

/// How many rows each stage of a search keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stages {
    /// Rows kept by Hamming distance of the sign codes, from every visible row.
    pub by_hamming: usize,
    /// Of those, rows kept by the query's dot product with their signs; these are then
    /// ranked by the byte codes.
    pub by_signs: usize,
}

/// One version's rows: its fragments' codes, and the rows each has deleted at that version
/// (one bit per row of the fragment's codes; `None` when it has deleted none).
pub struct View {
    version: u64,
    center: Arc<Vec<f32>>,
    fragments: Vec<(Arc<FragmentCodes>, Option<Vec<u64>>)>,
}

impl View {
    pub fn rows(&self) -> usize {
        self.fragments.iter().map(|(f, _)| f.len()).sum()
    }

    /// Bytes of codes and masks the view holds (codes shared with other views included).
    pub fn bytes_in_memory(&self) -> usize {
        self.fragments
            .iter()
            .map(|(f, d)| f.bytes_in_memory() + d.as_ref().map_or(0, |d| d.len() * 8))
            .sum()
    }

    /// The row addresses of the `k` rows nearest `query` (a unit vector) among the rows
    /// `visibility` selects, best first by their byte codes. Deterministic: every tie goes
    /// to the lower row address.
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        stages: Stages,
        visibility: Visibility,
    ) -> Vec<u64> {
        let center = self.center.as_slice();
        if k == 0 || query.len() != center.len() {
            return Vec::new();
        }
        let by_signs = stages.by_signs.max(k);
        let by_hamming = stages.by_hamming.max(by_signs);
        let mut q_signs = Vec::with_capacity(codes::words(center.len()));
        codes::push_signs(query, center, &mut q_signs);
        let shortlist = self.hamming_shortlist(&q_signs, by_hamming, visibility);
        let address = |fi: u32, row: u32| {
            let f = &self.fragments[fi as usize].0;
            f.id << 32 | u64::from(f.offsets[row as usize])
        };
        // Second stage: the query's floats against the kept rows' signs.
        let centred: Vec<f32> = query.iter().zip(center).map(|(q, c)| q - c).collect();
        let table = codes::SignDot::new(&centred);
        let w = q_signs.len();
        // Codes are copied out first, then scored: the copies of many rows wait on memory
        // side by side, where scoring row after row would wait for each row in turn.
        let signs = gather(&shortlist, w, |f| &f.signs, &self.fragments);
        let mut kept: Vec<(f32, (u64, u32, u32))> = shortlist
            .iter()
            .zip(signs.chunks_exact(w))
            .map(|(&(fi, row), code)| (table.score(code), (address(fi, row), fi, row)))
            .collect();
        codes::best_first(&mut kept, by_signs);
        // Third stage: the byte codes.
        let dims = center.len();
        let rows: Vec<(u32, u32)> = kept.iter().map(|(_, (_, fi, row))| (*fi, *row)).collect();
        let bytes = gather(&rows, dims, |f| &f.bytes, &self.fragments);
        let byte_query = codes::ByteQuery::new(query);
        let mut ranked: Vec<(f32, (u64, u32, u32))> = kept
            .into_iter()
            .zip(bytes.chunks_exact(dims))
            .map(|((_, (a, fi, row)), code)| {
                let scale = self.fragments[fi as usize].0.scales[row as usize];
                (byte_query.dot(code) * scale, (a, fi, row))
            })
            .collect();
        codes::best_first(&mut ranked, k);
        ranked.into_iter().map(|(_, (a, _, _))| a).collect()
    }

    /// The addresses, ascending, of the rows at this version whose chunk id is one of
    /// `chunk_ids` (deleted rows left out, soft-deleted ones kept: what a read by id finds).
    pub fn addresses_of(&self, chunk_ids: &[String]) -> Vec<u64> {
        let mut out = Vec::new();
        for (f, deleted) in &self.fragments {
            for id in chunk_ids {
                for row in f.rows_of(id) {
                    let row = row as usize;
                    // Two ids may share a hash; a deleted row is not at this version.
                    if f.chunk_ids.get(row) != id.as_str()
                        || deleted
                            .as_ref()
                            .is_some_and(|d| d[row / 64] & (1 << (row % 64)) != 0)
                    {
                        continue;
                    }
                    out.push(f.id << 32 | u64::from(f.offsets[row]));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The candidates at `addresses` of `ds` (this view's version), in that order: their
    /// ids from the codes, their exact vectors from the fragments' scratch files, or read
    /// from Lance for fragments without one.
    pub async fn candidates(
        &self,
        ds: &Dataset,
        addresses: &[u64],
    ) -> Result<Vec<CandidateRow>, StoreError> {
        let (mut rows, unread) = self.candidates_from_files(addresses)?;
        if unread.is_empty() {
            return Ok(rows);
        }
        let batch = take_unread(ds, addresses, &unread, &[VECTOR_COLUMN]).await?;
        for (&i, vector) in unread.iter().zip(vectors_of(&batch, self.center.len())?) {
            rows[i].vector = vector.to_vec();
        }
        Ok(rows)
    }

    /// The rows (without vectors) at `addresses` of `ds` (this view's version), in that
    /// order: from the fragments' scratch files, or read from Lance for fragments without one.
    pub async fn rows_at(
        &self,
        ds: &Dataset,
        addresses: &[u64],
    ) -> Result<Vec<ChunkRow>, StoreError> {
        let dimensions = self.center.len();
        let mut rows = Vec::with_capacity(addresses.len());
        let mut unread = Vec::new();
        for (i, &address) in addresses.iter().enumerate() {
            let (f, row) = self.locate(address)?;
            let stored = f.file.stored(row, dimensions)?;
            if stored.is_none() {
                unread.push(i);
            }
            rows.push(stored.map(|s| s.into_row(None)));
        }
        if !unread.is_empty() {
            let batch = take_unread(ds, addresses, &unread, &columns_without_vector()).await?;
            let read = batch_to_rows(&batch).map_err(|e| corrupt(&e))?;
            for (&i, row) in unread.iter().zip(read) {
                rows[i] = Some(row);
            }
        }
        Ok(rows.into_iter().flatten().collect())
    }

    /// The fragment codes and row that hold `address`.
    fn locate(&self, address: u64) -> Result<(&FragmentCodes, usize), StoreError> {
        self.fragments
            .iter()
            .find(|(f, _)| f.id == address >> 32)
            .and_then(|(f, _)| Some((f.as_ref(), f.row((address & 0xFFFF_FFFF) as u32)?)))
            .ok_or_else(|| corrupt(&format!("no row at address {address}")))
    }

    /// The candidates at `addresses` with the vectors the scratch files hold, and the
    /// positions of those left without one (their fragment has no file).
    fn candidates_from_files(
        &self,
        addresses: &[u64],
    ) -> Result<(Vec<CandidateRow>, Vec<usize>), StoreError> {
        let dimensions = self.center.len();
        let mut unread = Vec::new();
        let mut rows = Vec::with_capacity(addresses.len());
        for (i, &address) in addresses.iter().enumerate() {
            let (f, row) = self.locate(address)?;
            let vector = f.file.vector(row, dimensions)?;
            if vector.is_none() {
                unread.push(i);
            }
            rows.push(CandidateRow {
                address,
                chunk_id: f.chunk_ids.get(row).to_string(),
                document_id: f.document_ids.get(row).to_string(),
                chunk_index: f.chunk_indexes[row],
                vector: vector.unwrap_or_default(),
            });
        }
        Ok((rows, unread))
    }
}

impl View {
    /// The `keep` visible rows nearest `q_signs` by Hamming distance as (fragment, row),
    /// ties to the earlier row. A large view is scanned in two halves side by side: the
    /// scan reads every row's code, and two cores read memory faster than one.
    fn hamming_shortlist(
        &self,
        q_signs: &[u64],
        keep: usize,
        visibility: Visibility,
    ) -> Vec<(u32, u32)> {
        let w = q_signs.len();
        let masks: Vec<_> = self
            .fragments
            .iter()
            .map(|(f, deleted)| skip_mask(f, deleted.as_deref(), visibility))
            .collect();
        let scan = |part: &[(usize, std::ops::Range<usize>)]| {
            let mut list = codes::Shortlist::new(keep);
            for (fi, rows) in part {
                let signs = &self.fragments[*fi].0.signs[rows.start * w..rows.end * w];
                let skip = masks[*fi].as_deref();
                codes::hamming_scan(
                    signs,
                    q_signs,
                    skip,
                    *fi as u32,
                    rows.start as u32,
                    &mut list,
                );
            }
            list
        };
        let [first, second] = self.halves();
        if second.is_empty() {
            return codes::merge_shortlists([scan(&first)], keep);
        }
        let (a, b) = std::thread::scope(|s| {
            let b = s.spawn(|| scan(&second));
            (scan(&first), b.join())
        });
        match b {
            Ok(b) => codes::merge_shortlists([a, b], keep),
            // The scan does not panic on any input; if it ever did, scan alone again.
            Err(_) => codes::merge_shortlists([scan(&first), scan(&second)], keep),
        }
    }

    /// The rows to scan as two halves of (fragment, rows) in order — the second empty when
    /// the view is too small to be worth a second thread. Halves are counted in rows, not
    /// fragments: compaction leaves one large fragment beside a few small ones.
    fn halves(&self) -> [Vec<(usize, std::ops::Range<usize>)>; 2] {
        let whole: Vec<(usize, std::ops::Range<usize>)> = self
            .fragments
            .iter()
            .enumerate()
            .map(|(fi, (f, _))| (fi, 0..f.len()))
            .collect();
        let rows = self.rows();
        if rows < PARALLEL_SCAN_ROWS {
            return [whole, Vec::new()];
        }
        let (mut first, mut second) = (Vec::new(), Vec::new());
        let mut left = rows / 2;
        for (fi, range) in whole {
            let take = left.min(range.len());
            left -= take;
            if take > 0 {
                first.push((fi, 0..take));
            }
            if take < range.len() {
                second.push((fi, take..range.end));
            }
        }
        [first, second]
    }
}

/// The `columns` of the rows at the `unread` positions of `addresses`, read from Lance (their
/// fragments have no scratch file), in that order.
async fn take_unread(
    ds: &Dataset,
    addresses: &[u64],
    unread: &[usize],
    columns: &[&str],
) -> Result<RecordBatch, StoreError> {
    let at: Vec<u64> = unread.iter().map(|&i| addresses[i]).collect();
    let batch = ds.take_rows(&at, ds.schema().project(columns)?).await?;
    if batch.num_rows() != at.len() {
        return Err(corrupt(&format!(
            "{} rows read for {} addresses",
            batch.num_rows(),
            at.len()
        )));
    }
    Ok(batch)
}

/// Views of at least this many rows are scanned on two threads.
const PARALLEL_SCAN_ROWS: usize = 200_000;

/// The `width`-long codes (from `codes_of` each fragment) of `rows` (fragment, row), one
/// after another.
fn gather<T: Copy>(
    rows: &[(u32, u32)],
    width: usize,
    codes_of: impl Fn(&FragmentCodes) -> &[T],
    fragments: &[(Arc<FragmentCodes>, Option<Vec<u64>>)],
) -> Vec<T> {
    let mut out = Vec::with_capacity(rows.len() * width);
    for &(fi, row) in rows {
        let row = row as usize;
        out.extend_from_slice(&codes_of(&fragments[fi as usize].0)[row * width..(row + 1) * width]);
    }
    out
}

/// The rows of `f` a search skips: those deleted at the view's version, and those
/// `visibility` leaves out. Borrowed when no soft-deleted row changes it.
fn skip_mask<'a>(
    f: &FragmentCodes,
    deleted: Option<&'a [u64]>,
    visibility: Visibility,
) -> Option<std::borrow::Cow<'a, [u64]>> {
    use std::borrow::Cow;
    let words = f.soft_deleted.len();
    let deleted_word = |i: usize| deleted.map_or(0, |d| d[i]);
    match visibility {
        Visibility::All => deleted.map(Cow::Borrowed),
        Visibility::Active if !f.any_soft => deleted.map(Cow::Borrowed),
        Visibility::Active => Some(Cow::Owned(
            (0..words)
                .map(|i| deleted_word(i) | f.soft_deleted[i])
                .collect(),
        )),
        Visibility::Deleted => Some(Cow::Owned(
            (0..words)
                .map(|i| deleted_word(i) | !f.soft_deleted[i])
                .collect(),
        )),
    }
}

/// The codes of every fragment some cached view uses, and those views. Shared by every
/// version of one index; codes are taken around one centre (the index records it).
pub struct ResidentVectors {
    /// Where the fragments' vector files are made (unlinked at once); `None` if it could
    /// not be created (candidates' vectors are then read from Lance).
    scratch: Option<PathBuf>,
    fragments: Mutex<HashMap<FragmentKey, Arc<FragmentCodes>>>,
    views: Mutex<Vec<Arc<View>>>,
    /// One view is built at a time: two queries arriving at a new version read its new
    /// fragments once.
    building: tokio::sync::Mutex<()>,
}

impl ResidentVectors {
    /// Resident vectors whose scratch files go to `scratch` (created if missing).
    pub fn new(scratch: PathBuf) -> Self {
        let scratch = match std::fs::create_dir_all(&scratch) {
            Ok(()) => Some(scratch),
            Err(e) => {
                tracing::warn!(dir = %scratch.display(), error = %e,
                    "no directory for the resident vectors' scratch files; candidates' vectors are read from Lance");
                None
            }
        };
        ResidentVectors {
            scratch,
            fragments: Mutex::default(),
            views: Mutex::default(),
            building: tokio::sync::Mutex::default(),
        }
    }

    /// The view of `ds` with sign codes around `center`, built from cached fragment codes
    /// plus the fragments read now.
    pub async fn view(
        &self,
        ds: &Dataset,
        center: &Arc<Vec<f32>>,
    ) -> Result<Arc<View>, StoreError> {
        if let Some(v) = self.cached(ds.version_id(), center) {
            return Ok(v);
        }
        let _building = self.building.lock().await;
        if let Some(v) = self.cached(ds.version_id(), center) {
            return Ok(v);
        }
        {
            // Codes around another centre (an index re-embedded) are of no use.
            let mut views = self.views.lock().expect("resident views lock");
            if views.iter().any(|v| v.center != *center) {
                views.clear();
                self.fragments
                    .lock()
                    .expect("resident fragments lock")
                    .clear();
            }
        }
        let mut fragments = Vec::new();
        for fragment in ds.get_fragments() {
            let key = fragment_key(&fragment);
            let known = self
                .fragments
                .lock()
                .expect("resident fragments lock")
                .get(&key)
                .cloned();
            let codes = match known {
                Some(c) => c,
                None => {
                    let c = Arc::new(
                        FragmentCodes::read(&fragment, center, self.scratch.as_deref()).await?,
                    );
                    self.fragments
                        .lock()
                        .expect("resident fragments lock")
                        .insert(key, c.clone());
                    c
                }
            };
            let deleted = match fragment.get_deletion_vector().await? {
                Some(dv) if !dv.is_empty() => {
                    let mut mask = vec![0u64; codes.len().div_ceil(64)];
                    // Offsets ascend, so a deleted offset's row is found by binary search.
                    for offset in dv.iter() {
                        if let Ok(row) = codes.offsets.binary_search(&offset) {
                            mask[row / 64] |= 1 << (row % 64);
                        }
                    }
                    Some(mask)
                }
                _ => None,
            };
            fragments.push((codes, deleted));
        }
        let view = Arc::new(View {
            version: ds.version_id(),
            center: center.clone(),
            fragments,
        });
        self.remember(view.clone());
        Ok(view)
    }

    fn cached(&self, version: u64, center: &Arc<Vec<f32>>) -> Option<Arc<View>> {
        self.views
            .lock()
            .expect("resident views lock")
            .iter()
            .find(|v| v.version == version && v.center == *center)
            .cloned()
    }

    /// Keeps `view` among the cached views and drops the codes of fragments none of them
    /// uses any more (compacted away, or of a version no longer cached).
    fn remember(&self, view: Arc<View>) {
        let mut views = self.views.lock().expect("resident views lock");
        views.push(view);
        views.sort_by_key(|v| v.version);
        while views.len() > VIEW_CACHE {
            views.remove(0);
        }
        let used: std::collections::HashSet<u64> = views
            .iter()
            .flat_map(|v| v.fragments.iter().map(|(f, _)| f.id))
            .collect();
        self.fragments
            .lock()
            .expect("resident fragments lock")
            .retain(|(id, _), _| used.contains(id));
    }
}

#[cfg(test)]
mod tests;
