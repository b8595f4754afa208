//! LangChain `Document`s from `Chunk`s (`langchain_documents`) or straight from texts cut
//! here (`langchain_cut`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use std::sync::Arc;

use crate::py::chunk::build::cut_documents;
use crate::py::chunk::PyChunk;
use crate::py::engine::splitter::PySplitter;

use super::carried::FieldWriter;
use super::rows::{cut_views, RowView};
use super::shape::{chunk_metadata, template, PyModelShape};

/// How one document's chunks are written as LangChain documents: the metadata they copy,
/// the level to write instead of `Chunk.level` (a flat splitter's role), the offsets of the
/// text in its source, and the document id and parent id to write instead of the chunks'
/// own (a parent split again).
pub(crate) type LangChainWriting<'py> = (
    Bound<'py, PyAny>,
    Option<usize>,
    usize,
    usize,
    Option<Bound<'py, PyString>>,
    Option<Bound<'py, PyString>>,
);

/// The metadata keys every chunk gets, in this order (the shape's `meta_keys`, which the
/// integration module names): start and end index, start and end byte, level, index, chunk
/// id, document id, parent id, then, where the chunk has them, child ids and what it carries
/// (headings, symbols, language, source start and end byte, table header, first and last
/// page: `FieldWriter`).
pub(crate) struct LangChainKeys<'py> {
    pub(crate) spans: [Bound<'py, PyString>; 9],
    pub(crate) child_ids: Bound<'py, PyString>,
    pub(crate) carried: [Bound<'py, PyString>; 8],
}

impl<'py> LangChainKeys<'py> {
    pub(crate) fn new(py: Python<'py>, shape: &PyModelShape) -> PyResult<Self> {
        let [start_index, end_index, start_byte, end_byte, level, index, chunk_id, document_id, parent_id, child_ids, carried @ ..] =
            shape.meta_keys::<18>(py, "a LangChain writer")?;
        Ok(Self {
            spans: [
                start_index,
                end_index,
                start_byte,
                end_byte,
                level,
                index,
                chunk_id,
                document_id,
                parent_id,
            ],
            child_ids,
            carried,
        })
    }
}

/// LangChain documents of one document's views, appended to `out`.
pub(crate) fn langchain_write<'py>(
    shape: &PyModelShape,
    keys: &LangChainKeys<'py>,
    views: impl Iterator<Item = PyResult<RowView<'py>>>,
    writing: &LangChainWriting<'py>,
    out: &Bound<'py, PyList>,
) -> PyResult<()> {
    let py = out.py();
    let (base, level, char_offset, byte_offset, document_id, parent_id) = writing;
    let (template, deep) = template(base, &keys.spans)?;
    let [start_index, end_index, start_byte, end_byte, level_key, index, chunk_id, document_id_key, parent_id_key] =
        &keys.spans;
    let mut carried = FieldWriter::new(&keys.carried, base, *char_offset, *byte_offset)?;
    for view in views {
        let view = view?;
        let metadata = chunk_metadata(&template, base, deep)?;
        metadata.set_item(start_index, view.start_char + char_offset)?;
        metadata.set_item(end_index, view.end_char + char_offset)?;
        metadata.set_item(start_byte, view.start_byte + byte_offset)?;
        metadata.set_item(end_byte, view.end_byte + byte_offset)?;
        metadata.set_item(level_key, level.unwrap_or(view.level))?;
        metadata.set_item(index, view.index)?;
        metadata.set_item(chunk_id, &view.id)?;
        metadata.set_item(
            document_id_key,
            document_id.as_ref().unwrap_or(&view.document_id),
        )?;
        match parent_id {
            Some(given) => metadata.set_item(parent_id_key, given)?,
            None => metadata.set_item(parent_id_key, &view.parent_id)?,
        }
        if let Some(children) = &view.child_ids {
            metadata.set_item(&keys.child_ids, children)?;
        }
        carried.write(&metadata, &view.mapping)?;
        out.append(shape.make(py, &view.id, &view.text, &metadata)?)?;
    }
    Ok(())
}

/// LangChain `Document`s of many documents' chunks, in order: the base metadata, then under
/// the shape's 18 `meta_keys` (python/spanchunk/integrations/langchain/fields.py names them, see
/// `LangChainKeys`) the chunk's offsets, level, index, ids and what it carries. Each group is
/// a document's chunks and how to write them (`LangChainWriting`).
#[pyfunction]
pub(crate) fn langchain_documents<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyModelShape>,
    groups: Vec<(Vec<Bound<'py, PyChunk>>, LangChainWriting<'py>)>,
) -> PyResult<Bound<'py, PyList>> {
    let keys = LangChainKeys::new(py, shape.get())?;
    let out = PyList::empty(py);
    for (chunks, writing) in &groups {
        let views = chunks.iter().map(RowView::of_chunk);
        langchain_write(shape.get(), &keys, views, writing, &out)?;
    }
    Ok(out)
}

/// `langchain_documents` of texts cut here, with no `Chunk` object in between except those
/// the registry gets: every level of each text (`levels`, the chunker's, with its
/// `fingerprint`), its chunks' own metadata (`metadatas`, as `chunk_documents` takes it),
/// written as `writings` says. With `leaves_only`, the levels above the leaves make no
/// documents. Returns the documents and the `Chunk` objects to register (the rows above the
/// leaves, or every row with `keep_children`), in order.
#[pyfunction]
#[pyo3(signature = (shape, levels, fingerprint, texts, document_ids, metadatas, writings, leaves_only, keep_children))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn langchain_cut<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyModelShape>,
    levels: Vec<Bound<'py, PySplitter>>,
    fingerprint: &str,
    texts: Vec<Bound<'py, PyString>>,
    document_ids: Vec<Option<Bound<'py, PyString>>>,
    metadatas: Vec<Option<Bound<'py, PyAny>>>,
    writings: Vec<LangChainWriting<'py>>,
    leaves_only: bool,
    keep_children: bool,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    if texts.len() != metadatas.len() || texts.len() != writings.len() {
        return Err(PyValueError::new_err(format!(
            "{} texts, {} metadata mappings and {} writings: pass one of each per text",
            texts.len(),
            metadatas.len(),
            writings.len()
        )));
    }
    let fingerprint: Arc<str> = Arc::from(fingerprint);
    let keys = LangChainKeys::new(py, shape.get())?;
    let out = PyList::empty(py);
    let stored = PyList::empty(py);
    let documents = cut_documents(py, &levels, &texts, &document_ids, &[], Some(1))?;
    for (document, ((text, metadata), writing)) in documents
        .into_iter()
        .zip(texts.iter().zip(&metadatas).zip(&writings))
    {
        let views = cut_views(
            text,
            document,
            metadata.as_ref(),
            &fingerprint,
            keep_children,
            Some(&stored),
        )?;
        let views = views
            .into_iter()
            .filter(|view| !leaves_only || view.level == 0)
            .map(Ok);
        langchain_write(shape.get(), &keys, views, writing, &out)?;
    }
    Ok((out, stored))
}
