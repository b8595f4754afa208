//! Bindings of the job (`job/`): a batch cut and collected into any output (`batch.rs`),
//! the walk over the command line's PATHs (`walk.rs`), and a store's recorded files that
//! settle a re-run's (`settle.rs`).

pub(crate) mod batch;
pub(crate) mod settle;
pub(crate) mod walk;

use pyo3::prelude::*;

/// Registers the classes and functions of this folder in the `_core` module.
pub(crate) fn register_job(module: &Bound<'_, PyModule>) -> PyResult<()> {
    batch::register_job_batch(module)?;
    settle::register_job_settle(module)?;
    walk::register_job_walk(module)
}
