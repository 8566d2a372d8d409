//! Contract 002's hydration, `POST /v1/indexes/{index}/hydrate`: every requested chunk in
//! full (all metadata) with its `window` neighbours on each side in the same document and the
//! stitched text of that run, overlap removed (chunks are exact slices of their source, so
//! their offsets say how much two neighbours share). Unknown ids are listed in `not_found`,
//! not an error. With `"sections": true` the requested chunks are also grouped by the section
//! they belong to (document and section path): each section once, with its breadcrumb and its
//! whole text stitched, however many requested chunks fall in it.

use serde_json::Value;

use super::wire::hydrate::{
    ChunkBrief, ChunkContext, HydrateRequestBody, HydrateResponse, HydratedChunk, HydratedSection,
    MAX_HYDRATE_IDS, MAX_WINDOW,
};
use super::wire::{self, Offsets};
use super::Reply;
use crate::engine::{Engine, EngineError};
use crate::index::ChunkRow;
use crate::model::{IndexName, ValidationError};

/// A validated hydrate request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HydrateRequest {
    pub chunk_ids: Vec<String>,
    pub window: u64,
    pub sections: bool,
    pub index_version: Option<u64>,
}

fn ids_rule() -> String {
    format!("must be 1 to {MAX_HYDRATE_IDS} chunk id strings")
}

/// The rule a field of the hydrate request breaks when its value is refused.
fn rule(field: &str) -> String {
    match field {
        "chunk_ids" => ids_rule(),
        "window" => format!("must be an integer between 0 and {MAX_WINDOW}"),
        "sections" => "must be true or false".into(),
        "index_version" => "must be a positive integer".into(),
        _ => "must be an object".into(),
    }
}

/// Reads a hydrate request: serde takes the shape, then the ranges are checked.
pub fn parse_request(body: &Value) -> Result<HydrateRequest, ValidationError> {
    let given: HydrateRequestBody = wire::read_as(
        body,
        "",
        &|_| "is not a field of the hydrate request".into(),
        &rule,
        // A missing list breaks the same rule as an empty one.
        &rule,
    )?;
    let chunk_ids = given
        .chunk_ids
        .filter(|ids| (1..=MAX_HYDRATE_IDS).contains(&ids.len()))
        .ok_or_else(|| ValidationError::new("chunk_ids", ids_rule()))?;
    let window = given.window.unwrap_or(1);
    if window > MAX_WINDOW {
        return Err(ValidationError::new("window", rule("window")));
    }
    Ok(HydrateRequest {
        chunk_ids,
        window,
        sections: given.sections.unwrap_or(false),
        index_version: given.index_version.map(std::num::NonZeroU64::get),
    })
}

/// Answers a hydrate request on `index`.
#[tracing::instrument(name = "hydration", skip_all, fields(index = %index))]
pub async fn hydrate(engine: &Engine, index: &IndexName, body: &Value) -> Reply {
    let request = match parse_request(body) {
        Ok(r) => r,
        Err(e) => return super::error_reply(&e.into()),
    };
    match hydrate_rows(engine, index, &request).await {
        Ok(answer) => {
            let version = answer.index_version;
            Reply::typed(&answer, Some(version))
        }
        Err(e) => super::error_reply(&e),
    }
}

async fn hydrate_rows(
    engine: &Engine,
    index: &IndexName,
    request: &HydrateRequest,
) -> Result<HydrateResponse, EngineError> {
    use crate::store::filters::sql_string;
    let window = request.window;
    let handle = engine.index(index).await?;
    let snapshot = handle.reader().snapshot(request.index_version).await?;
    let lance = handle.lance();
    let found = lance
        .rows(&snapshot.dataset, &request.chunk_ids, false)
        .await?;
    let mut chunks = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut not_found = Vec::new();
    // (document, section path) → requested chunk ids, in first-requested order.
    type Section = (String, Vec<String>);
    let mut groups: Vec<(Section, Vec<String>)> = Vec::new();
    for id in &request.chunk_ids {
        if !seen.insert(id.clone()) {
            continue; // asked twice: answered once
        }
        // A deleted document's chunks are gone for hydration as for search.
        let Some(row) = found.iter().find(|r| &r.chunk_id == id && !r.is_deleted()) else {
            not_found.push(id.clone());
            continue;
        };
        let lo = u64::from(row.chunk_index).saturating_sub(window);
        let hi = u64::from(row.chunk_index) + window;
        let filter = format!(
            "document_id = {} AND chunk_index >= {lo} AND chunk_index <= {hi}",
            sql_string(&row.document_id)
        );
        let mut run = lance
            .rows_where(&snapshot.dataset, Some(filter), false)
            .await?;
        run.sort_by_key(|r| r.chunk_index);
        let key = (row.document_id.clone(), row.section_path.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(row.chunk_id.clone()),
            None => groups.push((key, vec![row.chunk_id.clone()])),
        }
        let briefs = |keep: &dyn Fn(&ChunkRow) -> bool| -> Vec<ChunkBrief> {
            run.iter()
                .filter(|r| keep(r))
                .map(|r| ChunkBrief {
                    chunk_id: r.chunk_id.clone(),
                    chunk_index: r.chunk_index,
                    text: r.text.clone(),
                })
                .collect()
        };
        chunks.push(HydratedChunk {
            chunk_id: row.chunk_id.clone(),
            document_id: row.document_id.clone(),
            chunk_index: row.chunk_index,
            title: row.title.clone(),
            section_path: row.section_path.clone(),
            breadcrumb: breadcrumb(row),
            source_uri: row.source_uri(),
            text: row.text.clone(),
            offsets: Offsets {
                start: row.offset_start,
                end: row.offset_end,
            },
            metadata: super::wire::chunk_metadata::ChunkMetadata::of(row),
            context: ChunkContext {
                before: briefs(&|r| r.chunk_index < row.chunk_index),
                after: briefs(&|r| r.chunk_index > row.chunk_index),
                stitched_text: stitch(&run),
            },
        });
    }
    let sections = if request.sections {
        let ids: Vec<String> = groups.iter().map(|((d, _), _)| d.clone()).collect();
        let documents = lance.live_documents(&snapshot.dataset, &ids).await?;
        let mut out = Vec::with_capacity(groups.len());
        for ((document_id, path), members) in groups {
            let rows = documents.get(&document_id).map_or(&[][..], Vec::as_slice);
            let run = section_run(rows, &path);
            let Some(first) = run.first() else { continue };
            out.push(HydratedSection {
                breadcrumb: breadcrumb(first),
                section_chunk_ids: run.iter().map(|r| r.chunk_id.clone()).collect(),
                stitched_text: stitch(&run),
                document_id,
                section_path: path,
                chunk_ids: members,
            });
        }
        Some(out)
    } else {
        None
    };
    Ok(HydrateResponse {
        index_version: snapshot.version,
        chunks,
        not_found,
        sections,
    })
}

