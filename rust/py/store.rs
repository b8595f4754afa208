//! Bindings of the store's rows (`store/`): a batch cut for the store (`cut_for_store`, the
//! job's batch into `job::collect::StoreRows`), then either written into a new store with no Python
//! object per row (`StoreWriter`) or handed to Python as the tuples `sqlite3` binds (an
//! existing store, updated through `SqliteRegistry`).

// PyO3 hands extracted arguments over by value.
#![allow(clippy::needless_pass_by_value)]

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyTuple;
use pyo3::IntoPyObjectExt;

use crate::error::ChunkError;
use crate::job::batch::{self, Chunkers, Documents, Failure, Inputs};
use crate::job::collect::{StoreDocument, StoreRows};
use crate::output::Document;
use crate::py::engine::splitter::{splitters, PySplitter};
use crate::py::gil::detach;
use crate::py::output::sizes::PyChunkSizes;
use crate::store::snapshot::RecordedState;
use crate::store::sqlite::{BulkWriter, Statements, StoredDocument};

/// Registers the classes and functions of this file in the `_core` module.
pub(crate) fn register_store(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyStoreBatch>()?;
    module.add_class::<PyStoreWriter>()?;
    module.add_function(wrap_pyfunction!(cut_for_store, module)?)
}

/// The documents of a batch cut by one chunker, ready to be stored: their texts, span tables
/// and rows, kept in the core.
#[pyclass(frozen, name = "StoreBatch", module = "spanchunk._core")]
pub struct PyStoreBatch {
    fingerprint: String,
    documents: Vec<StoreDocument>,
}

impl PyStoreBatch {
    /// The documents of a batch cut with the chunker of `fingerprint`.
    pub(crate) fn new(fingerprint: String, documents: Vec<StoreDocument>) -> Self {
        Self {
            fingerprint,
            documents,
        }
    }

    fn stored(&self) -> impl Iterator<Item = StoredDocument<'_>> {
        self.documents.iter().map(|cut| StoredDocument {
            document: Document {
                text: &cut.text,
                source: &cut.document_id,
                document_id: &cut.document_id,
                fingerprint: &self.fingerprint,
                pages: None,
            },
            table: &cut.table,
            rows: &cut.rows,
            content_hash: &cut.content_hash,
            file_state: cut.file_state,
        })
    }
}

#[pymethods]
impl PyStoreBatch {
    fn __len__(&self) -> usize {
        self.documents.len()
    }

    /// (document_id, rows, content_hash, file_state) of each document: its rows as the
    /// tuples of the store's `chunks` columns, for an update through Python's sqlite3.
    fn documents<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let mut documents = Vec::with_capacity(self.documents.len());
        for (cut, stored) in self.documents.iter().zip(self.stored()) {
            let mut rows = Vec::with_capacity(cut.rows.len());
            for (row, record) in cut.table.records.iter().enumerate() {
                let [level, index, _, start_byte, end_byte, start_char, end_char] = record.0;
                let text = stored.chunk_text(row)?;
                // Thirteen columns: one more than pyo3 converts from a Rust tuple.
                let columns: [Bound<'py, PyAny>; 13] = [
                    cut.rows.id(row).into_bound_py_any(py)?,
                    text.into_bound_py_any(py)?,
                    cut.document_id.as_str().into_bound_py_any(py)?,
                    index.into_bound_py_any(py)?,
                    level.into_bound_py_any(py)?,
                    start_char.into_bound_py_any(py)?,
                    end_char.into_bound_py_any(py)?,
                    start_byte.into_bound_py_any(py)?,
                    end_byte.into_bound_py_any(py)?,
                    cut.rows.parent_id(row).into_bound_py_any(py)?,
                    cut.rows.child_ids(row).into_bound_py_any(py)?,
                    cut.rows.metadata(row).into_bound_py_any(py)?,
                    cut.rows.tuple_paths().into_bound_py_any(py)?,
                ];
                rows.push(PyTuple::new(py, columns)?);
            }
            documents.push(
                (&cut.document_id, rows, &cut.content_hash, cut.file_state).into_pyobject(py)?,
            );
        }
        Ok(documents)
    }

    fn __repr__(&self) -> String {
        format!("StoreBatch(documents={})", self.documents.len())
    }
}

/// What `cut_for_store` returns: the batch, each document's error (None: cut), and the char
/// length of every chunk cut, by level.
type Cut<'py> = (Bound<'py, PyStoreBatch>, Vec<Option<String>>, PyChunkSizes);

