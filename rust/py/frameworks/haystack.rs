//! Haystack `Document`s from `Chunk`s (`haystack_documents`) or straight from texts cut
//! here (`haystack_cut`).

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

/// How one document's tree is written as Haystack documents: the meta they copy, the block
/// sizes (top first), the source document's id, and the top chunks' parent id.
pub(crate) struct HaystackWriting<'a, 'py> {
    pub(crate) base: &'a Bound<'py, PyAny>,
    pub(crate) block_sizes: &'a [usize],
    pub(crate) source_id: &'a Bound<'py, PyAny>,
    pub(crate) top_parent: &'a Bound<'py, PyAny>,
    pub(crate) page_breaks: &'a [usize],
}

/// Haystack documents of one document's views, appended to `out`; the top chunks' ids to
/// `top_ids`.
pub(crate) fn haystack_write<'py>(
    shape: &PyModelShape,
    views: impl Iterator<Item = PyResult<RowView<'py>>>,
    writing: &HaystackWriting<'_, 'py>,
    out: &Bound<'py, PyList>,
    top_ids: &Bound<'py, PyList>,
    sorted: Option<&LeavesAndParents<'py>>,
) -> PyResult<()> {
    let py = out.py();
    let keys = shape.meta_keys::<19>(py, "a Haystack writer")?;
    let [level_key, block_size, parent_id_key, children_ids, source_id_key, page_number, split_id, split_idx_start, split_idx_end, start_byte, end_byte, carried @ ..] =
        &keys;
    // The template holds every key but what a chunk carries (set only where it has it).
    let (template, deep) = template(writing.base, &keys[..11])?;
    let depth_of_leaves = writing.block_sizes.len();
    let mut carried = FieldWriter::new(carried, writing.base, 0, 0)?;
    for view in views {
        let view = view?;
        let depth = depth_of_leaves
            .checked_sub(view.level)
            .filter(|&depth| depth > 0)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "a chunk of level {} in a tree of {depth_of_leaves} block sizes",
                    view.level
                ))
            })?;
        let metadata = chunk_metadata(&template, writing.base, deep)?;
        metadata.set_item(level_key, depth)?;
        metadata.set_item(block_size, writing.block_sizes[depth - 1])?;
        if let Some(parent) = &view.parent_id {
            metadata.set_item(parent_id_key, parent)?;
        } else {
            metadata.set_item(parent_id_key, writing.top_parent)?;
            top_ids.append(&view.id)?;
        }
        let leaf = if let Some(children) = &view.child_ids {
            metadata.set_item(children_ids, children)?;
            children.is_empty()
        } else {
            metadata.set_item(children_ids, PyList::empty(py))?;
            true
        };
        metadata.set_item(source_id_key, writing.source_id)?;
        let page = 1 + writing
            .page_breaks
            .partition_point(|&position| position < view.start_char);
        metadata.set_item(page_number, page)?;
        metadata.set_item(split_id, view.index)?;
        metadata.set_item(split_idx_start, view.start_char)?;
        metadata.set_item(split_idx_end, view.end_char)?;
        metadata.set_item(start_byte, view.start_byte)?;
        metadata.set_item(end_byte, view.end_byte)?;
        carried.write(&metadata, &view.mapping)?;
        let document = shape.make(py, &view.id, &view.text, &metadata)?;
        if let Some((leaves, parents)) = sorted {
            // The run's `leaf_documents` and `parent_documents`, sorted as they are made: a
            // Python pass reading every document's `__children_ids` back would be a quarter
            // of the component's time.
            if leaf { leaves } else { parents }.append(&document)?;
        }
        out.append(document)?;
    }
    Ok(())
}

