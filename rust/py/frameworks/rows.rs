//! The rows of a document just cut, as views the framework writers read (`cut_views`),
//! with their metadata (paths and own fields).

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use std::sync::Arc;

use crate::output::ChunkFields;
use crate::py::chunk::build::{CutDocument, HeadingPaths};
use crate::py::chunk::{
    frozen_metadata, id_string, substring, OwnMetadata, PyChunk, SharedDocument,
};

/// What a framework object is made from, for one chunk: read from a `Chunk` (its fields,
/// made once and kept in it) or straight from the rows of a document just cut (each id made
/// once, for the row itself, its parent's children and its children's parent).
pub(crate) struct RowView<'py> {
    pub(crate) id: Bound<'py, PyString>,
    pub(crate) text: Bound<'py, PyString>,
    pub(crate) document_id: Bound<'py, PyString>,
    pub(crate) parent_id: Option<Bound<'py, PyString>>,
    /// None for a leaf (no list is made that nobody writes).
    pub(crate) child_ids: Option<Bound<'py, PyList>>,
    /// The chunk's read-only metadata (its paths and own fields: `FieldWriter` reads them).
    pub(crate) mapping: Bound<'py, PyAny>,
    pub(crate) index: usize,
    pub(crate) level: usize,
    pub(crate) start_char: usize,
    pub(crate) end_char: usize,
    pub(crate) start_byte: usize,
    pub(crate) end_byte: usize,
}

impl<'py> RowView<'py> {
    pub(crate) fn of_chunk(bound: &Bound<'py, PyChunk>) -> PyResult<Self> {
        let py = bound.py();
        let chunk = bound.get();
        let children = chunk.child_ids_tuple(py)?;
        Ok(Self {
            id: chunk.id_str(py)?.clone(),
            text: chunk.text_str(py)?.clone(),
            document_id: chunk.document_id.bind(py).clone(),
            parent_id: chunk.parent_id_str(py)?.cloned(),
            child_ids: (!children.is_empty()).then(|| children.to_list()),
            mapping: chunk.metadata.bind(py).clone(),
            index: chunk.index,
            level: chunk.level,
            start_char: chunk.start_char,
            end_char: chunk.end_char,
            start_byte: chunk.start_byte,
            end_byte: chunk.end_byte,
        })
    }
}

/// The rows of one document just cut, as views, in row order (levels top first); the rows
/// the registry gets (those above the leaves, or every row with `keep_children`) also become
/// `Chunk` objects, appended to `stored`, as `chunk_documents` would make them; with no
/// `stored`, none are made (no registry).
pub(crate) fn cut_views<'py>(
    text: &Bound<'py, PyString>,
    document: CutDocument<'py>,
    metadata: Option<&Bound<'py, PyAny>>,
    fingerprint: &Arc<str>,
    keep_children: bool,
    stored: Option<&Bound<'py, PyList>>,
) -> PyResult<Vec<RowView<'py>>> {
    let py = text.py();
    let CutDocument {
        document_id,
        key,
        rows,
        outline,
        page_text,
        pages,
    } = document;
    // An HTML page's rows index its readable text.
    let text = page_text.as_ref().unwrap_or(text);
    let shared_metadata = frozen_metadata(py, metadata)?;
    let mut paths = outline
        .as_ref()
        .map(|outline| HeadingPaths::new(outline, &shared_metadata));
    let shared = Arc::new(SharedDocument::new(
        text.clone().unbind(),
        key,
        Arc::clone(fingerprint),
        rows,
    ));
    let rows = &shared.rows;
    let ids = (0..rows.rows.len())
        .map(|row| Ok(id_string(py, shared.id(py, row)?)))
        .collect::<PyResult<Vec<Bound<'py, PyString>>>>()?;
    let mut views = Vec::with_capacity(ids.len());
    // The fields of a chunk of an HTML page, a table or a text with page markers ride in its
    // metadata, as in `Chunk.metadata`.
    let own_fields = ChunkFields::possible(outline.as_ref(), pages.as_ref());
    let mut own = OwnMetadata::new(outline.as_ref().map_or(0, |outline| outline.tables.len()));
    for (number, span) in rows.rows.iter().enumerate() {
        let path_mapping = match paths.as_mut() {
            None => shared_metadata.clone(),
            Some(paths) => paths.metadata(py, span.start_byte)?,
        };
        let fields = if own_fields {
            ChunkFields::of(
                outline.as_ref(),
                pages.as_ref(),
                span.start_byte,
                span.end_byte,
            )
        } else {
            ChunkFields::default()
        };
        let mapping = if fields.is_empty() {
            path_mapping
        } else {
            own.of(&path_mapping, &fields, text)?
        };
        let chunk_text = substring(text, span.start_char, span.end_char)?;
        let children = rows.children(number);
        let child_ids = if children.is_empty() {
            None
        } else {
            Some(PyList::new(py, children.iter().map(|&child| &ids[child]))?)
        };
        if let Some(stored) = stored.filter(|_| span.level > 0 || keep_children) {
            let chunk = PyChunk::of_row(
                &shared,
                number,
                document_id.clone().unbind(),
                mapping.clone().unbind(),
            )
            .with_id_and_text(
                py,
                ids[number].clone().unbind(),
                chunk_text.clone().unbind(),
            );
            stored.append(Bound::new(py, chunk)?)?;
        }
        views.push(RowView {
            id: ids[number].clone(),
            text: chunk_text,
            document_id: document_id.clone(),
            parent_id: rows.parent(number).map(|parent| ids[parent].clone()),
            child_ids,
            mapping,
            index: span.index,
            level: span.level as usize,
            start_char: span.start_char,
            end_char: span.end_char,
            start_byte: span.start_byte,
            end_byte: span.end_byte,
        });
    }
    Ok(views)
}
