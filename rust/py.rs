//! The Python bindings: the only file that knows PyO3. Each call takes a whole document (or a
//! batch), releases the GIL for every pass over the text and returns integers as numpy arrays;
//! the exceptions are `chunk_documents` and `build_chunks`, which return `Chunk` objects made
//! in bulk (see `PyChunk`), because building them is most of `chunk()`.

// PyO3 hands extracted arguments over by value; the doc comments are Python docstrings (they
// name Python identifiers and hold `>>>` examples, where `["text"]` is an index, not a link).
#![allow(
    clippy::needless_pass_by_value,
    clippy::doc_markdown,
    clippy::doc_link_with_quotes
)]

use std::ops::Range;
use std::sync::Arc;

use numpy::ndarray::Array2;
use numpy::{Element, IntoPyArray, PyArray1, PyArray2, PyArrayDescr, PyReadonlyArray2};
use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use crate::error::ChunkError;
use crate::ids;
use crate::markdown::Outline;
use crate::size::Sizer;
use crate::span::{char_to_byte, CharCursor};
use crate::split::{default_separators, KeepSeparator, Splitter, SplitterConfig, Structure};
use crate::token::TokenSizer;
use crate::tree::{self, SpanRecord, SpanTable, SPAN_COLUMNS};
use crate::Unit;

impl From<ChunkError> for PyErr {
    fn from(error: ChunkError) -> Self {
        PyValueError::new_err(error.to_string())
    }
}

// SAFETY: a `SpanRecord` is `#[repr(transparent)]` over `[i64; 7]`: 56 bytes, no padding, no
// Python object, trivially copyable; the dtype below describes exactly that layout (seven
// native-endian int64 fields at offsets 0, 8, ..., 48, itemsize 56).
unsafe impl Element for SpanRecord {
    const IS_COPY: bool = true;

    fn get_dtype(py: Python<'_>) -> Bound<'_, PyArrayDescr> {
        static DTYPE: PyOnceLock<Py<PyArrayDescr>> = PyOnceLock::new();
        DTYPE
            .get_or_init(py, || {
                let fields: Vec<(&str, &str)> =
                    SPAN_COLUMNS.iter().map(|name| (*name, "i8")).collect();
                PyArrayDescr::new(py, fields)
                    .expect("numpy accepts a list of (name, \"i8\") fields")
                    .unbind()
            })
            .bind(py)
            .clone()
    }

    fn clone_ref(&self, _py: Python<'_>) -> Self {
        *self
    }
}

/// A span table as a numpy structured array, one row per chunk, fields [`SPAN_COLUMNS`]: the
/// table's memory becomes the array's, no copy (viewing an (n, 7) int array as records cost
/// numpy about 0.8 us per call, two fifths of `spans` on a short document).
fn table_to_numpy(py: Python<'_>, table: SpanTable) -> Bound<'_, PyArray1<SpanRecord>> {
    table.records.into_pyarray(py)
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

/// A Python callable `str -> int` as a sizer: the documented slow path, which attaches to the
/// interpreter (takes the GIL) for every measurement.
struct CallableSizer {
    function: Py<PyAny>,
}

impl std::fmt::Debug for CallableSizer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("CallableSizer")
    }
}

/// A Python error raised by a `length_function`, carried out of the engine (whose sizers
/// cannot fail) as a panic payload and raised again by [`engine`].
struct SizerError(PyErr);

impl CallableSizer {
    fn call(&self, text: &str) -> PyResult<usize> {
        Python::attach(|py| {
            let value = self.function.bind(py).call1((text,))?;
            if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
                return Err(PyTypeError::new_err(format!(
                    "length_function must return an int, got {} for a text of {} chars",
                    value.get_type().name()?,
                    text.chars().count()
                )));
            }
            let count: i64 = value.extract()?;
            usize::try_from(count).map_err(|_| {
                PyValueError::new_err(format!(
                    "length_function returned {count} for a text of {} chars: it must return a non-negative int",
                    text.chars().count()
                ))
            })
        })
    }
}

impl Sizer for CallableSizer {
    fn size(&self, text: &str) -> usize {
        match self.call(text) {
            Ok(size) => size,
            // Not a panic message: `resume_unwind` skips the panic hook, and `engine` turns
            // the payload back into the Python exception.
            Err(error) => std::panic::resume_unwind(Box::new(SizerError(error))),
        }
    }

    fn is_additive(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "token"
    }

    fn identity(&self) -> Option<&str> {
        None
    }
}

/// Runs the engine, raising a `length_function`'s error as itself.
pub(crate) fn engine<T>(work: impl FnOnce() -> Result<T, ChunkError>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(result) => Ok(result?),
        Err(payload) => match payload.downcast::<SizerError>() {
            Ok(error) => Err(error.0),
            Err(payload) => std::panic::resume_unwind(payload),
        },
    }
}

/// The sizer of `unit`: "char" and "byte" are built in; "token" needs exactly one of a
/// tiktoken encoding name, a tokenizer.json text, or a callable.
fn token_sizer(
    unit: &str,
    encoding: Option<&str>,
    tokenizer_json: Option<&str>,
    length_function: Option<Py<PyAny>>,
) -> Result<Option<Box<dyn Sizer>>, ChunkError> {
    match (unit, encoding, tokenizer_json, length_function) {
        ("token", Some(encoding), None, None) => Ok(Some(Box::new(TokenSizer::tiktoken(encoding)?))),
        ("token", None, Some(json), None) => Ok(Some(Box::new(TokenSizer::hugging_face(json)?))),
        ("token", None, None, Some(function)) => Ok(Some(Box::new(CallableSizer { function }))),
        ("token", ..) => Err(ChunkError::setting(
            "unit",
            "unit=\"token\" needs exactly one of encoding, tokenizer or length_function",
        )),
        (_, None, None, None) => Ok(None),
        (other, ..) => Err(ChunkError::setting(
            "unit",
            format!("encoding, tokenizer and length_function apply to unit=\"token\" only, not {other:?}: pass unit=\"token\" or drop them"),
        )),
    }
}

