use std::cmp::Ordering;

use columnar::ColumnType;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use tantivy_bitpacker::minmax;

use crate::aggregation::agg_data::{build_sub_agg_collectors, AggNode, AggregationsSegmentCtx};
use crate::aggregation::agg_req::Aggregations;
use crate::aggregation::agg_result::BucketEntry;
use crate::aggregation::buffered_sub_aggs::{BufferedSubAggs, HighCardBufferedSubAggs};
use crate::aggregation::intermediate_agg_result::{
    IntermediateAggregationResult, IntermediateAggregationResults, IntermediateBucketResult,
    IntermediateHistogramBucketEntry,
};
use crate::aggregation::segment_agg_result::{BucketIdProvider, SegmentAggregationCollector};
use crate::aggregation::*;
use crate::TantivyError;

/// Contains all information required by the SegmentHistogramCollector to perform the
/// histogram or date_histogram aggregation on a segment.
#[derive(Debug)]
pub(crate) struct HistogramAggReqData {
    /// The column accessor to access the fast field values.
    pub(crate) accessor: Box<dyn ValueSource>,
    /// The name of the aggregation.
    pub(crate) name: String,
    /// The histogram aggregation request.
    pub(crate) req: HistogramAggregation,
    /// True if this is a date_histogram aggregation.
    pub(crate) is_date_histogram: bool,
    /// The bounds to limit the buckets to.
    pub(crate) bounds: HistogramBounds,
    /// The offset used to calculate the bucket position.
    pub(crate) offset: f64,
}

/// If the entire column is within the request hard bound,
/// we can remove them.
fn get_simplified_bounds(
    req_bound_opt: Option<HistogramBounds>,
    value_source: &dyn ValueSource,
) -> HistogramBounds {
    let Some(req_bound) = req_bound_opt else {
        return HistogramBounds::UNBOUNDED;
    };
    let Some((col_min_typed, col_max_typed)) = value_source.bounds() else {
        return req_bound;
    };
    let column_type = value_source.column_type();
    let col_min = f64_from_fastfield_u64(col_min_typed, column_type);
    let col_max = f64_from_fastfield_u64(col_max_typed, column_type);
    if col_min >= req_bound.min && col_max <= req_bound.max {
        HistogramBounds::UNBOUNDED
    } else {
        req_bound
    }
}

impl HistogramAggReqData {
    /// Creates the request data of a histogram aggregation, validating and normalizing `req`.
    pub(crate) fn new(
        accessor: Box<dyn ValueSource>,
        name: String,
        mut req: HistogramAggregation,
        is_date_histogram: bool,
    ) -> crate::Result<Self> {
        req.validate()?;
        let field_type = accessor.column_type();
        // Date values are stored in ns, but the request uses ms.
        if field_type == ColumnType::DateTime {
            req.normalize_date_time();
        }

        let bounds = get_simplified_bounds(req.hard_bounds, &*accessor);
        let offset = req.offset.unwrap_or(0.0);
        Ok(HistogramAggReqData {
            accessor,
            name,
            req,
            is_date_histogram,
            bounds,
            offset,
        })
    }
}
impl HistogramAggReqData {
    /// Estimate the memory consumption of this struct in bytes.
    pub fn get_memory_consumption(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

/// Histogram is a bucket aggregation, where buckets are created dynamically for given `interval`.
/// Each document value is rounded down to its bucket.
///
/// E.g. if we have a price 18 and an interval of 5, the document will fall into the bucket with
/// the key 15. The formula used for this is:
/// `((val - offset) / interval).floor() * interval + offset`
///
/// For this calculation all fastfield values are converted to f64.
///
/// # Returned Buckets
/// By default buckets are returned between the min and max value of the documents, including empty
/// buckets.
/// Setting min_doc_count to != 0 will filter empty buckets.
///
/// The value range of the buckets can bet extended via
/// [extended_bounds](HistogramAggregation::extended_bounds) or limit the range via
/// [hard_bounds](HistogramAggregation::hard_bounds).
///
/// # Result
/// Result type is [`BucketResult`](crate::aggregation::agg_result::BucketResult) with
/// [`BucketEntry`](crate::aggregation::agg_result::BucketEntry) on the
/// `AggregationCollector`.
///
/// Result type is
/// [`IntermediateBucketResult`](crate::aggregation::intermediate_agg_result::IntermediateBucketResult) with
/// [`IntermediateHistogramBucketEntry`](crate::aggregation::intermediate_agg_result::IntermediateHistogramBucketEntry) on the
/// `DistributedAggregationCollector`.
///
/// # Limitations/Compatibility
///
/// # JSON Format
/// ```json
/// {
///     "prices": {
///         "histogram": {
///             "field": "price",
///             "interval": 10
///         }
///     }
/// }
/// ```
///
/// Response
/// See [`BucketEntry`](crate::aggregation::agg_result::BucketEntry)
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramAggregation {
    /// The field to aggregate on.
    pub field: String,
    /// The interval to chunk your data range. Each bucket spans a value range of [0..interval).
    /// Must be a positive value.
    #[serde(deserialize_with = "deserialize_f64")]
    pub interval: f64,
    /// Intervals implicitly defines an absolute grid of buckets `[interval * k, interval * (k +
    /// 1))`.
    ///
    /// Offset makes it possible to shift this grid into
    /// `[offset + interval * k, offset + interval * (k + 1))`. Offset has to be in the range [0,
    /// interval).
    ///
    /// As an example, if there are two documents with value 9 and 12 and interval 10.0, they would
    /// fall into the buckets with the key 0 and 10.
    /// With offset 5 and interval 10, they would both fall into the bucket with they key 5 and the
    /// range [5..15)
    #[serde(default, deserialize_with = "deserialize_option_f64")]
    pub offset: Option<f64>,
    /// The minimum number of documents in a bucket to be returned. Defaults to 0.
    pub min_doc_count: Option<u64>,
    /// Limits the data range to `[min, max]` closed interval.
    ///
    /// This can be used to filter values if they are not in the data range.
    ///
    /// hard_bounds only limits the buckets, to force a range set both extended_bounds and
    /// hard_bounds to the same range.
    ///
    /// ## Example
    /// ```json
    /// {
    ///     "prices": {
    ///        "histogram": {
    ///            "field": "price",
    ///            "interval": 10,
    ///            "hard_bounds": {
    ///                "min": 0,
    ///                "max": 100
    ///            }
    ///        }
    ///    }
    /// }
    /// ```
    pub hard_bounds: Option<HistogramBounds>,
    /// Can be set to extend your bounds. The range of the buckets is by default defined by the
    /// data range of the values of the documents. As the name suggests, this can only be used to
    /// extend the value range. If the bounds for min or max are not extending the range, the value
    /// has no effect on the returned buckets.
    ///
    /// Cannot be set in conjunction with min_doc_count > 0, since the empty buckets from extended
    /// bounds would not be returned.
    pub extended_bounds: Option<HistogramBounds>,
    /// Whether to return the buckets as a hash map
    #[serde(default)]
    pub keyed: bool,
    /// Whether the values are normalized to ns for date time values. Defaults to false.
    #[serde(default)]
    pub is_normalized_to_ns: bool,
}

impl HistogramAggregation {
    pub(crate) fn normalize_date_time(&mut self) {
        if !self.is_normalized_to_ns {
            // values are provided in ms, but the fastfield is in nano seconds
            self.interval *= 1_000_000.0;
            self.offset = self.offset.map(|off| off * 1_000_000.0);
            self.hard_bounds = self.hard_bounds.map(|bounds| HistogramBounds {
                min: bounds.min * 1_000_000.0,
                max: bounds.max * 1_000_000.0,
            });
            self.extended_bounds = self.extended_bounds.map(|bounds| HistogramBounds {
                min: bounds.min * 1_000_000.0,
                max: bounds.max * 1_000_000.0,
            });
            self.is_normalized_to_ns = true;
        }
    }

    fn validate(&self) -> crate::Result<()> {
        if self.interval <= 0.0f64 {
            return Err(TantivyError::InvalidArgument(
                "interval must be a positive value".to_string(),
            ));
        }

        if self.min_doc_count.unwrap_or(0) > 0 && self.extended_bounds.is_some() {
            return Err(TantivyError::InvalidArgument(
                "Cannot set min_doc_count and extended_bounds at the same time".to_string(),
            ));
        }

        if let (Some(hard_bounds), Some(extended_bounds)) = (self.hard_bounds, self.extended_bounds)
        {
            if extended_bounds.min < hard_bounds.min || extended_bounds.max > hard_bounds.max {
                return Err(TantivyError::InvalidArgument(format!(
                    "extended_bounds have to be inside hard_bounds, extended_bounds: \
                     {extended_bounds}, hard_bounds {hard_bounds}"
                )));
            }
        }

        Ok(())
    }

    /// Returns the minimum number of documents required for a bucket to be returned.
    pub fn min_doc_count(&self) -> u64 {
        self.min_doc_count.unwrap_or(0)
    }
}

/// Used to set extended or hard bounds on the histogram.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistogramBounds {
    /// The lower bounds.
    #[serde(deserialize_with = "deserialize_date_or_num")]
    pub min: f64,
    /// The upper bounds.
    #[serde(deserialize_with = "deserialize_date_or_num")]
    pub max: f64,
}

impl HistogramBounds {
    const UNBOUNDED: HistogramBounds = HistogramBounds {
        min: f64::MIN,
        max: f64::MAX,
    };
}

fn deserialize_date_or_num<'de, D>(deserializer: D) -> Result<f64, D::Error>
where D: serde::Deserializer<'de> {
    let value: serde_json::Value = Deserialize::deserialize(deserializer)?;

