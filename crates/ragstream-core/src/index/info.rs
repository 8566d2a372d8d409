//! What an index records about itself in `index.json`: its embedder now and those of
//! earlier versions, its query defaults, and how `auto` was calibrated.

use serde::{Deserialize, Serialize};

use super::{IndexStorage, StoreError};
use crate::model::{BranchFusion, IndexName};

/// What an index records about itself: its embedder now, and the embedders of earlier
/// versions (`ragstream index reembed` switches models in a new version).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexInfo {
    pub name: String,
    pub embedder: String,
    pub dimensions: usize,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous_embedders: Vec<EmbedderEra>,
    /// Query defaults of this index (contract 002); a request's own values beat them.
    #[serde(default)]
    pub defaults: IndexDefaults,
    /// Rows the vector index was last trained on: it is retrained once the index has twice
    /// as many (rows added in between go to the partitions it has).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_index_trained_rows: Option<usize>,
    /// The centre of the resident vectors' sign codes: the mean of the first rows when the
    /// index first had a vector index. Recorded once (per embedder), because every pinned
    /// answer of a resident search depends on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_center: Option<Vec<f32>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct IndexDefaults {
    pub default_retrieval_profile: Option<crate::model::Profile>,
    pub default_semantic_weight: Option<f64>,
    /// Where `auto` starts on this index (`ragstream index calibrate` measures it); `None`
    /// is balanced.
    #[serde(default)]
    pub auto_semantic_center: Option<f64>,
    /// The weight `auto` gives a passage on this index (calibration measures it on passage
    /// queries); `None` is balanced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_passage_weight: Option<f64>,
    /// How hybrid scales its branches on this index, for every contract but 000 (calibration
    /// measures it); `None` is contract 000's way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion: Option<BranchFusion>,
    /// How `auto_semantic_center`, `auto_passage_weight` and `fusion` were measured; `None`
    /// when they were set by hand (or never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_calibration: Option<AutoCalibration>,
}

impl IndexDefaults {
    /// How a query fuses on this index: its own choice (contract 002's `fusion`), else the
    /// index's, else contract 000's way.
    pub fn fusion_for(&self, requested: Option<BranchFusion>) -> BranchFusion {
        requested.or(self.fusion).unwrap_or_default()
    }

    /// Whether the centre was measured on the index's own synthetic queries: the one kind
    /// a model's measured centre, or a switch of model, replaces.
    pub fn has_synthetic_center(&self) -> bool {
        matches!(
            self.auto_calibration,
            Some(AutoCalibration {
                source: CalibrationSource::Synthetic,
                ..
            })
        )
    }
}

/// Where an index's `auto` centre came from, and the rows the index had then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AutoCalibration {
    pub source: CalibrationSource,
    pub rows: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationSource {
    /// Judged queries of the index's domain (`ragstream index calibrate --queries --qrels`).
    Judged,
    /// Queries the index cut from its own chunks (`eval::synthetic`).
    Synthetic,
}

/// Versions below `until_version` were embedded with `embedder`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedderEra {
    pub embedder: String,
    pub dimensions: usize,
    pub until_version: u64,
}

impl IndexInfo {
    /// The defaults queries run with: those stored, with the centre `auto` starts from
    /// settled. A centre set by hand or measured on judged queries wins; then the one measured
    /// for the index's embedder ([`crate::embedding::measured_auto_center`]), with contract
    /// 000's fusion; then the index's own synthetic calibration; else none (balanced).
    pub fn query_defaults(&self) -> IndexDefaults {
        let mut defaults = self.defaults;
        if defaults.auto_semantic_center.is_none() || defaults.has_synthetic_center() {
            if let Some(center) = crate::embedding::measured_auto_center(&self.embedder) {
                defaults.auto_semantic_center = Some(center);
                // The model's centre was measured with contract 000's fusion: a synthetic
                // fusion goes with the synthetic centre it replaces.
                if defaults.has_synthetic_center() {
                    defaults.fusion = None;
                }
            }
        }
        defaults
    }

    /// The embedder and dimensions of the vectors at `version`.
    pub fn embedder_at(&self, version: u64) -> (&str, usize) {
        self.previous_embedders
            .iter()
            .find(|era| version < era.until_version)
            .map_or((self.embedder.as_str(), self.dimensions), |era| {
                (era.embedder.as_str(), era.dimensions)
            })
    }
}

/// Commit property of a `reembed` commit: `"<embedder>/<dimensions>"`, so that a crash between
/// the Lance commit and the `index.json` update is finished on the next open.
pub const EMBEDDER_PROPERTY: &str = "ragstream.embedder";

/// `index.json` of index `name`; [`StoreError::UnknownIndex`] when it has none.
pub(super) async fn read_info(
    storage: &IndexStorage,
    name: &IndexName,
) -> Result<IndexInfo, StoreError> {
    let Some(bytes) = storage.read_info(name).await? else {
        return Err(StoreError::UnknownIndex(name.to_string()));
    };
    let info: IndexInfo = serde_json::from_slice(&bytes).map_err(|e| {
        StoreError::Corrupt(format!(
            "index.json of {name} in {}: {e}",
            storage.describe()
        ))
    })?;
    if storage.object().is_some() && info.name != name.as_str() {
        // A prefix copied from another index, or a store shared by mistake.
        return Err(StoreError::Corrupt(format!(
            "index.json of {name} in {} names index {}",
            storage.describe(),
            info.name
        )));
    }
    Ok(info)
}

