//! The commands of `ragstream-bench`, one file each: thin edges over the benchmarks and the
//! evaluation, with the library's command-line helpers (`ragstream::cli`).

pub mod bench;
pub mod eval;
