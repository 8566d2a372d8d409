//! The bottom storage layer, shared by `index`, `graph` and `retrieval`: the chunk row and
//! its Arrow schema, the filter and visibility model with its predicates, row replacement,
//! vector similarity, where indexes live (a directory or an object store), and the error
//! every store returns. It imports nothing above `model` and `embedding`.

pub mod error;
pub mod filters;
pub mod index_storage;
mod lance_writes;
pub mod rows;
pub mod similarity;
pub mod strict_commit;

pub use error::StoreError;
pub use lance_writes::{in_list, replace_documents};
