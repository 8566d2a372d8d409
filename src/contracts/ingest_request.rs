//! Contract 002's ingest request (`POST /v1/indexes/{index}/documents`), read and validated
//! into document operations. Every document is checked before any is produced, so a refused
//! request produces nothing.

use serde_json::Value;

use super::wire::{self, index_admin::IngestRequestBody};
use crate::index::DocumentOp;
use crate::model::{validate_document_id, Document, DocumentLimits, ValidationError};

/// The upserts, then the deletes, of `body`; or the first fault, naming its field
/// (`documents[i].<field>`, `deletes[i]`).
pub fn parse_request(
    body: &Value,
    limits: &DocumentLimits,
) -> Result<Vec<DocumentOp>, ValidationError> {
    if !body.is_object() {
        return Err(ValidationError::new("body", "body must be an object"));
    }
    // Each list is given or absent (null is absent): anything else is refused, never skipped.
    let request = wire::read::<IngestRequestBody>(
        body,
        "",
        &|_| "is not a field (expected documents, deletes)".into(),
        &|field| match field {
            "documents" => "must be a list of documents".into(),
            _ => "must be a list of document ids".into(),
        },
    )?;
    let mut ops = Vec::new();
    for (i, d) in request
        .documents
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let doc: Document = serde_json::from_value(d)
            .map_err(|e| ValidationError::new(format!("documents[{i}]"), e.to_string()))?;
        doc.validate(limits)
            .map_err(|e| ValidationError::new(format!("documents[{i}].{}", e.field), e.rule))?;
        ops.push(DocumentOp::Upsert(doc));
    }
    for (i, id) in request.deletes.unwrap_or_default().iter().enumerate() {
        let field = format!("deletes[{i}]");
        let id = id
            .as_str()
            .ok_or_else(|| ValidationError::new(&field, "must be a string"))?;
        validate_document_id(id, limits).map_err(|e| ValidationError::new(&field, e.rule))?;
        ops.push(DocumentOp::Delete {
            document_id: id.to_string(),
        });
    }
    if ops.is_empty() {
        return Err(ValidationError::new(
            "documents",
            "give at least one document or delete",
        ));
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_refusal_keeps_its_wording() {
        let limits = DocumentLimits::default();
        let long_id = "x".repeat(limits.max_id_bytes + 1);
        let cases = [
            (json!([]), "body", "body must be an object"),
            (
                json!({"documents": [], "bogus": 1}),
                "bogus",
                "is not a field (expected documents, deletes)",
            ),
            (json!({"documents": "x"}), "documents", "must be a list of documents"),
            (json!({"deletes": {"a": 1}}), "deletes", "must be a list of document ids"),
            (json!({}), "documents", "give at least one document or delete"),
            (
                json!({"documents": null, "deletes": []}),
                "documents",
                "give at least one document or delete",
            ),
            (
                json!({"documents": [{"id": "a", "text": "t", "colour": "red"}]}),
                "documents[0]",
                "unknown field `colour`, expected one of `id`, `title`, `text`, `pages`, `uri`, `source_type`, `source_name`, `source_id`, `source_path`, `managed_by_source`, `project_id`, `tags`, `updated_at`, `metadata`, `triples`, `entities`",
            ),
            (
                json!({"documents": [{"id": "a", "text": "t"}, {"id": "b"}]}),
                "documents[1].text",
                "one of `text` or `pages` is required",
            ),
            (json!({"deletes": ["a", 7]}), "deletes[1]", "must be a string"),
            (json!({"deletes": [" "]}), "deletes[0]", "must not be empty"),
            (
                json!({"deletes": [long_id]}),
                "deletes[0]",
                "must be at most 512 bytes",
            ),
        ];
        for (body, field, rule) in cases {
            let e = parse_request(&body, &limits).unwrap_err();
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
    }

    #[test]
    fn upserts_come_before_deletes_and_null_lists_are_absent() {
        let ops = parse_request(
            &json!({"deletes": ["old"], "documents": [{"id": "new", "text": "t"}]}),
            &DocumentLimits::default(),
        )
        .unwrap();
        let ids: Vec<(&str, bool)> = ops
            .iter()
            .map(|op| (op.document_id(), matches!(op, DocumentOp::Upsert(_))))
            .collect();
        assert_eq!(ids, [("new", true), ("old", false)]);
        let only = parse_request(
            &json!({"documents": null, "deletes": ["a"]}),
            &DocumentLimits::default(),
        )
        .unwrap();
        assert_eq!(only.len(), 1);
    }
}
