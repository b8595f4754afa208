//! Bindings of the command line job's writers (`output/`): a batch of files' bytes in, the
//! bytes of its JSON Lines records (or its Parquet row group, encoded) out, every pass over
//! the text (UTF-8 check, cutting, ids, escaping, encoding) done with the GIL released; and
//! the same columns for Ray's batch function (`chunk_columns`), handed over as numpy arrays
//! that pyarrow wraps without a copy.

// PyO3 hands extracted arguments over by value.
#![allow(clippy::needless_pass_by_value)]

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::ffi::to_ffi;
use arrow_array::{Array, StructArray};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyCapsule};

use super::parquet::{parquet_error, PyParquetEncoder, PyParquetGroup};
use super::splitter::{splitters, PySplitter};
use crate::engine::{tree, Splitter};
use crate::error::ChunkError;
use crate::ids;
use crate::output::columns::{self, Columns};
use crate::output::parquet::{EncodedGroup, Encoder, GroupEncoder};
use crate::output::sizes::ChunkSizes;
use crate::output::{self, files, jsonl, parquet, Document};

/// Registers the functions and classes of this file in the `_core` module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyJsonlBatch>()?;
    module.add_class::<PyChunkSizes>()?;
    module.add_class::<PyArrowRows>()?;
    module.add_function(wrap_pyfunction!(write_documents, module)?)?;
    module.add_function(wrap_pyfunction!(write_files, module)?)?;
    module.add_function(wrap_pyfunction!(is_binary, module)?)?;
    module.add_function(wrap_pyfunction!(text_problem, module)?)?;
    module.add_function(wrap_pyfunction!(chunk_columns, module)?)
}

/// Whether a file whose first bytes are `head` is binary, as the job decides (`files::is_binary`).
#[pyfunction]
fn is_binary(head: &[u8]) -> bool {
    files::is_binary(head)
}

/// Why a file's bytes are not text as the job reads them (UTF-8, or UTF-16 or UTF-32 with a
/// byte order mark), worded as the job reports it; None when they are.
#[pyfunction]
fn text_problem(py: Python<'_>, data: PyBackedBytes) -> PyResult<Option<String>> {
    super::detach(py, || files::decode_text(&data).err())
}

/// The JSON Lines records of a batch, kept in Rust memory and written to a file descriptor
/// from here: handing them to Python as `bytes` copied every record once more (a tenth of
/// the job's CPU), and the stable ABI of Python 3.10 has no buffer protocol to lend them.
#[pyclass(name = "JsonlBatch", module = "spanchunk._core", frozen)]
pub(super) struct PyJsonlBatch {
    records: Vec<u8>,
}

#[pymethods]
impl PyJsonlBatch {
    /// A batch holding `records` (what `to_bytes` gives; for pickling).
    #[new]
    fn new(records: &[u8]) -> Self {
        Self {
            records: records.to_vec(),
        }
    }

    fn __len__(&self) -> usize {
        self.records.len()
    }

    /// Pickled as its bytes (a process pool sends batches back to the writer).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, pyo3::types::PyType>, (Bound<'py, PyBytes>,)) {
        let py = slf.py();
        (slf.get_type(), (slf.get().to_bytes(py),))
    }

    /// The records as one `bytes` object (a copy).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.records)
    }

    /// Writes every record to the open file descriptor `fd` at its current position, with
    /// the GIL released; raises `OSError` (errno and message as `os.write` would give) when
    /// the write fails, e.g. `BrokenPipeError` for a reader that went away.
    fn write_to(&self, py: Python<'_>, fd: i32) -> PyResult<()> {
        let written = py.detach(|| write_all(fd, &self.records));
        written.map_err(|error| os_error(py, &error))
    }
}

impl Drop for PyJsonlBatch {
    fn drop(&mut self) {
        output::recycle(std::mem::take(&mut self.records));
    }
}

/// All of `bytes` to `fd` (short writes continued, interrupted ones retried: `write_all`).
#[cfg(unix)]
fn write_all(fd: i32, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // The descriptor belongs to the caller: borrowed, never closed here.
    // SAFETY: `fd` is an open descriptor for the duration of the call (the caller holds the
    // file object), and `ManuallyDrop` keeps `File` from closing it.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    file.write_all(bytes)
}

