//! Triples from chunk text by a language model: one request per chunk to an OpenAI-compatible
//! chat-completions endpoint (`POST {url}/v1/chat/completions`) asking for JSON that follows
//! a schema (`response_format: json_schema`), read back and checked against that schema.
//!
//! Failures are sorted as the embedder's are: unavailable (connection refused, timeout, 408,
//! 429, 5xx) is transient — the pipeline holds the batch and Kafka consumption pauses until
//! the model is back; a refusal (other 4xx) is permanent — the document goes to the DLQ;
//! output that is not JSON or breaks the schema is `Malformed` — retried, then the chunk is
//! indexed without extracted triples (counted and logged: a model's bad answer must not
//! lose the document).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::model::{Triple, MAX_GRAPH_TERM_BYTES};

/// `[extractor]`: the optional triple-extraction stage, off by default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExtractorConfig {
    pub enabled: bool,
    /// Base URL of the OpenAI-compatible server.
    pub url: String,
    pub model: String,
    /// Environment variable holding a bearer token (none: no `Authorization` header).
    pub api_key_env: Option<String>,
    pub timeout_ms: u64,
    /// Further attempts when the answer is not JSON or breaks the schema.
    pub malformed_retries: u32,
    /// Triples kept per chunk, at most.
    pub max_triples_per_chunk: usize,
}

impl Default for ExtractorConfig {
    fn default() -> Self {
        ExtractorConfig {
            enabled: false,
            url: String::new(),
            model: String::new(),
            api_key_env: None,
            timeout_ms: 60_000,
            malformed_retries: 1,
            max_triples_per_chunk: 20,
        }
    }
}

impl ExtractorConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        if !self.enabled {
            return Ok(());
        }
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err((
                "extractor.url".into(),
                "must be an http:// or https:// URL".into(),
            ));
        }
        if self.model.trim().is_empty() {
            return Err(("extractor.model".into(), "must be set".into()));
        }
        if self.timeout_ms == 0 {
            return Err(("extractor.timeout_ms".into(), "must be at least 1".into()));
        }
        if let Some(var) = &self.api_key_env {
            if std::env::var(var).is_err() {
                return Err((
                    "extractor.api_key_env".into(),
                    format!("names {var}, which is not set"),
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExtractError {
    #[error("extractor unavailable: {0}")]
    Unavailable(String),
    #[error("extractor refused the request: {0}")]
    Refused(String),
    #[error("extractor answered malformed output: {0}")]
    Malformed(String),
}

impl ExtractError {
    pub fn is_transient(&self) -> bool {
        matches!(self, ExtractError::Unavailable(_))
    }
}

/// Reads triples out of text.
pub trait TripleExtractor: Send + Sync {
    fn extract(&self, text: &str) -> Result<Vec<Triple>, ExtractError>;
}

const PROMPT: &str = "Extract the factual relations stated in the user's text as triples. \
Each triple has a subject and an object (entities named in the text, as written there) and a \
relation (a short verb phrase in snake_case, such as produces or part_of). Return only facts \
the text states. Answer with JSON that follows the schema.";

/// The JSON schema the model is asked to follow (and its answer is checked against).
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"triples": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "subject": {"type": "string"},
                "relation": {"type": "string"},
                "object": {"type": "string"}
            },
            "required": ["subject", "relation", "object"],
            "additionalProperties": false
        }}},
        "required": ["triples"],
        "additionalProperties": false
    })
}

pub struct HttpExtractor {
    endpoint: String,
    model: String,
    authorization: Option<String>,
    agent: ureq::Agent,
    max_triples: usize,
}

impl HttpExtractor {
    pub fn new(config: &ExtractorConfig) -> Result<HttpExtractor, (String, String)> {
        config.check()?;
        let authorization = config
            .api_key_env
            .as_ref()
            .and_then(|v| std::env::var(v).ok())
            .map(|k| format!("Bearer {k}"));
        Ok(HttpExtractor {
            endpoint: format!("{}/v1/chat/completions", config.url.trim_end_matches('/')),
            model: config.model.clone(),
            authorization,
            agent: ureq::Agent::config_builder()
                .timeout_global(Some(Duration::from_millis(config.timeout_ms)))
                .http_status_as_error(false)
                .build()
                .into(),
            max_triples: config.max_triples_per_chunk,
        })
    }
}