/// One level of the splitting engine.
#[pyclass(frozen, name = "Splitter", module = "spanchunk._core")]
pub struct PySplitter {
    inner: Arc<Splitter>,
}

#[pymethods]
impl PySplitter {
    #[new]
    #[pyo3(signature = (chunk_size, *, overlap = 0, min_chunk_size = 0, separators = None, keep_separator = "end", trim = true, unit = "char", structure = None, encoding = None, tokenizer_json = None, length_function = None))]
    fn new(
        chunk_size: i64,
        overlap: i64,
        min_chunk_size: i64,
        separators: Option<Vec<Vec<String>>>,
        keep_separator: &str,
        trim: bool,
        unit: &str,
        structure: Option<&str>,
        encoding: Option<&str>,
        tokenizer_json: Option<&str>,
        length_function: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let config = SplitterConfig {
            chunk_size: non_negative("chunk_size", chunk_size)?,
            overlap: non_negative("overlap", overlap)?,
            min_chunk_size: non_negative("min_chunk_size", min_chunk_size)?,
            separators: separators.unwrap_or_else(default_separators),
            keep_separator: KeepSeparator::parse(keep_separator)?,
            trim,
            structure: Structure::parse(structure)?,
        };
        let splitter = match token_sizer(unit, encoding, tokenizer_json, length_function)? {
            Some(sizer) => Splitter::with_sizer(config, sizer)?,
            None => Splitter::new(config, Unit::parse(unit)?)?,
        };
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
    fn structure(&self) -> Option<&'static str> {
        self.inner.config().structure.name()
    }

    /// Whether a tree of such levels finds its chunks by seeking rather than from atoms.
    #[getter]
    fn seekable(&self) -> bool {
        self.inner.seekable()
    }

    #[getter]
    fn unit(&self) -> &'static str {
        self.inner.sizer().name()
    }

    /// The size of `text` in this splitter's unit.
    fn measure(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<usize> {
        let splitter = Arc::clone(&self.inner);
        py.detach(|| engine(|| Ok(splitter.sizer().size(&text))))
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
        let rows = py.detach(|| {
            engine(|| -> Result<Vec<[i64; 4]>, ChunkError> {
                let spans = splitter.split(&text)?;
                let chars = tree::char_spans(&text, &spans);
                Ok(spans
                    .iter()
                    .zip(&chars)
                    .map(|(&(sb, eb), &(sc, ec))| [as_i64(sb), as_i64(eb), as_i64(sc), as_i64(ec)])
                    .collect())
            })
        })?;
        rows_to_numpy(py, rows)
    }
}

pub(crate) fn splitters(levels: &[Bound<'_, PySplitter>]) -> Vec<Arc<Splitter>> {
    levels
        .iter()
        .map(|level| Arc::clone(&level.get().inner))
        .collect()
}

/// Drops the token counts that chunking keeps per tokenizer (merged tiktoken pieces, words),
/// so that the next chunking starts cold: benchmarks call it between repetitions.
#[pyfunction]
fn forget_token_counts() {
    crate::token::forget_counts();
}

/// The default separator levels, coarsest first.
#[pyfunction(name = "default_separators")]
fn py_default_separators() -> Vec<Vec<String>> {
    default_separators()
}

/// A `workers` argument: None (every core) or a positive count.
fn worker_count(workers: Option<i64>) -> PyResult<Option<usize>> {
    match workers {
        None => Ok(None),
        Some(count) if count >= 1 => Ok(Some(non_negative("workers", count)?)),
        Some(count) => Err(PyValueError::new_err(format!(
            "workers must be >= 1 or None, got {count}: pass None to use every core"
        ))),
    }
}

/// The levels of a chunker, top first, held by the core: each call passes only its texts.
/// With the list of splitters passed, extracted and checked on every call, `spans` of a short
/// text took 1.04 us; through a `Tree` the chunker keeps, 0.56 us.
#[pyclass(frozen, name = "Tree", module = "spanchunk._core")]
pub struct PyTree {
    levels: Vec<Arc<Splitter>>,
}

impl PyTree {
    fn borrowed(&self) -> Vec<&Splitter> {
        self.levels.iter().map(AsRef::as_ref).collect()
    }

    /// The span table of `text` by `cut` (with or without seeking), GIL released.
    fn cut<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        cut: fn(&[&Splitter], &str) -> Result<SpanTable, ChunkError>,
    ) -> PyResult<Bound<'py, PyArray1<SpanRecord>>> {
        let table = py.detach(|| engine(|| cut(&self.borrowed(), text)))?;
        Ok(table_to_numpy(py, table))
    }
}

#[pymethods]
impl PyTree {
    #[new]
    fn new(levels: Vec<Bound<'_, PySplitter>>) -> PyResult<Self> {
        let levels = splitters(&levels);
        if levels.is_empty() {
            return Err(PyValueError::new_err(
                "a tree needs at least one level: pass the splitters, top level first",
            ));
        }
        let borrowed: Vec<&Splitter> = levels.iter().map(AsRef::as_ref).collect();
        tree::check_levels(&borrowed)?;
        Ok(Self { levels })
    }

