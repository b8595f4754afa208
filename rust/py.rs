//! The Python bindings: the only file that knows PyO3. Each call takes a whole document (or a
//! batch), releases the GIL for every pass over the text and returns integers as numpy arrays;
//! the Python layer builds the public objects.

// PyO3 hands extracted arguments over by value; the doc comments name Python identifiers.
#![allow(clippy::needless_pass_by_value, clippy::doc_markdown)]

use std::sync::Arc;

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyTuple;

use crate::error::ChunkError;
use crate::ids;
use crate::span::{char_to_byte, CharCursor};
use crate::split::{default_separators, KeepSeparator, Splitter, SplitterConfig};
use crate::tree::{self, SpanTable, SPAN_COLUMNS};
use crate::Unit;

impl From<ChunkError> for PyErr {
    fn from(error: ChunkError) -> Self {
        PyValueError::new_err(error.to_string())
    }
}

fn table_to_numpy(py: Python<'_>, table: SpanTable) -> PyResult<Bound<'_, PyArray2<i64>>> {
    let rows = table.rows();
    let array = Array2::from_shape_vec((rows, SPAN_COLUMNS.len()), table.data)
        .map_err(|error| PyRuntimeError::new_err(format!("span table shape: {error}")))?;
    Ok(array.into_pyarray(py))
}

fn rows_to_numpy<const N: usize>(
    py: Python<'_>,
    rows: Vec<[i64; N]>,
) -> PyResult<Bound<'_, PyArray2<i64>>> {
    let count = rows.len();
    let flat: Vec<i64> = rows.into_iter().flatten().collect();
    let array = Array2::from_shape_vec((count, N), flat)
        .map_err(|error| PyRuntimeError::new_err(format!("span shape: {error}")))?;
    Ok(array.into_pyarray(py))
}

fn non_negative(setting: &'static str, value: i64) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| {
        ChunkError::setting(
            setting,
            format!("{setting} must be >= 0, got {value}: pass a non-negative size"),
        )
        .into()
    })
}

#[allow(clippy::cast_possible_wrap)]
fn as_i64(value: usize) -> i64 {
    value as i64
}

/// One level of the splitting engine.
#[pyclass(frozen, name = "Splitter", module = "spanchunk._core")]
pub struct PySplitter {
    inner: Arc<Splitter>,
}

#[pymethods]
impl PySplitter {
    #[new]
    #[pyo3(signature = (chunk_size, *, overlap = 0, min_chunk_size = 0, separators = None, keep_separator = "end", trim = true, unit = "char"))]
    fn new(
        chunk_size: i64,
        overlap: i64,
        min_chunk_size: i64,
        separators: Option<Vec<Vec<String>>>,
        keep_separator: &str,
        trim: bool,
        unit: &str,
    ) -> PyResult<Self> {
        let config = SplitterConfig {
            chunk_size: non_negative("chunk_size", chunk_size)?,
            overlap: non_negative("overlap", overlap)?,
            min_chunk_size: non_negative("min_chunk_size", min_chunk_size)?,
            separators: separators.unwrap_or_else(default_separators),
            keep_separator: KeepSeparator::parse(keep_separator)?,
            trim,
        };
        let splitter = Splitter::new(config, Unit::parse(unit)?)?;
        Ok(Self {
            inner: Arc::new(splitter),
        })
    }

    #[getter]
    fn chunk_size(&self) -> usize {
        self.inner.config().chunk_size
    }

    #[getter]
    fn overlap(&self) -> usize {
        self.inner.config().overlap
    }

    #[getter]
    fn min_chunk_size(&self) -> usize {
        self.inner.config().min_chunk_size
    }

    #[getter]
    fn separators(&self) -> Vec<Vec<String>> {
        self.inner.config().separators.clone()
    }

