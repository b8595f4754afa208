//! `build_chunks` and `chunk_documents`: a document's span table made into `Chunk` objects,
//! one call per document (or per batch), with Markdown heading paths in the metadata.

use std::sync::Arc;

use numpy::PyReadonlyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use super::fields::{
    frozen_metadata, plain_dict, sources_of, OwnMetadata, SharedDocument, MAPPING_PROXY_TYPE,
};
use super::object::PyChunk;
use crate::engine::{self, DocumentInput, Splitter};
use crate::markdown::Outline;
use crate::output::ChunkFields;
use crate::py::convert::{int_rows, worker_count};
use crate::py::engine::splitter::{splitters, PySplitter};
use crate::py::markdown::PyOutline;
use crate::table::rows::{checked_rows, LinkedRows, SpanRow};
use crate::table::SPAN_COLUMNS;
use crate::text::pages::Pages;

/// The rows of a (n, 7) span table, each checked against the text: non-negative, not
/// reversed, char spans inside the text.
fn span_rows(spans: &PyReadonlyArray2<'_, i64>, text_chars: usize) -> PyResult<Vec<SpanRow>> {
    let rows = int_rows::<{ SPAN_COLUMNS.len() }>("spans", spans)?;
    Ok(checked_rows(rows.into_iter(), text_chars)?)
}

/// `Chunk` objects for every row of a document's (n, 7) span table, in row order (see
/// `document_chunks`); the path for spans that custom levels made.
#[pyfunction]
#[pyo3(signature = (text, document_id, fingerprint, metadata, spans, outline = None, pages = None))]
pub(crate) fn build_chunks<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    document_id: &Bound<'py, PyString>,
    fingerprint: &str,
    metadata: Option<&Bound<'py, PyAny>>,
    spans: PyReadonlyArray2<'py, i64>,
    outline: Option<&Bound<'py, PyOutline>>,
    pages: Option<&Bound<'py, PySplitter>>,
) -> PyResult<Bound<'py, PyList>> {
    let rows = span_rows(&spans, text.len()?)?;
    let document_key = document_id.to_str()?.to_owned();
    let outline = outline.map(|outline| &outline.get().inner);
    // The page markers of `pages`, the tree's top level (the spans came from Python).
    let (source, top) = (text.to_str()?, pages.map(|level| &*level.get().inner));
    let pages = crate::py::gil::detach(py, || engine::document_pages(top, source))??;
    document_chunks(
        py,
        text,
        document_id,
        metadata,
        (LinkedRows::new(rows)?, document_key, Arc::from(fingerprint)),
        outline,
        pages.as_ref(),
    )
}

/// Every level of many documents as `Chunk` objects, in one call: the spans (and Markdown
/// outlines) and the default document ids (`text_id`, where an id is None) are computed with
/// the GIL released, on `workers` threads (1: this thread; None: every core), then each
/// document's chunks are built as `build_chunks` builds them, with no span array in between.
/// Returns, per document, its chunks (levels top first, leaves last) and the row of its first
/// leaf.
#[pyfunction]
#[pyo3(signature = (levels, texts, document_ids, metadatas, fingerprint, workers = Some(1)))]
pub(crate) fn chunk_documents<'py>(
    py: Python<'py>,
    levels: Vec<Bound<'py, PySplitter>>,
    texts: Vec<Bound<'py, PyString>>,
    document_ids: Vec<Option<Bound<'py, PyString>>>,
    metadatas: Vec<Option<Bound<'py, PyAny>>>,
    fingerprint: &str,
    workers: Option<i64>,
) -> PyResult<Vec<(Bound<'py, PyList>, usize)>> {
    if texts.len() != document_ids.len() || texts.len() != metadatas.len() {
        return Err(PyValueError::new_err(format!(
            "{} texts, {} document ids and {} metadata mappings: pass one of each per document",
            texts.len(),
            document_ids.len(),
            metadatas.len()
        )));
    }
    let fingerprint: Arc<str> = Arc::from(fingerprint);
    let sources = sources_of(&levels, &metadatas)?;
    cut_documents(py, &levels, &texts, &document_ids, &sources, workers)?
        .into_iter()
        .zip(texts.iter().zip(&metadatas))
        .map(|(document, (text, metadata))| {
            let first_leaf = document.rows.first_leaf();
            let chunks = document_chunks(
                py,
                document.page_text.as_ref().unwrap_or(text),
                &document.document_id,
                metadata.as_ref(),
                (document.rows, document.key, Arc::clone(&fingerprint)),
                document.outline.as_ref(),
                document.pages.as_ref(),
            )?;
            Ok((chunks, first_leaf))
        })
        .collect()
}

/// One document cut by `cut_documents`: its id (the given one, or the hash of its text), the
/// same as a Rust string (what the chunk ids hash), its linked rows and its Markdown outline.
pub(crate) struct CutDocument<'py> {
    pub(crate) document_id: Bound<'py, PyString>,
    pub(crate) key: String,
    pub(crate) rows: LinkedRows,
    pub(crate) outline: Option<Outline>,
    /// The readable text the rows index, when the document was an HTML page.
    pub(crate) page_text: Option<Bound<'py, PyString>>,
    /// Its pages, when its levels mark pages and it has page markers.
    pub(crate) pages: Option<Pages>,
}