    /// Every level of one document: a structured array, one row per chunk, fields
    /// SPAN_COLUMNS.
    fn spans<'py>(
        &self,
        py: Python<'py>,
        text: PyBackedStr,
    ) -> PyResult<Bound<'py, PyArray1<SpanRecord>>> {
        self.cut(py, &text, tree::tree_spans)
    }

    /// `spans` by the atom engine alone, never by seeking: the reference that seeking is
    /// tested against.
    fn spans_by_atoms<'py>(
        &self,
        py: Python<'py>,
        text: PyBackedStr,
    ) -> PyResult<Bound<'py, PyArray1<SpanRecord>>> {
        self.cut(py, &text, tree::tree_spans_by_atoms)
    }

    /// `spans` of many documents on `workers` threads.
    #[pyo3(signature = (texts, workers = None))]
    fn spans_many<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        workers: Option<i64>,
    ) -> PyResult<Vec<Bound<'py, PyArray1<SpanRecord>>>> {
        let workers = worker_count(workers)?;
        let tables = py.detach(|| {
            let texts: Vec<&str> = texts.iter().map(|text| &**text).collect();
            engine(|| tree::tree_spans_many(&self.borrowed(), &texts, workers))
        })?;
        Ok(tables
            .into_iter()
            .map(|table| table_to_numpy(py, table))
            .collect())
    }
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
    let rows = py.detach(|| {
        engine(|| -> Result<Vec<[i64; 5]>, ChunkError> {
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
        })
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

// ------------------------------------------------------------------------------------ chunks
//
// Building the public `Chunk` objects is most of `chunk()` (the spans are the cheap part), so
// it happens here, one call per document, with no Python bytecode per chunk. See the
// performance notes in python/spanchunk/chunk.py for what was measured.

static MAPPING_PROXY_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static EMPTY_METADATA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `text[start_char:end_char]` as a new str, copied from the str's own storage: no UTF-8 round
/// trip, and CPython gives the slice the narrowest representation that holds it.
fn substring<'py>(
    text: &Bound<'py, PyString>,
    start_char: usize,
    end_char: usize,
) -> PyResult<Bound<'py, PyString>> {
    let start = ffi::Py_ssize_t::try_from(start_char).map_err(|_| too_large(start_char))?;
    let end = ffi::Py_ssize_t::try_from(end_char).map_err(|_| too_large(end_char))?;
    // SAFETY: `text` is a live str for the whole call (the Bound holds a strong reference and
    // proves the GIL is held). PyUnicode_Substring (stable ABI) only reads it, and returns a new
    // reference to a str or NULL with an exception set; `from_owned_ptr_or_err` takes ownership
    // of that reference (or fetches the exception), and the result being a str makes the
    // unchecked cast sound.
    unsafe {
        Bound::from_owned_ptr_or_err(
            text.py(),
            ffi::PyUnicode_Substring(text.as_ptr(), start, end),
        )
        .map(|slice| slice.cast_into_unchecked())
    }
}

fn too_large(offset: usize) -> PyErr {
    PyOverflowError::new_err(format!("offset {offset} does not fit a Python index"))
}

/// `dict(mapping)`, as Python spells it (a mapping or an iterable of pairs).
fn plain_dict<'py>(mapping: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    mapping.py().get_type::<PyDict>().call1((mapping,))
}

/// The read-only metadata a chunk keeps: None gives the shared empty mapping, a
/// `types.MappingProxyType` is kept as it is (so one mapping serves every chunk of a
/// document), anything else is copied into a dict and wrapped, so the caller's object can
/// change later without changing the chunk.
fn frozen_metadata<'py>(
    py: Python<'py>,
    metadata: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let proxy_type = MAPPING_PROXY_TYPE.import(py, "types", "MappingProxyType")?;
    match metadata {
        None => EMPTY_METADATA
            .get_or_try_init(py, || {
                proxy_type.call1((PyDict::new(py),)).map(Bound::unbind)
            })
            .map(|empty| empty.bind(py).clone()),
        Some(mapping) if mapping.is_exact_instance(proxy_type) => Ok(mapping.clone()),
        Some(mapping) => proxy_type.call1((plain_dict(mapping)?,)),
    }
}

/// `tuple(ids)`, refusing items that are not str.
fn id_tuple<'py>(ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let tuple = match ids.cast_exact::<PyTuple>() {
        Ok(tuple) => tuple.clone(),
        Err(_) => PyTuple::new(ids.py(), ids.try_iter()?.collect::<PyResult<Vec<_>>>()?)?,
    };
    for (position, item) in tuple.iter().enumerate() {
        if !item.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "child_ids must hold str ids; item {position} is {}",
                item.get_type().name()?
            )));
        }
    }
    Ok(tuple)
}

/// Whether two str objects are equal: the same object, or equal by Python's `==`.
fn same_str(first: &Bound<'_, PyString>, second: &Bound<'_, PyString>) -> PyResult<bool> {
    Ok(first.is(second) || PyAnyMethods::eq(first.as_any(), second)?)
}