    // Check if the value is a string representing an Rfc3339 formatted date
    if let serde_json::Value::String(date_str) = value {
        // Parse the Rfc3339 formatted date string into a DateTime<Utc>
        let date =
            time::OffsetDateTime::parse(&date_str, &time::format_description::well_known::Rfc3339)
                .map_err(|_| serde::de::Error::custom("Invalid Rfc3339 formatted date"))?;

        let milliseconds: i64 = (date.unix_timestamp_nanos() / 1_000_000)
            .try_into()
            .map_err(|_| serde::de::Error::custom("{date_str} out of allowed range"))?;

        // Return the milliseconds as f64
        Ok(milliseconds as f64)
    } else {
        // The value is not a string, so assume it's a regular f64 number
        value
            .as_f64()
            .ok_or_else(|| serde::de::Error::custom("Invalid number format"))
    }
}

impl Display for HistogramBounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_fmt(format_args!("[{},{}]", self.min, self.max))
    }
}

impl HistogramBounds {
    pub(crate) fn contains(&self, val: f64) -> bool {
        val >= self.min && val <= self.max
    }
}

/// The per-bucket identifier stored alongside a bucket's count (e.g. in a
/// [`SegmentHistogramBucketEntry`] or a term-agg `Bucket`).
///
/// It is [`BucketId`] when the aggregation has sub aggregations (which key their state by it), and
/// the zero-sized `()` when it does not. Without sub aggregations the id is never read, so storing
/// `()` drops the id bytes per bucket and turns id assignment into a no-op.
pub trait BucketIdSlot: Copy + Default + std::fmt::Debug + PartialEq + 'static {
    /// Whether this slot carries a real id, i.e. `assign` produces a meaningful value. `false` for
    /// the `()` slot, letting callers gate id-assignment code out at compile time (e.g. skip the
    /// lazy-assign branch in a hot loop entirely rather than relying on the optimizer).
    const ASSIGNS_ID: bool;
    /// Assigns the next id from the provider, called once when a bucket is first filled.
    fn assign(provider: &mut BucketIdProvider) -> Self;
    /// Resolves to the `BucketId` for sub-aggregation bookkeeping.
    ///
    /// Only ever called for the [`BucketId`] slot: the `()` slot is used exactly when there are no
    /// sub aggregations, so every call site is guarded by `sub_agg.is_some()` and is dead for `()`.
    fn to_bucket_id(self) -> BucketId;
}
impl BucketIdSlot for BucketId {
    const ASSIGNS_ID: bool = true;
    #[inline(always)]
    fn assign(provider: &mut BucketIdProvider) -> Self {
        provider.next_bucket_id()
    }
    #[inline(always)]
    fn to_bucket_id(self) -> BucketId {
        self
    }
}
impl BucketIdSlot for () {
    const ASSIGNS_ID: bool = false;
    #[inline(always)]
    fn assign(_provider: &mut BucketIdProvider) -> Self {}
    #[inline(always)]
    fn to_bucket_id(self) -> BucketId {
        unreachable!("bucket ids are only resolved when sub aggregations are present")
    }
}

#[derive(Default, Clone, Debug, PartialEq)]
pub(crate) struct SegmentHistogramBucketEntry<B> {
    pub key: f64,
    pub doc_count: u64,
    pub bucket_id: B,
}

impl<B: BucketIdSlot> SegmentHistogramBucketEntry<B> {
    pub(crate) fn into_intermediate_bucket_entry(
        self,
        sub_aggregation: &mut Option<HighCardBufferedSubAggs>,
        agg_data: &AggregationsSegmentCtx,
    ) -> crate::Result<IntermediateHistogramBucketEntry> {
        let mut sub_aggregation_res = IntermediateAggregationResults::default();
        if let Some(sub_aggregation) = sub_aggregation {
            sub_aggregation
                .get_sub_agg_collector()
                .add_intermediate_aggregation_result(
                    agg_data,
                    &mut sub_aggregation_res,
                    self.bucket_id.to_bucket_id(),
                )?;
        }
        Ok(IntermediateHistogramBucketEntry {
            key: self.key,
            doc_count: self.doc_count,
            sub_aggregation: sub_aggregation_res,
        })
    }
}

/// The contiguous bucket range a histogram can span, derived from the column min/max (clamped to
/// the histogram bounds). Buckets in `[base_pos, base_pos + len)` can be stored in a flat `Vec`
/// indexed by `bucket_pos - base_pos`, avoiding the hash map on the hot path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DenseRange {
    /// `bucket_pos` mapped to index 0 of the dense `Vec`.
    pub(crate) base_pos: i64,
    /// Number of bucket positions in the range.
    pub(crate) len: usize,
}

/// Storage for the histogram buckets of a single parent bucket.
///
/// Starts out sparse (a hash map keyed by `bucket_pos`). Once enough distinct buckets have been
/// filled that we are clearly going to cover most of the column's theoretical range, it switches
/// to a dense `Vec` indexed by `bucket_pos - base_pos`, which removes hashing from the hot loop.
#[derive(Clone, Debug)]
enum HistogramBuckets<B> {
    Sparse(FxHashMap<i64, SegmentHistogramBucketEntry<B>>),
    Dense {
        base_pos: i64,
        /// One slot per bucket position; a slot with `doc_count == 0` has not been hit yet.
        buckets: Vec<SegmentHistogramBucketEntry<B>>,
    },
}
impl<B> Default for HistogramBuckets<B> {
    fn default() -> Self {
        HistogramBuckets::Sparse(FxHashMap::default())
    }
}
impl<B: BucketIdSlot> HistogramBuckets<B> {
    fn memory_consumption(&self) -> u64 {
        let num_slots = match self {
            HistogramBuckets::Sparse(map) => map.capacity(),
            HistogramBuckets::Dense { buckets, .. } => buckets.capacity(),
        };
        num_slots as u64 * std::mem::size_of::<SegmentHistogramBucketEntry<B>>() as u64
    }

