//! A batch's chunks as Arrow rows, handed to pyarrow through the Arrow PyCapsule interface
//! (what Ray's batch function wraps without a copy).

use arrow_array::ffi::to_ffi;
use arrow_array::{Array, StructArray};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// A batch's chunks as Arrow rows (a struct array), handed to pyarrow through the Arrow
/// PyCapsule interface: `pa.record_batch(rows)` imports them without a copy.
#[pyclass(frozen, name = "ArrowRows", module = "spanchunk._core")]
pub struct PyArrowRows {
    pub(crate) rows: StructArray,
}

#[pymethods]
impl PyArrowRows {
    /// The rows' schema and array, as the Arrow PyCapsule interface names them; a
    /// requested schema is not looked at (the consumer casts if it wants another).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let (array, schema) = to_ffi(&self.rows.to_data())
            .map_err(|error| PyValueError::new_err(format!("Arrow export: {error}")))?;
        // Each capsule owns its struct; one that pyarrow never imports is released when
        // the capsule is freed (the structs' Drop calls their release callbacks).
        Ok((
            PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
            PyCapsule::new_with_value(py, array, c"arrow_array")?,
        ))
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }
}
