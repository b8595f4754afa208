//! Framework objects built from `Chunk`s in one call per batch: LangChain `Document`s
//! (`langchain_documents`) and Haystack `Document`s (`haystack_documents`), each made the way
//! the framework's own shortcut makes it (`cls.__new__(cls)`, then `__dict__` and, for a
//! pydantic model, its bookkeeping slots), with the metadata dict of every chunk filled here.
//!
//! Performance notes (gutenberg, `tree_documents`, 10,116 documents; the integration modules
//! hold the comparison with the frameworks, benches/NOTES.md the full record):
//! - the Python loop that read each chunk's fields, filled a metadata dict from a template and
//!   filled a `Document` through the slots' descriptors cost 8-14 us per document on the
//!   loaded 2-core machine, three quarters of `tree_documents`;
//! - here the same objects cost well under a microsecond each: the chunk's fields are read
//!   from the Rust struct (no attribute lookup, the lazy id and text made once), the keys are
//!   interned, the metadata dict is a `PyDict_Copy` of one template per document (the keys'
//!   hashes and order come with it) with the values stored in place, `__dict__` a copy of a
//!   template too, the instance comes from the class's own `tp_new` and its attributes are
//!   set with `PyObject_GenericSetAttr` (the descriptors, never pydantic's `__setattr__`);
//! - heading lists are made per chunk (each document owns its list) from one lookup per
//!   shared metadata mapping (the chunks of a heading path share one).
//!
//! Whether these objects are the ones the constructors build is checked once at import by
//! the integration modules, which use the constructors whenever the check fails.

use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PySet, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

use super::chunk::PyChunk;

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

    fn of(&mut self, chunk: &PyChunk, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let mapping = chunk.metadata.bind(py);
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

/// One document's chunks for `langchain_documents`: the chunks, the metadata they copy, the
/// level to write instead of `Chunk.level` (a flat splitter's role), the offsets of the text
/// in its source, and the document id and parent id to write instead of the chunks' own (a
/// parent split again).
type LangChainGroup<'py> = (
    Vec<Bound<'py, PyChunk>>,
    Bound<'py, PyAny>,
    Option<usize>,
    usize,
    usize,
    Option<Bound<'py, PyString>>,
    Option<Bound<'py, PyString>>,
);

/// LangChain `Document`s of many documents' chunks, in order, with the metadata of
/// python/spanchunk/integrations/langchain.py's field mapping: the base metadata, then
/// `start_index`, `end_index`, `start_byte`, `end_byte`, `level`, `index`, `chunk_id`,
/// `document_id`, `parent_id`, and `child_ids` and `headings` where the chunk has them.
#[pyfunction]
pub(super) fn langchain_documents<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyModelShape>,
    groups: Vec<LangChainGroup<'py>>,
) -> PyResult<Bound<'py, PyList>> {
    let shape = shape.get();
    let start_index = intern!(py, "start_index");
    let end_index = intern!(py, "end_index");
    let start_byte = intern!(py, "start_byte");
    let end_byte = intern!(py, "end_byte");
    let level_key = intern!(py, "level");
    let index = intern!(py, "index");
    let chunk_id = intern!(py, "chunk_id");
    let document_id_key = intern!(py, "document_id");
    let parent_id_key = intern!(py, "parent_id");
    let child_ids = intern!(py, "child_ids");
    let headings_key = intern!(py, "headings");
    let keys = [
        start_index,
        end_index,
        start_byte,
        end_byte,
        level_key,
        index,
        chunk_id,
        document_id_key,
        parent_id_key,
    ];
    let out = PyList::empty(py);
    for (chunks, base, level, char_offset, byte_offset, document_id, parent_id) in groups {
        let (template, deep) = template(&base, &keys)?;
        let mut headings = Headings::new();
        for bound in &chunks {
            let chunk = bound.get();
            let id = chunk.id_str(py)?;
            let metadata = chunk_metadata(&template, &base, deep)?;
            metadata.set_item(start_index, chunk.start_char + char_offset)?;
            metadata.set_item(end_index, chunk.end_char + char_offset)?;
            metadata.set_item(start_byte, chunk.start_byte + byte_offset)?;
            metadata.set_item(end_byte, chunk.end_byte + byte_offset)?;
            metadata.set_item(level_key, level.unwrap_or(chunk.level))?;
            metadata.set_item(index, chunk.index)?;
            metadata.set_item(chunk_id, id)?;
            match &document_id {
                Some(given) => metadata.set_item(document_id_key, given)?,
                None => metadata.set_item(document_id_key, &chunk.document_id)?,
            }
            match &parent_id {
                Some(given) => metadata.set_item(parent_id_key, given)?,
                None => metadata.set_item(parent_id_key, chunk.parent_id_str(py)?)?,
            }
            let children = chunk.child_ids_tuple(py)?;
            if !children.is_empty() {
                metadata.set_item(child_ids, children.to_list())?;
            }
            if let Some(path) = headings.of(chunk, py)? {
                metadata.set_item(headings_key, path)?;
            }
            out.append(shape.make(py, id, chunk.text_str(py)?, &metadata)?)?;
        }
    }
    Ok(out)
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
    let shape = shape.get();
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
    let (template, deep) = template(base, &keys)?;
    let depth_of_leaves = block_sizes.len();
    let out = PyList::empty(py);
    let top_ids = PyList::empty(py);
    let mut headings = Headings::new();
    for bound in &chunks {
        let chunk = bound.get();
        let id = chunk.id_str(py)?;
        let depth = depth_of_leaves
            .checked_sub(chunk.level)
            .filter(|&depth| depth > 0)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "a chunk of level {} in a tree of {depth_of_leaves} block sizes",
                    chunk.level
                ))
            })?;
        let metadata = chunk_metadata(&template, base, deep)?;
        metadata.set_item(level_key, depth)?;
        metadata.set_item(block_size, block_sizes[depth - 1])?;
        if let Some(parent) = chunk.parent_id_str(py)? {
            metadata.set_item(parent_id_key, parent)?;
        } else {
            metadata.set_item(parent_id_key, top_parent)?;
            top_ids.append(id)?;
        }
        metadata.set_item(children_ids, chunk.child_ids_tuple(py)?.to_list())?;
        metadata.set_item(source_id_key, source_id)?;
        let page = 1 + page_breaks.partition_point(|&position| position < chunk.start_char);
        metadata.set_item(page_number, page)?;
        metadata.set_item(split_id, chunk.index)?;
        metadata.set_item(split_idx_start, chunk.start_char)?;
        metadata.set_item(split_idx_end, chunk.end_char)?;
        metadata.set_item(start_byte, chunk.start_byte)?;
        metadata.set_item(end_byte, chunk.end_byte)?;
        if let Some(path) = headings.of(chunk, py)? {
            metadata.set_item(headings_key, path)?;
        }
        out.append(shape.make(py, id, chunk.text_str(py)?, &metadata)?)?;
    }
    Ok((out, top_ids))
}
