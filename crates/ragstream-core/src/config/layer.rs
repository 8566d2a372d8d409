//! One source of configuration values (the built-in defaults, a file, one environment
//! variable), as a figment provider named as an error about its values names it.

use figment::value::{Dict, Map, Value};
use figment::{Metadata, Profile, Provider};

pub(super) struct Layer {
    name: String,
    values: Dict,
}

impl Layer {
    /// The keys and values of a TOML table.
    pub fn table(name: impl Into<String>, table: &toml::Table) -> Layer {
        let values = Value::serialize(table)
            .ok()
            .and_then(|v| v.into_dict())
            .expect("a TOML table is a dictionary");
        Layer {
            name: name.into(),
            values,
        }
    }

    /// One value at the key `path` (`["index", "vector", "ef"]`). The parts are not split at
    /// dots: `[kafka.client]` keys hold them (`sasl.password`).
    pub fn key(name: impl Into<String>, path: &[String], value: Value) -> Layer {
        let nested = path
            .iter()
            .rev()
            .fold(value, |v, k| Value::from(Dict::from([(k.clone(), v)])));
        Layer {
            name: name.into(),
            values: nested
                .into_dict()
                .expect("a key path nests in dictionaries"),
        }
    }
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.name.clone())
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.values.clone()))
    }
}