    #[getter]
    fn keep_separator(&self) -> &'static str {
        self.inner.config().keep_separator.name()
    }

    #[getter]
    fn trim(&self) -> bool {
        self.inner.config().trim
    }

    #[getter]
    fn unit(&self) -> &'static str {
        self.inner.sizer().name()
    }

    fn __repr__(&self) -> String {
        let config = self.inner.config();
        format!(
            "Splitter(chunk_size={}, overlap={}, min_chunk_size={}, keep_separator={:?}, trim={}, unit={:?})",
            config.chunk_size,
            config.overlap,
            config.min_chunk_size,
            config.keep_separator.name(),
            if config.trim { "True" } else { "False" },
            self.inner.sizer().name()
        )
    }

    /// (n, 4): start_byte, end_byte, start_char, end_char.
    fn split<'py>(
        &self,
        py: Python<'py>,
        text: PyBackedStr,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let splitter = Arc::clone(&self.inner);
        let rows = py.detach(|| -> Result<Vec<[i64; 4]>, ChunkError> {
            let spans = splitter.split(&text)?;
            let chars = tree::char_spans(&text, &spans);
            Ok(spans
                .iter()
                .zip(&chars)
                .map(|(&(sb, eb), &(sc, ec))| [as_i64(sb), as_i64(eb), as_i64(sc), as_i64(ec)])
                .collect())
        })?;
        rows_to_numpy(py, rows)
    }
}

fn splitters(levels: &[Bound<'_, PySplitter>]) -> Vec<Arc<Splitter>> {
    levels
        .iter()
        .map(|level| Arc::clone(&level.get().inner))
        .collect()
}

/// The default separator levels, coarsest first.
#[pyfunction(name = "default_separators")]
fn py_default_separators() -> Vec<Vec<String>> {
    default_separators()
}

/// Every level of one document, (n, 7) in SPAN_COLUMNS order.
#[pyfunction]
fn tree_spans<'py>(
    py: Python<'py>,
    levels: Vec<Bound<'py, PySplitter>>,
    text: PyBackedStr,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let owned = splitters(&levels);
    let table = py.detach(|| {
        let borrowed: Vec<&Splitter> = owned.iter().map(AsRef::as_ref).collect();
        tree::tree_spans(&borrowed, &text)
    })?;
    table_to_numpy(py, table)
}

/// tree_spans of many documents on `workers` threads.
#[pyfunction]
#[pyo3(signature = (levels, texts, workers = None))]
fn tree_spans_many<'py>(
    py: Python<'py>,
    levels: Vec<Bound<'py, PySplitter>>,
    texts: Vec<PyBackedStr>,
    workers: Option<i64>,
) -> PyResult<Vec<Bound<'py, PyArray2<i64>>>> {
    let owned = splitters(&levels);
    let workers = match workers {
        None => None,
        Some(count) if count >= 1 => Some(non_negative("workers", count)?),
        Some(count) => {
            return Err(PyValueError::new_err(format!(
                "workers must be >= 1 or None, got {count}: pass None to use every core"
            )))
        }
    };
    let tables = py.detach(|| {
        let borrowed: Vec<&Splitter> = owned.iter().map(AsRef::as_ref).collect();
        let texts: Vec<&str> = texts.iter().map(|text| &**text).collect();
        tree::tree_spans_many(&borrowed, &texts, workers)
    })?;
    tables
        .into_iter()
        .map(|table| table_to_numpy(py, table))
        .collect()
}

fn byte_spans(text: &str, parents: &PyReadonlyArray2<'_, i64>) -> PyResult<Vec<(usize, usize)>> {
    let view = parents.as_array();
    if view.ncols() != 2 {
        return Err(PyValueError::new_err(format!(
            "parents must have shape (n, 2), got {:?}",
            view.shape()
        )));
    }
    view.rows()
        .into_iter()
        .map(|row| {
            let (start, end) = (row[0], row[1]);
            let valid = |offset: i64| {
                usize::try_from(offset)
                    .ok()
                    .filter(|&offset| offset <= text.len() && text.is_char_boundary(offset))
            };
            match (valid(start), valid(end)) {
                (Some(start_byte), Some(end_byte)) if start_byte <= end_byte => {
                    Ok((start_byte, end_byte))
                }
                _ => Err(ChunkError::InvalidSpan {
                    start,
                    end,
                    len: text.len(),
                    unit: "bytes",
                    reason: "out of range, reversed or not on a character boundary",
                }
                .into()),
            }
        })
        .collect()
}

