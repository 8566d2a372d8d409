//! Secrets in the configuration: hidden when it is shown, and read from the environment
//! where a `[kafka.client]` key names a variable.

/// Whether a key's value is a secret: `config show` prints it as `<redacted>`. Passwords,
/// secrets, tokens and keys (`sasl.password`, `aws_secret_access_key`, `aws_session_token`,
/// `azure_storage_account_key`, `google_service_account_key`, `azure_storage_sas_token`).
/// Keys ending in `_env` name an environment variable and stay visible.
fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    !k.ends_with("_env")
        && (k == "token"
            || k == "api_key"
            || k.ends_with("_key")
            || k.ends_with("_token")
            || k.contains("password")
            || k.contains("secret"))
}

/// The `[kafka.client]` settings `config show` prints as they are. librdkafka takes secrets
/// under many names (`ssl.key.pem`, `sasl.oauthbearer.config`, `ssl.keystore.password`, …), so
/// every other entry of that table is redacted: a new secret-bearing key stays hidden.
const HARMLESS_KAFKA_CLIENT_KEYS: &[&str] = &[
    "acks",
    "client.id",
    "compression.type",
    "enable.idempotence",
    "linger.ms",
    "message.max.bytes",
    "request.timeout.ms",
    "sasl.mechanism",
    "sasl.mechanisms",
    "security.protocol",
    "socket.timeout.ms",
    "ssl.endpoint.identification.algorithm",
];

/// Redacts every secret of a configuration rendered as TOML: keys that name a secret
/// anywhere, and every `[kafka.client]` entry but the harmless ones and `*_env` names.
pub(super) fn redact_config(config: &mut toml::Value) {
    redact(config);
    let client = config
        .get_mut("kafka")
        .and_then(|k| k.get_mut("client"))
        .and_then(toml::Value::as_table_mut);
    for (key, value) in client.into_iter().flatten() {
        if !key.ends_with("_env") && !HARMLESS_KAFKA_CLIENT_KEYS.contains(&key.as_str()) {
            *value = toml::Value::String("<redacted>".into());
        }
    }
}

