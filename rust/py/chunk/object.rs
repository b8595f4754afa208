//! `Chunk`: the public chunk object, built in bulk from a document's span table, with its id,
//! text, parent id and child ids made on first read (`methods.rs`: its Python methods).

use std::sync::Arc;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyTuple};

use super::fields::{id_string, made_once, substring, SharedDocument};

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
    pub(crate) rows: Option<Arc<SharedDocument>>,
    /// The chunk's row in `rows`.
    pub(crate) row: usize,
    // Made on first read (`benches/NOTES.md`, under python/spanchunk/chunk.py): a job
    // that reads only the offsets, or the texts of its hits, never pays for the rest.
    pub(crate) id: PyOnceLock<Py<PyString>>,
    pub(crate) text: PyOnceLock<Py<PyString>>,
    pub(crate) parent_id: PyOnceLock<Option<Py<PyString>>>,
    pub(crate) child_ids: PyOnceLock<Py<PyTuple>>,
    #[pyo3(get)]
    pub(crate) document_id: Py<PyString>,
    #[pyo3(get)]
    pub(crate) index: usize,
    #[pyo3(get)]
    pub(crate) level: usize,
    #[pyo3(get)]
    pub(crate) start_char: usize,
    #[pyo3(get)]
    pub(crate) end_char: usize,
    #[pyo3(get)]
    pub(crate) start_byte: usize,
    #[pyo3(get)]
    pub(crate) end_byte: usize,
    #[pyo3(get)]
    pub(crate) metadata: Py<PyAny>,
}

impl PyChunk {
    /// The chunk of row `row` of `rows`, its lazy fields unset.
    pub(crate) fn of_row(
        rows: &Arc<SharedDocument>,
        row: usize,
        document_id: Py<PyString>,
        metadata: Py<PyAny>,
    ) -> Self {
        let span = &rows.rows.rows[row];
        Self {
            rows: Some(Arc::clone(rows)),
            row,
            id: PyOnceLock::new(),
            text: PyOnceLock::new(),
            parent_id: PyOnceLock::new(),
            child_ids: PyOnceLock::new(),
            document_id,
            index: span.index,
            level: span.level as usize,
            start_char: span.start_char,
            end_char: span.end_char,
            start_byte: span.start_byte,
            end_byte: span.end_byte,
            metadata,
        }
    }

    /// The chunk with its id and text already made (a caller that made them for another
    /// object too).
    pub(crate) fn with_id_and_text(
        self,
        py: Python<'_>,
        id: Py<PyString>,
        text: Py<PyString>,
    ) -> Self {
        // New locks are empty, so `set` cannot fail.
        let _ = self.id.set(py, id);
        let _ = self.text.set(py, text);
        self
    }

    /// The document rows a lazy field is made from: always there when a field is still
    /// unset (a chunk made by hand has every field set).
    fn rows(&self) -> PyResult<&SharedDocument> {
        self.rows
            .as_deref()
            .ok_or_else(|| PyRuntimeError::new_err("Chunk has neither a field nor its source"))
    }

    pub(crate) fn id_str<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyString>> {
        made_once(py, &self.id, || {
            let rows = self.rows()?;
            Ok::<_, PyErr>(id_string(py, rows.id(py, self.row)?).unbind())
        })
        .map(|id| id.bind(py))
    }

    pub(crate) fn text_str<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyString>> {
        made_once(py, &self.text, || {
            let rows = self.rows()?;
            substring(rows.text.bind(py), self.start_char, self.end_char).map(Bound::unbind)
        })
        .map(|text| text.bind(py))
    }

    pub(crate) fn parent_id_str<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<&Bound<'py, PyString>>> {
        made_once(py, &self.parent_id, || {
            let rows = self.rows()?;
            rows.rows
                .parent(self.row)
                .map(|parent| Ok(id_string(py, rows.id(py, parent)?).unbind()))
                .transpose()
        })
        .map(|parent| parent.as_ref().map(|id| id.bind(py)))
    }

    pub(crate) fn child_ids_tuple<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyTuple>> {
        made_once(py, &self.child_ids, || {
            let rows = self.rows()?;
            let own = rows.rows.children(self.row);
            let ids = own
                .iter()
                .map(|&child| Ok(id_string(py, rows.id(py, child)?)))
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, ids).map(Bound::unbind)
        })
        .map(|ids| ids.bind(py))
    }

    /// Whether both chunks were built from the same `SharedDocument` (one document, one call).
    pub(crate) fn same_source(&self, other: &Self) -> bool {
        match (&self.rows, &other.rows) {
            (Some(mine), Some(theirs)) => Arc::ptr_eq(mine, theirs),
            _ => false,
        }
    }
}
