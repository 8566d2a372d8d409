// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: Copyright The Lance Authors

pub mod address;
pub mod aimd;
pub mod assume;
pub mod backoff;
pub mod bit;
pub mod blob;
pub mod bloomfilter;
pub mod cpu;
pub mod deletion;
pub mod fragment_reuse;
pub mod futures;
pub mod hash;
pub mod io_stats;
pub mod parse;
pub mod path;
pub mod row_addr_remap;
pub mod stable_partition;
pub mod tempfile;
pub mod testing;
pub mod tokio;
pub mod tracing;