impl TripleExtractor for HttpExtractor {
    fn extract(&self, text: &str) -> Result<Vec<Triple>, ExtractError> {
        let body = json!({
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": text}
            ],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "triples", "strict": true, "schema": schema()}}
        });
        let mut request = self.agent.post(&self.endpoint);
        if let Some(a) = &self.authorization {
            request = request.header("Authorization", a.as_str());
        }
        let mut response = request
            .send_json(&body)
            .map_err(|e| ExtractError::Unavailable(e.to_string()))?;
        let status = response.status().as_u16();
        let answer = response
            .body_mut()
            .with_config()
            .limit(8 << 20)
            .read_to_string()
            .map_err(|e| ExtractError::Unavailable(format!("reading the answer: {e}")))?;
        match status {
            200..=299 => {}
            408 | 429 | 500..=599 => {
                return Err(ExtractError::Unavailable(format!("HTTP {status}")));
            }
            _ => {
                let excerpt: String = answer.chars().take(200).collect();
                return Err(ExtractError::Refused(format!("HTTP {status}: {excerpt}")));
            }
        }
        let mut triples = parse_completion(&answer)?;
        triples.truncate(self.max_triples);
        Ok(triples)
    }
}

/// The triples in a chat-completions answer: `choices[0].message.content` must be JSON
/// following [`schema`], with non-empty strings no longer than entity names may be.
pub fn parse_completion(answer: &str) -> Result<Vec<Triple>, ExtractError> {
    let bad = |why: String| ExtractError::Malformed(why);
    let envelope: Value =
        serde_json::from_str(answer).map_err(|e| bad(format!("the response is not JSON: {e}")))?;
    let content = envelope["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| bad("no choices[0].message.content string".into()))?;
    let value: Value = serde_json::from_str(content)
        .map_err(|e| bad(format!("the message content is not JSON: {e}")))?;
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Answer {
        triples: Vec<Item>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Item {
        subject: String,
        relation: String,
        object: String,
    }
    let parsed: Answer = serde_json::from_value(value)
        .map_err(|e| bad(format!("the content breaks the schema: {e}")))?;
    parsed
        .triples
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            for (field, v) in [
                ("subject", &t.subject),
                ("relation", &t.relation),
                ("object", &t.object),
            ] {
                if v.trim().is_empty() || v.len() > MAX_GRAPH_TERM_BYTES {
                    return Err(bad(format!(
                        "triples[{i}].{field} must be a non-empty string of at most {MAX_GRAPH_TERM_BYTES} bytes"
                    )));
                }
            }
            Ok(Triple {
                subject: t.subject,
                relation: t.relation,
                object: t.object,
                chunk: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(content: &str) -> String {
        json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string()
    }

    #[test]
    fn schema_following_answers_parse_and_anything_else_is_malformed() {
        let ok = completion(
            r#"{"triples": [{"subject": "Pancreas", "relation": "produces", "object": "Insulin"}]}"#,
        );
        let t = parse_completion(&ok).unwrap();
        assert_eq!(
            (t[0].subject.as_str(), t[0].relation.as_str()),
            ("Pancreas", "produces")
        );
        for bad in [
            "not json at all".to_string(),
            completion("Sure! Here are the triples: pancreas produces insulin"),
            completion(r#"{"facts": []}"#),
            completion(r#"{"triples": [{"subject": "A", "relation": "r"}]}"#),
            completion(r#"{"triples": [{"subject": "", "relation": "r", "object": "B"}]}"#),
            json!({"choices": []}).to_string(),
        ] {
            assert!(
                matches!(parse_completion(&bad), Err(ExtractError::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_enabled_extractor_needs_a_url_and_a_model() {
        let mut c = ExtractorConfig {
            enabled: true,
            ..Default::default()
        };
        assert_eq!(c.check().unwrap_err().0, "extractor.url");
        c.url = "http://127.0.0.1:1".into();
        assert_eq!(c.check().unwrap_err().0, "extractor.model");
        c.model = "m".into();
        assert_eq!(c.check(), Ok(()));
        assert_eq!(ExtractorConfig::default().check(), Ok(()));
    }
}