/// One chunk of a document: its text, exact offsets, place in the hierarchy and metadata.
///
/// Chunks are immutable, hashable and picklable. Offsets are relative to the whole document:
/// ``document.text[chunk.start_char:chunk.end_char] == chunk.text`` and
/// ``document.text.encode()[chunk.start_byte:chunk.end_byte] == chunk.text.encode()``.
/// Chunkers build chunks (in bulk, in the Rust core); constructing one by hand is possible
/// but rarely needed. Two chunks are equal when their ids, spans and texts are.
///
/// Attributes:
///     id: 16 hex digits, a hash of (document id, level, byte span, chunker fingerprint).
///     text: The chunk's text (also available as ``content``).
///     document_id: The id of the document the chunk was cut from.
///     index: Position of the chunk within its document and level: 0, 1, 2, ...
///     level: 0 for the leaves (what gets embedded), 1 for their parents, and so on.
///     start_char: Start offset in code points (Python ``str`` indices).
///     end_char: End offset in code points (exclusive).
///     start_byte: Start offset in the UTF-8 encoded document.
///     end_byte: End offset in the UTF-8 encoded document (exclusive).
///     parent_id: The id of the chunk one level up, or None at the top level.
///     child_ids: The ids of the chunks one level down, in order (empty for leaves).
///     metadata: Read-only mapping: the document's metadata, plus ``"source"`` when the
///         document has one. All chunks of a document share one mapping.
///
/// Args:
///     id, text, document_id, index, level, start_char, end_char, start_byte, end_byte,
///         parent_id: The attributes of the same names, in this order.
///     child_ids: An iterable of str ids, kept as a tuple.
///     metadata: None (an empty mapping), a ``types.MappingProxyType`` (kept as it is) or
///         any other mapping (copied into a dict, then made read-only).
///
/// Example:
///     >>> from spanchunk import ParentChildChunker
///     >>> text = "A first sentence. " * 30
///     >>> children = ParentChildChunker(parent_size=200, child_size=50).chunk(text)
///     >>> child = children[0]
///     >>> child.level, child.index, text[child.start_char:child.end_char] == child.text
///     (0, 0, True)
///     >>> child.parent_id is not None
///     True
#[pyclass(frozen, name = "Chunk", module = "spanchunk._core")]
pub struct PyChunk {
    /// Where the lazy fields come from: the rows of the document the chunk was cut from
    /// (None for a chunk made by hand, whose lazy fields are all set at construction).
    rows: Option<Arc<DocumentRows>>,
    /// The chunk's row in `rows`.
    row: usize,
    // Made on first read (see the performance notes in python/spanchunk/chunk.py): a job
    // that reads only the offsets, or the texts of its hits, never pays for the rest.
    id: PyOnceLock<Py<PyString>>,
    text: PyOnceLock<Py<PyString>>,
    parent_id: PyOnceLock<Option<Py<PyString>>>,
    child_ids: PyOnceLock<Py<PyTuple>>,
    #[pyo3(get)]
    document_id: Py<PyString>,
    #[pyo3(get)]
    index: usize,
    #[pyo3(get)]
    level: usize,
    #[pyo3(get)]
    start_char: usize,
    #[pyo3(get)]
    end_char: usize,
    #[pyo3(get)]
    start_byte: usize,
    #[pyo3(get)]
    end_byte: usize,
    #[pyo3(get)]
    metadata: Py<PyAny>,
}

/// What every chunk of one document shares, to make its lazy fields from: the document str,
/// what the ids hash, and the rows of the whole span table with their parents and children.
struct DocumentRows {
    text: Py<PyString>,
    /// The document id and the chunker's fingerprint: with a row's level and byte span, what
    /// its chunk id hashes (on first read: most children's ids are never read).
    document_key: String,
    fingerprint: Arc<str>,
    rows: Vec<SpanRow>,
    parents: Vec<Option<usize>>,
    /// Row `r`'s children are `children[bounds[r]..bounds[r + 1]]`.
    children: Vec<usize>,
    bounds: Vec<usize>,
}

/// A chunk id as a str: 16 lowercase hex digits, formatted without a heap buffer.
fn id_string(py: Python<'_>, id: u64) -> Bound<'_, PyString> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buffer = [0_u8; 16];
    for (position, digit) in buffer.iter_mut().enumerate() {
        *digit = DIGITS[((id >> (60 - 4 * position)) & 0xf) as usize];
    }
    // Hex digits are ASCII, so this is valid UTF-8.
    PyString::new(py, std::str::from_utf8(&buffer).unwrap_or_default())
}

/// A `PyOnceLock` that already holds `value`.
fn filled<T>(py: Python<'_>, value: T) -> PyOnceLock<T> {
    let lock = PyOnceLock::new();
    // A new lock is empty, so `set` cannot fail.
    let _ = lock.set(py, value);
    lock
}

impl DocumentRows {
    /// The id number of row `row` (`ids::chunk_id` spells it in hex).
    fn id(&self, row: usize) -> u64 {
        let row = &self.rows[row];
        ids::chunk_hash(
            &self.document_key,
            &self.fingerprint,
            row.level,
            row.start_byte as u64,
            row.end_byte as u64,
        )
    }
}

impl PyChunk {
    /// The document rows a lazy field is made from: always there when a field is still
    /// unset (a chunk made by hand has every field set).
    fn rows(&self) -> PyResult<&DocumentRows> {
        self.rows
            .as_deref()
            .ok_or_else(|| PyRuntimeError::new_err("Chunk has neither a field nor its source"))
    }

    fn id_str<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyString>> {
        self.id
            .get_or_try_init(py, || {
                let rows = self.rows()?;
                Ok::<_, PyErr>(id_string(py, rows.id(self.row)).unbind())
            })
            .map(|id| id.bind(py))
    }

    fn text_str<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyString>> {
        self.text
            .get_or_try_init(py, || {
                let rows = self.rows()?;
                substring(rows.text.bind(py), self.start_char, self.end_char).map(Bound::unbind)
            })
            .map(|text| text.bind(py))
    }

