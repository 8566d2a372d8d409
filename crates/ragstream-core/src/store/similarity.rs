//! Vector similarity as every store and branch computes it, so that an exact scan, the
//! resident vectors and the graph agree to the bit.

/// Dot product of unit vectors (cosine), accumulated in f64 in a fixed order.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum::<f64>() as f32
}

/// Cosine similarity of unit vectors mapped to [0, 1] by clamping at 0: negative cosine means
/// "unrelated", and keeping the positive range unscaled keeps scores readable as cosines.
pub fn semantic_similarity(cosine: f32) -> f64 {
    f64::from(cosine).clamp(0.0, 1.0)
}
