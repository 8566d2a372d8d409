//! Units as the configuration writes them, for settings types that hold another: sizes in
//! MiB held as bytes, durations in seconds held as a [`std::time::Duration`]. Use with
//! `#[serde(with = "crate::units::mib")]`.

/// A size in bytes, written in MiB.
pub mod mib {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &usize, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64((*bytes >> 20) as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
        let mib = usize::deserialize(d)?;
        mib.checked_mul(1 << 20).ok_or_else(|| {
            serde::de::Error::custom(format!("{mib} MiB is more than this machine can address"))
        })
    }
}

/// A duration, written in whole seconds.
pub mod seconds {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs(u64::deserialize(d)?))
    }
}