    fn parent_id_str<'py>(&self, py: Python<'py>) -> PyResult<Option<&Bound<'py, PyString>>> {
        self.parent_id
            .get_or_try_init(py, || {
                let rows = self.rows()?;
                Ok::<_, PyErr>(
                    rows.parents[self.row].map(|parent| id_string(py, rows.id(parent)).unbind()),
                )
            })
            .map(|parent| parent.as_ref().map(|id| id.bind(py)))
    }

    fn child_ids_tuple<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyTuple>> {
        self.child_ids
            .get_or_try_init(py, || {
                let rows = self.rows()?;
                let own = &rows.children[rows.bounds[self.row]..rows.bounds[self.row + 1]];
                PyTuple::new(py, own.iter().map(|&child| id_string(py, rows.id(child))))
                    .map(Bound::unbind)
            })
            .map(|ids| ids.bind(py))
    }

    /// Whether both chunks were built from the same `DocumentRows` (one document, one call).
    fn same_source(&self, other: &Self) -> bool {
        match (&self.rows, &other.rows) {
            (Some(mine), Some(theirs)) => Arc::ptr_eq(mine, theirs),
            _ => false,
        }
    }
}

#[pymethods]
impl PyChunk {
    #[new]
    #[pyo3(
        signature = (id, text, document_id, index, level, start_char, end_char, start_byte, end_byte, parent_id = None, child_ids = None, metadata = None),
        text_signature = "(id, text, document_id, index, level, start_char, end_char, start_byte, end_byte, parent_id=None, child_ids=(), metadata=None)"
    )]
    fn new(
        py: Python<'_>,
        id: Py<PyString>,
        text: Py<PyString>,
        document_id: Py<PyString>,
        index: usize,
        level: usize,
        start_char: usize,
        end_char: usize,
        start_byte: usize,
        end_byte: usize,
        parent_id: Option<Py<PyString>>,
        child_ids: Option<&Bound<'_, PyAny>>,
        metadata: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let child_ids = match child_ids {
            None => PyTuple::empty(py),
            Some(ids) => id_tuple(ids)?,
        };
        Ok(Self {
            rows: None,
            row: 0,
            id: filled(py, id),
            text: filled(py, text),
            parent_id: filled(py, parent_id),
            child_ids: filled(py, child_ids.unbind()),
            document_id,
            index,
            level,
            start_char,
            end_char,
            start_byte,
            end_byte,
            metadata: frozen_metadata(py, metadata)?.unbind(),
        })
    }

    /// 16 hex digits, a hash of (document id, level, byte span, chunker fingerprint).
    #[getter]
    fn id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        self.id_str(py).cloned()
    }

    /// The chunk's text: ``document.text[start_char:end_char]``.
    #[getter]
    fn text<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        self.text_str(py).cloned()
    }

    /// The chunk's text (an alias of ``text``, the name LangChain and Haystack use).
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        self.text_str(py).cloned()
    }

    /// The id of the chunk one level up, or None at the top level.
    #[getter]
    fn parent_id<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyString>>> {
        Ok(self.parent_id_str(py)?.cloned())
    }

    /// The ids of the chunks one level down, in order (empty for leaves).
    #[getter]
    fn child_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.child_ids_tuple(py).cloned()
    }

    /// The chunk as a JSON-safe dict (``child_ids`` a list, ``metadata`` a dict).
    ///
    /// Returns:
    ///     One key per attribute: id, text, document_id, index, level, start_char, end_char,
    ///     start_byte, end_byte, parent_id, child_ids, metadata.
    ///
    /// Example:
    ///     >>> from spanchunk import RecursiveChunker
    ///     >>> RecursiveChunker(100).chunk("Hello there.")[0].to_dict()["text"]
    ///     'Hello there.'
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "id"), self.id_str(py)?)?;
        dict.set_item(intern!(py, "text"), self.text_str(py)?)?;
        dict.set_item(intern!(py, "document_id"), &self.document_id)?;
        dict.set_item(intern!(py, "index"), self.index)?;
        dict.set_item(intern!(py, "level"), self.level)?;
        dict.set_item(intern!(py, "start_char"), self.start_char)?;
        dict.set_item(intern!(py, "end_char"), self.end_char)?;
        dict.set_item(intern!(py, "start_byte"), self.start_byte)?;
        dict.set_item(intern!(py, "end_byte"), self.end_byte)?;
        dict.set_item(intern!(py, "parent_id"), self.parent_id_str(py)?)?;
        dict.set_item(
            intern!(py, "child_ids"),
            self.child_ids_tuple(py)?.to_list(),
        )?;
        dict.set_item(intern!(py, "metadata"), plain_dict(self.metadata.bind(py))?)?;
        Ok(dict)
    }

    /// Pickles as a constructor call; the metadata travels as a plain dict (a
    /// MappingProxyType does not pickle) and is made read-only again on load.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        let arguments = (
            self.id_str(py)?,
            self.text_str(py)?,
            &self.document_id,
            self.index,
            self.level,
            self.start_char,
            self.end_char,
            self.start_byte,
            self.end_byte,
            self.parent_id_str(py)?,
            self.child_ids_tuple(py)?,
            plain_dict(self.metadata.bind(py))?,
        )
            .into_pyobject(py)?;
        Ok((py.get_type::<Self>(), arguments))
    }

    // Equal when ids, spans and texts are; the hash uses the id and the byte span only.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, Self>) -> PyResult<bool> {
        let other = other.get();
        if self.start_byte != other.start_byte
            || self.end_byte != other.end_byte
            || self.start_char != other.start_char
            || self.end_char != other.end_char
        {
            return Ok(false);
        }
        if self.same_source(other) {
            // One document str, one document id and one fingerprint: equal spans mean equal
            // texts, and equal ids exactly when the levels are equal too.
            return Ok(self.level == other.level);
        }
        Ok(same_str(self.id_str(py)?, other.id_str(py)?)?
            && same_str(self.text_str(py)?, other.text_str(py)?)?)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        (self.id_str(py)?, self.start_byte, self.end_byte)
            .into_pyobject(py)?
            .hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        const PREVIEW_CHARS: usize = 40;
        let length = self.end_char.saturating_sub(self.start_char);
        let preview = match &self.rows {
            // Only the preview is sliced from the document: repr never makes the whole text.
            Some(rows) if self.text.get(py).is_none() => {
                let text = rows.text.bind(py);
                if length <= PREVIEW_CHARS {
                    substring(text, self.start_char, self.end_char)?.into_any()
                } else {
                    let cut = self.start_char + PREVIEW_CHARS - 3;
                    substring(text, self.start_char, cut)?.add("...")?
                }
            }
            _ => {
                let text = self.text_str(py)?;
                if text.len()? <= PREVIEW_CHARS {
                    text.clone().into_any()
                } else {
                    substring(text, 0, PREVIEW_CHARS - 3)?.add("...")?
                }
            }
        };
        Ok(format!(
            "Chunk(id={}, level={}, index={}, chars={}:{}, text={})",
            self.id_str(py)?.repr()?,
            self.level,
            self.index,
            self.start_char,
            self.end_char,
            preview.repr()?
        ))
    }
}

