//! The stored graph rows — one per triple, one per (entity, document) — their Arrow layout,
//! and how a document's triples become rows linked to its chunks.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{Schema, SchemaRef};
use sha2::{Digest, Sha256};

use super::normalize;
use crate::model::Document;
use crate::store::rows::ChunkRow;
use crate::store::rows::{string_list, string_lists, strings, utf8, vector_column, vector_field};

/// A fact as stored: its document, the chunk it was read from, its endpoints' entity keys,
/// and (once embedded) the vector of its text.
#[derive(Debug, Clone, PartialEq)]
pub struct TripleRow {
    pub triple_id: String,
    pub document_id: String,
    pub chunk_id: Option<String>,
    pub subject: String,
    pub relation: String,
    pub object: String,
    pub subject_key: String,
    pub object_key: String,
    /// As chunks: set when the document was deleted; the row stays for pinned versions.
    pub deleted_at: Option<String>,
    pub vector: Option<Vec<f32>>,
}

impl TripleRow {
    /// What the relation says, as text: embedded, and matched against the query's words.
    pub fn text(&self) -> String {
        format!(
            "{} {} {}",
            self.subject,
            self.relation.replace('_', " "),
            self.object
        )
    }
}

/// An entity as one document knows it: where it is mentioned and its other names.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityRow {
    pub entity_key: String,
    /// The first spelling the document used.
    pub name: String,
    pub document_id: String,
    pub chunk_ids: Vec<String>,
    pub aliases: Vec<String>,
    pub deleted_at: Option<String>,
}

/// The rows of `doc`'s triples and entities, linked to `chunks` (the document's chunk rows).
pub fn document_rows(doc: &Document, chunks: &[ChunkRow]) -> (Vec<TripleRow>, Vec<EntityRow>) {
    let chunk_keys: Vec<(u32, &str, String)> = chunks
        .iter()
        .map(|c| {
            (
                c.chunk_index,
                c.chunk_id.as_str(),
                format!(" {} ", normalize::key(&c.text)),
            )
        })
        .collect();
    let mentioning = |key: &str| -> Option<String> {
        let needle = format!(" {key} ");
        chunk_keys
            .iter()
            .find(|(_, _, text)| text.contains(&needle))
            .map(|(_, id, _)| id.to_string())
    };
    let mut triples: BTreeMap<String, TripleRow> = BTreeMap::new();
    let mut entities: BTreeMap<String, EntityRow> = BTreeMap::new();
    for t in doc.triples.iter().chain(&doc.extracted) {
        let (subject_key, object_key) = (normalize::key(&t.subject), normalize::key(&t.object));
        let chunk_id = match t.chunk {
            Some(i) => chunk_keys
                .iter()
                .find(|(index, _, _)| *index == i)
                .map(|(_, id, _)| id.to_string()),
            None => mentioning(&subject_key).or_else(|| mentioning(&object_key)),
        }
        .or_else(|| chunks.first().map(|c| c.chunk_id.clone()));
        let triple_id = triple_id(&doc.id, &subject_key, &t.relation, &object_key);
        for (key, name) in [(&subject_key, &t.subject), (&object_key, &t.object)] {
            let e = entities.entry(key.clone()).or_insert_with(|| EntityRow {
                entity_key: key.clone(),
                name: name.trim().to_string(),
                document_id: doc.id.clone(),
                chunk_ids: Vec::new(),
                aliases: Vec::new(),
                deleted_at: None,
            });
            if let Some(c) = &chunk_id {
                if !e.chunk_ids.contains(c) {
                    e.chunk_ids.push(c.clone());
                }
            }
        }
        triples.entry(triple_id.clone()).or_insert(TripleRow {
            triple_id,
            document_id: doc.id.clone(),
            chunk_id,
            subject: t.subject.trim().to_string(),
            relation: t.relation.trim().to_string(),
            object: t.object.trim().to_string(),
            subject_key,
            object_key,
            deleted_at: None,
            vector: None,
        });
    }
    for declared in &doc.entities {
        let key = normalize::key(&declared.name);
        let e = entities.entry(key.clone()).or_insert_with(|| EntityRow {
            entity_key: key.clone(),
            name: declared.name.trim().to_string(),
            document_id: doc.id.clone(),
            chunk_ids: mentioning(&key).into_iter().collect(),
            aliases: Vec::new(),
            deleted_at: None,
        });
        for alias in &declared.aliases {
            let alias = alias.trim().to_string();
            if !e.aliases.contains(&alias) {
                e.aliases.push(alias);
            }
        }
    }
    (
        triples.into_values().collect(),
        entities.into_values().collect(),
    )
}

