//! The component schemas generated from the wire types (`contracts::wire`, the probes'
//! answers): requests as serde reads them, answers as serde writes them.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use crate::contracts::wire::{c000, c001, c002, c003, c004, error, explain, hydrate, index_admin};
use crate::http::probes;

fn generator(settings: SchemaSettings) -> SchemaGenerator {
    settings
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .with_transform(RecursiveTransform(tidy as fn(&mut Schema)))
        .into_generator()
}

/// Doc comments wrap; a description is one line. A `null` default says nothing that an
/// optional field does not (and a filter that refuses null must not offer it).
fn tidy(schema: &mut Schema) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text
            .split('\n')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
    }
    if schema.get("default") == Some(&Value::Null) {
        schema.remove("default");
    }
}

pub(super) fn generated_schemas() -> Vec<(String, Value)> {
    let mut requests = generator(SchemaSettings::draft2020_12().for_deserialize());
    requests.subschema_for::<c000::RetrievalRequestBody>();
    requests.subschema_for::<c001::RagQueryRequestBody>();
    requests.subschema_for::<c002::QueryRequestBody>();
    requests.subschema_for::<c002::IndexSettings>();
    requests.subschema_for::<c003::RetrieveInputBody>();
    requests.subschema_for::<c004::RetrieverRequestBody>();
    requests.subschema_for::<hydrate::HydrateRequestBody>();
    requests.subschema_for::<explain::ExplainRequestBody>();
    requests.subschema_for::<explain::DiffRequestBody>();
    requests.subschema_for::<index_admin::IngestRequestBody>();
    let mut answers = generator(SchemaSettings::draft2020_12().for_serialize());
    answers.subschema_for::<c000::RetrievalCallsResponse>();
    answers.subschema_for::<c001::RagQueryResponse>();
    answers.subschema_for::<c002::QueryResponse>();
    answers.subschema_for::<c002::IndexSettingsResponse>();
    answers.subschema_for::<c003::RetrieveOutput>();
    answers.subschema_for::<c004::RetrieverResponse>();
    answers.subschema_for::<hydrate::HydrateResponse>();
    answers.subschema_for::<explain::ExplainResponse>();
    answers.subschema_for::<explain::DiffResponse>();
    answers.subschema_for::<index_admin::IngestAccepted>();
    answers.subschema_for::<index_admin::IndexDeleted>();
    answers.subschema_for::<index_admin::RebuildResponse>();
    answers.subschema_for::<index_admin::IndexList>();
    answers.subschema_for::<crate::index::IndexStats>();
    answers.subschema_for::<index_admin::IndexStatus>();
    answers.subschema_for::<error::ErrorBody>();
    answers.subschema_for::<probes::Health>();
    answers.subschema_for::<probes::Ready>();
    let mut schemas: Vec<(String, Value)> = requests.take_definitions(true).into_iter().collect();
    for (name, schema) in answers.take_definitions(true) {
        // A type both read and written (an enum, an index version) is described once.
        if !schemas.iter().any(|(n, _)| *n == name) {
            schemas.push((name, schema));
        }
    }
    schemas
}