/// One row of a span table, checked.
struct SpanRow {
    level: u32,
    index: usize,
    parent: i64,
    start_byte: usize,
    end_byte: usize,
    start_char: usize,
    end_char: usize,
}

/// The rows of a (n, 7) span table, each checked against the text: non-negative, not
/// reversed, char spans inside the text.
fn span_rows(spans: &PyReadonlyArray2<'_, i64>, text_chars: usize) -> PyResult<Vec<SpanRow>> {
    let view = spans.as_array();
    if view.ncols() != SPAN_COLUMNS.len() {
        return Err(PyValueError::new_err(format!(
            "spans must have shape (n, 7), got {:?}",
            view.shape()
        )));
    }
    checked_rows(
        view.rows()
            .into_iter()
            .map(|row| std::array::from_fn(|column| row[column])),
        text_chars,
    )
}

/// Rows of seven integers, each checked by `span_row`.
fn checked_rows(rows: impl Iterator<Item = [i64; 7]>, text_chars: usize) -> PyResult<Vec<SpanRow>> {
    rows.enumerate()
        .map(|(number, row)| span_row(number, row, text_chars))
        .collect()
}

/// One row of a span table, checked (see `span_rows`); `number` names it in errors.
fn span_row(number: usize, row: [i64; 7], text_chars: usize) -> PyResult<SpanRow> {
    let bad = |reason: &str| PyValueError::new_err(format!("spans row {number} {row:?}: {reason}"));
    let offset =
        |column: usize| usize::try_from(row[column]).map_err(|_| bad("negative offset or index"));
    let parsed = SpanRow {
        level: u32::try_from(row[0]).map_err(|_| bad("level out of range"))?,
        index: offset(1)?,
        parent: row[2],
        start_byte: offset(3)?,
        end_byte: offset(4)?,
        start_char: offset(5)?,
        end_char: offset(6)?,
    };
    if parsed.start_byte > parsed.end_byte || parsed.start_char > parsed.end_char {
        return Err(bad("reversed span"));
    }
    if parsed.end_char > text_chars {
        return Err(bad("char span past the end of the text"));
    }
    Ok(parsed)
}

/// The rows of a span table the engine made for a text of `text_chars` chars (checked all
/// the same: a bad row is an error, never a wrong chunk).
fn table_rows(table: &SpanTable, text_chars: usize) -> PyResult<Vec<SpanRow>> {
    checked_rows(table.records.iter().map(|record| record.0), text_chars)
}

/// The row ranges of each level, top level first: rows must come grouped by level, each
/// level one below the one before.
fn level_blocks(rows: &[SpanRow]) -> PyResult<Vec<Range<usize>>> {
    let mut blocks: Vec<Range<usize>> = Vec::new();
    for (number, row) in rows.iter().enumerate() {
        match blocks.last_mut() {
            Some(block) if rows[block.start].level == row.level => block.end = number + 1,
            Some(block) if rows[block.start].level != row.level + 1 => {
                return Err(PyValueError::new_err(format!(
                    "spans row {number}: level {} follows level {}; rows must be grouped by \
                     level, top level first, each level one below the one before",
                    row.level, rows[block.start].level
                )))
            }
            _ => blocks.push(number..number + 1),
        }
    }
    Ok(blocks)
}

/// The row number of every row's parent (None at the top level): the `parent` column counts
/// rows of the level above, which must have that many.
fn parent_rows(rows: &[SpanRow], blocks: &[Range<usize>]) -> PyResult<Vec<Option<usize>>> {
    let mut parents = vec![None; rows.len()];
    for (above, block) in blocks.iter().zip(blocks.iter().skip(1)) {
        for number in block.clone() {
            let parent = rows[number].parent;
            let offset = usize::try_from(parent)
                .ok()
                .filter(|&offset| offset < above.len())
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "spans row {number}: parent {parent} is not a row of the level above \
                         ({} rows)",
                        above.len()
                    ))
                })?;
            parents[number] = Some(above.start + offset);
        }
    }
    Ok(parents)
}