#[cfg(not(unix))]
fn write_all(_fd: i32, _bytes: &[u8]) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "JsonlBatch.write_to needs a POSIX file descriptor: write to_bytes() instead",
    ))
}

/// The `OSError` Python raises for `error`: `OSError(errno, os.strerror(errno))`, which
/// Python turns into its subclass (`BrokenPipeError`, ...), as `os.write` would raise.
pub(super) fn os_error(py: Python<'_>, error: &std::io::Error) -> PyErr {
    let Some(code) = error.raw_os_error() else {
        return PyOSError::new_err(error.to_string());
    };
    let message = py
        .import("os")
        .and_then(|os| os.call_method1("strerror", (code,)))
        .and_then(|text| text.extract::<String>())
        .unwrap_or_else(|_| error.to_string());
    PyOSError::new_err((code, message))
}

/// The char length of every chunk a job wrote, per level: what its summary reports.
#[pyclass(name = "ChunkSizes", module = "spanchunk._core")]
#[derive(Default)]
pub(super) struct PyChunkSizes {
    inner: ChunkSizes,
}

impl From<ChunkSizes> for PyChunkSizes {
    fn from(inner: ChunkSizes) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyChunkSizes {
    /// Empty, or the sizes of each level from the leaves up (what pickling records).
    #[new]
    #[pyo3(signature = (per_level = None))]
    fn new(per_level: Option<Vec<Vec<i64>>>) -> Self {
        Self {
            inner: ChunkSizes::from_levels(per_level.unwrap_or_default()),
        }
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, pyo3::types::PyType>, (Vec<Vec<i64>>,)) {
        (slf.get_type(), (slf.borrow().inner.per_level().to_vec(),))
    }

    /// Adds the sizes `other` holds.
    fn merge(&mut self, other: &Self) {
        self.inner.merge(&other.inner);
    }

    /// One more than the highest level holding a chunk (0: no chunk).
    fn levels(&self) -> usize {
        self.inner.levels()
    }

    /// The number of chunks of `level`.
    fn count(&self, level: usize) -> usize {
        self.inner.count(level)
    }

    /// Nearest-rank percentiles of `level`'s sizes, one per share (0 to 1): the size at rank
    /// `round(last * share)` of the sorted sizes; empty for a level without chunks.
    fn percentiles(&self, level: usize, shares: Vec<f64>) -> Vec<i64> {
        self.inner.percentiles(level, &shares)
    }
}

/// What a batch turns into, before it is handed to Python.
enum Written {
    Jsonl(Vec<u8>),
    Parquet(Result<EncodedGroup, ::parquet::errors::ParquetError>),
}

/// Why a document of a batch is not written: the kind (the words the command line counts
/// skipped files by) and the message, or the error of a file that could not be read (worded
/// once the GIL is held again).
enum Failure {
    Message(&'static str, String),
    Unreadable(std::io::Error),
}

impl Failure {
    /// The kind and message Python gets: an unreadable file's message is the system's words
    /// for its error (`os.strerror`, as Python's `OSError.strerror` gives them).
    fn worded(self, py: Python<'_>) -> (&'static str, String) {
        match self {
            Self::Message(kind, message) => (kind, message),
            Self::Unreadable(error) => {
                let words = error.raw_os_error().and_then(|code| {
                    py.import("os")
                        .and_then(|os| os.call_method1("strerror", (code,)))
                        .and_then(|text| text.extract::<String>())
                        .ok()
                });
                (UNREADABLE, words.unwrap_or_else(|| error.to_string()))
            }
        }
    }
}

/// A document that is not UTF-8.
const NOT_UTF8: &str = "not UTF-8";
/// A document the engine refused (its message says why).
const NOT_CHUNKED: &str = "chunking failed";
/// A file that could not be opened or read.
const UNREADABLE: &str = "unreadable";
/// A file whose size or modification time changed while it was read.
const CHANGED: &str = "changed while read";
/// A file with a NUL byte in its first 8 KB.
const BINARY: &str = "binary";

/// What `write_documents` and `write_files` return: the written batch, each document's
/// failure (None: written), and the char length of every chunk written, by level.
type Batch<'py> = (
    Bound<'py, PyAny>,
    Vec<Option<(&'static str, String)>>,
    PyChunkSizes,
);

/// Where a batch's documents come from.
enum Inputs<'a> {
    /// Their bytes.
    Bytes(&'a [PyBackedBytes]),
    /// The files to read them from.
    Files(&'a [PathBuf]),
}

/// The Parquet encoder for `format` "parquet" (which needs one), None for "jsonl".
fn output_format(format: &str, parquet: Option<&PyParquetEncoder>) -> PyResult<Option<Encoder>> {
    match (format, parquet) {
        ("jsonl", _) => Ok(None),
        ("parquet", Some(encoder)) => Ok(Some(encoder.inner.clone())),
        ("parquet", None) => Err(PyValueError::new_err(
            "format=\"parquet\" needs parquet=ParquetFile(...).encoder()",
        )),
        (other, _) => Err(PyValueError::new_err(format!(
            "format must be \"jsonl\" or \"parquet\", not {other:?}"
        ))),
    }
}

fn check_sources(documents: usize, sources: usize) -> PyResult<()> {
    if documents == sources {
        return Ok(());
    }
    Err(PyValueError::new_err(format!(
        "{documents} documents and {sources} sources: pass one source per document"
    )))
}

fn check_ids(documents: usize, ids: Option<&[PyBackedStr]>) -> PyResult<()> {
    match ids {
        Some(ids) if ids.len() != documents => Err(PyValueError::new_err(format!(
            "{documents} documents and {} document ids: pass one id per document, or None",
            ids.len()
        ))),
        _ => Ok(()),
    }
}

/// One chunker of a batch: its levels (parents first) and its settings' fingerprint.
type ChunkerArgs<'py> = (Vec<Bound<'py, PySplitter>>, PyBackedStr);

/// Each chunker's levels, parents first.
type Levels = Vec<Vec<Arc<Splitter>>>;

/// The chunkers' levels and fingerprints (owned, for the GIL-free part) and the chunker of
/// each document (`chunker_of`, or 0 for all), checked.
fn chunkers_of(
    chunkers: &[ChunkerArgs<'_>],
    chunker_of: Option<Vec<usize>>,
    documents: usize,
) -> PyResult<Chosen> {
    if chunkers.is_empty() {
        return Err(PyValueError::new_err(
            "pass at least one (levels, fingerprint) chunker",
        ));
    }
    let chosen = chunker_of.unwrap_or_else(|| vec![0; documents]);
    if chosen.len() != documents {
        return Err(PyValueError::new_err(format!(
            "{documents} documents and {} chunker indexes: pass one per document",
            chosen.len()
        )));
    }
    if let Some(&bad) = chosen.iter().find(|&&index| index >= chunkers.len()) {
        return Err(PyValueError::new_err(format!(
            "chunker index {bad} out of range ({} chunkers)",
            chunkers.len()
        )));
    }
    Ok(Chosen {
        levels: chunkers
            .iter()
            .map(|(levels, _)| splitters(levels))
            .collect(),
        fingerprints: chunkers
            .iter()
            .map(|(_, print)| (**print).to_owned())
            .collect(),
        of: chosen,
    })
}

/// Cuts every document of a batch with its chunker (`chunkers`: (levels, fingerprint)
/// pairs, `chunker_of`: the index of each document's, None for the first) and writes its
/// chunks as `format` ("jsonl": a `JsonlBatch`, the records of every document in order;
/// "parquet": a `ParquetGroup`, every chunk as one row group encoded with `parquet`, a
/// `ParquetFile.encoder()`). Returns that, the failure of each document (None: written; else
/// its kind, "not UTF-8" or "chunking failed", and a message), and the `ChunkSizes` of the
/// chunks written. Each document's id is `document_ids[position]` (the command line's: its
/// file's resolved path), or the hash of its text where `document_ids` is None.
#[pyfunction]
#[pyo3(signature = (
    chunkers, datas, sources, format = "jsonl", parquet = None, chunker_of = None,
    document_ids = None
))]
fn write_documents<'py>(
    py: Python<'py>,
    chunkers: Vec<ChunkerArgs<'py>>,
    datas: Vec<PyBackedBytes>,
    sources: Vec<PyBackedStr>,
    format: &str,
    parquet: Option<PyRef<'py, PyParquetEncoder>>,
    chunker_of: Option<Vec<usize>>,
    document_ids: Option<Vec<PyBackedStr>>,
) -> PyResult<Batch<'py>> {
    check_sources(datas.len(), sources.len())?;
    check_ids(datas.len(), document_ids.as_deref())?;
    let encoder = output_format(format, parquet.as_deref())?;
    let chosen = chunkers_of(&chunkers, chunker_of, datas.len())?;
    let expected = datas.iter().map(|data| data.len()).sum();
    let (written, failures, sizes) = super::detach(py, || {
        write_batch(
            &chosen,
            Inputs::Bytes(&datas),
            &sources,
            document_ids.as_deref(),
            encoder.as_ref(),
            expected,
        )
    })?;
    finish(py, written, failures, sizes)
}