    /// Switches from sparse to dense storage once the dense `Vec` would use no more memory than the
    /// hash map does now, so the switch never increases memory. Called at block boundaries.
    ///
    /// The `Vec` holds one `Entry` per bucket position in the range. The map additionally stores
    /// the key and a control byte per slot, at a load factor of 7/16..7/8, so for a dense histogram
    /// its footprint grows past the `Vec` well before full coverage. And since the `Vec` never
    /// grows afterwards while the map would keep growing, dense only gets relatively cheaper — so
    /// no upper bound on the range is needed: a large but sparse range simply never crosses over.
    #[inline]
    fn maybe_densify(&mut self, dense_range: Option<DenseRange>) {
        let Some(range) = dense_range else { return };
        let HistogramBuckets::Sparse(map) = self else {
            return;
        };
        let dense_bytes = range
            .len
            .saturating_mul(std::mem::size_of::<SegmentHistogramBucketEntry<B>>());
        let sparse_bytes = map
            .capacity()
            .saturating_mul(std::mem::size_of::<(i64, SegmentHistogramBucketEntry<B>)>() + 1);
        if dense_bytes > sparse_bytes {
            return;
        }
        let map = std::mem::take(map);
        let mut buckets = vec![SegmentHistogramBucketEntry::<B>::default(); range.len];
        for (bucket_pos, entry) in map {
            buckets[(bucket_pos - range.base_pos) as usize] = entry;
        }
        *self = HistogramBuckets::Dense {
            base_pos: range.base_pos,
            buckets,
        };
    }

    /// Returns the bucket entry for `bucket_pos`, setting its key (and `bucket_id`, when `B` is
    /// [`BucketId`]) on first use.
    ///
    /// For the dense variant `bucket_pos` is guaranteed to be inside the range, since it is
    /// derived from the column min/max that bounds every value (see [`compute_dense_range`]).
    #[inline]
    fn get_or_create(
        &mut self,
        bucket_pos: i64,
        bucket_id_provider: &mut BucketIdProvider,
        key_from_pos: impl FnOnce(i64) -> f64,
    ) -> &mut SegmentHistogramBucketEntry<B> {
        match self {
            HistogramBuckets::Sparse(map) => {
                map.entry(bucket_pos)
                    .or_insert_with(|| SegmentHistogramBucketEntry {
                        key: key_from_pos(bucket_pos),
                        doc_count: 0,
                        bucket_id: B::assign(bucket_id_provider),
                    })
            }
            HistogramBuckets::Dense { base_pos, buckets } => {
                let idx = (bucket_pos - *base_pos) as usize;
                debug_assert!(idx < buckets.len(), "bucket_pos outside the dense range");
                let entry = &mut buckets[idx];
                if entry.doc_count == 0 {
                    entry.key = key_from_pos(bucket_pos);
                    entry.bucket_id = B::assign(bucket_id_provider);
                }
                entry
            }
        }
    }

    /// Consumes the storage, yielding all non-empty bucket entries.
    fn into_filled_entries(self) -> Vec<SegmentHistogramBucketEntry<B>> {
        match self {
            HistogramBuckets::Sparse(map) => map.into_values().collect(),
            HistogramBuckets::Dense { buckets, .. } => {
                buckets.into_iter().filter(|b| b.doc_count > 0).collect()
            }
        }
    }
}

/// The collector puts values from the fast field into the correct buckets and does a conversion to
/// the correct datatype.
#[derive(Debug)]
pub struct SegmentHistogramCollector<B, const SOURCE_CONTAINS_MULTIVALUES: bool> {
    /// The buckets containing the aggregation data.
    /// One Histogram bucket per parent bucket id.
    parent_buckets: Vec<HistogramBuckets<B>>,
    sub_agg: Option<HighCardBufferedSubAggs>,
    req_data: HistogramAggReqData,
    column_type: ColumnType,
    bucket_id_provider: BucketIdProvider,
    /// Theoretical bucket range derived from the column min/max, if dense `Vec` storage is
    /// viable. `None` keeps every parent bucket in the sparse hash map.
    dense_range: Option<DenseRange>,
}

impl<B: BucketIdSlot, const SOURCE_CONTAINS_MULTIVALUES: bool> SegmentAggregationCollector
    for SegmentHistogramCollector<B, SOURCE_CONTAINS_MULTIVALUES>
{
    fn add_intermediate_aggregation_result(
        &mut self,
        agg_data: &AggregationsSegmentCtx,
        results: &mut IntermediateAggregationResults,
        parent_bucket_id: BucketId,
    ) -> crate::Result<()> {
        let name = self.req_data.name.clone();
        // TODO: avoid prepare_max_bucket here and handle empty buckets.
        self.prepare_max_bucket(parent_bucket_id, agg_data)?;
        let histogram = std::mem::take(&mut self.parent_buckets[parent_bucket_id as usize]);
        let bucket = self.add_intermediate_bucket_result(agg_data, histogram)?;
        results.push(name, IntermediateAggregationResult::Bucket(bucket))?;

        Ok(())
    }

    #[inline]
    fn collect(
        &mut self,
        parent_bucket_id: BucketId,
        docs: &[crate::DocId],
        agg_data: &mut AggregationsSegmentCtx,
    ) -> crate::Result<()> {
        let mem_pre = self.get_memory_consumption(parent_bucket_id);
        let dense_range = self.dense_range;
        let store = &mut self.parent_buckets[parent_bucket_id as usize];
        // Upgrade to dense storage before processing the block if the buckets are dense enough.
        store.maybe_densify(dense_range);

        let bounds = self.req_data.bounds;
        let interval = self.req_data.req.interval;
        let offset = self.req_data.offset;
        let get_bucket_pos = |val| get_bucket_pos_f64(val, interval, offset) as i64;

        let accessor = &mut agg_data.column_block_accessor;
        accessor.fetch_block_with_missing_unique_per_doc(
            docs,
            &mut *self.req_data.accessor,
            None,
            false,
        );
        // Known single-valued sources compile out deduplication; otherwise check the loaded batch.
        let multivalued = SOURCE_CONTAINS_MULTIVALUES && accessor.is_batch_multivalued();
        // Document IDs are needed for child collection and multivalued deduplication.
        if self.sub_agg.is_some() || multivalued {
            let mut previous = None;
            for (doc, val) in accessor.iter_docid_vals(docs) {
                let val = f64_from_fastfield_u64(val, self.column_type);
                if bounds.contains(val) {
                    let bucket_pos = get_bucket_pos(val);
                    if multivalued {
                        // The fetcher makes equal bucket hits consecutive within each document.
                        if previous == Some((doc, bucket_pos)) {
                            continue;
                        }
                        previous = Some((doc, bucket_pos));
                    }
                    let bucket =
                        store.get_or_create(bucket_pos, &mut self.bucket_id_provider, |pos| {
                            get_bucket_key_from_pos(pos as f64, interval, offset)
                        });
                    bucket.doc_count += 1;
                    if let Some(sub_agg) = &mut self.sub_agg {
                        sub_agg.push(bucket.bucket_id.to_bucket_id(), doc);
                    }
                }
            }
        } else {
            for val in accessor.iter_vals() {
                let val = f64_from_fastfield_u64(val, self.column_type);
                if bounds.contains(val) {
                    let bucket = store.get_or_create(
                        get_bucket_pos(val),
                        &mut self.bucket_id_provider,
                        |pos| get_bucket_key_from_pos(pos as f64, interval, offset),
                    );
                    bucket.doc_count += 1;
                }
            }
        }

        // `checked_sub` is `None` when densifying shrank the accounted memory; only account growth.
        if let Some(mem_delta) = self
            .get_memory_consumption(parent_bucket_id)
            .checked_sub(mem_pre)
        {
            agg_data.context.limits.add_memory_consumed(mem_delta)?;
        }

        if let Some(sub_agg) = &mut self.sub_agg {
            sub_agg.check_flush_local(agg_data)?;
        }

        Ok(())
    }

    fn flush(&mut self, agg_data: &mut AggregationsSegmentCtx) -> crate::Result<()> {
        if let Some(sub_aggregation) = &mut self.sub_agg {
            sub_aggregation.flush(agg_data)?;
        }
        Ok(())
    }

    fn prepare_max_bucket(
        &mut self,
        max_bucket: BucketId,
        _agg_data: &AggregationsSegmentCtx,
    ) -> crate::Result<()> {
        while self.parent_buckets.len() <= max_bucket as usize {
            self.parent_buckets.push(HistogramBuckets::default());
        }
        Ok(())
    }

    fn compute_metric_value(
        &self,
        _bucket_id: BucketId,
        _sub_agg_name: &str,
        _sub_agg_property: &str,
        _agg_data: &AggregationsSegmentCtx,
    ) -> Option<f64> {
        // Histogram is a multi-bucket agg with no single value to extract.
        None
    }
}

