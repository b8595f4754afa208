//! How a framework object is made without its constructor (`ModelShape`), and the metadata
//! dict of a chunk, filled from one template per document.

use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PySet, PyString, PyTuple, PyType};
use pyo3::{ffi, intern};

pub(crate) static DEEPCOPY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

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
///     meta_keys: The metadata keys the framework's writer fills, in the order of its roles
///         (the integration module names them; the core knows no framework's field names).
#[pyclass(frozen, name = "ModelShape", module = "spanchunk._core")]
pub struct PyModelShape {
    class: Py<PyType>,
    new: Maker,
    fields: Py<PyDict>,
    id_key: Py<PyString>,
    text_key: Py<PyString>,
    metadata_key: Py<PyString>,
    fields_set: Option<Py<PySet>>,
    meta_keys: Vec<Py<PyString>>,
}

#[pymethods]
impl PyModelShape {
    #[new]
    #[pyo3(signature = (
        model, fields, id_key, text_key, metadata_key, fields_set = None, meta_keys = Vec::new()
    ))]
    pub(crate) fn new(
        model: &Bound<'_, PyType>,
        fields: &Bound<'_, PyDict>,
        id_key: Bound<'_, PyString>,
        text_key: Bound<'_, PyString>,
        metadata_key: Bound<'_, PyString>,
        fields_set: Option<Bound<'_, PySet>>,
        meta_keys: Vec<Bound<'_, PyString>>,
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
            meta_keys: meta_keys.into_iter().map(Bound::unbind).collect(),
        })
    }

    /// One object with this id, text and metadata (the path the import-time check probes).
    pub(crate) fn build<'py>(
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
pub(crate) enum Maker {
    Alloc(ffi::allocfunc),
    New(ffi::newfunc),
}

/// The slot `slot` of `class` (null when unset).
pub(crate) fn type_slot(
    class: *mut ffi::PyTypeObject,
    slot: std::ffi::c_int,
) -> *mut std::ffi::c_void {
    // SAFETY: `class` is a live type object (every caller holds a reference and the GIL);
    // PyType_GetSlot (stable ABI, static types too since 3.10) only reads it.
    unsafe { ffi::PyType_GetSlot(class, slot) }
}

/// How instances of `cls` are made (see `Maker`); TypeError for a class with no `tp_new`.
pub(crate) fn instance_maker(cls: &Bound<'_, PyType>) -> PyResult<Maker> {
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
pub(crate) fn set_generic(
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
    /// The `N` metadata keys a writer fills (`writer` names it in the error when the shape
    /// was given another number).
    pub(crate) fn meta_keys<'py, const N: usize>(
        &self,
        py: Python<'py>,
        writer: &str,
    ) -> PyResult<[Bound<'py, PyString>; N]> {
        let keys: Vec<Bound<'py, PyString>> = self
            .meta_keys
            .iter()
            .map(|key| key.bind(py).clone())
            .collect();
        let given = keys.len();
        keys.try_into().map_err(|_| {
            PyValueError::new_err(format!(
                "{writer} needs a ModelShape with {N} meta_keys, not {given}"
            ))
        })
    }

    pub(crate) fn make<'py>(
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
pub(crate) fn update(dict: &Bound<'_, PyDict>, mapping: &Bound<'_, PyAny>) -> PyResult<()> {
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
pub(crate) fn template<'py>(
    base: &Bound<'py, PyAny>,
    keys: &[Bound<'py, PyString>],
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
pub(crate) fn chunk_metadata<'py>(
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