/// `write_documents` of the files at `paths`, read here with the GIL released: a file that
/// cannot be read ("unreadable", with the system's message), that changed while it was read
/// ("changed while read") or that holds a NUL byte in its first 8 KB ("binary") is not
/// written, and its failure says so. `expected_bytes` (the files' sizes when they were
/// listed) sizes the output buffer once.
#[pyfunction]
#[pyo3(signature = (
    chunkers, paths, sources, format = "jsonl", expected_bytes = 0, parquet = None,
    chunker_of = None, document_ids = None
))]
fn write_files<'py>(
    py: Python<'py>,
    chunkers: Vec<ChunkerArgs<'py>>,
    paths: Vec<PathBuf>,
    sources: Vec<PyBackedStr>,
    format: &str,
    expected_bytes: usize,
    parquet: Option<PyRef<'py, PyParquetEncoder>>,
    chunker_of: Option<Vec<usize>>,
    document_ids: Option<Vec<PyBackedStr>>,
) -> PyResult<Batch<'py>> {
    check_sources(paths.len(), sources.len())?;
    check_ids(paths.len(), document_ids.as_deref())?;
    let encoder = output_format(format, parquet.as_deref())?;
    let chosen = chunkers_of(&chunkers, chunker_of, paths.len())?;
    let (written, failures, sizes) = super::detach(py, || {
        write_batch(
            &chosen,
            Inputs::Files(&paths),
            &sources,
            document_ids.as_deref(),
            encoder.as_ref(),
            expected_bytes,
        )
    })?;
    finish(py, written, failures, sizes)
}