impl<B: BucketIdSlot, const SOURCE_CONTAINS_MULTIVALUES: bool>
    SegmentHistogramCollector<B, SOURCE_CONTAINS_MULTIVALUES>
{
    fn get_memory_consumption(&self, parent_bucket_id: BucketId) -> u64 {
        self.parent_buckets[parent_bucket_id as usize].memory_consumption()
    }

    /// Converts the collector result into a intermediate bucket result.
    fn add_intermediate_bucket_result(
        &mut self,
        agg_data: &AggregationsSegmentCtx,
        histogram: HistogramBuckets<B>,
    ) -> crate::Result<IntermediateBucketResult> {
        let filled = histogram.into_filled_entries();
        let mut buckets = Vec::with_capacity(filled.len());

        for bucket in filled {
            let bucket_res = bucket.into_intermediate_bucket_entry(&mut self.sub_agg, agg_data);

            buckets.push(bucket_res?);
        }
        buckets.sort_unstable_by(|b1, b2| b1.key.total_cmp(&b2.key));

        let is_date_agg = self.req_data.accessor.column_type() == ColumnType::DateTime;
        Ok(IntermediateBucketResult::Histogram {
            buckets,
            is_date_agg,
        })
    }

    pub(crate) fn from_req_and_validate(
        req_data: HistogramAggReqData,
        sub_agg: Option<Box<dyn SegmentAggregationCollector>>,
    ) -> Self {
        let dense_range = compute_dense_range(
            &*req_data.accessor,
            req_data.req.interval,
            req_data.offset,
            req_data.bounds,
        );
        let sub_agg = sub_agg.map(BufferedSubAggs::new);
        let column_type = req_data.accessor.column_type();
        Self {
            parent_buckets: Default::default(),
            sub_agg,
            req_data,
            column_type,
            bucket_id_provider: BucketIdProvider::default(),
            dense_range,
        }
    }
}

impl SegmentHistogramCollector<(), false> {
    /// Builds an empty histogram collector without sub aggregations, used by the flattened
    /// terms×histogram collector to turn its flat 2D counters into the regular intermediate
    /// result (see [`Self::fill_from_dense_rows`]), so cross-segment merging is shared with the
    /// general path.
    pub(crate) fn from_dense_rows(req_data: HistogramAggReqData) -> Self {
        let column_type = req_data.accessor.column_type();
        Self {
            parent_buckets: Vec::new(),
            sub_agg: None,
            req_data,
            column_type,
            bucket_id_provider: BucketIdProvider::default(),
            dense_range: None,
        }
    }

    /// Replaces the buckets of this collector: parent `t` becomes a dense histogram filled from
    /// `counts[t * num_time_buckets .. (t + 1) * num_time_buckets]` (row-major), consolidating
    /// each cell's count lanes.
    pub(crate) fn fill_from_dense_rows<const LANES: usize>(
        &mut self,
        base_pos: i64,
        num_time_buckets: usize,
        counts: &[[u32; LANES]],
    ) {
        let interval = self.req_data.req.interval;
        let offset = self.req_data.offset;
        let num_parents = counts.len().checked_div(num_time_buckets).unwrap_or(0);
        self.parent_buckets = (0..num_parents)
            .map(|t| {
                let row = &counts[t * num_time_buckets..(t + 1) * num_time_buckets];
                let buckets = row
                    .iter()
                    .enumerate()
                    .map(|(b, count_lanes)| SegmentHistogramBucketEntry {
                        key: get_bucket_key_from_pos(
                            (base_pos + b as i64) as f64,
                            interval,
                            offset,
                        ),
                        doc_count: count_lanes.iter().map(|&count| u64::from(count)).sum(),
                        bucket_id: (),
                    })
                    .collect();
                HistogramBuckets::Dense { base_pos, buckets }
            })
            .collect();
    }
}

/// Returns the dense bucket range of a normalized histogram request, or `None` if the column has
/// no usable range. Used by the flattened terms×histogram collector.
pub(crate) fn histogram_dense_range(req_data: &HistogramAggReqData) -> Option<DenseRange> {
    compute_dense_range(
        &*req_data.accessor,
        req_data.req.interval,
        req_data.offset,
        req_data.bounds,
    )
}

/// Builds a histogram (or date histogram) collector specialized for source cardinality and
/// bucket-id storage: `()` when there are no sub aggregations, otherwise [`BucketId`].
pub(crate) fn build_segment_histogram_collector(
    agg_data: &mut AggregationsSegmentCtx,
    req_data: HistogramAggReqData,
    children: Vec<AggNode>,
) -> crate::Result<Box<dyn SegmentAggregationCollector>> {
    // Computed sources may change cardinality between blocks.
    let source_contains_multivalues = if let Some(column) = req_data.accessor.as_physical_column() {
        column.index.get_cardinality().is_multivalue()
    } else {
        true
    };
    if source_contains_multivalues {
        build_histogram_collector_with_cardinality::<true>(agg_data, req_data, children)
    } else {
        build_histogram_collector_with_cardinality::<false>(agg_data, req_data, children)
    }
}

fn build_histogram_collector_with_cardinality<const SOURCE_CONTAINS_MULTIVALUES: bool>(
    agg_data: &mut AggregationsSegmentCtx,
    req_data: HistogramAggReqData,
    children: Vec<AggNode>,
) -> crate::Result<Box<dyn SegmentAggregationCollector>> {
    let sub_agg = build_sub_agg_collectors(agg_data, children)?;
    if sub_agg.is_some() {
        Ok(Box::new(SegmentHistogramCollector::<
            BucketId,
            SOURCE_CONTAINS_MULTIVALUES,
        >::from_req_and_validate(req_data, sub_agg)))
    } else {
        Ok(Box::new(SegmentHistogramCollector::<
            (),
            SOURCE_CONTAINS_MULTIVALUES,
        >::from_req_and_validate(req_data, sub_agg)))
    }
}

#[inline]
pub(crate) fn get_bucket_pos_f64(val: f64, interval: f64, offset: f64) -> f64 {
    ((val - offset) / interval).floor()
}

/// Computes the dense bucket range for a column from its min/max value (clamped to the histogram
/// bounds), or `None` if there are no values within bounds (or the range overflows `usize`).
///
/// There is no upper bound on the range: whether dense storage is actually used is decided later,
/// per parent bucket, by [`HistogramBuckets::maybe_densify`] based on the memory it would save.
///
/// The column min/max bound every value the collector can see, so a `Vec` sized to this range can
/// be indexed by `bucket_pos - base_pos` without any out-of-bounds check on the hot path.
///
/// Returns `None` for a computed source: there is no global range to size the `Vec` from, so the
/// histogram keeps its sparse map. The result is identical, just without the dense fast path.
fn compute_dense_range(
    accessor: &dyn ValueSource,
    interval: f64,
    offset: f64,
    bounds: HistogramBounds,
) -> Option<DenseRange> {
    let (min_value, max_value) = accessor.bounds()?;
    let field_type = accessor.column_type();
    let col_min = f64_from_fastfield_u64(min_value, field_type);
    let col_max = f64_from_fastfield_u64(max_value, field_type);
    let lo = col_min.max(bounds.min);
    let hi = col_max.min(bounds.max);
    if lo > hi {
        return None;
    }
    let base_pos = get_bucket_pos_f64(lo, interval, offset) as i64;
    let top_pos = get_bucket_pos_f64(hi, interval, offset) as i64;
    let len = usize::try_from(top_pos.checked_sub(base_pos)?.checked_add(1)?).ok()?;
    (len > 0).then_some(DenseRange { base_pos, len })
}