/// Checks that every document of a batch is UTF-8 and cuts it with `levels`, hashing its
/// chunks' ids from its `document_ids` entry and `fingerprint`, with the GIL released.
/// Returns the batch of those cut (in order), the error of each document (None: cut; the
/// others are left out of the batch), and the level and char length of every chunk cut.
#[pyfunction]
#[pyo3(signature = (levels, datas, document_ids, fingerprint, content_hashes, file_states))]
fn cut_for_store<'py>(
    py: Python<'py>,
    levels: Vec<Bound<'py, PySplitter>>,
    datas: Vec<PyBackedBytes>,
    document_ids: Vec<PyBackedStr>,
    fingerprint: String,
    content_hashes: Vec<PyBackedStr>,
    file_states: Vec<Option<RecordedState>>,
) -> PyResult<Cut<'py>> {
    let count = datas.len();
    if document_ids.len() != count || content_hashes.len() != count || file_states.len() != count {
        return Err(PyValueError::new_err(format!(
            "{count} documents, {} ids, {} content hashes and {} file states: pass one of each \
             per document",
            document_ids.len(),
            content_hashes.len(),
            file_states.len()
        )));
    }
    let bytes: Vec<&[u8]> = datas.iter().map(|data| &**data).collect();
    let ids: Vec<Option<&str>> = document_ids.iter().map(|id| Some(&**id)).collect();
    let hashes: Vec<&str> = content_hashes.iter().map(|hash| &**hash).collect();
    let states: Vec<Option<[i64; 4]>> = file_states
        .iter()
        .map(|state| state.map(|(size, mtime, ctime, inode)| [size, mtime, ctime, inode]))
        .collect();
    let chunkers = Chunkers::one(splitters(&levels), fingerprint.clone(), count);
    let (documents, outcome) = detach(py, || {
        let mut rows = StoreRows::new(&hashes, &states);
        let documents = Documents {
            inputs: Inputs::Bytes(&bytes),
            sources: None,
            ids: Some(&ids),
        };
        let outcome = batch::run(&chunkers, &documents, &mut rows);
        (rows.documents, outcome)
    })?;
    let errors = outcome
        .failures
        .iter()
        .map(|failure| failure.as_ref().map(Failure::message))
        .collect();
    let batch = Bound::new(py, PyStoreBatch::new(fingerprint, documents))?;
    Ok((
        batch,
        errors,
        PyChunkSizes {
            inner: outcome.sizes,
        },
    ))
}

/// A new store being filled in bulk (see `store::sqlite::BulkWriter`): the file must not be
/// open in Python's sqlite3 meanwhile.
#[pyclass(frozen, name = "StoreWriter", module = "spanchunk._core")]
pub struct PyStoreWriter {
    writer: Mutex<Option<BulkWriter>>,
}

impl PyStoreWriter {
    /// Runs `work` on the open writer, with the GIL released.
    fn with_writer<T: Send>(
        &self,
        py: Python<'_>,
        work: impl Send + FnOnce(&mut BulkWriter) -> Result<T, ChunkError>,
    ) -> PyResult<T> {
        Ok(crate::py::gil::detach(py, || {
            let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
            match writer.as_mut() {
                Some(writer) => work(writer),
                None => Err(ChunkError::Store("the store writer is closed".to_owned())),
            }
        })??)
    }
}

#[pymethods]
impl PyStoreWriter {
    #[new]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        setup: &str,
        insert_chunk: &str,
        insert_chunks: &str,
        insert_document: &str,
        delete_chunks: &str,
    ) -> PyResult<Self> {
        let statements = Statements {
            insert_chunk,
            insert_chunks,
            insert_document,
            delete_chunks,
        };
        let writer = crate::py::gil::detach(py, || BulkWriter::open(&path, setup, statements))??;
        Ok(Self {
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Inserts the rows of every document of `batches`, in one transaction.
    fn write(&self, py: Python<'_>, batches: Vec<Bound<'_, PyStoreBatch>>) -> PyResult<()> {
        let batches: Vec<&PyStoreBatch> = batches.iter().map(Bound::get).collect();
        self.with_writer(py, |writer| {
            writer.write(batches.iter().flat_map(|batch| batch.stored()))
        })
    }

    /// Runs `sql` (the last statements of the bulk load) and closes the store.
    fn finish(&self, py: Python<'_>, sql: &str) -> PyResult<()> {
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match writer {
            Some(writer) => Ok(crate::py::gil::detach(py, || writer.finish(sql))??),
            None => Err(ChunkError::Store("the store writer is closed".to_owned()).into()),
        }
    }

    /// Closes the store without finishing it (calling it again does nothing).
    fn close(&self) {
        drop(
            self.writer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

/// Appends the upserts of the store at `store` to the file `output` as JSON Lines
/// (`store::feed::write_upserts`), with the GIL released: every chunk in the store's order,
/// or those among `ids`; at `levels`, or all. Returns how many were written.
#[pyfunction]
#[pyo3(signature = (store, output, ids = None, levels = None))]
pub(crate) fn write_feed_upserts(
    py: Python<'_>,
    store: PathBuf,
    output: PathBuf,
    ids: Option<Vec<String>>,
    levels: Option<Vec<i64>>,
) -> PyResult<usize> {
    let count = detach(py, || {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&output)
            .map_err(|error| ChunkError::Store(format!("{}: {error}", output.display())))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let upserts = crate::store::feed::Upserts {
            ids: ids.as_deref(),
            levels: levels.as_deref(),
        };
        let count = crate::store::feed::write_upserts(&store, upserts, &mut out)?;
        std::io::Write::flush(&mut out)
            .map_err(|error| ChunkError::Store(format!("{}: {error}", output.display())))?;
        Ok::<_, ChunkError>(count)
    })??;
    Ok(count)
}
