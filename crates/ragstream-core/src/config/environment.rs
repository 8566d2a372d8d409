//! Which configuration key each `RAGSTREAM_*` variable names, and the value it gives.
//! figment merges and types the values (`mod.rs`); this file only maps names to keys, since
//! ragstream's names have two forms (`RAGSTREAM_<SECTION>_<KEY>` and `RAGSTREAM_<A>__<B>`),
//! skip the variables other tools share the prefix with, and point a misspelt one to its key.

use super::{moved_keys, ConfigError};

/// Environment variables with the `RAGSTREAM_` prefix that are not config keys.
const NON_KEY_VARIABLES: &[&str] = &[
    "RAGSTREAM_CONFIG",
    "RAGSTREAM_LOG",
    "RAGSTREAM_LOG_FORMAT",
    "RAGSTREAM_FAILPOINT",
    "RAGSTREAM_REPLAY_TOKEN",
];

/// One variable that sets a key.
pub(super) struct Setting {
    pub variable: String,
    /// The key, one part per level (`["index", "vector", "ef"]`).
    pub path: Vec<String>,
    /// What figment reads: the text as given, which it turns into a number or a boolean
    /// when the key wants one; a number with a fraction already read as such (figment would
    /// read `0.05` as an `f32`, and widen it to `0.0500000007`); a TOML value for a key whose
    /// default is a table or a list.
    pub value: figment::value::Value,
    /// The variable's text.
    pub text: String,
    /// Whether `value` is a number with a fraction for a key without a default: if the key
    /// turns out to want text, the text is given instead.
    pub guessed_number: bool,
    /// For a one-underscore name that reaches into a sub-table (`RAGSTREAM_INDEX_VECTOR_EF`):
    /// the name that would (`RAGSTREAM_INDEX__VECTOR__EF`).
    pub nested_hint: Option<String>,
}

impl Setting {
    /// How an error names this variable.
    pub fn source_name(&self) -> String {
        source_name(&self.variable)
    }
}

/// How an error names the variable `var`.
fn source_name(var: &str) -> String {
    format!("environment variable {var}")
}

/// The `RAGSTREAM_*` variables of an environment, sorted out.
#[derive(Default)]
pub(super) struct Variables {
    /// Those that set a key, in name order.
    pub settings: Vec<Setting>,
    /// Those that name no section: other tools share the prefix. Ignored, and logged.
    pub ignored: Vec<String>,
    /// Those that set a key by its old name: loaded, and logged.
    pub moved: Vec<String>,
}

impl Variables {
    /// Sorts out `env` against the configuration's `defaults`.
    pub fn read(
        defaults: &toml::Table,
        env: &[(String, String)],
    ) -> Result<Variables, ConfigError> {
        let mut names: Vec<&(String, String)> = env
            .iter()
            .filter(|(k, _)| {
                k.starts_with("RAGSTREAM_") && !NON_KEY_VARIABLES.contains(&k.as_str())
            })
            .collect();
        names.sort();
        let mut out = Variables::default();
        for (var, raw) in names {
            let Some(old_path) = key_path(var).filter(|p| defaults.contains_key(&p[0])) else {
                out.ignored.push(var.clone());
                continue;
            };
            if is_service_link(var) {
                out.ignored.push(var.clone());
                continue;
            }
            let path = match moved_keys::new_path(&old_path) {
                Some(new) => {
                    out.moved.push(format!(
                        "environment variable {var} sets {}; use {}",
                        new.join("."),
                        moved_keys::variable(&new)
                    ));
                    new
                }
                None => old_path,
            };
            // Two names for one key (`_` and `__`, or a moved key's old and new names):
            // which value was meant is not guessed.
            if let Some(other) = out.settings.iter().find(|s| s.path == path) {
                return Err(ConfigError {
                    source_name: source_name(var),
                    key: path.join("."),
                    reason: format!("is also set by {}; keep one of the two", other.variable),
                });
            }
            let default = default_at(defaults, &path);
            let number = fraction(raw);
            let guessed_number = default.is_none() && number.is_some();
            let value = match default {
                Some(d) if d.is_table() || d.is_array() => {
                    toml_value(raw).ok_or_else(|| ConfigError {
                        source_name: source_name(var),
                        key: path.join("."),
                        reason: format!("expected a TOML table or list, got {raw:?}"),
                    })?
                }
                Some(toml::Value::Float(_)) | None => number.unwrap_or_else(|| raw.clone().into()),
                Some(_) => raw.clone().into(),
            };
            out.settings.push(Setting {
                nested_hint: nested_hint(defaults, var, &path),
                variable: var.clone(),
                path,
                value,
                text: raw.clone(),
                guessed_number,
            });
        }
        Ok(out)
    }

