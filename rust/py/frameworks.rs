//! Framework objects built in one call per batch: LangChain `Document`s and Haystack
//! `Document`s, from `Chunk`s (`langchain_documents`, `haystack_documents`) or straight from
//! texts cut here (`langchain_cut`, `haystack_cut`), each instance made the way the
//! framework's own shortcut makes it (`object.__new__(cls)`, then `__dict__` and, for a
//! pydantic model, its bookkeeping slots), with the metadata dict of every chunk filled here.
//!
//! Performance notes (gutenberg, `tree_documents`, 10,116 documents, on a loaded 2-core
//! machine; benches/NOTES.md holds the full record):
//! - the Python loop that read each chunk's fields and filled a `Document` and its metadata
//!   cost 8-14 us per document, three quarters of `tree_documents`;
//! - from the `Chunk` objects, here: 1.1-1.6 us per document once the chunks' fields exist
//!   (the instance about 0.4: `tp_alloc`, a copy of a 4-key `__dict__` template with 3
//!   stores, a set copy, 4 slot stores through `PyObject_GenericSetAttr`, never pydantic's
//!   `__setattr__`; the metadata about 0.5: a `PyDict_Copy` of one template per document,
//!   whose keys, hashes and order come with it, 9-11 stores, 4 new ints), plus about 0.7 for
//!   the fields themselves;
//! - `tp_alloc` rather than `object.__new__`: on CPython 3.11 the latter gives a managed-dict
//!   instance an inline-values array that setting `__dict__` turns into a dict and drops
//!   (0.93 -> 0.65 us per bare instance);
//! - straight from the cut (`*_cut`): each id hashed once for its row, its parent's child ids
//!   and its children's parent id, no `Chunk` objects but the registry's: 27 -> 20 ms (min,
//!   collector off), about 2 us per document all in. What is left is CPython's own work.
//!
//! Whether these objects are the ones the constructors build is checked once at import by
//! the integration modules, which use the constructors whenever the check fails.

use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PySet, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use std::sync::Arc;

use super::chunk::{frozen_metadata, id_string, substring, DocumentRows, PyChunk};
use super::documents::{cut_documents, CutDocument, HeadingPaths};
use super::splitter::PySplitter;

static DEEPCOPY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// How to make one framework object without running its constructor: the class (its own
/// `tp_new` makes the instance, as `cls.__new__(cls)` does), the `__dict__` every instance
/// starts from, the keys of the id, the text and the metadata in it, and for a pydantic model
/// the set of fields the constructor records as set (a copy per instance).
///
/// Args:
///     model: The class to instantiate.
///     fields: The instance ``__dict__`` in field order, the defaults filled in.
///     id_key, text_key, metadata_key: The keys of ``fields`` each object sets.
///     fields_set: For a pydantic model, ``__pydantic_fields_set__`` (copied per object;
///         ``__pydantic_extra__`` and ``__pydantic_private__`` are set to None); None for a
///         plain class.
#[pyclass(frozen, name = "ModelShape", module = "spanchunk._core")]
pub struct PyModelShape {
    class: Py<PyType>,
    new: Maker,
    fields: Py<PyDict>,
    id_key: Py<PyString>,
    text_key: Py<PyString>,
    metadata_key: Py<PyString>,
    fields_set: Option<Py<PySet>>,
}

#[pymethods]
impl PyModelShape {
    #[new]
    #[pyo3(signature = (model, fields, id_key, text_key, metadata_key, fields_set = None))]
    fn new(
        model: &Bound<'_, PyType>,
        fields: &Bound<'_, PyDict>,
        id_key: Bound<'_, PyString>,
        text_key: Bound<'_, PyString>,
        metadata_key: Bound<'_, PyString>,
        fields_set: Option<Bound<'_, PySet>>,
    ) -> PyResult<Self> {
        for key in [&id_key, &text_key, &metadata_key] {
            if !fields.contains(key)? {
                return Err(PyValueError::new_err(format!(
                    "fields has no key {key}: give the whole instance __dict__"
                )));
            }
        }
        let new = instance_maker(model)?;
        Ok(Self {
            class: model.clone().unbind(),
            new,
            fields: fields.copy()?.unbind(),
            id_key: id_key.unbind(),
            text_key: text_key.unbind(),
            metadata_key: metadata_key.unbind(),
            fields_set: fields_set.map(Bound::unbind),
        })
    }