/// Each document's chunker: its levels and fingerprint are `levels[of[position]]` and
/// `fingerprints[of[position]]`.
struct Chosen {
    levels: Levels,
    fingerprints: Vec<String>,
    of: Vec<usize>,
}

/// The GIL-free part of `write_documents` and `write_files`: every input cut and written.
fn write_batch(
    chosen: &Chosen,
    inputs: Inputs<'_>,
    sources: &[PyBackedStr],
    given_ids: Option<&[PyBackedStr]>,
    parquet: Option<&Encoder>,
    expected_bytes: usize,
) -> (Written, Vec<Option<Failure>>, ChunkSizes) {
    let as_columns = parquet.is_some();
    let mut group = parquet.map(GroupEncoder::new);
    let borrowed: Vec<Vec<&Splitter>> = chosen
        .levels
        .iter()
        .map(|levels| levels.iter().map(AsRef::as_ref).collect())
        .collect();
    // JSON Lines run at about 3.2x the text (parents and children repeat it, plus keys):
    // reserved once (pages not written are never touched), not grown record by record.
    let mut jsonl_out = output::buffer(if as_columns {
        0
    } else {
        expected_bytes * 7 / 2
    });
    // One buffer for every file of the batch (see `files::read_text_file_into`).
    // A spare buffer (`output::buffer`): a fresh one per batch, grown file by file, was
    // faulted in page by page on every batch (perf: a third more page faults on 2 workers).
    let mut file_bytes = output::buffer(0);
    let mut columns = Columns::default();
    let mut failures = Vec::with_capacity(sources.len());
    let mut sizes = ChunkSizes::default();
    // The document id of each position (empty where the document failed).
    let mut document_ids = vec![String::new(); sources.len()];
    for (position, source) in sources.iter().enumerate() {
        let data: &[u8] = match inputs {
            Inputs::Bytes(datas) => &datas[position],
            Inputs::Files(paths) => {
                match files::read_text_file_into(&paths[position], &mut file_bytes) {
                    Ok(()) => &file_bytes,
                    Err(skip) => {
                        failures.push(Some(match skip {
                            files::Skip::Unreadable(error) => Failure::Unreadable(error),
                            files::Skip::Changed => Failure::Message(
                                CHANGED,
                                "the file changed while it was read; run again".to_owned(),
                            ),
                            files::Skip::Binary => Failure::Message(
                                BINARY,
                                "binary (a NUL byte in the first 8 KB)".to_owned(),
                            ),
                        }));
                        continue;
                    }
                }
            }
        };
        let decoded = match files::decode_text(data) {
            Ok(text) => text,
            Err(message) => {
                failures.push(Some(Failure::Message(NOT_UTF8, message)));
                continue;
            }
        };
        let text: &str = &decoded;
        let chunker = chosen.of[position];
        let (table, outline) = match tree::tree_spans_outlined(&borrowed[chunker], text) {
            Ok(cut) => cut,
            Err(error) => {
                failures.push(Some(Failure::Message(NOT_CHUNKED, error.to_string())));
                continue;
            }
        };
        let document_id =
            given_ids.map_or_else(|| ids::text_id(text), |given| (*given[position]).to_owned());
        let document = Document {
            text,
            source,
            document_id: &document_id,
            fingerprint: &chosen.fingerprints[chunker],
        };
        if as_columns {
            columns.push_document(position, &document, &table, outline.as_ref());
        } else {
            jsonl::write_document(&mut jsonl_out, &document, &table, outline.as_ref());
        }
        document_ids[position] = document_id;
        if columns.text.len() >= ENCODE_BYTES {
            if let Some(Ok(encoder)) = group.as_mut() {
                let slice = std::mem::take(&mut columns);
                if let Err(error) = encode_slice(encoder, slice, &document_ids, sources) {
                    group = Some(Err(error));
                }
            }
        }
        sizes.push_table(&borrowed[chunker], text, &table);
        failures.push(None);
    }
    output::recycle(file_bytes);
    let written = match group {
        Some(encoder) => Written::Parquet(encoder.and_then(|mut encoder| {
            encode_slice(&mut encoder, columns, &document_ids, sources)?;
            encoder.finish()
        })),
        None => Written::Jsonl(jsonl_out),
    };
    (written, failures, sizes)
}

