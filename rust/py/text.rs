//! Bindings of a file's bytes as text (`text/decode.rs`), for the files the command line
//! reads in Python (stdin, a store's files, whose bytes it hashes).

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::text::decode;

/// Registers the functions of this file in the `_core` module.
pub(crate) fn register_text(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(py_is_binary, module)?)?;
    module.add_function(wrap_pyfunction!(text_problem, module)?)
}

/// Whether a file whose first bytes are `head` is binary, as the job decides.
#[pyfunction(name = "is_binary")]
fn py_is_binary(head: &[u8]) -> bool {
    decode::is_binary(head)
}

/// Why a file's bytes are not text as the job reads them (UTF-8, or UTF-16 or UTF-32 with a
/// byte order mark), worded as the job reports it; None when they are.
#[pyfunction]
fn text_problem(py: Python<'_>, data: PyBackedBytes) -> PyResult<Option<String>> {
    crate::py::gil::detach(py, || decode::decode_text(&data).err())
}
