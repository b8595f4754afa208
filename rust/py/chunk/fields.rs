//! What the `Chunk` objects are made from: the rows every chunk of a document shares, and
//! the str, dict and tuple helpers that fill their fields.

use std::sync::Arc;

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::engine::Structure;
use crate::output::ChunkFields;
use crate::py::engine::splitter::PySplitter;
use crate::table::rows::LinkedRows;

// ------------------------------------------------------------------------------------ chunks
//
// Building the public `Chunk` objects is most of `chunk()` (the spans are the cheap part), so
// it happens here, one call per document, with no Python bytecode per chunk
// (`benches/NOTES.md`, under python/spanchunk/chunk.py, has what was measured).

pub(crate) static MAPPING_PROXY_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
pub(crate) static EMPTY_METADATA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `text[start_char:end_char]` as a new str, copied from the str's own storage: no UTF-8 round
/// trip, and CPython gives the slice the narrowest representation that holds it.
pub(crate) fn substring<'py>(
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

pub(crate) fn too_large(offset: usize) -> PyErr {
    PyOverflowError::new_err(format!("offset {offset} does not fit a Python index"))
}

/// `dict(mapping)`, as Python spells it (a mapping or an iterable of pairs).
pub(crate) fn plain_dict<'py>(mapping: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    mapping.py().get_type::<PyDict>().call1((mapping,))
}

/// The read-only metadata a chunk keeps: None gives the shared empty mapping, a
/// `types.MappingProxyType` is kept as it is (so one mapping serves every chunk of a
/// document), anything else is copied into a dict and wrapped, so the caller's object can
/// change later without changing the chunk.
pub(crate) fn frozen_metadata<'py>(
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
pub(crate) fn id_tuple<'py>(ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
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
pub(crate) fn same_str(
    first: &Bound<'_, PyString>,
    second: &Bound<'_, PyString>,
) -> PyResult<bool> {
    Ok(first.is(second) || PyAnyMethods::eq(first.as_any(), second)?)
}

/// What every chunk of one document shares, to make its lazy fields from: the document str,
/// what the ids hash, and the rows of the whole span table with their parents and children.
pub(crate) struct SharedDocument {
    pub(crate) text: Py<PyString>,
    /// The document id and the chunker's fingerprint: with a row's level and text, what its
    /// chunk id hashes (`ids::document_ids`; the ids of all rows at once, on first read).
    pub(crate) document_key: String,
    pub(crate) fingerprint: Arc<str>,
    pub(crate) rows: LinkedRows,
    /// The id number of every row, made when one is first read.
    pub(crate) ids: PyOnceLock<Vec<u64>>,
}