/// The children of every row, in row order, as one flat list of row numbers: row `r` has
/// `children[bounds[r]..bounds[r + 1]]`.
fn child_rows(parents: &[Option<usize>]) -> (Vec<usize>, Vec<usize>) {
    let mut bounds = vec![0_usize; parents.len() + 1];
    for &parent in parents.iter().flatten() {
        bounds[parent + 1] += 1;
    }
    for number in 0..parents.len() {
        bounds[number + 1] += bounds[number];
    }
    let mut next = bounds.clone();
    let mut children = vec![0_usize; bounds[parents.len()]];
    for (number, parent) in parents.iter().enumerate() {
        if let Some(parent) = *parent {
            children[next[parent]] = number;
            next[parent] += 1;
        }
    }
    (children, bounds)
}

/// `Chunk` objects for every row of a document's (n, 7) span table, in row order (see
/// `document_chunks`); the path for spans that custom levels made.
#[pyfunction]
#[pyo3(signature = (text, document_id, fingerprint, metadata, spans, outline = None))]
fn build_chunks<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    document_id: &Bound<'py, PyString>,
    fingerprint: &str,
    metadata: Option<&Bound<'py, PyAny>>,
    spans: PyReadonlyArray2<'py, i64>,
    outline: Option<&Bound<'py, PyOutline>>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = span_rows(&spans, text.len()?)?;
    let document_key = document_id.to_str()?.to_owned();
    let outline = outline.map(|outline| &outline.get().inner);
    document_chunks(
        py,
        text,
        document_id,
        metadata,
        (rows, document_key, Arc::from(fingerprint)),
        outline,
    )
}

/// Every level of many documents as `Chunk` objects, in one call: the spans (and Markdown
/// outlines) and the default document ids (`text_id`, where an id is None) are computed with
/// the GIL released, on `workers` threads (1: this thread; None: every core), then each
/// document's chunks are built as `build_chunks` builds them, with no span array in between.
/// Returns, per document, its chunks (levels top first, leaves last) and the row of its first
/// leaf.
#[pyfunction]
#[pyo3(signature = (levels, texts, document_ids, metadatas, fingerprint, workers = Some(1)))]
fn chunk_documents<'py>(
    py: Python<'py>,
    levels: Vec<Bound<'py, PySplitter>>,
    texts: Vec<Bound<'py, PyString>>,
    document_ids: Vec<Option<Bound<'py, PyString>>>,
    metadatas: Vec<Option<Bound<'py, PyAny>>>,
    fingerprint: &str,
    workers: Option<i64>,
) -> PyResult<Vec<(Bound<'py, PyList>, usize)>> {
    if texts.len() != document_ids.len() || texts.len() != metadatas.len() {
        return Err(PyValueError::new_err(format!(
            "{} texts, {} document ids and {} metadata mappings: pass one of each per document",
            texts.len(),
            document_ids.len(),
            metadatas.len()
        )));
    }
    let owned = splitters(&levels);
    let workers = worker_count(workers)?;
    let mut inputs = Vec::with_capacity(texts.len());
    for (text, id) in texts.iter().zip(&document_ids) {
        let key = id.as_ref().map(|id| id.to_str()).transpose()?;
        inputs.push((text.to_str()?, text.len()?, key));
    }
    let prepared = py.detach(|| -> PyResult<Vec<PreparedDocument>> {
        let borrowed: Vec<&Splitter> = owned.iter().map(AsRef::as_ref).collect();
        let tables = engine(|| {
            if workers == Some(1) {
                return inputs
                    .iter()
                    .map(|(text, ..)| tree::tree_spans_outlined(&borrowed, text))
                    .collect();
            }
            let strs: Vec<&str> = inputs.iter().map(|(text, ..)| *text).collect();
            tree::tree_spans_outlined_many(&borrowed, &strs, workers)
        })?;
        tables
            .into_iter()
            .zip(&inputs)
            .map(|((table, outline), &(text, chars, key))| {
                Ok(PreparedDocument {
                    rows: table_rows(&table, chars)?,
                    outline,
                    made_key: key.is_none().then(|| ids::text_id(text)),
                })
            })
            .collect()
    })?;
    let fingerprint: Arc<str> = Arc::from(fingerprint);
    prepared
        .into_iter()
        .zip(texts.iter().zip(&document_ids).zip(&metadatas))
        .map(|(document, ((text, given_id), metadata))| {
            let (document_id, document_key) = match (given_id, document.made_key) {
                (Some(id), _) => (id.clone(), id.to_str()?.to_owned()),
                (None, made) => {
                    let made = made.unwrap_or_default();
                    (PyString::new(py, &made), made)
                }
            };
            let rows = document.rows;
            let first_leaf = rows
                .iter()
                .position(|row| row.level == 0)
                .unwrap_or(rows.len());
            let chunks = document_chunks(
                py,
                text,
                &document_id,
                metadata.as_ref(),
                (rows, document_key, Arc::clone(&fingerprint)),
                document.outline.as_ref(),
            )?;
            Ok((chunks, first_leaf))
        })
        .collect()
}

/// What `chunk_documents` computes for one document with the GIL released.
struct PreparedDocument {
    rows: Vec<SpanRow>,
    outline: Option<Outline>,
    /// The default document id, when none was given.
    made_key: Option<String>,
}