    /// One object with this id, text and metadata (the path the import-time check probes).
    fn build<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        text: &Bound<'py, PyAny>,
        metadata: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.make(py, id, text, metadata)
    }
}

/// How an instance comes to be: the class's `tp_alloc` where its `__new__` is
/// `object.__new__` (which is `tp_alloc` and, on CPython 3.11, an inline-values array for the
/// instance attributes that setting `__dict__` would turn into a dict and drop at once), its
/// own `tp_new` otherwise.
#[derive(Clone, Copy)]
enum Maker {
    Alloc(ffi::allocfunc),
    New(ffi::newfunc),
}

/// The slot `slot` of `class` (null when unset).
fn type_slot(class: *mut ffi::PyTypeObject, slot: std::ffi::c_int) -> *mut std::ffi::c_void {
    // SAFETY: `class` is a live type object (every caller holds a reference and the GIL);
    // PyType_GetSlot (stable ABI, static types too since 3.10) only reads it.
    unsafe { ffi::PyType_GetSlot(class, slot) }
}

/// How instances of `cls` are made (see `Maker`); TypeError for a class with no `tp_new`.
fn instance_maker(cls: &Bound<'_, PyType>) -> PyResult<Maker> {
    let new = type_slot(cls.as_type_ptr(), ffi::Py_tp_new);
    let alloc = type_slot(cls.as_type_ptr(), ffi::Py_tp_alloc);
    // `PyBaseObject_Type` is the static `object` type.
    let object_new = type_slot(ptr::addr_of_mut!(ffi::PyBaseObject_Type), ffi::Py_tp_new);
    // SAFETY: a set Py_tp_new slot holds a `newfunc`, a set Py_tp_alloc slot an `allocfunc`.
    unsafe {
        if new == object_new && !alloc.is_null() {
            return Ok(Maker::Alloc(std::mem::transmute::<
                *mut std::ffi::c_void,
                ffi::allocfunc,
            >(alloc)));
        }
        if !new.is_null() {
            return Ok(Maker::New(std::mem::transmute::<
                *mut std::ffi::c_void,
                ffi::newfunc,
            >(new)));
        }
    }
    Err(PyTypeError::new_err(format!(
        "{cls} cannot be instantiated"
    )))
}

