//! Bindings of a batch of the job (`job/batch.rs`): the arguments checked and converted, the
//! batch run with the GIL released, and its collector's output handed over: JSON Lines
//! records or a Parquet row group (`write_documents`, `write_files`), Arrow rows
//! (`chunk_columns`); the store's rows are `py/store.rs`'s `cut_for_store`.

// PyO3 hands extracted arguments over by value.
#![allow(clippy::needless_pass_by_value)]

use std::path::PathBuf;

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};

use crate::job::batch::{self, Chunkers, Documents, Failure, Inputs, Outcome};
use crate::job::collect::{ArrowRows, JsonlRecords, ParquetRows};
use crate::output::columns;
use crate::py::engine::splitter::{splitters, PySplitter};
use crate::py::gil::detach;
use crate::py::output::arrow::PyArrowRows;
use crate::py::output::jsonl::PyJsonlBatch;
use crate::py::output::parquet::{parquet_error, PyParquetEncoder, PyParquetGroup};
use crate::py::output::sizes::PyChunkSizes;

/// Registers the functions of this file in the `_core` module.
pub(crate) fn register_job_batch(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(write_documents, module)?)?;
    module.add_function(wrap_pyfunction!(write_files, module)?)?;
    module.add_function(wrap_pyfunction!(chunk_columns, module)?)
}

/// One chunker of a batch: its levels (parents first) and its settings' fingerprint.
type ChunkerArgs<'py> = (Vec<Bound<'py, PySplitter>>, PyBackedStr);

/// What `write_documents` and `write_files` return: the written batch, each document's
/// failure (None: written; else its kind and message), and the char length of every chunk
/// written, by level.
type Written<'py> = (
    Bound<'py, PyAny>,
    Vec<Option<(&'static str, String)>>,
    PyChunkSizes,
);

/// The chunkers (owned, for the GIL-free part) and each document's.
fn chunkers_of(
    chunkers: &[ChunkerArgs<'_>],
    chunker_of: Option<Vec<usize>>,
    documents: usize,
) -> PyResult<Chunkers> {
    let owned = chunkers
        .iter()
        .map(|(levels, print)| (splitters(levels), (**print).to_owned()))
        .collect();
    Chunkers::new(owned, chunker_of, documents).map_err(PyValueError::new_err)
}

/// The kind and message Python gets: an unreadable file's message is the system's words for
/// its error (`os.strerror`, as Python's `OSError.strerror` gives them).
fn worded(py: Python<'_>, failure: &Failure) -> (&'static str, String) {
    if let Failure::Unreadable(error) = failure {
        let words = error.raw_os_error().and_then(|code| {
            py.import("os")
                .and_then(|os| os.call_method1("strerror", (code,)))
                .and_then(|text| text.extract::<String>())
                .ok()
        });
        if let Some(words) = words {
            return (failure.kind(), words);
        }
    }
    (failure.kind(), failure.message())
}

/// The Parquet encoder for `format` "parquet" (which needs one), None for "jsonl".
fn parquet_encoder<'a>(
    format: &str,
    parquet: Option<&'a PyParquetEncoder>,
) -> PyResult<Option<&'a PyParquetEncoder>> {
    match (format, parquet) {
        ("jsonl", _) => Ok(None),
        ("parquet", Some(encoder)) => Ok(Some(encoder)),
        ("parquet", None) => Err(PyValueError::new_err(
            "format=\"parquet\" needs parquet=ParquetFile(...).encoder()",
        )),
        (other, _) => Err(PyValueError::new_err(format!(
            "format must be \"jsonl\" or \"parquet\", not {other:?}"
        ))),
    }
}

/// Runs a batch of the command line's outputs and hands it over.
fn write_batch<'py>(
    py: Python<'py>,
    chunkers: &[ChunkerArgs<'py>],
    chunker_of: Option<Vec<usize>>,
    inputs: Inputs<'_>,
    sources: &[PyBackedStr],
    document_ids: Option<&[PyBackedStr]>,
    (format, parquet, expected_bytes): (&str, Option<&PyParquetEncoder>, usize),
) -> PyResult<Written<'py>> {
    let sources: Vec<&str> = sources.iter().map(|source| &**source).collect();
    let ids: Option<Vec<Option<&str>>> =
        document_ids.map(|ids| ids.iter().map(|id| Some(&**id)).collect());
    let documents = Documents {
        inputs,
        sources: Some(&sources),
        ids: ids.as_deref(),
    };
    documents.check().map_err(PyValueError::new_err)?;
    let chunkers = chunkers_of(chunkers, chunker_of, inputs.len())?;
    let (written, outcome) = match parquet_encoder(format, parquet)? {
        None => {
            let (records, outcome) = detach(py, || {
                let mut records = JsonlRecords::new(expected_bytes);
                let outcome = batch::run(&chunkers, &documents, &mut records);
                (records.records, outcome)
            })?;
            (
                Bound::new(py, PyJsonlBatch { records })?.into_any(),
                outcome,
            )
        }
        Some(encoder) => {
            let (group, outcome) = detach(py, || {
                let mut rows = ParquetRows::new(&encoder.inner, &sources);
                let outcome = batch::run(&chunkers, &documents, &mut rows);
                (rows.finish(), outcome)
            })?;
            let group = group.map_err(|error| parquet_error(py, &error))?;
            (
                Bound::new(py, PyParquetGroup::new(group))?.into_any(),
                outcome,
            )
        }
    };
    let Outcome { failures, sizes } = outcome;
    let failures = failures
        .iter()
        .map(|failure| failure.as_ref().map(|failure| worded(py, failure)))
        .collect();
    Ok((written, failures, PyChunkSizes { inner: sizes }))
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
) -> PyResult<Written<'py>> {
    let bytes: Vec<&[u8]> = datas.iter().map(|data| &**data).collect();
    let expected = bytes.iter().map(|data| data.len()).sum();
    write_batch(
        py,
        &chunkers,
        chunker_of,
        Inputs::Bytes(&bytes),
        &sources,
        document_ids.as_deref(),
        (format, parquet.as_deref(), expected),
    )
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
) -> PyResult<Written<'py>> {
    write_batch(
        py,
        &chunkers,
        chunker_of,
        Inputs::Files(&paths),
        &sources,
        document_ids.as_deref(),
        (format, parquet.as_deref(), expected_bytes),
    )
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
    let chunkers = Chunkers::one(splitters(&levels), fingerprint.to_owned(), texts.len());
    let ids: Vec<Option<&str>> = document_ids.iter().map(|id| id.as_deref()).collect();
    let (rows, failure) = detach(py, || {
        let mut rows = ArrowRows::new(texts.len());
        let documents = Documents {
            inputs: Inputs::Texts(&texts),
            sources: None,
            ids: Some(&ids),
        };
        let outcome = batch::run(&chunkers, &documents, &mut rows);
        let sources: Vec<Option<&str>> = sources.iter().map(|source| source.as_deref()).collect();
        let metadata: Vec<&str> = metadata.iter().map(|json| &**json).collect();
        let failure = outcome.failures.into_iter().flatten().next();
        (rows.finish(&sources, &metadata), failure)
    })?;
    // Texts need no decoding: the engine's refusal (a sizer's own exception among them) is
    // the only failure, and it fails the whole batch.
    if let Some(failure) = failure {
        return Err(match failure {
            Failure::NotChunked(error) => error.into(),
            other => PyValueError::new_err(other.message()),
        });
    }
    let rows = rows.map_err(|error| parquet_error(py, &error))?;
    Ok(PyArrowRows { rows })
}
