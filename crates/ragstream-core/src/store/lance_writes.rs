//! Row replacement shared by the chunk and graph datasets: one uncommitted Lance change that
//! swaps every row of some documents.

use std::sync::Arc;

use arrow_array::RecordBatch;
use lance::dataset::transaction::Transaction;
use lance::dataset::{
    DeleteBuilder, MergeInsertBuilder, WhenMatched, WhenNotMatched, WhenNotMatchedBySource,
};
use lance::Dataset;

use super::filters::sql_string;
use super::StoreError;

/// `column IN ('a', 'b')`, values quoted for Lance's SQL filters.
pub fn in_list(column: &str, values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|v| sql_string(v)).collect();
    format!("{column} IN ({})", items.join(", "))
}

/// The uncommitted change that replaces every row of `documents` in `ds` with `batch`
/// (merged on `key`); no batch deletes them. Chunks and graph rows are written this way.
pub async fn replace_documents(
    ds: &Arc<Dataset>,
    key: &str,
    documents: &[String],
    batch: Option<RecordBatch>,
) -> Result<Transaction, StoreError> {
    Ok(match batch {
        None => {
            DeleteBuilder::new(ds.clone(), in_list("document_id", documents))
                .execute_uncommitted()
                .await?
                .transaction
        }
        Some(batch) => {
            let delete_if =
                WhenNotMatchedBySource::delete_if(ds, &in_list("document_id", documents))?;
            MergeInsertBuilder::try_new(ds.clone(), vec![key.to_string()])?
                .when_matched(WhenMatched::UpdateAll)
                .when_not_matched(WhenNotMatched::InsertAll)
                .when_not_matched_by_source(delete_if)
                .try_build()?
                .execute_uncommitted_batches(vec![batch])
                .await?
                .transaction
        }
    })
}