/// Chunk text gathered before it is handed to the Parquet encoder: small enough to be
/// copied into pages and compressed while it is still in the cache.
const ENCODE_BYTES: usize = 1 << 20;

/// Hands the rows gathered so far to the row group's encoder.
fn encode_slice(
    encoder: &mut GroupEncoder,
    columns: Columns,
    document_ids: &[String],
    sources: &[PyBackedStr],
) -> Result<(), ::parquet::errors::ParquetError> {
    // Each row's document id and source, as the Parquet columns hold them.
    let ids: Vec<&str> = document_ids.iter().map(String::as_str).collect();
    let names: Vec<&str> = sources.iter().map(|source| &**source).collect();
    let repeated = [
        columns::repeated_strings(&ids, &columns.document),
        columns::repeated_strings(&names, &columns.document),
    ];
    encoder.write(columns, repeated)
}

/// Cuts every text of an Arrow string column (its UTF-8 `data` and its `offsets`, one more
/// than texts: see `columns::arrow_texts`) with one chunker (`levels`, parents first, and its
/// `fingerprint`) and returns its chunks as Arrow rows, document after document, each
/// document's rows in pre-order (each parent followed by its children), with the GIL
/// released: the command line's Parquet columns plus `metadata`
/// (`parquet::rows_with_metadata`), each row's document id (`document_ids`, or the hash of
/// its text where None), source and metadata its document's. What Ray's batch function turns
/// into a pyarrow table without a copy (`pa.record_batch(rows)`).
#[pyfunction]
fn chunk_columns<'py>(
    py: Python<'py>,
    levels: Vec<Bound<'py, PySplitter>>,
    fingerprint: &str,
    data: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
    document_ids: Vec<Option<PyBackedStr>>,
    sources: Vec<Option<PyBackedStr>>,
    metadata: Vec<PyBackedStr>,
) -> PyResult<PyArrowRows> {
    let texts = columns::arrow_texts(data.as_slice()?, offsets.as_slice()?)
        .map_err(|message| PyValueError::new_err(format!("the text column's {message}")))?;
    if [document_ids.len(), sources.len(), metadata.len()] != [texts.len(); 3] {
        return Err(PyValueError::new_err(format!(
            "{} texts, {} document ids, {} sources and {} metadata: pass one of each (or \
             None) per text",
            texts.len(),
            document_ids.len(),
            sources.len(),
            metadata.len()
        )));
    }
    let levels = splitters(&levels);
    let rows = super::detach(py, || -> Result<_, ChunkError> {
        let borrowed: Vec<&Splitter> = levels.iter().map(AsRef::as_ref).collect();
        let mut columns = Columns::default();
        let mut ids = Vec::with_capacity(texts.len());
        for (position, (text, given)) in texts.iter().zip(&document_ids).enumerate() {
            let (table, outline) = tree::tree_spans_outlined(&borrowed, text)?;
            let document_id = given
                .as_ref()
                .map_or_else(|| ids::text_id(text), |id| (**id).to_owned());
            let document = Document {
                text,
                source: "",
                document_id: &document_id,
                fingerprint,
            };
            columns.push_document(position, &document, &table, outline.as_ref());
            ids.push(document_id);
        }
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let sources: Vec<Option<&str>> = sources.iter().map(|source| source.as_deref()).collect();
        let metadata: Vec<&str> = metadata.iter().map(|json| &**json).collect();
        Ok(parquet::rows_with_metadata(
            columns, &ids, &sources, &metadata,
        ))
    })??;
    let rows = rows.map_err(|error| parquet_error(py, &error))?;
    Ok(PyArrowRows { rows })
}