/// `Chunk` objects for the checked rows of one document's span table, in row order, given
/// with the document id and the fingerprint their ids hash: one `DocumentRows` shared by
/// every chunk (its id, text, parent id and child-id tuple are made from it on first read),
/// one shared metadata mapping; with a Markdown `outline`, one mapping per heading path,
/// holding the document's metadata and `"headings"`, shared by the chunks with that path.
fn document_chunks<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    document_id: &Bound<'py, PyString>,
    metadata: Option<&Bound<'py, PyAny>>,
    (rows, document_key, fingerprint): (Vec<SpanRow>, String, Arc<str>),
    outline: Option<&Outline>,
) -> PyResult<Bound<'py, PyList>> {
    let parents = parent_rows(&rows, &level_blocks(&rows)?)?;
    let (children, bounds) = child_rows(&parents);
    let metadata = frozen_metadata(py, metadata)?;
    let mut paths = outline.map(|outline| HeadingPaths::new(outline, &metadata));
    let mut chunks = Vec::with_capacity(rows.len());
    let shared = Arc::new(DocumentRows {
        text: text.clone().unbind(),
        document_key,
        fingerprint,
        rows,
        parents,
        children,
        bounds,
    });
    for (number, row) in shared.rows.iter().enumerate() {
        let chunk = PyChunk {
            rows: Some(Arc::clone(&shared)),
            row: number,
            id: PyOnceLock::new(),
            text: PyOnceLock::new(),
            parent_id: PyOnceLock::new(),
            child_ids: PyOnceLock::new(),
            document_id: document_id.clone().unbind(),
            index: row.index,
            level: row.level as usize,
            start_char: row.start_char,
            end_char: row.end_char,
            start_byte: row.start_byte,
            end_byte: row.end_byte,
            metadata: match paths.as_mut() {
                None => metadata.clone().unbind(),
                Some(paths) => paths.metadata(py, row.start_byte)?.unbind(),
            },
        };
        chunks.push(Bound::new(py, chunk)?);
    }
    PyList::new(py, chunks)
}

// ---------------------------------------------------------------------------------- markdown

/// The Markdown structure of one document (its headings and cut positions), parsed in the
/// core: what `build_chunks` takes to give chunks cut by custom levels their heading paths
/// (built-in levels get theirs in `chunk_documents`, from the parse the splitting used).
#[pyclass(frozen, name = "Outline", module = "spanchunk._core")]
pub struct PyOutline {
    inner: Outline,
}

#[pymethods]
impl PyOutline {
    #[new]
    fn new(py: Python<'_>, text: PyBackedStr) -> Self {
        Self {
            inner: py.detach(|| Outline::parse(&text)),
        }
    }

    /// (start_byte, level, plain text) of every top-level heading, in document order.
    #[getter]
    fn headings(&self) -> Vec<(usize, u8, String)> {
        self.inner
            .headings
            .iter()
            .map(|heading| (heading.start, heading.level, heading.text.clone()))
            .collect()
    }

    /// The heading path (plain texts, outermost first) of a chunk starting at `start_byte`.
    fn path(&self, start_byte: usize) -> Vec<String> {
        let outline = &self.inner;
        outline
            .path(outline.headings_before(start_byte))
            .into_iter()
            .map(|row| outline.headings[row].text.clone())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("Outline(headings={})", self.inner.headings.len())
    }
}

/// Per heading path, the read-only metadata of its chunks: the document's metadata and
/// `"headings"`, built once per path.
struct HeadingPaths<'a, 'py> {
    outline: &'a Outline,
    base: &'a Bound<'py, PyAny>,
    /// By the number of headings before a chunk's start.
    built: Vec<Option<Bound<'py, PyAny>>>,
    texts: Vec<Option<Bound<'py, PyString>>>,
}

impl<'a, 'py> HeadingPaths<'a, 'py> {
    fn new(outline: &'a Outline, base: &'a Bound<'py, PyAny>) -> Self {
        let count = outline.headings.len();
        Self {
            outline,
            base,
            built: vec![None; count + 1],
            texts: vec![None; count],
        }
    }

    fn metadata(&mut self, py: Python<'py>, start_byte: usize) -> PyResult<Bound<'py, PyAny>> {
        let count = self.outline.headings_before(start_byte);
        if let Some(built) = &self.built[count] {
            return Ok(built.clone());
        }
        let mut names = Vec::new();
        for row in self.outline.path(count) {
            let name = self.texts[row]
                .get_or_insert_with(|| PyString::new(py, &self.outline.headings[row].text));
            names.push(name.clone());
        }
        let dict = plain_dict(self.base)?;
        dict.set_item(intern!(py, "headings"), PyTuple::new(py, names)?)?;
        let proxy_type = MAPPING_PROXY_TYPE.import(py, "types", "MappingProxyType")?;
        let built = proxy_type.call1((dict,))?;
        self.built[count] = Some(built.clone());
        Ok(built)
    }
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("SPAN_COLUMNS", PyTuple::new(module.py(), SPAN_COLUMNS)?)?;
    module.add_class::<PySplitter>()?;
    module.add_class::<PyChunk>()?;
    module.add_class::<PyOutline>()?;
    module.add_class::<PyTree>()?;
    module.add_function(wrap_pyfunction!(build_chunks, module)?)?;
    module.add_function(wrap_pyfunction!(chunk_documents, module)?)?;
    module.add_function(wrap_pyfunction!(py_default_separators, module)?)?;
    module.add_function(wrap_pyfunction!(forget_token_counts, module)?)?;
    module.add_function(wrap_pyfunction!(level_spans, module)?)?;
    module.add_function(wrap_pyfunction!(char_spans_to_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(chunk_ids, module)?)?;
    module.add_function(wrap_pyfunction!(text_id, module)?)?;
    crate::py_output::register(module)?;
    Ok(())
}
