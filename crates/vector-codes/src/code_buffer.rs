//! A growable buffer of codes that the kernel may back with huge pages.
//!
//! A resident search reads every row's sign code (48 MB at a million rows of 384 dimensions)
//! and a few thousand rows' byte codes at random. On 4 KiB pages the CPU's prefetchers stop at
//! every page boundary and each random row costs a page walk; on 2 MiB pages neither happens,
//! so a scan out of cache runs faster on them, with the scan's prefetch or without it
//! (docs/benchmark-history.md, "The resident scan out of cache"). Linux backs anonymous
//! memory with huge pages only where asked (`transparent_hugepage` is `madvise` on Debian),
//! and only memory not yet touched, so a large buffer is a mapping of its own, advised
//! before its first write.

use std::ops::{Deref, DerefMut};

use bytemuck::Pod;

/// Buffers of at least this many bytes are mapped on their own and advised to huge pages;
/// smaller ones (a delta fragment's few rows) stay on the heap, where a mapping would cost a
/// system call and a page of its own for little.
pub const MAPPED_FROM_BYTES: usize = 2 << 20;

/// Codes one after another, like a `Vec<T>`.
pub struct CodeBuffer<T: Pod> {
    storage: Storage<T>,
}

enum Storage<T> {
    Heap(Vec<T>),
    /// `len` elements written at the start of `map` (whose length is the capacity).
    Mapped {
        map: memmap2::MmapMut,
        len: usize,
    },
}

impl<T: Pod> CodeBuffer<T> {
    pub fn new() -> Self {
        CodeBuffer {
            storage: Storage::Heap(Vec::new()),
        }
    }

    /// A buffer with room for `n` elements: mapped and advised to huge pages when that is at
    /// least [`MAPPED_FROM_BYTES`] (on the heap if the mapping fails: huge pages are a speed,
    /// never a condition).
    pub fn with_capacity(n: usize) -> Self {
        let bytes = n.saturating_mul(std::mem::size_of::<T>());
        if bytes >= MAPPED_FROM_BYTES {
            if let Ok(map) = memmap2::MmapMut::map_anon(bytes) {
                // Advice only: where the kernel has no huge pages, the buffer works on small.
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::HugePage);
                return CodeBuffer {
                    storage: Storage::Mapped { map, len: 0 },
                };
            }
        }
        CodeBuffer {
            storage: Storage::Heap(Vec::with_capacity(n)),
        }
    }

    /// Whether the buffer is a mapping of its own (advised to huge pages).
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped { .. })
    }

    pub fn capacity(&self) -> usize {
        match &self.storage {
            Storage::Heap(v) => v.capacity(),
            Storage::Mapped { map, .. } => map.len() / std::mem::size_of::<T>(),
        }
    }

    /// Makes room for `additional` more elements: a buffer that must grow is copied into one
    /// of at least twice its capacity (mapped once that is large enough).
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len().saturating_add(additional);
        if needed <= self.capacity() {
            return;
        }
        if let Storage::Heap(v) = &mut self.storage {
            if needed.saturating_mul(std::mem::size_of::<T>()) < MAPPED_FROM_BYTES {
                v.reserve(additional);
                return;
            }
        }
        let mut grown = Self::with_capacity(needed.max(self.capacity().saturating_mul(2)));
        grown.extend_from_slice(self);
        *self = grown;
    }

    pub fn push(&mut self, x: T) {
        self.extend_from_slice(&[x]);
    }

    pub fn extend_from_slice(&mut self, xs: &[T]) {
        self.reserve(xs.len());
        match &mut self.storage {
            Storage::Heap(v) => v.extend_from_slice(xs),
            Storage::Mapped { map, len } => {
                let all: &mut [T] = bytemuck::cast_slice_mut(&mut map[..]);
                all[*len..*len + xs.len()].copy_from_slice(xs);
                *len += xs.len();
            }
        }
    }
}

impl<T: Pod> Default for CodeBuffer<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Pod> Extend<T> for CodeBuffer<T> {
    /// Copies the items in runs of 64: one code's bytes are one call, not one per byte.
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        let items = items.into_iter();
        self.reserve(items.size_hint().0);
        let mut run = [T::zeroed(); 64];
        let mut n = 0;
        for x in items {
            run[n] = x;
            n += 1;
            if n == run.len() {
                self.extend_from_slice(&run);
                n = 0;
            }
        }
        self.extend_from_slice(&run[..n]);
    }
}

impl<T: Pod> Deref for CodeBuffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.storage {
            Storage::Heap(v) => v,
            // A mapping starts on a page boundary and is a whole number of elements long,
            // so the cast cannot fail.
            Storage::Mapped { map, len } => &bytemuck::cast_slice(&map[..])[..*len],
        }
    }
}

impl<T: Pod> DerefMut for CodeBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Heap(v) => v,
            Storage::Mapped { map, len } => &mut bytemuck::cast_slice_mut(&mut map[..])[..*len],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LARGE: usize = MAPPED_FROM_BYTES / 8;

    #[test]
    fn a_large_buffer_is_mapped_and_holds_what_was_written() {
        let mut b = CodeBuffer::<u64>::with_capacity(LARGE);
        assert!(b.is_mapped());
        assert_eq!(b.capacity(), LARGE);
        b.extend(0..LARGE as u64);
        assert_eq!(b.len(), LARGE);
        assert!(b.iter().enumerate().all(|(i, &x)| x == i as u64));
        // Past its capacity it grows, keeping what it held.
        b.push(7);
        assert!(b.capacity() >= 2 * LARGE);
        assert_eq!((b[0], b[LARGE - 1], b[LARGE]), (0, LARGE as u64 - 1, 7));
        b[1] = 9;
        assert_eq!(b[1], 9);
    }

    #[test]
    fn a_small_buffer_stays_on_the_heap_until_it_grows_large() {
        let mut b = CodeBuffer::<i8>::new();
        b.extend_from_slice(&[1, -2, 3]);
        assert!(!b.is_mapped());
        assert_eq!(&b[..], &[1, -2, 3]);
        let big: Vec<i8> = (0..MAPPED_FROM_BYTES).map(|i| (i % 251) as i8).collect();
        b.extend_from_slice(&big);
        assert!(b.is_mapped());
        assert_eq!(b.len(), 3 + big.len());
        assert_eq!(&b[..3], &[1, -2, 3]);
        assert_eq!(&b[3..], &big[..]);
    }
}
