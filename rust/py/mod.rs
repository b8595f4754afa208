//! The Python bindings, split by class and function group as polars' bindings are; the only
//! files that know PyO3. Each call takes a whole document (or a batch), releases the GIL for
//! every pass over the text and returns integers as numpy arrays; the exceptions are
//! `chunk_documents` and `build_chunks`, which return `Chunk` objects made in bulk (see
//! `chunk.rs`), because building them is most of `chunk()`. The files convert types, release
//! the GIL and raise errors; everything else is in the core, where `cargo test` reaches it.
//!
//! A panic in the core (a bug) never aborts the interpreter: the crate unwinds on panic, and
//! [`gil::detach`] catches a panic in the GIL-free work and raises it as a `RuntimeError`
//! with the panic's message, an `Exception` that an ingestion job's handler catches like any
//! other (PyO3's own `PanicException`, raised for a panic while the GIL is held, derives
//! from `BaseException`, so `except Exception` misses it). A sizer's error is a value
//! ([`ChunkError::Sizer`]), raised as the exception the `length_function` raised.

// PyO3 hands extracted arguments over by value; the doc comments are Python docstrings (they
// name Python identifiers and hold `>>>` examples, where `["text"]` is an index, not a link).
#![allow(
    clippy::needless_pass_by_value,
    clippy::doc_markdown,
    clippy::doc_link_with_quotes
)]

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::error::ChunkError;
use crate::table::SPAN_COLUMNS;

mod chunk;
mod code;
mod convert;
mod engine;
mod frameworks;
mod gil;
mod html;
mod job;
mod markdown;
mod output;
mod sizing;
mod store;
mod table;
mod text;

impl From<ChunkError> for PyErr {
    fn from(error: ChunkError) -> Self {
        match error {
            // A `length_function`'s own exception, raised again as it was.
            ChunkError::Sizer(source) => match source.downcast::<PyErr>() {
                Ok(error) => *error,
                Err(other) => PyRuntimeError::new_err(other.to_string()),
            },
            // The output cannot be written: an OSError, as a failing write is in Python.
            ChunkError::Store(message) => PyOSError::new_err(message),
            other => PyValueError::new_err(other.to_string()),
        }
    }
}

/// Panics in the core with `message` (on one of `workers` pool threads when `workers > 0`):
/// the hidden hook the tests use to pin that a panic surfaces as a `RuntimeError`.
#[pyfunction]
#[pyo3(name = "_panic_for_tests", signature = (message, workers = 0))]
fn py_panic_for_tests(py: Python<'_>, message: String, workers: usize) -> PyResult<()> {
    Ok(gil::detach(py, || {
        crate::engine::panic_for_tests(&message, workers)
    })??)
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("SPAN_COLUMNS", PyTuple::new(module.py(), SPAN_COLUMNS)?)?;
    module.add("BLANK_CHARS", crate::text::chars::blank_chars())?;
    module.add(
        "DEFAULT_PAGE_PATTERN",
        crate::text::pages::DEFAULT_PAGE_PATTERN,
    )?;
    module.add_class::<engine::splitter::PySplitter>()?;
    module.add_class::<chunk::PyChunk>()?;
    module.add_class::<markdown::PyOutline>()?;
    module.add_class::<engine::tree::PyTree>()?;
    module.add_class::<frameworks::shape::PyModelShape>()?;
    module.add_function(wrap_pyfunction!(chunk::build::build_chunks, module)?)?;
    module.add_function(wrap_pyfunction!(store::write_feed_upserts, module)?)?;
    module.add_function(wrap_pyfunction!(code::code_languages, module)?)?;
    module.add_function(wrap_pyfunction!(html::read_html, module)?)?;
    module.add_function(wrap_pyfunction!(html::html_events, module)?)?;
    module.add_function(wrap_pyfunction!(chunk::build::chunk_documents, module)?)?;
    module.add_function(wrap_pyfunction!(
        frameworks::langchain::langchain_documents,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        frameworks::haystack::haystack_documents,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        frameworks::langchain::langchain_cut,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        frameworks::haystack::haystack_cut,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        engine::splitter::py_default_separators,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        engine::splitter::sentence_separator,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(
        engine::splitter::forget_token_counts,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(table::py_level_spans, module)?)?;
    module.add_function(wrap_pyfunction!(table::py_char_spans_to_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(table::chunk_ids, module)?)?;
    module.add_function(wrap_pyfunction!(table::py_text_id, module)?)?;
    module.add_function(wrap_pyfunction!(py_panic_for_tests, module)?)?;
    job::register_job(module)?;
    output::register_output(module)?;
    store::register_store(module)?;
    text::register_text(module)?;
    Ok(())
}
