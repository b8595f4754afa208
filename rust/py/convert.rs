//! Conversions the bindings share: span tables and rows to numpy, size and worker arguments
//! from Python ints.

use numpy::ndarray::Array2;
use numpy::{
    Element, IntoPyArray, PyArray1, PyArray2, PyArrayDescr, PyArrayMethods, PyReadonlyArray2,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::error::ChunkError;
use crate::table::{SpanRecord, SpanTable, SPAN_COLUMNS};

// SAFETY: a `SpanRecord` is `#[repr(transparent)]` over `[i64; 7]`: 56 bytes, no padding, no
// Python object, trivially copyable; the dtype below describes exactly that layout (seven
// native-endian int64 fields at offsets 0, 8, ..., 48, itemsize 56). It is `Send` and `Sync`
// as the integers are. The arrays are only ever made from a `Vec<SpanRecord>` (8-byte aligned,
// owned by the array's base object until numpy frees the last view), never read back from
// Python as records: the packed dtype's alignment of 1 is never relied on.
unsafe impl Element for SpanRecord {
    const IS_COPY: bool = true;

    fn get_dtype(py: Python<'_>) -> Bound<'_, PyArrayDescr> {
        static DTYPE: PyOnceLock<Py<PyArrayDescr>> = PyOnceLock::new();
        DTYPE
            .get_or_init(py, || {
                let fields: Vec<(&str, &str)> =
                    SPAN_COLUMNS.iter().map(|name| (*name, "i8")).collect();
                PyArrayDescr::new(py, fields)
                    .expect("numpy accepts a list of (name, \"i8\") fields")
                    .unbind()
            })
            .bind(py)
            .clone()
    }

    fn clone_ref(&self, _py: Python<'_>) -> Self {
        *self
    }
}

/// A span table as a numpy structured array, one row per chunk, fields [`SPAN_COLUMNS`]: the
/// table's memory becomes the array's, no copy (viewing an (n, 7) int array as records cost
/// numpy about 0.8 us per call, two fifths of `spans` on a short document).
pub(crate) fn table_to_numpy(py: Python<'_>, table: SpanTable) -> Bound<'_, PyArray1<SpanRecord>> {
    table.records.into_pyarray(py)
}

pub(crate) fn rows_to_numpy<const N: usize>(
    py: Python<'_>,
    rows: Vec<[i64; N]>,
) -> PyResult<Bound<'_, PyArray2<i64>>> {
    let count = rows.len();
    let flat: Vec<i64> = rows.into_iter().flatten().collect();
    let array = Array2::from_shape_vec((count, N), flat)
        .map_err(|error| PyRuntimeError::new_err(format!("span shape: {error}")))?;
    Ok(array.into_pyarray(py))
}

/// The rows of an (n, `N`) int64 array, copied out (`name`: the argument, for the error).
/// numpy lets an array's memory be misaligned for its dtype (a view of a buffer at an odd
/// offset), and `as_array` hands out Rust references to its items, which must be aligned:
/// such an array is first copied by numpy into aligned memory.
pub(crate) fn int_rows<const N: usize>(
    name: &str,
    array: &PyReadonlyArray2<'_, i64>,
) -> PyResult<Vec<[i64; N]>> {
    if array.data().addr() % std::mem::align_of::<i64>() != 0 {
        let copy: PyReadonlyArray2<'_, i64> = array.as_untyped().call_method0("copy")?.extract()?;
        if copy.data().addr() % std::mem::align_of::<i64>() == 0 {
            return int_rows(name, &copy);
        }
        return Err(PyRuntimeError::new_err(format!(
            "{name}: numpy copied a misaligned array into misaligned memory"
        )));
    }
    let view = array.as_array();
    if view.ncols() != N {
        return Err(PyValueError::new_err(format!(
            "{name} must have shape (n, {N}), got {:?}",
            view.shape()
        )));
    }
    Ok(view
        .rows()
        .into_iter()
        .map(|row| std::array::from_fn(|column| row[column]))
        .collect())
}

pub(crate) fn non_negative(setting: &'static str, value: i64) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| {
        ChunkError::setting(
            setting,
            format!("{setting} must be >= 0, got {value}: pass a non-negative size"),
        )
        .into()
    })
}

/// A `workers` argument: None (every core) or a positive count.
pub(crate) fn worker_count(workers: Option<i64>) -> PyResult<Option<usize>> {
    match workers {
        None => Ok(None),
        Some(count) if count >= 1 => Ok(Some(non_negative("workers", count)?)),
        Some(count) => Err(PyValueError::new_err(format!(
            "workers must be >= 1 or None, got {count}: pass None to use every core"
        ))),
    }
}