/// Every level of many documents, with the GIL released, on `workers` threads (1: this
/// thread; None: every core), and the default document ids (`text_id`, where an id is None);
/// `sources`: each document's source (or none at all), where a code level reads its language.
pub(crate) fn cut_documents<'py>(
    py: Python<'py>,
    levels: &[Bound<'py, PySplitter>],
    texts: &[Bound<'py, PyString>],
    document_ids: &[Option<Bound<'py, PyString>>],
    sources: &[Option<String>],
    workers: Option<i64>,
) -> PyResult<Vec<CutDocument<'py>>> {
    if texts.len() != document_ids.len() {
        return Err(PyValueError::new_err(format!(
            "{} texts and {} document ids: pass one id (or None) per text",
            texts.len(),
            document_ids.len()
        )));
    }
    let owned = splitters(levels);
    let workers = worker_count(workers)?;
    let mut inputs: Vec<DocumentInput> = Vec::with_capacity(texts.len());
    for (position, (text, id)) in texts.iter().zip(document_ids).enumerate() {
        let key = id.as_ref().map(|id| id.to_str()).transpose()?;
        let source = sources.get(position).and_then(Option::as_deref);
        inputs.push((text.to_str()?, text.len()?, key, source));
    }
    let prepared = crate::py::gil::detach(py, || {
        let borrowed: Vec<&Splitter> = owned.iter().map(AsRef::as_ref).collect();
        engine::chunked_documents(&borrowed, &inputs, workers)
    })??;
    prepared
        .into_iter()
        .zip(document_ids)
        .map(|(document, given_id)| {
            let (document_id, key) = match (given_id, document.made_key) {
                (Some(id), _) => (id.clone(), id.to_str()?.to_owned()),
                (None, made) => {
                    let made = made.unwrap_or_default();
                    (PyString::new(py, &made), made)
                }
            };
            Ok(CutDocument {
                document_id,
                key,
                rows: LinkedRows::new(document.rows)?,
                outline: document.outline,
                page_text: document
                    .page_text
                    .map(|page_text| PyString::new(py, &page_text)),
                pages: document.pages,
            })
        })
        .collect()
}

/// `Chunk` objects for the linked rows of one document's span table, in row order, given
/// with the document id and the fingerprint their ids hash: one `SharedDocument` shared by
/// every chunk (its id, text, parent id and child-id tuple are made from it on first read),
/// one shared metadata mapping; with a Markdown `outline`, one mapping per heading path,
/// holding the document's metadata and `"headings"`, shared by the chunks with that path.
fn document_chunks<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    document_id: &Bound<'py, PyString>,
    metadata: Option<&Bound<'py, PyAny>>,
    (rows, document_key, fingerprint): (LinkedRows, String, Arc<str>),
    outline: Option<&Outline>,
    pages: Option<&Pages>,
) -> PyResult<Bound<'py, PyList>> {
    let metadata = frozen_metadata(py, metadata)?;
    let mut paths = outline.map(|outline| HeadingPaths::new(outline, &metadata));
    let mut chunks = Vec::with_capacity(rows.rows.len());
    let shared = Arc::new(SharedDocument::new(
        text.clone().unbind(),
        document_key,
        fingerprint,
        rows,
    ));
    // A page's chunks (their source spans), the chunks of tables (their header rows) and
    // those of a text with page markers (their pages) have metadata of their own.
    let own_fields = ChunkFields::possible(outline, pages);
    let mut own = OwnMetadata::new(outline.map_or(0, |outline| outline.tables.len()));
    for (number, row) in shared.rows.rows.iter().enumerate() {
        let path_metadata = match paths.as_mut() {
            None => metadata.clone(),
            Some(paths) => paths.metadata(py, row.start_byte)?,
        };
        let fields = if own_fields {
            ChunkFields::of(outline, pages, row.start_byte, row.end_byte)
        } else {
            ChunkFields::default()
        };
        let metadata = if fields.is_empty() {
            path_metadata.unbind()
        } else {
            own.of(&path_metadata, &fields, text)?.unbind()
        };
        let chunk = PyChunk::of_row(&shared, number, document_id.clone().unbind(), metadata);
        chunks.push(Bound::new(py, chunk)?);
    }
    PyList::new(py, chunks)
}

/// Per heading path, the read-only metadata of its chunks: the document's metadata and
/// `"headings"` (for source code, `"symbols"` and `"language"`), built once per path.
pub(crate) struct HeadingPaths<'a, 'py> {
    outline: &'a Outline,
    base: &'a Bound<'py, PyAny>,
    /// By the number of headings before a chunk's start.
    built: Vec<Option<Bound<'py, PyAny>>>,
    texts: Vec<Option<Bound<'py, PyString>>>,
}

impl<'a, 'py> HeadingPaths<'a, 'py> {
    pub(crate) fn new(outline: &'a Outline, base: &'a Bound<'py, PyAny>) -> Self {
        let count = outline.headings.len();
        Self {
            outline,
            base,
            built: vec![None; count + 1],
            texts: vec![None; count],
        }
    }

    /// The read-only metadata of a chunk that starts at `start_byte`.
    pub(crate) fn metadata(
        &mut self,
        py: Python<'py>,
        start_byte: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let count = self.outline.headings_before(start_byte);
        if let Some(built) = &self.built[count] {
            return Ok(built.clone());
        }
        let mut names = Vec::new();
        for row in self.outline.path(count) {
            let name = self.texts[row]
                .get_or_insert_with(|| PyString::new(py, &self.outline.headings[row].text));
            names.push(name.clone());
        }
        let dict = plain_dict(self.base)?;
        let path = PyTuple::new(py, names)?;
        match self.outline.language {
            None => dict.set_item(intern!(py, "headings"), path)?,
            Some(language) => {
                dict.set_item(intern!(py, "symbols"), path)?;
                dict.set_item(intern!(py, "language"), language)?;
            }
        }
        let proxy_type = MAPPING_PROXY_TYPE.import(py, "types", "MappingProxyType")?;
        let built = proxy_type.call1((dict,))?;
        self.built[count] = Some(built.clone());
        Ok(built)
    }
}