    /// The variable that set `key` (`a.b`) or a table holding it (`a`), if one did.
    pub fn setting_of(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| {
            let set = s.path.join(".");
            key == set || key.starts_with(&format!("{set}."))
        })
    }
}

/// The key a variable names: `RAGSTREAM_<SECTION>_<KEY>` for a key of a section
/// (`RAGSTREAM_LIMITS_MAX_TOP_K` is `limits.max_top_k`), or `RAGSTREAM_<A>__<B>__<C>` for any
/// depth (`RAGSTREAM_EMBEDDERS__OPENAI__API_KEY_ENV` is `embedders.openai.api_key_env`).
fn key_path(var: &str) -> Option<Vec<String>> {
    let rest = var.strip_prefix("RAGSTREAM_")?.to_ascii_lowercase();
    let parts: Vec<String> = if rest.contains("__") {
        rest.split("__").map(str::to_string).collect()
    } else {
        let (section, key) = rest.split_once('_')?;
        vec![section.to_string(), key.to_string()]
    };
    (parts.len() >= 2 && parts.iter().all(|p| !p.is_empty())).then_some(parts)
}

/// Whether `var` is one of the variables Kubernetes sets for a service whose name starts with
/// `ragstream-` (`RAGSTREAM_KAFKA_SERVICE_HOST`, `RAGSTREAM_HTTP_PORT_8080_TCP_ADDR` for
/// services `ragstream-kafka`, `ragstream-http`): never a key, though it may name a section.
fn is_service_link(var: &str) -> bool {
    let parts: Vec<&str> = var.split('_').collect();
    parts
        .windows(2)
        .any(|w| w == ["SERVICE", "HOST"] || w == ["SERVICE", "PORT"])
        || parts.last() == Some(&"PORT")
        || parts.windows(3).any(|w| {
            w[0] == "PORT"
                && !w[1].is_empty()
                && w[1].bytes().all(|b| b.is_ascii_digit())
                && ["TCP", "UDP", "SCTP"].contains(&w[2])
        })
}

/// The built-in default at `path`, if the key has one.
fn default_at<'a>(defaults: &'a toml::Table, path: &[String]) -> Option<&'a toml::Value> {
    let (leaf, parents) = path.split_last().expect("a key path has two parts or more");
    parents
        .iter()
        .try_fold(defaults, |t, k| t.get(k)?.as_table())?
        .get(leaf)
}

/// `raw` as a number with a fraction or an exponent (`0.05`, `1e-3`), if it is one.
fn fraction(raw: &str) -> Option<figment::value::Value> {
    let raw = raw.trim();
    (raw.contains(['.', 'e', 'E']) && raw.parse::<i64>().is_err())
        .then(|| raw.parse::<f64>().ok())
        .flatten()
        .filter(|f| f.is_finite())
        .map(figment::value::Value::from)
}

/// `raw` as a TOML value (`["a", "b"]`, `{ k = 1 }`), if it is one.
fn toml_value(raw: &str) -> Option<figment::value::Value> {
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()?
        .remove("v")?;
    figment::value::Value::serialize(value).ok()
}

/// `RAGSTREAM_INDEX_VECTOR_MIN_ROWS` names `index.vector_min_rows`, which is no key; a key of
/// the sub-table `[index.vector]` needs `__` between the levels. The name that would do.
fn nested_hint(defaults: &toml::Table, var: &str, path: &[String]) -> Option<String> {
    let [section, key] = path else { return None };
    if var.contains("__") {
        return None;
    }
    let table = defaults.get(section)?.as_table()?;
    if table.contains_key(key) {
        return None;
    }
    let (sub, rest) = table
        .iter()
        .filter(|(_, v)| v.is_table())
        .find_map(|(sub, _)| Some((sub, key.strip_prefix(&format!("{sub}_"))?)))?;
    Some(format!(
        "for [{section}.{sub}] {rest}, use {}",
        moved_keys::variable(&[section.clone(), sub.clone(), rest.to_string()])
    ))
}