#[inline]
fn get_bucket_key_from_pos(bucket_pos: f64, interval: f64, offset: f64) -> f64 {
    bucket_pos * interval + offset
}

// Convert to BucketEntry and fill gaps
fn intermediate_buckets_to_final_buckets_fill_gaps(
    buckets: Vec<IntermediateHistogramBucketEntry>,
    histogram_req: &HistogramAggregation,
    sub_aggregation: &Aggregations,
    limits: &mut AggregationLimitsGuard,
) -> crate::Result<Vec<BucketEntry>> {
    // Generate the full list of buckets without gaps.
    //
    // The bounds are the min max from the current buckets, optionally extended by
    // extended_bounds from the request
    let min_max = minmax(buckets.iter().map(|bucket| bucket.key));

    // memory check upfront
    let (_, first_bucket_num, last_bucket_num) =
        generate_bucket_pos_with_opt_minmax(histogram_req, min_max);

    // It's based on user input, so we need to account for overflows
    let added_buckets = ((last_bucket_num.saturating_sub(first_bucket_num)).max(0) as u64)
        .saturating_sub(buckets.len() as u64);
    limits.add_memory_consumed(
        added_buckets * std::mem::size_of::<IntermediateHistogramBucketEntry>() as u64,
    )?;
    // create buckets
    let fill_gaps_buckets = generate_buckets_with_opt_minmax(histogram_req, min_max);

    let empty_sub_aggregation = IntermediateAggregationResults::empty_from_req(sub_aggregation);

    // Use merge_join_by to fill in gaps, since buckets are sorted

    let final_buckets: Vec<BucketEntry> = buckets
        .into_iter()
        .merge_join_by(fill_gaps_buckets, |existing_bucket, fill_gaps_bucket| {
            existing_bucket
                .key
                .partial_cmp(fill_gaps_bucket)
                .unwrap_or(Ordering::Equal)
        })
        .map(|either| match either {
            // Ignore the generated bucket
            itertools::EitherOrBoth::Both(existing, _) => existing,
            itertools::EitherOrBoth::Left(existing) => existing,
            // Add missing bucket
            itertools::EitherOrBoth::Right(missing_bucket) => IntermediateHistogramBucketEntry {
                key: missing_bucket,
                doc_count: 0,
                sub_aggregation: empty_sub_aggregation.clone(),
            },
        })
        .map(|intermediate_bucket| {
            intermediate_bucket.into_final_bucket_entry(sub_aggregation, limits)
        })
        .collect::<crate::Result<Vec<_>>>()?;

    Ok(final_buckets)
}

// Convert to BucketEntry
pub(crate) fn intermediate_histogram_buckets_to_final_buckets(
    buckets: Vec<IntermediateHistogramBucketEntry>,
    is_date_agg: bool,
    histogram_req: &HistogramAggregation,
    sub_aggregation: &Aggregations,
    limits: &mut AggregationLimitsGuard,
) -> crate::Result<Vec<BucketEntry>> {
    // Normalization is column type dependent.
    // The request used in the the call to final is not yet be normalized.
    // Normalization is changing the precision from milliseconds to nanoseconds.
    let mut histogram_req = histogram_req.clone();
    if is_date_agg {
        histogram_req.normalize_date_time();
    }
    let mut buckets = if histogram_req.min_doc_count() == 0 {
        // With min_doc_count != 0, we may need to add buckets, so that there are no
        // gaps, since intermediate result does not contain empty buckets (filtered to
        // reduce serialization size).
        intermediate_buckets_to_final_buckets_fill_gaps(
            buckets,
            &histogram_req,
            sub_aggregation,
            limits,
        )?
    } else {
        buckets
            .into_iter()
            .filter(|histogram_bucket| histogram_bucket.doc_count >= histogram_req.min_doc_count())
            .map(|histogram_bucket| {
                histogram_bucket.into_final_bucket_entry(sub_aggregation, limits)
            })
            .collect::<crate::Result<Vec<_>>>()?
    };

    // If we have a date type on the histogram buckets, we add the `key_as_string` field as rfc339
    // and normalize from nanoseconds to milliseconds
    if is_date_agg {
        for bucket in buckets.iter_mut() {
            if let crate::aggregation::Key::F64(ref mut val) = bucket.key {
                let key_as_string = format_date(*val as i64)?;
                *val /= 1_000_000.0;
                bucket.key_as_string = Some(key_as_string);
            }
        }
    }

    Ok(buckets)
}

/// Applies req extended_bounds/hard_bounds on the min_max value
///
/// May return `(f64::MAX, f64::MIN)`, if there is no range.
fn get_req_min_max(req: &HistogramAggregation, min_max: Option<(f64, f64)>) -> (f64, f64) {
    let (mut min, mut max) = min_max.unwrap_or((f64::MAX, f64::MIN));

    if let Some(extended_bounds) = &req.extended_bounds {
        min = min.min(extended_bounds.min);
        max = max.max(extended_bounds.max);
    }

    if let Some(hard_bounds) = &req.hard_bounds {
        min = min.max(hard_bounds.min);
        max = max.min(hard_bounds.max);
    }

    (min, max)
}

/// Generates buckets with req.interval
/// Range is computed for provided min_max and request extended_bounds/hard_bounds
/// returns empty vec when there is no range to span
pub(crate) fn generate_bucket_pos_with_opt_minmax(
    req: &HistogramAggregation,
    min_max: Option<(f64, f64)>,
) -> (f64, i64, i64) {
    let (min, max) = get_req_min_max(req, min_max);

    let offset = req.offset.unwrap_or(0.0);
    let first_bucket_num = get_bucket_pos_f64(min, req.interval, offset) as i64;
    let last_bucket_num = get_bucket_pos_f64(max, req.interval, offset) as i64;
    (offset, first_bucket_num, last_bucket_num)
}

/// Generates buckets with req.interval
/// Range is computed for provided min_max and request extended_bounds/hard_bounds
/// returns empty vec when there is no range to span
pub(crate) fn generate_buckets_with_opt_minmax(
    req: &HistogramAggregation,
    min_max: Option<(f64, f64)>,
) -> Vec<f64> {
    let (offset, first_bucket_num, last_bucket_num) =
        generate_bucket_pos_with_opt_minmax(req, min_max);
    let mut buckets = Vec::with_capacity((first_bucket_num..=last_bucket_num).count());
    for bucket_pos in first_bucket_num..=last_bucket_num {
        let bucket_key = bucket_pos as f64 * req.interval + offset;
        buckets.push(bucket_key);
    }

    buckets
}

#[cfg(test)]
mod tests {

    use pretty_assertions::assert_eq;
    use serde_json::Value;

    use super::*;
    use crate::aggregation::agg_result::AggregationResults;
    use crate::aggregation::tests::{
        exec_request, exec_request_with_query, exec_request_with_query_and_memory_limit,
        get_test_index_2_segments, get_test_index_from_values, get_test_index_with_num_docs,
    };
    use crate::query::AllQuery;