/// `object.<name> = value` through the type's descriptor, as `object.__setattr__` does: a
/// class's own `__setattr__` (pydantic's) is not run.
fn set_generic(
    object: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: the three are live objects (Bounds, GIL held); the call borrows them and returns
    // -1 with an exception set on failure.
    let status =
        unsafe { ffi::PyObject_GenericSetAttr(object.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if status < 0 {
        return Err(PyErr::fetch(object.py()));
    }
    Ok(())
}

impl PyModelShape {
    fn make<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
        text: &Bound<'py, PyAny>,
        metadata: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let class = self.class.bind(py).as_type_ptr();
        // SAFETY: the slots are the class's own, called as `object.__new__(cls)` calls
        // tp_alloc (the class, no items) and as `cls.__new__(cls)` calls tp_new (the class,
        // an empty argument tuple, no keywords); each returns a new reference or NULL with an
        // exception set, which `from_owned_ptr_or_err` takes over.
        let object = unsafe {
            let made = match self.new {
                Maker::Alloc(alloc) => alloc(class, 0),
                Maker::New(new) => new(class, PyTuple::empty(py).as_ptr(), ptr::null_mut()),
            };
            Bound::from_owned_ptr_or_err(py, made)?
        };
        let fields = self.fields.bind(py).copy()?;
        fields.set_item(self.id_key.bind(py), id)?;
        fields.set_item(self.text_key.bind(py), text)?;
        fields.set_item(self.metadata_key.bind(py), metadata)?;
        set_generic(&object, intern!(py, "__dict__"), &fields)?;
        if let Some(fields_set) = &self.fields_set {
            // SAFETY: `fields_set` is a live set; PySet_New copies it into a new set (a new
            // reference or NULL with an exception set).
            let own =
                unsafe { Bound::from_owned_ptr_or_err(py, ffi::PySet_New(fields_set.as_ptr()))? };
            set_generic(&object, intern!(py, "__pydantic_fields_set__"), &own)?;
            let none = py.None().into_bound(py);
            set_generic(&object, intern!(py, "__pydantic_extra__"), &none)?;
            set_generic(&object, intern!(py, "__pydantic_private__"), &none)?;
        }
        Ok(object)
    }
}

/// `dict.update(mapping)` as `{**mapping}` spells it: a dict, or anything with `keys()`.
fn update(dict: &Bound<'_, PyDict>, mapping: &Bound<'_, PyAny>) -> PyResult<()> {
    // SAFETY: both are live objects (Bounds, GIL held); PyDict_Update (stable ABI) borrows
    // them and returns -1 with an exception set on failure.
    if unsafe { ffi::PyDict_Update(dict.as_ptr(), mapping.as_ptr()) } < 0 {
        return Err(PyErr::fetch(dict.py()));
    }
    Ok(())
}

/// The metadata every chunk of one document starts from: `{**base, key: None, ...}` for
/// `keys` (a key already in `base` keeps its place), and whether `base` must be deep-copied
/// per chunk (a value that is not a str, int, float, bool or None, as the framework's own
/// splitters copy it).
fn template<'py>(
    base: &Bound<'py, PyAny>,
    keys: &[&Bound<'py, PyString>],
) -> PyResult<(Bound<'py, PyDict>, bool)> {
    let py = base.py();
    let template = PyDict::new(py);
    update(&template, base)?;
    let mut deep = false;
    for value in template.values() {
        let scalar = value.is_none()
            || value.is_instance_of::<PyString>()
            || value.is_instance_of::<PyInt>()
            || value.is_instance_of::<PyFloat>()
            || value.is_instance_of::<PyBool>();
        deep |= !scalar;
    }
    for key in keys {
        template.set_item(key, py.None())?;
    }
    Ok((template, deep))
}

/// A chunk's metadata dict: the template's copy, the base deep-copied into it when `deep`.
fn chunk_metadata<'py>(
    template: &Bound<'py, PyDict>,
    base: &Bound<'py, PyAny>,
    deep: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let py = template.py();
    let metadata = template.copy()?;
    if deep {
        let deepcopy = DEEPCOPY.import(py, "copy", "deepcopy")?;
        update(&metadata, &deepcopy.call1((base,))?)?;
    }
    Ok(metadata)
}

/// `list(chunk.metadata["headings"])` when the chunk has a heading path, looked up once per
/// metadata mapping (the chunks of one heading path share theirs); a new list per chunk.
struct Headings<'py> {
    mapping: Option<Bound<'py, PyAny>>,
    headings: Option<Bound<'py, PyAny>>,
}

impl<'py> Headings<'py> {
    fn new() -> Self {
        Self {
            mapping: None,
            headings: None,
        }
    }

    fn of(&mut self, mapping: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyList>>> {
        let py = mapping.py();
        if !self.mapping.as_ref().is_some_and(|seen| seen.is(mapping)) {
            let found = mapping.call_method1(intern!(py, "get"), (intern!(py, "headings"),))?;
            self.headings = (!found.is_none()).then_some(found);
            self.mapping = Some(mapping.clone());
        }
        self.headings
            .as_ref()
            .map(|headings| {
                // SAFETY: `headings` is a live object; PySequence_List returns a new list (a
                // new reference) or NULL with an exception set.
                unsafe {
                    Bound::from_owned_ptr_or_err(py, ffi::PySequence_List(headings.as_ptr()))
                        .map(|list| list.cast_into_unchecked())
                }
            })
            .transpose()
    }
}

/// What a framework object is made from, for one chunk: read from a `Chunk` (its fields,
/// made once and kept in it) or straight from the rows of a document just cut (each id made
/// once, for the row itself, its parent's children and its children's parent).
struct RowView<'py> {
    id: Bound<'py, PyString>,
    text: Bound<'py, PyString>,
    document_id: Bound<'py, PyString>,
    parent_id: Option<Bound<'py, PyString>>,
    /// None for a leaf (no list is made that nobody writes).
    child_ids: Option<Bound<'py, PyList>>,
    /// The chunk's read-only metadata (where a Markdown heading path is).
    mapping: Bound<'py, PyAny>,
    index: usize,
    level: usize,
    start_char: usize,
    end_char: usize,
    start_byte: usize,
    end_byte: usize,
}