/// Stable id of a fact within a document: the same fact stated twice is stored once.
fn triple_id(document_id: &str, subject_key: &str, relation: &str, object_key: &str) -> String {
    let mut h = Sha256::new();
    for part in [document_id, subject_key, relation.trim(), object_key] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

pub fn triple_schema(dimensions: usize) -> SchemaRef {
    Arc::new(Schema::new(vec![
        utf8("triple_id", false),
        utf8("document_id", false),
        utf8("chunk_id", true),
        utf8("subject", false),
        utf8("relation", false),
        utf8("object", false),
        utf8("subject_key", false),
        utf8("object_key", false),
        utf8("deleted_at", true),
        vector_field(dimensions),
    ]))
}

pub fn entity_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        // One row per (document, entity): the key commits merge on.
        utf8("row_id", false),
        utf8("entity_key", false),
        utf8("name", false),
        utf8("document_id", false),
        string_list("chunk_ids"),
        string_list("aliases"),
        utf8("deleted_at", true),
    ]))
}

pub fn triples_to_batch(rows: &[TripleRow], dimensions: usize) -> Result<RecordBatch, String> {
    let vectors = vector_column(
        rows.iter()
            .map(|r| (r.triple_id.as_str(), r.vector.as_ref())),
        dimensions,
    )
    .map_err(|e| format!("triple {e}"))?;
    let columns: Vec<ArrayRef> = vec![
        strings(rows.iter().map(|r| Some(r.triple_id.as_str()))),
        strings(rows.iter().map(|r| Some(r.document_id.as_str()))),
        strings(rows.iter().map(|r| r.chunk_id.as_deref())),
        strings(rows.iter().map(|r| Some(r.subject.as_str()))),
        strings(rows.iter().map(|r| Some(r.relation.as_str()))),
        strings(rows.iter().map(|r| Some(r.object.as_str()))),
        strings(rows.iter().map(|r| Some(r.subject_key.as_str()))),
        strings(rows.iter().map(|r| Some(r.object_key.as_str()))),
        strings(rows.iter().map(|r| r.deleted_at.as_deref())),
        vectors,
    ];
    RecordBatch::try_new(triple_schema(dimensions), columns).map_err(|e| e.to_string())
}

pub fn entities_to_batch(rows: &[EntityRow]) -> Result<RecordBatch, String> {
    let row_ids: Vec<String> = rows
        .iter()
        .map(|r| format!("{}\u{1f}{}", r.document_id, r.entity_key))
        .collect();
    let columns: Vec<ArrayRef> = vec![
        strings(row_ids.iter().map(|id| Some(id.as_str()))),
        strings(rows.iter().map(|r| Some(r.entity_key.as_str()))),
        strings(rows.iter().map(|r| Some(r.name.as_str()))),
        strings(rows.iter().map(|r| Some(r.document_id.as_str()))),
        string_lists(rows.iter().map(|r| r.chunk_ids.as_slice())),
        string_lists(rows.iter().map(|r| r.aliases.as_slice())),
        strings(rows.iter().map(|r| r.deleted_at.as_deref())),
    ];
    RecordBatch::try_new(entity_schema(), columns).map_err(|e| e.to_string())
}

fn column<'a>(b: &'a RecordBatch, name: &str) -> Result<&'a arrow_array::StringArray, String> {
    b.column_by_name(name)
        .and_then(|c| c.as_string_opt::<i32>())
        .ok_or_else(|| format!("graph rows: no utf8 column {name}"))
}

fn list_at(b: &RecordBatch, name: &str, i: usize) -> Result<Vec<String>, String> {
    let lists = b
        .column_by_name(name)
        .and_then(|c| c.as_list_opt::<i32>())
        .ok_or_else(|| format!("graph rows: no list column {name}"))?;
    let values = lists.value(i);
    let values = values
        .as_string_opt::<i32>()
        .ok_or_else(|| format!("graph rows: {name} holds no strings"))?;
    Ok(values.iter().flatten().map(str::to_string).collect())
}

