//! A Python callable as a sizer: the documented slow path.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

use crate::sizing::{SizeError, Sizer};

/// A Python callable `str -> int` as a sizer: the documented slow path, which attaches to the
/// interpreter (takes the GIL) for every measurement.
pub(crate) struct CallableSizer {
    pub(crate) function: Py<PyAny>,
}

impl std::fmt::Debug for CallableSizer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("CallableSizer")
    }
}

impl CallableSizer {
    fn call(&self, text: &str) -> PyResult<usize> {
        Python::attach(|py| {
            let value = self.function.bind(py).call1((text,))?;
            if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
                return Err(PyTypeError::new_err(format!(
                    "length_function must return an int, got {} for a text of {} chars",
                    value.get_type().name()?,
                    text.chars().count()
                )));
            }
            let count: i64 = value.extract()?;
            usize::try_from(count).map_err(|_| {
                PyValueError::new_err(format!(
                    "length_function returned {count} for a text of {} chars: it must return a non-negative int",
                    text.chars().count()
                ))
            })
        })
    }
}

impl Sizer for CallableSizer {
    /// The callable's count; its exception (or a count that is not a non-negative int)
    /// travels out of the engine as an error value, and the bindings raise it as it was.
    fn size(&self, text: &str) -> Result<usize, SizeError> {
        self.call(text).map_err(SizeError::from)
    }
    fn is_additive(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "token"
    }

    fn identity(&self) -> Option<&str> {
        None
    }
}
