//! Bindings of the store's rows (`store/`): a batch of files' bytes cut into the rows of the
//! `SQLite` store with the GIL released, then either written into a new store with no Python
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

use super::output::PyChunkSizes;
use super::splitter::{splitters, PySplitter};
use crate::engine::{tree, Splitter};
use crate::error::ChunkError;
use crate::output::files::decode_text;
use crate::output::sizes::ChunkSizes;
use crate::output::Document;
use crate::store::sqlite::{BulkWriter, Statements, StoredDocument};
use crate::store::DocumentRows;
use crate::table::SpanTable;

/// Registers the classes and functions of this file in the `_core` module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyStoreBatch>()?;
    module.add_class::<PyStoreWriter>()?;
    module.add_function(wrap_pyfunction!(cut_for_store, module)?)
}

/// What the store records of a file: size, mtime_ns, ctime_ns, inode.
type FileState = (i64, i64, i64, i64);

/// One document cut for the store.
struct CutDocument {
    text: String,
    document_id: String,
    content_hash: String,
    file_state: Option<[i64; 4]>,
    table: SpanTable,
    rows: DocumentRows,
}

/// The documents of a batch cut by one chunker, ready to be stored: their texts, span tables
/// and rows, kept in the core.
#[pyclass(frozen, name = "StoreBatch", module = "spanchunk._core")]
pub struct PyStoreBatch {
    fingerprint: String,
    documents: Vec<CutDocument>,
}

impl PyStoreBatch {
    fn stored(&self) -> impl Iterator<Item = StoredDocument<'_>> {
        self.documents.iter().map(|cut| StoredDocument {
            document: Document {
                text: &cut.text,
                source: &cut.document_id,
                document_id: &cut.document_id,
                fingerprint: &self.fingerprint,
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
                rows.push(
                    (
                        cut.rows.id(row),
                        text,
                        &cut.document_id,
                        index,
                        level,
                        start_char,
                        end_char,
                        start_byte,
                        end_byte,
                        cut.rows.parent_id(row),
                        cut.rows.child_ids(row),
                        cut.rows.metadata(row),
                    )
                        .into_pyobject(py)?,
                );
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
    file_states: Vec<Option<FileState>>,
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
    let owned = splitters(&levels);
    let (documents, errors, sizes) = super::detach(py, || {
        let borrowed: Vec<&Splitter> = owned.iter().map(AsRef::as_ref).collect();
        let mut documents = Vec::with_capacity(count);
        let mut errors = Vec::with_capacity(count);
        let mut sizes = ChunkSizes::default();
        for position in 0..count {
            let data: &[u8] = &datas[position];
            let decoded = match decode_text(data) {
                Ok(text) => text,
                Err(message) => {
                    errors.push(Some(message));
                    continue;
                }
            };
            let text: &str = &decoded;
            let (table, outline) = match tree::tree_spans_outlined(&borrowed, text) {
                Ok(cut) => cut,
                Err(error) => {
                    errors.push(Some(error.to_string()));
                    continue;
                }
            };
            let document_id: &str = &document_ids[position];
            let document = Document {
                text,
                source: document_id,
                document_id,
                fingerprint: &fingerprint,
            };
            let rows = DocumentRows::new(&document, &table, outline.as_ref());
            sizes.push_table(&borrowed, text, &table);
            documents.push(CutDocument {
                text: text.to_owned(),
                document_id: document_id.to_owned(),
                content_hash: content_hashes[position].to_string(),
                file_state: file_states[position]
                    .map(|(size, mtime, ctime, inode)| [size, mtime, ctime, inode]),
                table,
                rows,
            });
            errors.push(None);
        }
        (documents, errors, sizes)
    })?;
    let batch = Bound::new(
        py,
        PyStoreBatch {
            fingerprint,
            documents,
        },
    )?;
    Ok((batch, errors, sizes.into()))
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
        Ok(super::detach(py, || {
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
        let writer = super::detach(py, || BulkWriter::open(&path, setup, statements))??;
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
            Some(writer) => Ok(super::detach(py, || writer.finish(sql))??),
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
