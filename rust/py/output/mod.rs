//! Bindings of the outputs (`output/`): JSON Lines records, Parquet files and row groups,
//! Arrow rows, and the chunk sizes a job measures.

pub(crate) mod arrow;
pub(crate) mod jsonl;
pub(crate) mod parquet;
pub(crate) mod sizes;

use pyo3::prelude::*;

/// Registers the classes of this folder in the `_core` module.
pub(crate) fn register_output(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<jsonl::PyJsonlBatch>()?;
    module.add_class::<sizes::PyChunkSizes>()?;
    module.add_class::<arrow::PyArrowRows>()?;
    parquet::register_output_parquet(module)
}