/// A batch's chunks as Arrow rows (a struct array), handed to pyarrow through the Arrow
/// PyCapsule interface: `pa.record_batch(rows)` imports them without a copy.
#[pyclass(frozen, name = "ArrowRows", module = "spanchunk._core")]
pub struct PyArrowRows {
    rows: StructArray,
}

#[pymethods]
impl PyArrowRows {
    /// The rows' schema and array, as the Arrow PyCapsule interface names them; a
    /// requested schema is not looked at (the consumer casts if it wants another).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let (array, schema) = to_ffi(&self.rows.to_data())
            .map_err(|error| PyValueError::new_err(format!("Arrow export: {error}")))?;
        // Each capsule owns its struct; one that pyarrow never imports is released when
        // the capsule is freed (the structs' Drop calls their release callbacks).
        Ok((
            PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
            PyCapsule::new_with_value(py, array, c"arrow_array")?,
        ))
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }
}

/// The batch as Python gets it.
fn finish(
    py: Python<'_>,
    written: Written,
    failures: Vec<Option<Failure>>,
    sizes: ChunkSizes,
) -> PyResult<Batch<'_>> {
    let written = match written {
        Written::Jsonl(records) => Bound::new(py, PyJsonlBatch { records })?.into_any(),
        Written::Parquet(group) => {
            let group = group.map_err(|error| parquet_error(py, &error))?;
            Bound::new(py, PyParquetGroup::new(group))?.into_any()
        }
    };
    let failures = failures
        .into_iter()
        .map(|failure| failure.map(|failure| failure.worded(py)))
        .collect();
    Ok((written, failures, PyChunkSizes { inner: sizes }))
}