impl<'py> RowView<'py> {
    fn of_chunk(bound: &Bound<'py, PyChunk>) -> PyResult<Self> {
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
fn cut_views<'py>(
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
    } = document;
    let shared_metadata = frozen_metadata(py, metadata)?;
    let mut paths = outline
        .as_ref()
        .map(|outline| HeadingPaths::new(outline, &shared_metadata));
    let shared = Arc::new(DocumentRows {
        text: text.clone().unbind(),
        document_key: key,
        fingerprint: Arc::clone(fingerprint),
        rows,
    });
    let rows = &shared.rows;
    let ids: Vec<Bound<'py, PyString>> = (0..rows.rows.len())
        .map(|row| id_string(py, shared.id(row)))
        .collect();
    let mut views = Vec::with_capacity(ids.len());
    for (number, span) in rows.rows.iter().enumerate() {
        let mapping = match paths.as_mut() {
            None => shared_metadata.clone(),
            Some(paths) => paths.metadata(py, span.start_byte)?,
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

/// How one document's chunks are written as LangChain documents: the metadata they copy,
/// the level to write instead of `Chunk.level` (a flat splitter's role), the offsets of the
/// text in its source, and the document id and parent id to write instead of the chunks'
/// own (a parent split again).
type LangChainWriting<'py> = (
    Bound<'py, PyAny>,
    Option<usize>,
    usize,
    usize,
    Option<Bound<'py, PyString>>,
    Option<Bound<'py, PyString>>,
);

/// The LangChain metadata keys, interned, in the order every chunk gets them.
struct LangChainKeys<'py> {
    spans: [&'py Bound<'py, PyString>; 9],
    child_ids: &'py Bound<'py, PyString>,
    headings: &'py Bound<'py, PyString>,
}

impl<'py> LangChainKeys<'py> {
    fn new(py: Python<'py>) -> Self {
        Self {
            spans: [
                intern!(py, "start_index"),
                intern!(py, "end_index"),
                intern!(py, "start_byte"),
                intern!(py, "end_byte"),
                intern!(py, "level"),
                intern!(py, "index"),
                intern!(py, "chunk_id"),
                intern!(py, "document_id"),
                intern!(py, "parent_id"),
            ],
            child_ids: intern!(py, "child_ids"),
            headings: intern!(py, "headings"),
        }
    }
}

/// LangChain documents of one document's views, appended to `out`.
fn langchain_write<'py>(
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
        keys.spans;
    let mut headings = Headings::new();
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
            metadata.set_item(keys.child_ids, children)?;
        }
        if let Some(path) = headings.of(&view.mapping)? {
            metadata.set_item(keys.headings, path)?;
        }
        out.append(shape.make(py, &view.id, &view.text, &metadata)?)?;
    }
    Ok(())
}

/// LangChain `Document`s of many documents' chunks, in order, with the metadata of
/// python/spanchunk/integrations/langchain.py's field mapping: the base metadata, then
/// `start_index`, `end_index`, `start_byte`, `end_byte`, `level`, `index`, `chunk_id`,
/// `document_id`, `parent_id`, and `child_ids` and `headings` where the chunk has them. Each
/// group is a document's chunks and how to write them (`LangChainWriting`).
#[pyfunction]
pub(super) fn langchain_documents<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyModelShape>,
    groups: Vec<(Vec<Bound<'py, PyChunk>>, LangChainWriting<'py>)>,
) -> PyResult<Bound<'py, PyList>> {
    let keys = LangChainKeys::new(py);
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
pub(super) fn langchain_cut<'py>(
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
    let keys = LangChainKeys::new(py);
    let out = PyList::empty(py);
    let stored = PyList::empty(py);
    let documents = cut_documents(py, &levels, &texts, &document_ids, Some(1))?;
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

