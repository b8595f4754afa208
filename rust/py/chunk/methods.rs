//! The Python methods of `Chunk` (`object.rs`): construction by hand, the lazy fields' getters,
//! equality, hashing, pickling and the repr.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use super::fields::{filled, frozen_metadata, id_tuple, plain_dict, same_str, substring};
use super::object::PyChunk;

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