/// `index.json`'s bytes.
pub(super) fn info_bytes(info: &IndexInfo) -> Vec<u8> {
    serde_json::to_vec_pretty(info).expect("info serialises")
}

pub(super) fn parse_embedder_property(value: &str) -> Result<(String, usize), StoreError> {
    value
        .rsplit_once('/')
        .and_then(|(e, d)| Some((e.to_string(), d.parse().ok()?)))
        .ok_or_else(|| StoreError::Corrupt(format!("{EMBEDDER_PROPERTY} is {value:?}")))
}

/// Records that versions from `from_version` on use `embedder`.
pub(super) fn switch_embedder(
    info: &mut IndexInfo,
    embedder: String,
    dimensions: usize,
    from_version: u64,
) {
    let previous = EmbedderEra {
        embedder: std::mem::replace(&mut info.embedder, embedder),
        dimensions: std::mem::replace(&mut info.dimensions, dimensions),
        until_version: from_version,
    };
    info.previous_embedders.push(previous);
    // Another model's vectors have another mean (and maybe other dimensions).
    info.resident_center = None;
    // And another best centre, passage weight and fusion for `auto`: the index measures them
    // again when due. Those set by hand or on judged queries are the owner's, and stay.
    if info.defaults.has_synthetic_center() {
        info.defaults.auto_semantic_center = None;
        info.defaults.auto_passage_weight = None;
        info.defaults.fusion = None;
        info.defaults.auto_calibration = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(embedder: &str, center: Option<f64>, source: Option<CalibrationSource>) -> IndexInfo {
        IndexInfo {
            name: "i".into(),
            embedder: embedder.into(),
            dimensions: 384,
            created_at: String::new(),
            previous_embedders: Vec::new(),
            defaults: IndexDefaults {
                auto_semantic_center: center,
                auto_calibration: source.map(|source| AutoCalibration {
                    source,
                    rows: 1_000,
                }),
                ..Default::default()
            },
            vector_index_trained_rows: None,
            resident_center: None,
        }
    }

    #[test]
    fn auto_starts_from_the_owners_centre_then_the_models_then_the_indexs_own() {
        use crate::embedding::{measured_auto_center, MINILM_ID, STATIC_MODEL_ID};
        use CalibrationSource::{Judged, Synthetic};
        let measured = measured_auto_center(MINILM_ID).expect("MiniLM has a measured centre");
        assert_eq!(measured_auto_center(STATIC_MODEL_ID), None);
        let center = |i: IndexInfo| i.query_defaults().auto_semantic_center;
        assert_eq!(center(info(MINILM_ID, None, None)), Some(measured));
        assert_eq!(
            center(info(MINILM_ID, Some(0.4), Some(Synthetic))),
            Some(measured)
        );
        assert_eq!(
            center(info(MINILM_ID, Some(0.3), None)),
            Some(0.3),
            "set by hand"
        );
        assert_eq!(center(info(MINILM_ID, Some(0.6), Some(Judged))), Some(0.6));
        assert_eq!(
            center(info(STATIC_MODEL_ID, Some(0.2), Some(Synthetic))),
            Some(0.2)
        );
        assert_eq!(center(info(STATIC_MODEL_ID, None, None)), None, "balanced");

        // A fusion goes with its centre: the model's centre brings contract 000's fusion.
        let fusion = |mut i: IndexInfo, f| {
            i.defaults.fusion = Some(f);
            i.query_defaults().fusion
        };
        let z = BranchFusion::ZScore;
        assert_eq!(fusion(info(MINILM_ID, Some(0.4), Some(Synthetic)), z), None);
        assert_eq!(
            fusion(info(MINILM_ID, None, None), z),
            Some(z),
            "set by hand"
        );
        assert_eq!(fusion(info(MINILM_ID, Some(0.6), Some(Judged)), z), Some(z));
        assert_eq!(
            fusion(info(STATIC_MODEL_ID, Some(0.2), Some(Synthetic)), z),
            Some(z)
        );
    }

    #[test]
    fn switching_models_forgets_synthetic_weights_but_not_the_owners() {
        let mut synthetic = info(STATIC, Some(0.2), Some(CalibrationSource::Synthetic));
        synthetic.defaults.auto_passage_weight = Some(0.3);
        synthetic.defaults.fusion = Some(BranchFusion::ZScore);
        switch_embedder(&mut synthetic, "other".into(), 8, 5);
        assert_eq!(synthetic.defaults, IndexDefaults::default());
        let mut judged = info(STATIC, Some(0.3), Some(CalibrationSource::Judged));
        judged.defaults.auto_passage_weight = Some(0.4);
        judged.defaults.fusion = Some(BranchFusion::MinMax);
        let before = judged.defaults;
        switch_embedder(&mut judged, "other".into(), 8, 5);
        assert_eq!(judged.defaults, before);
        assert_eq!(judged.embedder_at(4), (STATIC, 384));
    }

    const STATIC: &str = crate::embedding::STATIC_MODEL_ID;
}
