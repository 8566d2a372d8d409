//! One adapter per contract in `../shared/contracts/`. Adapters map a wire shape to engine
//! requests and engine results back; no retrieval logic lives here.

pub mod c000_retrieval_calls;
