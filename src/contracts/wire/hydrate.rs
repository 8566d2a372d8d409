//! Contract 002's hydration: the request as it is read and the answer as it is written.

use std::num::NonZeroU64;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{IndexVersion, Offsets};

/// Most chunk ids one hydrate request may name.
pub const MAX_HYDRATE_IDS: usize = 100;
/// Widest neighbour window a hydrate request may ask for.
pub const MAX_WINDOW: u64 = 5;

/// `POST /v1/indexes/{index}/hydrate`: the chunks to fetch whole, and how much around them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "HydrateRequest")]
pub struct HydrateRequestBody {
    /// The chunks to fetch; an id asked twice is answered once.
    // Required; absent or null, it breaks the range rule, as before the types.
    #[schemars(required, with = "Vec<String>", length(min = 1, max = MAX_HYDRATE_IDS))]
    pub chunk_ids: Option<Vec<String>>,
    /// Neighbours to include on each side, within the document.
    #[serde(default)]
    #[schemars(range(max = MAX_WINDOW), extend("default" = 1))]
    pub window: Option<u64>,
    /// Also group the chunks by the section they belong to.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub sections: Option<bool>,
    /// Read this retained version instead of the newest.
    #[serde(default)]
    #[schemars(with = "Option<IndexVersion>")]
    pub index_version: Option<NonZeroU64>,
}

/// The answer of a hydrate request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "HydrateResponse")]
pub struct HydrateResponse {
    /// The version read.
    #[schemars(with = "IndexVersion")]
    pub index_version: u64,
    /// The chunks found, in request order.
    pub chunks: Vec<HydratedChunk>,
    /// Requested ids that are not (or no longer) in the index: not an error.
    pub not_found: Vec<String>,
    /// Present when the request set `sections: true`: each section once.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<HydratedSection>")]
    pub sections: Option<Vec<HydratedSection>>,
}

/// One requested chunk, whole, with its neighbours.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HydratedChunk {
    /// The chunk.
    pub chunk_id: String,
    /// Its document.
    pub document_id: String,
    /// Its position in the document.
    pub chunk_index: u32,
    /// The document's title.
    pub title: Option<String>,
    /// The enclosing headings, outermost first.
    pub section_path: Vec<String>,
    /// `Title › Section › Subsection`, for citing.
    pub breadcrumb: String,
    /// The document's uri, else its source_path.
    pub source_uri: Option<String>,
    /// The chunk's full text.
    pub text: String,
    pub offsets: Offsets,
    #[schemars(with = "super::chunk_metadata::ChunkMetadata<'static>")]
    pub metadata: Map<String, Value>,
    pub context: ChunkContext,
}

/// A hydrated chunk's neighbours within its document.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(inline)]
pub struct ChunkContext {
    /// Up to `window` preceding chunks, in order.
    pub before: Vec<ChunkBrief>,
    /// Up to `window` following chunks, in order.
    pub after: Vec<ChunkBrief>,
    /// The run of chunks joined with their overlap removed.
    pub stitched_text: String,
}

/// A neighbour of a hydrated chunk.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChunkBrief {
    /// The neighbour's id.
    pub chunk_id: String,
    /// Its position in the document.
    pub chunk_index: u32,
    /// Its text.
    pub text: String,
}

/// One section the requested chunks fall in.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HydratedSection {
    /// The document.
    pub document_id: String,
    /// The section's headings, outermost first.
    pub section_path: Vec<String>,
    /// `Title › Section › Subsection`.
    pub breadcrumb: String,
    /// The requested chunks that fall in this section.
    pub chunk_ids: Vec<String>,
    /// Every chunk of the section, in order.
    pub section_chunk_ids: Vec<String>,
    /// The whole section's text, overlap removed.
    pub stitched_text: String,
}
