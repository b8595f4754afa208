//! Binding of the JSON Lines output (`output/jsonl.rs`): a batch's records, kept in Rust
//! memory and written to a file descriptor from here.

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::output;

/// The JSON Lines records of a batch, kept in Rust memory and written to a file descriptor
/// from here: handing them to Python as `bytes` copied every record once more (a tenth of
/// the job's CPU), and the stable ABI of Python 3.10 has no buffer protocol to lend them.
#[pyclass(name = "JsonlBatch", module = "spanchunk._core", frozen)]
pub(crate) struct PyJsonlBatch {
    pub(crate) records: Vec<u8>,
}

#[pymethods]
impl PyJsonlBatch {
    /// A batch holding `records` (what `to_bytes` gives; for pickling).
    #[new]
    fn new(records: &[u8]) -> Self {
        Self {
            records: records.to_vec(),
        }
    }

    fn __len__(&self) -> usize {
        self.records.len()
    }

    /// Pickled as its bytes (a process pool sends batches back to the writer).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, pyo3::types::PyType>, (Bound<'py, PyBytes>,)) {
        let py = slf.py();
        (slf.get_type(), (slf.get().to_bytes(py),))
    }

    /// The records as one `bytes` object (a copy).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.records)
    }

    /// Writes every record to the open file descriptor `fd` at its current position, with
    /// the GIL released; raises `OSError` (errno and message as `os.write` would give) when
    /// the write fails, e.g. `BrokenPipeError` for a reader that went away.
    fn write_to(&self, py: Python<'_>, fd: i32) -> PyResult<()> {
        let written = py.detach(|| write_all(fd, &self.records));
        written.map_err(|error| os_error(py, &error))
    }
}

impl Drop for PyJsonlBatch {
    fn drop(&mut self) {
        output::recycle(std::mem::take(&mut self.records));
    }
}

/// All of `bytes` to `fd` (short writes continued, interrupted ones retried: `write_all`).
#[cfg(unix)]
fn write_all(fd: i32, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // The descriptor belongs to the caller: borrowed, never closed here.
    // SAFETY: `fd` is an open descriptor for the duration of the call (the caller holds the
    // file object), and `ManuallyDrop` keeps `File` from closing it.
    let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    file.write_all(bytes)
}

#[cfg(not(unix))]
fn write_all(_fd: i32, _bytes: &[u8]) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "JsonlBatch.write_to needs a POSIX file descriptor: write to_bytes() instead",
    ))
}

/// The `OSError` Python raises for `error`: `OSError(errno, os.strerror(errno))`, which
/// Python turns into its subclass (`BrokenPipeError`, ...), as `os.write` would raise.
pub(crate) fn os_error(py: Python<'_>, error: &std::io::Error) -> PyErr {
    let Some(code) = error.raw_os_error() else {
        return PyOSError::new_err(error.to_string());
    };
    let message = py
        .import("os")
        .and_then(|os| os.call_method1("strerror", (code,)))
        .and_then(|text| text.extract::<String>())
        .unwrap_or_else(|_| error.to_string());
    PyOSError::new_err((code, message))
}