/// The chunks of the section at `path` (subsections included) among a document's rows, in
/// their order.
pub fn section_run(document: &[ChunkRow], path: &[String]) -> Vec<ChunkRow> {
    document
        .iter()
        .filter(|r| r.section_path.starts_with(path))
        .cloned()
        .collect()
}

/// `Title › Section › Subsection`: where a chunk sits, for citing it.
pub fn breadcrumb(row: &ChunkRow) -> String {
    row.title
        .iter()
        .chain(row.section_path.iter())
        .filter(|s| !s.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join(" › ")
}

/// Joins consecutive chunks of one document, dropping the text a chunk shares with the one
/// before it (its offsets start before the previous one's end, on the same page). Chunks that
/// do not touch are joined by one space (the source between them is whitespace), chunks of
/// different pages by a line break.
pub fn stitch(run: &[ChunkRow]) -> String {
    let mut out = String::new();
    let mut prev: Option<&ChunkRow> = None;
    for r in run {
        match prev {
            Some(p) if p.page_number == r.page_number && r.offset_start < p.offset_end => {
                let shared = (p.offset_end - r.offset_start) as usize;
                out.extend(r.text.chars().skip(shared));
            }
            Some(p) => {
                let touching = p.page_number == r.page_number && r.offset_start == p.offset_end;
                if !touching {
                    out.push(if p.page_number == r.page_number {
                        ' '
                    } else {
                        '\n'
                    });
                }
                out.push_str(&r.text);
            }
            None => out.push_str(&r.text),
        }
        prev = Some(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_refusal_keeps_its_wording() {
        let ids = format!("must be 1 to {MAX_HYDRATE_IDS} chunk id strings");
        let window = format!("must be an integer between 0 and {MAX_WINDOW}");
        let too_many: Vec<String> = (0..=MAX_HYDRATE_IDS).map(|i| format!("c{i}")).collect();
        let cases = [
            (json!([1]), "body", "must be an object"),
            (json!("x"), "body", "must be an object"),
            (
                json!({"chunk_ids": ["a"], "bogus": 1}),
                "bogus",
                "is not a field of the hydrate request",
            ),
            (json!({}), "chunk_ids", ids.as_str()),
            (json!({"chunk_ids": null}), "chunk_ids", ids.as_str()),
            (json!({"chunk_ids": "a"}), "chunk_ids", ids.as_str()),
            (json!({"chunk_ids": []}), "chunk_ids", ids.as_str()),
            (json!({"chunk_ids": ["a", 1]}), "chunk_ids", ids.as_str()),
            (json!({"chunk_ids": too_many}), "chunk_ids", ids.as_str()),
            (
                json!({"chunk_ids": ["a"], "window": -1}),
                "window",
                window.as_str(),
            ),
            (
                json!({"chunk_ids": ["a"], "window": 6}),
                "window",
                window.as_str(),
            ),
            (
                json!({"chunk_ids": ["a"], "window": 1.5}),
                "window",
                window.as_str(),
            ),
            (
                json!({"chunk_ids": ["a"], "window": "1"}),
                "window",
                window.as_str(),
            ),
            (
                json!({"chunk_ids": ["a"], "sections": "yes"}),
                "sections",
                "must be true or false",
            ),
            (
                json!({"chunk_ids": ["a"], "sections": 1}),
                "sections",
                "must be true or false",
            ),
            (
                json!({"chunk_ids": ["a"], "index_version": 0}),
                "index_version",
                "must be a positive integer",
            ),
            (
                json!({"chunk_ids": ["a"], "index_version": -2}),
                "index_version",
                "must be a positive integer",
            ),
            (
                json!({"chunk_ids": ["a"], "index_version": "3"}),
                "index_version",
                "must be a positive integer",
            ),
        ];
        for (body, field, rule) in cases {
            let e = parse_request(&body).expect_err(&body.to_string());
            assert_eq!((e.field.as_str(), e.rule.as_str()), (field, rule), "{body}");
        }
    }

    #[test]
    fn absent_and_null_options_take_their_defaults() {
        let r = parse_request(&json!({"chunk_ids": ["a", "a"], "window": null,
            "sections": null, "index_version": null}))
        .unwrap();
        assert_eq!(
            r,
            HydrateRequest {
                chunk_ids: vec!["a".into(), "a".into()],
                window: 1,
                sections: false,
                index_version: None,
            }
        );
        let r = parse_request(&json!({"chunk_ids": ["b"], "window": 5, "sections": true,
            "index_version": 7}))
        .unwrap();
        assert_eq!((r.window, r.sections, r.index_version), (5, true, Some(7)));
    }
}