/// A chunk id as a str: 16 lowercase hex digits, formatted without a heap buffer.
pub(crate) fn id_string(py: Python<'_>, id: u64) -> Bound<'_, PyString> {
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
pub(crate) fn made_once<'a, T>(
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
pub(crate) fn filled<T>(py: Python<'_>, value: T) -> PyOnceLock<T> {
    let lock = PyOnceLock::new();
    // A new lock is empty, so `set` cannot fail.
    let _ = lock.set(py, value);
    lock
}

impl SharedDocument {
    /// What the chunks of one document share.
    pub(crate) fn new(
        text: Py<PyString>,
        document_key: String,
        fingerprint: Arc<str>,
        rows: LinkedRows,
    ) -> Self {
        Self {
            text,
            document_key,
            fingerprint,
            rows,
            ids: PyOnceLock::new(),
        }
    }

    /// The id number of row `row` (`ids::chunk_id` spells it in hex).
    pub(crate) fn id(&self, py: Python<'_>, row: usize) -> PyResult<u64> {
        let ids = made_once(py, &self.ids, || {
            let text = self.text.bind(py).to_str()?;
            Ok::<_, PyErr>(self.rows.ids(text, &self.document_key, &self.fingerprint))
        })?;
        Ok(ids[row])
    }
}

/// The metadata of the chunks of one document that have fields of their own: a chunk's path's
/// metadata, with the span of the page it came from, the header row of the table it is in
/// (one dict per table, shared) and the pages it spans. Consecutive chunks with the same path
/// and pages and nothing else of their own share one mapping, as the chunks of one heading
/// path share theirs (a text with page markers would otherwise make a dict for every chunk).
pub(crate) struct OwnMetadata<'py> {
    headers: Vec<Option<Bound<'py, PyAny>>>,
    /// The last mapping made for pages alone: its path metadata's identity, its pages.
    pages: Option<(usize, (u32, u32), Bound<'py, PyAny>)>,
}

impl<'py> OwnMetadata<'py> {
    /// For a document with `tables` tables.
    pub(crate) fn new(tables: usize) -> Self {
        Self {
            headers: vec![None; tables],
            pages: None,
        }
    }

    /// The metadata of a chunk with `path_metadata` and its own `fields`.
    pub(crate) fn of(
        &mut self,
        path_metadata: &Bound<'py, PyAny>,
        fields: &ChunkFields,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pages_alone = fields.source_span.is_none() && fields.table_header.is_none();
        let key = path_metadata.as_ptr() as usize;
        if let (true, Some(pages), Some((last_key, last_pages, made))) =
            (pages_alone, fields.pages, self.pages.as_ref())
        {
            if *last_key == key && *last_pages == pages {
                return Ok(made.clone());
            }
        }
        let made = self.make(path_metadata, fields, text)?;
        if let (true, Some(pages)) = (pages_alone, fields.pages) {
            self.pages = Some((key, pages, made.clone()));
        }
        Ok(made)
    }

    fn make(
        &mut self,
        path_metadata: &Bound<'py, PyAny>,
        fields: &ChunkFields,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = path_metadata.py();
        let own = plain_dict(path_metadata)?;
        if let Some((start, end)) = fields.source_span {
            own.set_item(intern!(py, "source_start_byte"), start)?;
            own.set_item(intern!(py, "source_end_byte"), end)?;
        }
        if let Some((row, header)) = fields.table_header {
            let made = if let Some(made) = &self.headers[row] {
                made.clone()
            } else {
                let dict = PyDict::new(py);
                let (start_char, end_char) = header.chars;
                dict.set_item("text", substring(text, start_char, end_char)?)?;
                dict.set_item("start_char", start_char)?;
                dict.set_item("end_char", end_char)?;
                dict.set_item("start_byte", header.bytes.0)?;
                dict.set_item("end_byte", header.bytes.1)?;
                let frozen = FROZEN_DICT
                    .import(py, "spanchunk.document", "FrozenDict")?
                    .call1((dict,))?;
                self.headers[row] = Some(frozen.clone());
                frozen
            };
            own.set_item(intern!(py, "table_header"), made)?;
        }
        if let Some((first, last)) = fields.pages {
            own.set_item(intern!(py, "page_first"), first)?;
            own.set_item(intern!(py, "page_last"), last)?;
        }
        MAPPING_PROXY_TYPE
            .import(py, "types", "MappingProxyType")?
            .call1((own,))
    }
}

static FROZEN_DICT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Each document's `metadata["source"]` (a str, else None) where a level is code of no
/// given language, which reads its language from there; empty otherwise.
pub(crate) fn sources_of(
    levels: &[Bound<'_, PySplitter>],
    metadatas: &[Option<Bound<'_, PyAny>>],
) -> PyResult<Vec<Option<String>>> {
    let reads_sources = levels
        .iter()
        .any(|level| level.get().inner.config().structure == Structure::Code(None));
    if !reads_sources {
        return Ok(Vec::new());
    }
    metadatas
        .iter()
        .map(|metadata| {
            let Some(metadata) = metadata else {
                return Ok(None);
            };
            let source = metadata.call_method1(intern!(metadata.py(), "get"), ("source",))?;
            Ok(source.extract::<String>().ok())
        })
        .collect()
}
