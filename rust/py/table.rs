//! Functions over spans and ids: one level cut inside given parents, char spans to bytes,
//! chunk ids of a span table, a text's id.

use std::sync::Arc;

use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use crate::engine;
use crate::ids;
use crate::py::convert::{int_rows, rows_to_numpy};
use crate::py::engine::splitter::PySplitter;
use crate::table::{as_i64, SPAN_COLUMNS};
use crate::text::span;

/// The (start, end) pairs of an (n, 2) array.
fn pairs(name: &str, spans: &PyReadonlyArray2<'_, i64>) -> PyResult<Vec<(i64, i64)>> {
    Ok(int_rows::<2>(name, spans)?
        .into_iter()
        .map(|[start, end]| (start, end))
        .collect())
}

/// The rows of an (n, 7) array.
fn table_rows(spans: &PyReadonlyArray2<'_, i64>) -> PyResult<Vec<[i64; 7]>> {
    int_rows::<{ SPAN_COLUMNS.len() }>("spans", spans)
}

/// One level cut inside parent byte spans: (n, 5) parent, start_byte, end_byte, start_char,
/// end_char.
#[pyfunction(name = "level_spans")]
pub(crate) fn py_level_spans<'py>(
    py: Python<'py>,
    splitter: Bound<'py, PySplitter>,
    text: PyBackedStr,
    parents: PyReadonlyArray2<'py, i64>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let parents = span::checked_byte_spans(&text, pairs("parents", &parents)?)?;
    let splitter = Arc::clone(&splitter.get().inner);
    let records = crate::py::gil::detach(py, || engine::level_spans(&splitter, &text, &parents))??;
    let rows = records
        .iter()
        .map(|record| {
            let [_, _, parent, start_byte, end_byte, start_char, end_char] = record.0;
            [parent, start_byte, end_byte, start_char, end_char]
        })
        .collect();
    rows_to_numpy(py, rows)
}

/// (n, 2) char spans to byte spans.
#[pyfunction(name = "char_spans_to_bytes")]
pub(crate) fn py_char_spans_to_bytes<'py>(
    py: Python<'py>,
    text: PyBackedStr,
    spans: PyReadonlyArray2<'py, i64>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let spans = pairs("spans", &spans)?;
    let bytes = crate::py::gil::detach(py, || span::char_spans_to_bytes(&text, &spans))??;
    let rows = bytes
        .iter()
        .map(|&(start, end)| [as_i64(start), as_i64(end)])
        .collect();
    rows_to_numpy(py, rows)
}

/// The id of every row of a (n, 7) span table of `text`.
#[pyfunction]
pub(crate) fn chunk_ids(
    py: Python<'_>,
    text: PyBackedStr,
    document_id: &str,
    fingerprint: &str,
    spans: PyReadonlyArray2<'_, i64>,
) -> PyResult<Vec<String>> {
    let rows = table_rows(&spans)?;
    crate::py::gil::detach(py, || ids::row_ids(&text, document_id, fingerprint, &rows))
}

/// 16 hex digits of xxh3-64 of the UTF-8 text.
#[pyfunction(name = "text_id")]
pub(crate) fn py_text_id(py: Python<'_>, text: PyBackedStr) -> PyResult<String> {
    crate::py::gil::detach(py, || ids::text_id(&text))
}