/// Haystack `Document`s of one document's chunks (its tree, levels top first): the base meta,
/// then under the shape's 19 `meta_keys` (python/spanchunk/integrations/haystack.py names
/// them), in order: the depth (the number of levels minus `Chunk.level`), the block size, the
/// parent id (`top_parent` for the top chunks), the children's ids, `source_id`, the page
/// (1 + the form feeds at `page_breaks` before the chunk's start), the index, the start and
/// end char, the start and end byte, and what the chunk carries where it has it (its paths,
/// source span, table header and pages: `FieldWriter`). Returns the documents and the ids of
/// the top chunks.
#[pyfunction]
#[pyo3(signature = (shape, chunks, base, block_sizes, source_id, top_parent, page_breaks))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn haystack_documents<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyModelShape>,
    chunks: Vec<Bound<'py, PyChunk>>,
    base: &Bound<'py, PyAny>,
    block_sizes: Vec<usize>,
    source_id: &Bound<'py, PyAny>,
    top_parent: &Bound<'py, PyAny>,
    page_breaks: Vec<usize>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    let writing = HaystackWriting {
        base,
        block_sizes: &block_sizes,
        source_id,
        top_parent,
        page_breaks: &page_breaks,
    };
    let out = PyList::empty(py);
    let top_ids = PyList::empty(py);
    let views = chunks.iter().map(RowView::of_chunk);
    haystack_write(shape.get(), views, &writing, &out, &top_ids, None)?;
    Ok((out, top_ids))
}

/// One document for `haystack_cut`: its text, its id (also the source id of its chunks), its
/// meta, its top chunks' parent id (its id, or None without a root) and its form feeds.
pub(crate) type HaystackDocument<'py> = (
    Bound<'py, PyString>,
    Bound<'py, PyString>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Vec<usize>,
);

/// One document's Haystack documents, its top chunks' ids, and its documents again split
/// into leaves and parents.
pub(crate) type HaystackTree<'py> = (
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
);

/// Lists of the leaf documents and of the parent documents, in order.
pub(crate) type LeavesAndParents<'py> = (Bound<'py, PyList>, Bound<'py, PyList>);

/// `haystack_documents` of many texts cut here (every level, `levels` with the chunker's
/// `fingerprint`), with no `Chunk` object in between except those the registry gets.
/// Returns, per document, its documents, its top chunks' ids and its leaf and parent
/// documents (two lists), and the `Chunk` objects to register (the rows above the leaves, or
/// every row with `keep_children`; none with `keep_children=None`), in order.
#[pyfunction]
#[pyo3(signature = (shape, levels, fingerprint, documents, block_sizes, keep_children))]
pub(crate) fn haystack_cut<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyModelShape>,
    levels: Vec<Bound<'py, PySplitter>>,
    fingerprint: &str,
    documents: Vec<HaystackDocument<'py>>,
    block_sizes: Vec<usize>,
    keep_children: Option<bool>,
) -> PyResult<(Vec<HaystackTree<'py>>, Bound<'py, PyList>)> {
    let fingerprint: Arc<str> = Arc::from(fingerprint);
    let texts: Vec<Bound<'py, PyString>> =
        documents.iter().map(|(text, ..)| text.clone()).collect();
    let ids: Vec<Option<Bound<'py, PyString>>> = documents
        .iter()
        .map(|(_, id, ..)| Some(id.clone()))
        .collect();
    let stored = PyList::empty(py);
    let cut = cut_documents(py, &levels, &texts, &ids, &[], Some(1))?;
    let mut trees = Vec::with_capacity(documents.len());
    for (document, (text, id, base, top_parent, page_breaks)) in cut.into_iter().zip(&documents) {
        let writing = HaystackWriting {
            base,
            block_sizes: &block_sizes,
            source_id: id.as_any(),
            top_parent,
            page_breaks,
        };
        let out = PyList::empty(py);
        let top_ids = PyList::empty(py);
        let sorted = (PyList::empty(py), PyList::empty(py));
        let views = cut_views(
            text,
            document,
            None,
            &fingerprint,
            keep_children.unwrap_or(false),
            keep_children.map(|_| &stored),
        )?;
        haystack_write(
            shape.get(),
            views.into_iter().map(Ok),
            &writing,
            &out,
            &top_ids,
            Some(&sorted),
        )?;
        let (leaves, parents) = sorted;
        trees.push((out, top_ids, leaves, parents));
    }
    Ok((trees, stored))
}