fn redact(value: &mut toml::Value) {
    match value {
        toml::Value::Table(table) => {
            for (key, v) in table.iter_mut() {
                if is_secret(key) && !v.is_table() {
                    *v = toml::Value::String("<redacted>".into());
                } else {
                    redact(v);
                }
            }
        }
        toml::Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// Entries of a string table (`[kafka.client]`, `[storage.options]`) named `<setting>_env`
/// hold the name of an environment variable whose value is the setting
/// (`"sasl.password_env" = "KAFKA_PASSWORD"`), which keeps secrets out of files. Replaces each
/// with the setting; an unset or empty variable is an error naming the key.
pub(super) fn resolve_indirect(
    section: &str,
    table: &mut std::collections::BTreeMap<String, String>,
    env: &std::collections::HashMap<String, String>,
) -> Result<(), (String, String)> {
    let indirect: Vec<(String, String)> = table
        .iter()
        .filter(|(k, _)| k.ends_with("_env"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (key, variable) in indirect {
        let setting = key.trim_end_matches("_env").to_string();
        let value = env
            .get(&variable)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                (
                    format!("{section}.{key}"),
                    format!("names the environment variable {variable}, which is unset or empty"),
                )
            })?;
        if table.contains_key(&setting) {
            return Err((
                format!("{section}.{key}"),
                format!("set either {setting} or {key}, not both"),
            ));
        }
        table.remove(&key);
        table.insert(setting, value.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::Config;

    #[test]
    fn config_show_hides_every_kafka_client_value_but_the_harmless_ones() {
        let mut c = Config::default();
        for (k, v) in [
            ("ssl.key.pem", "-----BEGIN PRIVATE KEY-----abc"),
            ("sasl.oauthbearer.config", "principal=x secret=y"),
            ("sasl.username", "alice"),
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
        ] {
            c.kafka.client.insert(k.into(), v.into());
        }
        let shown: toml::Value = toml::from_str(&c.redacted_toml()).unwrap();
        let client = &shown["kafka"]["client"];
        for secret in ["ssl.key.pem", "sasl.oauthbearer.config", "sasl.username"] {
            assert_eq!(client[secret].as_str(), Some("<redacted>"), "{secret}");
        }
        assert_eq!(client["security.protocol"].as_str(), Some("SASL_SSL"));
        assert_eq!(client["sasl.mechanism"].as_str(), Some("PLAIN"));
    }

    #[test]
    fn kafka_client_secrets_come_from_the_variable_an_env_key_names() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(
            &file,
            "[kafka.client]\n\"sasl.password_env\" = \"KAFKA_SECRET_TEST\"\n",
        )
        .unwrap();
        let env = |v: &str| vec![("KAFKA_SECRET_TEST".to_string(), v.to_string())];
        let c = Config::load_from(Some(&file), env("pa55")).unwrap();
        assert_eq!(
            c.kafka.client.get("sasl.password").map(String::as_str),
            Some("pa55")
        );
        assert!(!c.kafka.client.contains_key("sasl.password_env"));
        let e = Config::load_from(Some(&file), env("")).unwrap_err();
        assert_eq!(e.key, "kafka.client.sasl.password_env");
        assert!(e.reason.contains("KAFKA_SECRET_TEST"), "{e}");
    }

    #[test]
    fn object_store_options_come_from_files_variables_and_named_variables() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(
            &file,
            "[storage]\nuri = \"s3://b/p\"\n[storage.options]\naws_region = \"eu-west-1\"\naws_secret_access_key_env = \"S3_SECRET_TEST\"\n",
        )
        .unwrap();
        let env = vec![
            ("S3_SECRET_TEST".to_string(), "k3y".to_string()),
            (
                "RAGSTREAM_STORAGE__OPTIONS__AWS_ENDPOINT".to_string(),
                "http://minio:9000".to_string(),
            ),
            (
                "RAGSTREAM_STORAGE__OPTIONS__ALLOW_HTTP".to_string(),
                "true".to_string(),
            ),
        ];
        let c = Config::load_from(Some(&file), env).unwrap();
        let options = &c.storage.options;
        assert_eq!(options["aws_secret_access_key"], "k3y");
        assert_eq!(options["aws_endpoint"], "http://minio:9000");
        assert_eq!(options["allow_http"], "true");
        assert_eq!(options["aws_region"], "eu-west-1");
        assert!(!options.contains_key("aws_secret_access_key_env"));
        assert!(!c.redacted_toml().contains("k3y"));
        let e = Config::load_from(Some(&file), Vec::new()).unwrap_err();
        assert_eq!(e.key, "storage.options.aws_secret_access_key_env");
        let bad = vec![(
            "RAGSTREAM_STORAGE_URI".to_string(),
            "hdfs://b/p".to_string(),
        )];
        let e = Config::load_from(None, bad).unwrap_err();
        assert_eq!(e.key, "storage.uri");
        assert!(e.reason.contains("not supported"), "{e}");
    }

    #[test]
    fn the_shown_configuration_hides_every_secret_and_keeps_the_rest() {
        let mut c = Config::default();
        c.auth.tokens.push(crate::auth::TokenConfig {
            name: "reader".into(),
            token: Some("s3cr3t-token".into()),
            token_env: None,
            tenant: "acme".into(),
            indexes: vec!["acme_*".into()],
            scopes: vec![crate::auth::Scope::Read],
        });
        c.kafka
            .client
            .insert("sasl.password".into(), "kafka-pass".into());
        c.kafka
            .client
            .insert("security.protocol".into(), "SASL_SSL".into());
        for (key, value) in [
            ("azure_storage_account_key", "azure-k3y"),
            ("azure_storage_sas_token", "sas-t0ken"),
            ("google_service_account_key", "gcs-k3y"),
            ("aws_session_token", "aws-t0ken"),
            ("aws_secret_access_key", "aws-s3cret"),
            ("aws_access_key_id", "AKIDVISIBLE"),
        ] {
            c.storage.options.insert(key.into(), value.into());
        }
        c.index.keyword.writer_memory_bytes = 48 << 20;
        let shown = c.redacted_toml();
        for secret in [
            "s3cr3t-token",
            "kafka-pass",
            "azure-k3y",
            "sas-t0ken",
            "gcs-k3y",
            "aws-t0ken",
            "aws-s3cret",
        ] {
            assert!(!shown.contains(secret), "{secret} shown in {shown}");
        }
        assert!(shown.contains("AKIDVISIBLE"), "{shown}");
        assert!(
            shown.contains("SASL_SSL") && shown.contains("reader"),
            "{shown}"
        );
        // What is shown loads back (secrets aside) as the same configuration.
        let back: Config = toml::from_str(&shown).unwrap();
        assert_eq!(back.kafka.partitions, c.kafka.partitions);
        assert_eq!(back.index, c.index);
        assert_eq!(back.kafka.client["sasl.password"], "<redacted>");
    }
}