/// One level cut inside parent byte spans: (n, 5) parent, start_byte, end_byte, start_char,
/// end_char.
#[pyfunction]
fn level_spans<'py>(
    py: Python<'py>,
    splitter: Bound<'py, PySplitter>,
    text: PyBackedStr,
    parents: PyReadonlyArray2<'py, i64>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let parents = byte_spans(&text, &parents)?;
    let splitter = Arc::clone(&splitter.get().inner);
    let rows = py.detach(|| -> Result<Vec<[i64; 5]>, ChunkError> {
        let level = tree::level_spans(&splitter, &text, &parents)?;
        let chars = tree::char_spans(&text, &level.spans);
        Ok(level
            .spans
            .iter()
            .zip(&chars)
            .zip(&level.parent)
            .map(|((&(sb, eb), &(sc, ec)), &parent)| {
                [
                    as_i64(parent),
                    as_i64(sb),
                    as_i64(eb),
                    as_i64(sc),
                    as_i64(ec),
                ]
            })
            .collect())
    })?;
    rows_to_numpy(py, rows)
}

/// (n, 2) char spans to byte spans.
#[pyfunction]
fn char_spans_to_bytes<'py>(
    py: Python<'py>,
    text: PyBackedStr,
    spans: PyReadonlyArray2<'py, i64>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let view = spans.as_array();
    if view.ncols() != 2 {
        return Err(PyValueError::new_err(format!(
            "spans must have shape (n, 2), got {:?}",
            view.shape()
        )));
    }
    let mut offsets = Vec::with_capacity(view.nrows() * 2);
    for row in view.rows() {
        let (start, end) = (row[0], row[1]);
        match (usize::try_from(start), usize::try_from(end)) {
            (Ok(start_char), Ok(end_char)) if start_char <= end_char => {
                offsets.extend([start_char, end_char]);
            }
            _ => {
                return Err(ChunkError::InvalidSpan {
                    start,
                    end,
                    len: CharCursor::new(&text).char_at(text.len()),
                    unit: "chars",
                    reason: "negative or reversed",
                }
                .into())
            }
        }
    }
    let bytes = py.detach(|| char_to_byte(&text, &offsets));
    let mut rows = Vec::with_capacity(view.nrows());
    for (pair, chars) in bytes.chunks(2).zip(offsets.chunks(2)) {
        if let (Some(start), Some(end)) = (pair[0], pair[1]) {
            rows.push([as_i64(start), as_i64(end)]);
        } else {
            let len = CharCursor::new(&text).char_at(text.len());
            return Err(ChunkError::InvalidSpan {
                start: as_i64(chars[0]),
                end: as_i64(chars[1]),
                len,
                unit: "chars",
                reason: "past the end of the text",
            }
            .into());
        }
    }
    rows_to_numpy(py, rows)
}

/// The id of every row of a (n, 7) span table.
#[pyfunction]
fn chunk_ids(
    py: Python<'_>,
    document_id: &str,
    fingerprint: &str,
    spans: PyReadonlyArray2<'_, i64>,
) -> PyResult<Vec<String>> {
    let view = spans.as_array();
    if view.ncols() != SPAN_COLUMNS.len() {
        return Err(PyValueError::new_err(format!(
            "spans must have shape (n, 7), got {:?}",
            view.shape()
        )));
    }
    let rows: Vec<(u32, u64, u64)> = view
        .rows()
        .into_iter()
        .map(|row| {
            (
                u32::try_from(row[0]).unwrap_or(u32::MAX),
                u64::try_from(row[3]).unwrap_or(0),
                u64::try_from(row[4]).unwrap_or(0),
            )
        })
        .collect();
    Ok(py.detach(|| {
        rows.iter()
            .map(|&(level, start, end)| ids::chunk_id(document_id, fingerprint, level, start, end))
            .collect()
    }))
}

/// 16 hex digits of xxh3-64 of the UTF-8 text.
#[pyfunction]
fn text_id(py: Python<'_>, text: PyBackedStr) -> String {
    py.detach(|| ids::text_id(&text))
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("SPAN_COLUMNS", PyTuple::new(module.py(), SPAN_COLUMNS)?)?;
    module.add_class::<PySplitter>()?;
    module.add_function(wrap_pyfunction!(py_default_separators, module)?)?;
    module.add_function(wrap_pyfunction!(tree_spans, module)?)?;
    module.add_function(wrap_pyfunction!(tree_spans_many, module)?)?;
    module.add_function(wrap_pyfunction!(level_spans, module)?)?;
    module.add_function(wrap_pyfunction!(char_spans_to_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(chunk_ids, module)?)?;
    module.add_function(wrap_pyfunction!(text_id, module)?)?;
    Ok(())
}