/// How one document's tree is written as Haystack documents: the meta they copy, the block
/// sizes (top first), the source document's id, and the top chunks' parent id.
struct HaystackWriting<'a, 'py> {
    base: &'a Bound<'py, PyAny>,
    block_sizes: &'a [usize],
    source_id: &'a Bound<'py, PyAny>,
    top_parent: &'a Bound<'py, PyAny>,
    page_breaks: &'a [usize],
}

/// Haystack documents of one document's views, appended to `out`; the top chunks' ids to
/// `top_ids`.
fn haystack_write<'py>(
    shape: &PyModelShape,
    views: impl Iterator<Item = PyResult<RowView<'py>>>,
    writing: &HaystackWriting<'_, 'py>,
    out: &Bound<'py, PyList>,
    top_ids: &Bound<'py, PyList>,
    sorted: Option<&LeavesAndParents<'py>>,
) -> PyResult<()> {
    let py = out.py();
    let level_key = intern!(py, "__level");
    let block_size = intern!(py, "__block_size");
    let parent_id_key = intern!(py, "__parent_id");
    let children_ids = intern!(py, "__children_ids");
    let source_id_key = intern!(py, "source_id");
    let page_number = intern!(py, "page_number");
    let split_id = intern!(py, "split_id");
    let split_idx_start = intern!(py, "split_idx_start");
    let split_idx_end = intern!(py, "split_idx_end");
    let start_byte = intern!(py, "start_byte");
    let end_byte = intern!(py, "end_byte");
    let headings_key = intern!(py, "headings");
    let keys = [
        level_key,
        block_size,
        parent_id_key,
        children_ids,
        source_id_key,
        page_number,
        split_id,
        split_idx_start,
        split_idx_end,
        start_byte,
        end_byte,
    ];
    let (template, deep) = template(writing.base, &keys)?;
    let depth_of_leaves = writing.block_sizes.len();
    let mut headings = Headings::new();
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
        if let Some(path) = headings.of(&view.mapping)? {
            metadata.set_item(headings_key, path)?;
        }
        let document = shape.make(py, &view.id, &view.text, &metadata)?;
        if let Some((leaves, parents)) = sorted {
            // The run's `leaf_documents` and `parent_documents`, sorted as they are made: a
            // Python pass reading every document's `__children_ids` back had been a quarter
            // of the component's time.
            if leaf { leaves } else { parents }.append(&document)?;
        }
        out.append(document)?;
    }
    Ok(())
}

/// Haystack `Document`s of one document's chunks (its tree, levels top first), with the meta
/// of python/spanchunk/integrations/haystack.py's field mapping: the base meta, then
/// `__level` (the depth: the number of levels minus `Chunk.level`), `__block_size`,
/// `__parent_id` (`top_parent` for the top chunks), `__children_ids`, `source_id`,
/// `page_number` (1 + the form feeds at `page_breaks` before the chunk's start), `split_id`,
/// `split_idx_start`, `split_idx_end`, `start_byte`, `end_byte`, and `headings` where the
/// chunk has them. Returns the documents and the ids of the top chunks.
#[pyfunction]
#[pyo3(signature = (shape, chunks, base, block_sizes, source_id, top_parent, page_breaks))]
#[allow(clippy::too_many_arguments)]
pub(super) fn haystack_documents<'py>(
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
type HaystackDocument<'py> = (
    Bound<'py, PyString>,
    Bound<'py, PyString>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Vec<usize>,
);

/// One document's Haystack documents, its top chunks' ids, and its documents again split
/// into leaves and parents.
type HaystackTree<'py> = (
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Bound<'py, PyList>,
);

/// Lists of the leaf documents and of the parent documents, in order.
type LeavesAndParents<'py> = (Bound<'py, PyList>, Bound<'py, PyList>);

/// `haystack_documents` of many texts cut here (every level, `levels` with the chunker's
/// `fingerprint`), with no `Chunk` object in between except those the registry gets.
/// Returns, per document, its documents, its top chunks' ids and its leaf and parent
/// documents (two lists), and the `Chunk` objects to register (the rows above the leaves, or
/// every row with `keep_children`; none with `keep_children=None`), in order.
#[pyfunction]
#[pyo3(signature = (shape, levels, fingerprint, documents, block_sizes, keep_children))]
pub(super) fn haystack_cut<'py>(
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
    let cut = cut_documents(py, &levels, &texts, &ids, Some(1))?;
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
