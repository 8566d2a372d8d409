//! The three embedding APIs ragstream speaks: the request body each expects and how to read
//! its answer. Everything else (batching, retries, the breaker) is shared.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderApi {
    /// OpenAI-compatible `POST /v1/embeddings` (OpenAI, Azure-style gateways, vLLM, LiteLLM…).
    Openai,
    /// Hugging Face text-embeddings-inference `POST /embed`.
    Tei,
    /// Ollama `POST /api/embed`.
    Ollama,
}

impl ProviderApi {
    pub fn name(self) -> &'static str {
        match self {
            ProviderApi::Openai => "openai",
            ProviderApi::Tei => "tei",
            ProviderApi::Ollama => "ollama",
        }
    }

    /// Path appended to the configured base URL.
    pub fn path(self) -> &'static str {
        match self {
            ProviderApi::Openai => "/v1/embeddings",
            ProviderApi::Tei => "/embed",
            ProviderApi::Ollama => "/api/embed",
        }
    }

    pub fn request(self, model: &str, texts: &[&str]) -> Value {
        match self {
            ProviderApi::Openai => {
                json!({"model": model, "input": texts, "encoding_format": "float"})
            }
            // TEI serves one model; `truncate` cuts over-long inputs instead of failing them.
            ProviderApi::Tei => json!({"inputs": texts, "truncate": true}),
            ProviderApi::Ollama => json!({"model": model, "input": texts, "truncate": true}),
        }
    }

    /// The vectors of a successful answer, in input order. An answer of another shape is an
    /// error message (the caller makes it a permanent error).
    pub fn parse(self, body: &Value) -> Result<Vec<Vec<f32>>, String> {
        match self {
            ProviderApi::Openai => {
                let data = body
                    .get("data")
                    .and_then(Value::as_array)
                    .ok_or("the answer has no `data` array")?;
                let mut indexed = Vec::with_capacity(data.len());
                for (position, item) in data.iter().enumerate() {
                    // `index` says which input an item belongs to; servers may reorder.
                    let index = item
                        .get("index")
                        .and_then(Value::as_u64)
                        .map_or(position, |i| i as usize);
                    let embedding = item
                        .get("embedding")
                        .ok_or(format!("data[{position}] has no `embedding`"))?;
                    indexed.push((index, vector(embedding, position)?));
                }
                indexed.sort_by_key(|(i, _)| *i);
                if indexed.iter().enumerate().any(|(n, (i, _))| n != *i) {
                    return Err("the `index` fields are not 0..n".into());
                }
                Ok(indexed.into_iter().map(|(_, v)| v).collect())
            }
            ProviderApi::Tei => vectors(body),
            ProviderApi::Ollama => vectors(
                body.get("embeddings")
                    .ok_or("the answer has no `embeddings` array")?,
            ),
        }
    }
}

fn vectors(value: &Value) -> Result<Vec<Vec<f32>>, String> {
    value
        .as_array()
        .ok_or("expected an array of vectors")?
        .iter()
        .enumerate()
        .map(|(i, v)| vector(v, i))
        .collect()
}

fn vector(value: &Value, position: usize) -> Result<Vec<f32>, String> {
    value
        .as_array()
        .ok_or(format!("vector {position} is not an array"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .map(|f| f as f32)
                .filter(|f| f.is_finite())
                .ok_or(format!("vector {position} holds a non-number"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bodies_follow_each_api() {
        let texts = ["a", "b"];
        assert_eq!(
            ProviderApi::Openai.request("m", &texts),
            json!({"model": "m", "input": ["a", "b"], "encoding_format": "float"})
        );
        assert_eq!(
            ProviderApi::Tei.request("m", &texts),
            json!({"inputs": ["a", "b"], "truncate": true})
        );
        assert_eq!(
            ProviderApi::Ollama.request("m", &texts),
            json!({"model": "m", "input": ["a", "b"], "truncate": true})
        );
    }

    #[test]
    fn openai_answers_are_put_back_in_input_order() {
        let body = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.0]}
        ]});
        assert_eq!(
            ProviderApi::Openai.parse(&body).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
        let gap =
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 2, "embedding": [1.0]}]});
        assert!(ProviderApi::Openai.parse(&gap).is_err());
    }

    #[test]
    fn tei_and_ollama_answers_parse() {
        assert_eq!(
            ProviderApi::Tei.parse(&json!([[1.0, 2.0]])).unwrap(),
            vec![vec![1.0, 2.0]]
        );
        assert_eq!(
            ProviderApi::Ollama
                .parse(&json!({"embeddings": [[3.0]]}))
                .unwrap(),
            vec![vec![3.0]]
        );
    }

    #[test]
    fn malformed_answers_are_errors_not_panics() {
        for body in [
            json!({}),
            json!({"data": "x"}),
            json!({"data": [{"embedding": ["x"]}]}),
            json!(null),
        ] {
            assert!(ProviderApi::Openai.parse(&body).is_err(), "{body}");
        }
        assert!(ProviderApi::Tei.parse(&json!({"error": "x"})).is_err());
        assert!(ProviderApi::Ollama
            .parse(&json!({"embeddings": [1.0]}))
            .is_err());
    }
}