pub fn batch_to_triples(b: &RecordBatch) -> Result<Vec<TripleRow>, String> {
    let get = |name: &str| column(b, name);
    let (id, doc, chunk) = (get("triple_id")?, get("document_id")?, get("chunk_id")?);
    let (s, r, o) = (get("subject")?, get("relation")?, get("object")?);
    let (sk, ok, del) = (get("subject_key")?, get("object_key")?, get("deleted_at")?);
    let vectors = b
        .column_by_name("vector")
        .and_then(|c| c.as_fixed_size_list_opt());
    let opt =
        |a: &arrow_array::StringArray, i: usize| (!a.is_null(i)).then(|| a.value(i).to_string());
    (0..b.num_rows())
        .map(|i| {
            let vector = match vectors {
                Some(v) => Some(
                    v.value(i)
                        .as_primitive_opt::<arrow_array::types::Float32Type>()
                        .ok_or("graph rows: vector is not f32")?
                        .values()
                        .to_vec(),
                ),
                None => None,
            };
            Ok(TripleRow {
                triple_id: id.value(i).to_string(),
                document_id: doc.value(i).to_string(),
                chunk_id: opt(chunk, i),
                subject: s.value(i).to_string(),
                relation: r.value(i).to_string(),
                object: o.value(i).to_string(),
                subject_key: sk.value(i).to_string(),
                object_key: ok.value(i).to_string(),
                deleted_at: opt(del, i),
                vector,
            })
        })
        .collect()
}

pub fn batch_to_entities(b: &RecordBatch) -> Result<Vec<EntityRow>, String> {
    let get = |name: &str| column(b, name);
    let (key, name, doc, del) = (
        get("entity_key")?,
        get("name")?,
        get("document_id")?,
        get("deleted_at")?,
    );
    (0..b.num_rows())
        .map(|i| {
            Ok(EntityRow {
                entity_key: key.value(i).to_string(),
                name: name.value(i).to_string(),
                document_id: doc.value(i).to_string(),
                chunk_ids: list_at(b, "chunk_ids", i)?,
                aliases: list_at(b, "aliases", i)?,
                deleted_at: (!del.is_null(i)).then(|| del.value(i).to_string()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EntityAliases, Triple};

    fn chunk(index: u32, text: &str) -> ChunkRow {
        let doc = Document {
            id: "d".into(),
            text: Some(text.into()),
            ..Default::default()
        };
        ChunkRow::new(
            "kb",
            &doc,
            "h",
            crate::model::Chunk {
                chunk_id: crate::model::ChunkId(format!("c{index}")),
                document_id: "d".into(),
                chunk_index: index,
                text: text.into(),
                section_path: Vec::new(),
                page_number: None,
                offsets: crate::model::Offsets { start: 0, end: 1 },
            },
        )
    }

    #[test]
    fn triples_link_to_the_chunk_that_mentions_them_and_round_trip_through_arrow() {
        let doc = Document {
            id: "d".into(),
            text: Some("x".into()),
            triples: vec![
                Triple {
                    subject: "Insulin".into(),
                    relation: "regulates".into(),
                    object: "Glucose".into(),
                    chunk: None,
                },
                // The same fact again, spelled differently: stored once.
                Triple {
                    subject: "insulin ".into(),
                    relation: "regulates".into(),
                    object: "GLUCOSE".into(),
                    chunk: None,
                },
                Triple {
                    subject: "Pancreas".into(),
                    relation: "produces".into(),
                    object: "Insulin".into(),
                    chunk: Some(0),
                },
            ],
            entities: vec![EntityAliases {
                name: "Glucose".into(),
                aliases: vec!["blood sugar".into()],
            }],
            ..Default::default()
        };
        let chunks = [
            chunk(0, "About the pancreas."),
            chunk(1, "Glucose levels drop."),
        ];
        let (triples, entities) = document_rows(&doc, &chunks);
        assert_eq!(triples.len(), 2);
        let regulates = triples.iter().find(|t| t.relation == "regulates").unwrap();
        assert_eq!(
            regulates.chunk_id.as_deref(),
            Some("c1"),
            "glucose is in chunk 1"
        );
        let produces = triples.iter().find(|t| t.relation == "produces").unwrap();
        assert_eq!(produces.chunk_id.as_deref(), Some("c0"));
        let glucose = entities.iter().find(|e| e.entity_key == "glucose").unwrap();
        assert_eq!(glucose.aliases, vec!["blood sugar".to_string()]);
        assert_eq!(entities.len(), 3);

        let mut stored = triples.clone();
        for t in &mut stored {
            t.vector = Some(vec![0.5, 0.5]);
        }
        let back = batch_to_triples(&triples_to_batch(&stored, 2).unwrap()).unwrap();
        assert_eq!(back, stored);
        let back = batch_to_entities(&entities_to_batch(&entities).unwrap()).unwrap();
        assert_eq!(back, entities);
    }
}