    #[test]
    fn histogram_counts_each_document_once_per_bucket() -> crate::Result<()> {
        use std::collections::{BTreeMap, BTreeSet};

        use crate::schema::{Schema, FAST};
        use crate::{DateTime, Index};

        let rows = [
            vec![12, 15],         // Distinct values in one bucket.
            vec![18, 11],         // Two descending values in one bucket.
            vec![25, 12],         // Two descending values in different buckets.
            vec![12, 25, 15],     // Return to an earlier bucket.
            vec![12, 12, 25, 25], // Repeated raw values.
            vec![-18, -15],       // Negative bucket positions.
            vec![],
            vec![12],
        ];
        // One block uses sparse storage; multiple blocks allow densification.
        for repetitions in [1, 16] {
            let mut schema = Schema::builder();
            let value = schema.add_i64_field("value", FAST);
            let date = schema.add_date_field("date", FAST);
            let score = schema.add_u64_field("score", FAST);
            let index = Index::create_in_ram(schema.build());
            let mut writer = index.writer_with_num_threads(1, 20_000_000)?;
            let documents: Vec<_> = rows.iter().cycle().take(rows.len() * repetitions).collect();
            for (doc, values) in documents.iter().enumerate() {
                let mut document = doc!(score => doc as u64 + 1);
                for &val in values.iter() {
                    document.add_i64(value, val);
                    document.add_date(date, DateTime::from_timestamp_secs(val));
                }
                writer.add_document(document)?;
            }
            writer.commit()?;

            for (date_histogram, bounded) in [(false, false), (false, true), (true, false)] {
                let offset = if bounded { 2 } else { 0 };
                for with_children in [false, true] {
                    let mut histogram = if date_histogram {
                        json!({"date_histogram": {
                            "field": "date", "fixed_interval": "10s", "min_doc_count": 1
                        }})
                    } else {
                        json!({"histogram": {
                            "field": "value", "interval": 10, "offset": offset, "min_doc_count": 1
                        }})
                    };
                    if bounded {
                        histogram["histogram"]["hard_bounds"] = json!({"min": 12, "max": 25});
                    }
                    if with_children {
                        histogram["aggs"] = json!({
                            "score": {"sum": {"field": "score"}},
                            "values": {"sum": {"field": "value"}}
                        });
                    }
                    let request = serde_json::from_value(json!({"histogram": histogram}))?;
                    let result = exec_request(request, &index)?;
                    let mut expected = BTreeMap::<i64, (u64, u64, i64)>::new();
                    for (doc, values) in documents.iter().enumerate() {
                        let keys: BTreeSet<_> = values
                            .iter()
                            .filter(|&&val| !bounded || (12..=25).contains(&val))
                            .map(|&val| (val - offset).div_euclid(10) * 10 + offset)
                            .collect();
                        for key in keys {
                            let entry = expected.entry(key).or_default();
                            entry.0 += 1;
                            entry.1 += doc as u64 + 1;
                            entry.2 += values.iter().sum::<i64>();
                        }
                    }
                    let buckets = result["histogram"]["buckets"].as_array().unwrap();
                    assert_eq!(buckets.len(), expected.len());
                    for (bucket, (key, (count, score_sum, value_sum))) in
                        buckets.iter().zip(expected)
                    {
                        let key = if date_histogram { key * 1000 } else { key };
                        assert_eq!(bucket["key"], key as f64);
                        assert_eq!(bucket["doc_count"], count);
                        if with_children {
                            assert_eq!(bucket["score"]["value"], score_sum as f64);
                            // Children retain every raw value, including duplicates.
                            assert_eq!(bucket["values"]["value"], value_sum as f64);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn histogram_counts_documents_in_separate_calls() -> crate::Result<()> {
        use crate::aggregation::agg_data::{
            build_aggregations_data_from_req, build_segment_agg_collectors, AggregationsSegmentCtx,
        };
        use crate::aggregation::AggContextParams;
        use crate::schema::{Schema, FAST};
        use crate::Index;

        let mut schema = Schema::builder();
        let value = schema.add_u64_field("value", FAST);
        let index = Index::create_in_ram(schema.build());
        let mut writer = index.writer_with_num_threads(1, 20_000_000)?;
        writer.add_document(doc!(value => 12u64, value => 15u64))?;
        writer.add_document(doc!(value => 12u64, value => 15u64))?;
        writer.commit()?;
        let reader = index.reader()?;
        let searcher = reader.searcher();
        let request = serde_json::from_value(json!({
            "histogram": {"histogram": {"field": "value", "interval": 10}}
        }))?;
        let context = AggContextParams::default();
        let agg_tree =
            build_aggregations_data_from_req(&request, searcher.segment_reader(0), 0, &context)?;
        let mut ctx = AggregationsSegmentCtx::new(context);
        let mut collector = build_segment_agg_collectors(&mut ctx, agg_tree)?;
        collector.prepare_max_bucket(0, &ctx)?;
        collector.collect(0, &[0], &mut ctx)?;
        collector.collect(0, &[1], &mut ctx)?;
        collector.flush(&mut ctx)?;
        let mut result = IntermediateAggregationResults::default();
        collector.add_intermediate_aggregation_result(&ctx, &mut result, 0)?;
        let result = serde_json::to_value(result.into_final_result(request, Default::default())?)?;
        assert_eq!(result["histogram"]["buckets"][0]["doc_count"], 2);
        Ok(())
    }

    #[test]
    fn histogram_test_crooked_values() -> crate::Result<()> {
        let values = vec![-12.0, 12.31, 14.33, 16.23];

        let index = get_test_index_from_values(false, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "my_interval": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 3.5,
                    "offset": 0.0,
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["my_interval"]["buckets"][0]["key"], -14.0);
        assert_eq!(res["my_interval"]["buckets"][0]["doc_count"], 1);
        assert_eq!(res["my_interval"]["buckets"][7]["key"], 10.5);
        assert_eq!(res["my_interval"]["buckets"][7]["doc_count"], 1);
        assert_eq!(res["my_interval"]["buckets"][8]["key"], 14.0);
        assert_eq!(res["my_interval"]["buckets"][8]["doc_count"], 2);
        assert_eq!(res["my_interval"]["buckets"][9], Value::Null);

        // With offset
        let agg_req: Aggregations = serde_json::from_value(json!({
            "my_interval": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 3.5,
                    "offset": 1.2,
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["my_interval"]["buckets"][0]["key"], -12.8);
        assert_eq!(res["my_interval"]["buckets"][0]["doc_count"], 1);
        assert_eq!(res["my_interval"]["buckets"][1]["key"], -9.3);
        assert_eq!(res["my_interval"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["my_interval"]["buckets"][2]["key"], -5.8);
        assert_eq!(res["my_interval"]["buckets"][2]["doc_count"], 0);
        assert_eq!(res["my_interval"]["buckets"][3]["key"], -2.3);
        assert_eq!(res["my_interval"]["buckets"][3]["doc_count"], 0);

        assert_eq!(res["my_interval"]["buckets"][7]["key"], 11.7);
        assert_eq!(res["my_interval"]["buckets"][7]["doc_count"], 2);
        assert_eq!(res["my_interval"]["buckets"][8]["key"], 15.2);
        assert_eq!(res["my_interval"]["buckets"][8]["doc_count"], 1);
        assert_eq!(res["my_interval"]["buckets"][9], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_test_min_value_positive_force_merge_segments() -> crate::Result<()> {
        histogram_test_min_value_positive_merge_segments(true)
    }

    #[test]
    fn histogram_test_min_value_positive() -> crate::Result<()> {
        histogram_test_min_value_positive_merge_segments(false)
    }
    fn histogram_test_min_value_positive_merge_segments(merge_segments: bool) -> crate::Result<()> {
        let values = vec![10.0, 12.0, 14.0, 16.23];

        let index = get_test_index_from_values(merge_segments, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "my_interval": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["my_interval"]["buckets"][0]["key"], 10.0);
        assert_eq!(res["my_interval"]["buckets"][0]["doc_count"], 1);
        assert_eq!(res["my_interval"]["buckets"][1]["key"], 11.0);
        assert_eq!(res["my_interval"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["my_interval"]["buckets"][2]["key"], 12.0);
        assert_eq!(res["my_interval"]["buckets"][2]["doc_count"], 1);
        assert_eq!(res["my_interval"]["buckets"][3]["key"], 13.0);
        assert_eq!(res["my_interval"]["buckets"][3]["doc_count"], 0);
        assert_eq!(res["my_interval"]["buckets"][6]["key"], 16.0);
        assert_eq!(res["my_interval"]["buckets"][6]["doc_count"], 1);
        assert_eq!(res["my_interval"]["buckets"][7], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_simple_test() -> crate::Result<()> {
        let index = get_test_index_with_num_docs(false, 100)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 0.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 1);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 1.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 1);
        assert_eq!(res["histogram"]["buckets"][99]["key"], 99.0);
        assert_eq!(res["histogram"]["buckets"][99]["doc_count"], 1);
        assert_eq!(res["histogram"]["buckets"][100], Value::Null);
        Ok(())
    }

    #[test]
    fn histogram_dense_storage_test() -> crate::Result<()> {
        histogram_dense_storage_test_with_opt(false)?;
        histogram_dense_storage_test_with_opt(true)?;
        Ok(())
    }

    /// Exercises the switch from sparse hash map to dense `Vec` storage. The switch happens at a
    /// block boundary (a block is `COLLECT_BLOCK_BUFFER_LEN` = 64 docs), so we need many docs in a
    /// single segment, densely covering the bucket range. `with_sub_agg` toggles the `iter_vals`
    /// fast path vs. the `iter_docid_vals` path used when there is a sub aggregation.
    fn histogram_dense_storage_test_with_opt(with_sub_agg: bool) -> crate::Result<()> {
        let num_buckets = 50usize;
        let docs_per_bucket = 10usize;
        // Value `k` repeated `docs_per_bucket` times for each bucket `k`, so every value in bucket
        // `k` equals `k` and the per-bucket average is exactly `k`.
        let values: Vec<f64> = (0..num_buckets * docs_per_bucket)
            .map(|i| (i % num_buckets) as f64)
            .collect();
        // `merge_segments = true` collapses the per-value segments into a single segment with all
        // the docs, which is collected in 64-doc blocks and therefore switches to dense storage.
        let index = get_test_index_from_values(true, &values)?;

        let agg_req: Aggregations = serde_json::from_value(if with_sub_agg {
            json!({
                "histogram": {
                    "histogram": { "field": "score_f64", "interval": 1.0 },
                    "aggs": { "avg": { "avg": { "field": "score_f64" } } }
                }
            })
        } else {
            json!({
                "histogram": {
                    "histogram": { "field": "score_f64", "interval": 1.0 }
                }
            })
        })
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        for k in 0..num_buckets {
            assert_eq!(res["histogram"]["buckets"][k]["key"], k as f64);
            assert_eq!(
                res["histogram"]["buckets"][k]["doc_count"],
                docs_per_bucket as u64
            );
            if with_sub_agg {
                assert_eq!(res["histogram"]["buckets"][k]["avg"]["value"], k as f64);
            }
        }
        assert_eq!(res["histogram"]["buckets"][num_buckets], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_memory_limit() -> crate::Result<()> {
        let index = get_test_index_with_num_docs(true, 100)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 0.1,
                }
            }
        }))
        .unwrap();

        let res = exec_request_with_query_and_memory_limit(
            agg_req,
            &index,
            None,
            AggregationLimitsGuard::new(Some(5_000), None),
        )
        .unwrap_err();
        assert!(res.to_string().starts_with(
            "Aborting aggregation because memory limit was exceeded. Limit: 5.00 KB, Current"
        ));

        Ok(())
    }

    #[test]
    fn histogram_merge_test() -> crate::Result<()> {
        // Merge buckets counts from different segments
        let values = vec![10.0, 12.0, 14.0, 16.23, 10.0, 13.0, 10.0, 12.0];

        let index = get_test_index_from_values(false, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 10.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 3);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 11.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["key"], 12.0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 2);
        assert_eq!(res["histogram"]["buckets"][3]["key"], 13.0);
        assert_eq!(res["histogram"]["buckets"][3]["doc_count"], 1);

        Ok(())
    }
    #[test]
    fn histogram_min_doc_test_multi_segments() -> crate::Result<()> {
        histogram_min_doc_test_with_opt(false)
    }
    #[test]
    fn histogram_min_doc_test_single_segments() -> crate::Result<()> {
        histogram_min_doc_test_with_opt(true)
    }
    fn histogram_min_doc_test_with_opt(merge_segments: bool) -> crate::Result<()> {
        let values = vec![10.0, 12.0, 14.0, 16.23, 10.0, 13.0, 10.0, 12.0];

        let index = get_test_index_from_values(merge_segments, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "min_doc_count": 2,
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 10.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 3);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 12.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 2);
        assert_eq!(res["histogram"]["buckets"][2], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_extended_bounds_test_multi_segment() -> crate::Result<()> {
        histogram_extended_bounds_test_with_opt(false)
    }
    #[test]
    fn histogram_extended_bounds_test_single_segment() -> crate::Result<()> {
        histogram_extended_bounds_test_with_opt(true)
    }
    fn histogram_extended_bounds_test_with_opt(merge_segments: bool) -> crate::Result<()> {
        let values = vec![5.0];
        let index = get_test_index_from_values(merge_segments, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 2.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 3.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][10]["key"], 12.0);
        assert_eq!(res["histogram"]["buckets"][10]["doc_count"], 0);

        // 2 hits
        let values = vec![5.0, 5.5];
        let index = get_test_index_from_values(merge_segments, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 3.0,
                        "max": 6.0,
                    },
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 3.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 4.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["key"], 5.0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 2);
        assert_eq!(res["histogram"]["buckets"][3]["key"], 6.0);
        assert_eq!(res["histogram"]["buckets"][3]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][4], Value::Null);

        // 1 hit outside bounds
        let values = vec![15.0];
        let index = get_test_index_from_values(merge_segments, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 3.0,
                        "max": 6.0,
                    },
                    "hard_bounds": {
                        "min": 3.0,
                        "max": 6.0,
                    },
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 3.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 4.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["key"], 5.0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][3]["key"], 6.0);
        assert_eq!(res["histogram"]["buckets"][3]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][4], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_hard_bounds_test_multi_segment() -> crate::Result<()> {
        histogram_hard_bounds_test_with_opt(false)
    }
    #[test]
    fn histogram_hard_bounds_test_single_segment() -> crate::Result<()> {
        histogram_hard_bounds_test_with_opt(true)
    }
    fn histogram_hard_bounds_test_with_opt(merge_segments: bool) -> crate::Result<()> {
        let values = vec![10.0, 12.0, 14.0, 16.23, 10.0, 13.0, 10.0, 12.0];

        let index = get_test_index_from_values(merge_segments, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "hard_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 10.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 3);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 11.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["key"], 12.0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 2);

        assert_eq!(res["histogram"]["buckets"][3], Value::Null);

        // hard_bounds and extended_bounds will act like a force bounds
        //
        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },
                    "hard_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 2.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 3.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][10]["key"], 12.0);
        assert_eq!(res["histogram"]["buckets"][10]["doc_count"], 2);

        assert_eq!(res["histogram"]["buckets"][11], Value::Null);

        // invalid request
        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 1.0,
                        "max": 12.0,
                    },
                    "hard_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index).unwrap_err();
        assert_eq!(
            res.to_string(),
            "An invalid argument was passed: 'extended_bounds have to be inside hard_bounds, \
             extended_bounds: [1,12], hard_bounds [2,12]'"
        );

        Ok(())
    }

    #[test]
    fn histogram_non_binding_hard_bounds_test_multi_segment() -> crate::Result<()> {
        histogram_non_binding_hard_bounds_test_with_opt(false)
    }
    #[test]
    fn histogram_non_binding_hard_bounds_test_single_segment() -> crate::Result<()> {
        histogram_non_binding_hard_bounds_test_with_opt(true)
    }
    /// `hard_bounds` wider than the data (here with mid-interval edges, to cover the "bound cuts a
    /// bucket" case) can't exclude any value, so the result must be identical to the same request
    /// without bounds. Guards the normalization that collapses such bounds to the unbounded
    /// sentinel so the hot loop / flattened path can skip the per-doc bounds check.
    fn histogram_non_binding_hard_bounds_test_with_opt(merge_segments: bool) -> crate::Result<()> {
        let values = vec![10.0, 12.0, 14.0, 16.0, 10.0, 13.0, 10.0, 12.0];
        let index = get_test_index_from_values(merge_segments, &values)?;

        // Mid-interval edges, but wider than the data range [10, 16] -> they exclude nothing.
        let with_bounds: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "hard_bounds": { "min": 9.5, "max": 16.5 }
                }
            }
        }))
        .unwrap();
        let no_bounds: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": { "field": "score_f64", "interval": 1.0 }
            }
        }))
        .unwrap();

        let res_bounds = exec_request(with_bounds, &index)?;
        let res_plain = exec_request(no_bounds, &index)?;
        // Dropping a non-binding bound must not change anything.
        assert_eq!(res_bounds, res_plain);

        // Sanity: buckets span the data range with gaps filled (min_doc_count defaults to 0).
        assert_eq!(res_bounds["histogram"]["buckets"][0]["key"], 10.0);
        assert_eq!(res_bounds["histogram"]["buckets"][0]["doc_count"], 3);
        assert_eq!(res_bounds["histogram"]["buckets"][6]["key"], 16.0);
        assert_eq!(res_bounds["histogram"]["buckets"][6]["doc_count"], 1);
        assert_eq!(res_bounds["histogram"]["buckets"][7], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_empty_result_behaviour_test_single_segment() -> crate::Result<()> {
        histogram_empty_result_behaviour_test_with_opt(true)
    }

    #[test]
    fn histogram_empty_result_behaviour_test_multi_segment() -> crate::Result<()> {
        histogram_empty_result_behaviour_test_with_opt(false)
    }

    fn histogram_empty_result_behaviour_test_with_opt(merge_segments: bool) -> crate::Result<()> {
        let index = get_test_index_2_segments(merge_segments)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                }
            }
        }))
        .unwrap();

        let res = exec_request_with_query(agg_req.clone(), &index, Some(("text", "blubberasdf")))?;

        assert_eq!(
            res,
            json!({
                "histogram": {
                    "buckets": []
                }
            })
        );

        // test index without segments
        let values = vec![];

        // Don't merge empty segments
        let index = get_test_index_from_values(false, &values)?;

        let res = exec_request_with_query(agg_req, &index, Some(("text", "blubberasdf")))?;

        assert_eq!(
            res,
            json!({
                "histogram": {
                    "buckets": []
                }
            })
        );

        // test index without segments
        let values = vec![];

        // Don't merge empty segments
        let index = get_test_index_from_values(false, &values)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },
                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 2.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 3.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][10]["key"], 12.0);
        assert_eq!(res["histogram"]["buckets"][10]["doc_count"], 0);

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 2.0,
                        "max": 5.0,
                    },
                    "hard_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },

                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 2.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 3.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][10], Value::Null);

        // hard_bounds will not extend the result
        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "hard_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },

                }
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(
            res,
            json!({
                "histogram": {
                    "buckets": []
                }
            })
        );

        let sub_agg_req: Aggregations = serde_json::from_value(json!({
            "stats": { "stats": { "field": "score_f64", } },
            "avg": { "avg": { "field": "score_f64", } }

        }))
        .unwrap();

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 1.0,
                    "extended_bounds": {
                        "min": 2.0,
                        "max": 12.0,
                    },
                },
                "aggs": sub_agg_req
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(
            res["histogram"]["buckets"][0],
            json!({
                "avg": {
                    "value": Value::Null
                },
                "doc_count": 0,
                "key": 2.0,
                "stats": {
                    "sum": 0.0,
                    "count": 0,
                    "min": Value::Null,
                    "max": Value::Null,
                    "avg": Value::Null,
                }
            })
        );
        assert_eq!(res["histogram"]["buckets"][0]["key"], 2.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][1]["key"], 3.0);
        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][2]["doc_count"], 0);
        assert_eq!(res["histogram"]["buckets"][10]["key"], 12.0);
        assert_eq!(res["histogram"]["buckets"][10]["doc_count"], 0);

        Ok(())
    }

    #[test]
    fn histogram_single_bucket_test_single_segment() -> crate::Result<()> {
        histogram_single_bucket_test_with_opt(true)
    }

    #[test]
    fn histogram_single_bucket_test_multi_segment() -> crate::Result<()> {
        histogram_single_bucket_test_with_opt(false)
    }

    fn histogram_single_bucket_test_with_opt(merge_segments: bool) -> crate::Result<()> {
        let index = get_test_index_2_segments(merge_segments)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 100000.0,
                },
            }
        }))
        .unwrap();

        let agg_res = exec_request(agg_req, &index)?;

        let res: Value = serde_json::from_str(&serde_json::to_string(&agg_res)?)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 0.0);
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 9);
        assert_eq!(res["histogram"]["buckets"][1], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_date_test_single_segment() -> crate::Result<()> {
        histogram_date_test_with_opt(true)
    }

    #[test]
    fn histogram_date_test_multi_segment() -> crate::Result<()> {
        histogram_date_test_with_opt(false)
    }

    fn histogram_date_test_with_opt(merge_segments: bool) -> crate::Result<()> {
        let index = get_test_index_2_segments(merge_segments)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "date",
                    "interval": 86400000.0, // one day in milliseconds seconds
                },
            }
        }))
        .unwrap();

        let agg_res = exec_request(agg_req, &index)?;

        let res: Value = serde_json::from_str(&serde_json::to_string(&agg_res)?)?;

        assert_eq!(res["histogram"]["buckets"][0]["key"], 1546300800000.0);
        assert_eq!(
            res["histogram"]["buckets"][0]["key_as_string"],
            "2019-01-01T00:00:00Z"
        );
        assert_eq!(res["histogram"]["buckets"][0]["doc_count"], 1);

        assert_eq!(res["histogram"]["buckets"][1]["key"], 1546387200000.0);
        assert_eq!(
            res["histogram"]["buckets"][1]["key_as_string"],
            "2019-01-02T00:00:00Z"
        );

        assert_eq!(res["histogram"]["buckets"][1]["doc_count"], 5);

        assert_eq!(res["histogram"]["buckets"][2]["key"], 1546473600000.0);
        assert_eq!(
            res["histogram"]["buckets"][2]["key_as_string"],
            "2019-01-03T00:00:00Z"
        );

        assert_eq!(res["histogram"]["buckets"][3], Value::Null);

        Ok(())
    }

    #[test]
    fn histogram_invalid_request() -> crate::Result<()> {
        let index = get_test_index_2_segments(true)?;

        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 0.0,
                },
            }
        }))
        .unwrap();

        let agg_res = exec_request(agg_req, &index);

        assert!(agg_res.is_err());

        Ok(())
    }

    #[test]
    fn histogram_keyed_buckets_test() -> crate::Result<()> {
        let index = get_test_index_with_num_docs(false, 100)?;
        let agg_req: Aggregations = serde_json::from_value(json!({
            "histogram": {
                "histogram": {
                    "field": "score_f64",
                    "interval": 50.0,
                    "keyed": true
                },
            }
        }))
        .unwrap();

        let res = exec_request(agg_req, &index)?;

        assert_eq!(
            res,
            json!({
                "histogram": {
                    "buckets": {
                        "0": {
                            "key": 0.0,
                            "doc_count": 50
                        },
                        "50": {
                            "key": 50.0,
                            "doc_count": 50
                        }
                    }
                }
            })
        );

        Ok(())
    }
    #[test]
    fn test_aggregation_histogram_empty_index() -> crate::Result<()> {
        // test index without segments
        let values = vec![];

        let index = get_test_index_from_values(false, &values)?;

        let agg_req_1: Aggregations = serde_json::from_value(json!({
            "myhisto": {
                "histogram": {
                    "field": "score",
                    "interval": 10.0
                },
            }
        }))
        .unwrap();

        let collector = AggregationCollector::from_aggs(agg_req_1, Default::default());

        let reader = index.reader()?;
        let searcher = reader.searcher();
        let agg_res: AggregationResults = searcher.search(&AllQuery, &collector).unwrap();

        let res: Value = serde_json::from_str(&serde_json::to_string(&agg_res)?)?;
        // Make sure the result structure is correct
        assert_eq!(res["myhisto"]["buckets"].as_array().unwrap().len(), 0);

        Ok(())
    }
}
