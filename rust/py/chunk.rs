//! `Chunk`: the public chunk object, built in bulk from a document's span table, with its id,
//! text, parent id and child ids made on first read.

use std::sync::Arc;

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use crate::table::rows::LinkedRows;

// ------------------------------------------------------------------------------------ chunks
//
// Building the public `Chunk` objects is most of `chunk()` (the spans are the cheap part), so
// it happens here, one call per document, with no Python bytecode per chunk. See the
// performance notes in python/spanchunk/chunk.py for what was measured.

pub(super) static MAPPING_PROXY_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static EMPTY_METADATA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `text[start_char:end_char]` as a new str, copied from the str's own storage: no UTF-8 round
/// trip, and CPython gives the slice the narrowest representation that holds it.
pub(super) fn substring<'py>(
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
pub(super) fn plain_dict<'py>(mapping: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    mapping.py().get_type::<PyDict>().call1((mapping,))
}

/// The read-only metadata a chunk keeps: None gives the shared empty mapping, a
/// `types.MappingProxyType` is kept as it is (so one mapping serves every chunk of a
/// document), anything else is copied into a dict and wrapped, so the caller's object can
/// change later without changing the chunk.
pub(super) fn frozen_metadata<'py>(
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
    pub(super) document_id: Py<PyString>,
    #[pyo3(get)]
    pub(super) index: usize,
    #[pyo3(get)]
    pub(super) level: usize,
    #[pyo3(get)]
    pub(super) start_char: usize,
    #[pyo3(get)]
    pub(super) end_char: usize,
    #[pyo3(get)]
    pub(super) start_byte: usize,
    #[pyo3(get)]
    pub(super) end_byte: usize,
    #[pyo3(get)]
    pub(super) metadata: Py<PyAny>,
}

/// What every chunk of one document shares, to make its lazy fields from: the document str,
/// what the ids hash, and the rows of the whole span table with their parents and children.
pub(super) struct DocumentRows {
    pub(super) text: Py<PyString>,
    /// The document id and the chunker's fingerprint: with a row's level and byte span, what
    /// its chunk id hashes (on first read: most children's ids are never read).
    pub(super) document_key: String,
    pub(super) fingerprint: Arc<str>,
    pub(super) rows: LinkedRows,
}

/// A chunk id as a str: 16 lowercase hex digits, formatted without a heap buffer.
pub(super) fn id_string(py: Python<'_>, id: u64) -> Bound<'_, PyString> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buffer = [0_u8; 16];
    for (position, digit) in buffer.iter_mut().enumerate() {
        *digit = DIGITS[((id >> (60 - 4 * position)) & 0xf) as usize];
    }
    // Hex digits are ASCII, so this is valid UTF-8.
    PyString::new(py, std::str::from_utf8(&buffer).unwrap_or_default())
}

/// The value of `lock`, made by `make` on first read.
///
/// `PyOnceLock::get_or_try_init` detaches from the interpreter (releases and takes back the
/// GIL) around every first initialisation, in case another thread is initialising the same
/// lock: about a microsecond per chunk field on a loaded machine, the largest part of reading
/// a new chunk's id, text, parent id and child ids. Here the GIL is held throughout; a thread
/// that `make` lets in (it can run Python code) and that sets the lock first wins, and its
/// value is the same one.
fn made_once<'a, T>(
    py: Python<'_>,
    lock: &'a PyOnceLock<T>,
    make: impl FnOnce() -> PyResult<T>,
) -> PyResult<&'a T> {
    if let Some(value) = lock.get(py) {
        return Ok(value);
    }
    let value = make()?;
    // An Err gives the value back: another thread set the lock while `make` ran.
    let _ = lock.set(py, value);
    lock.get(py)
        .ok_or_else(|| PyRuntimeError::new_err("a chunk field was not kept"))
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
    pub(super) fn id(&self, row: usize) -> u64 {
        self.rows.id(&self.document_key, &self.fingerprint, row)
    }
}

impl PyChunk {
    /// The chunk of row `row` of `rows`, its lazy fields unset.
    pub(super) fn of_row(
        rows: &Arc<DocumentRows>,
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
    pub(super) fn with_id_and_text(
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
    fn rows(&self) -> PyResult<&DocumentRows> {
        self.rows
            .as_deref()
            .ok_or_else(|| PyRuntimeError::new_err("Chunk has neither a field nor its source"))
    }

    pub(super) fn id_str<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyString>> {
        made_once(py, &self.id, || {
            let rows = self.rows()?;
            Ok::<_, PyErr>(id_string(py, rows.id(self.row)).unbind())
        })
        .map(|id| id.bind(py))
    }

    pub(super) fn text_str<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyString>> {
        made_once(py, &self.text, || {
            let rows = self.rows()?;
            substring(rows.text.bind(py), self.start_char, self.end_char).map(Bound::unbind)
        })
        .map(|text| text.bind(py))
    }

    pub(super) fn parent_id_str<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<&Bound<'py, PyString>>> {
        made_once(py, &self.parent_id, || {
            let rows = self.rows()?;
            Ok::<_, PyErr>(
                rows.rows
                    .parent(self.row)
                    .map(|parent| id_string(py, rows.id(parent)).unbind()),
            )
        })
        .map(|parent| parent.as_ref().map(|id| id.bind(py)))
    }

    pub(super) fn child_ids_tuple<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyTuple>> {
        made_once(py, &self.child_ids, || {
            let rows = self.rows()?;
            let own = rows.rows.children(self.row);
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
