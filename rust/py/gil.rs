//! Work of the core's run with the GIL released, a panic in it raised as a Python exception:
//! what every binding that passes over a text calls.

use std::panic::AssertUnwindSafe;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// `py.detach(work)`: `work` runs with the GIL released, and a panic in it comes back as a
/// `RuntimeError` carrying the panic's message instead of unwinding into PyO3.
///
/// Unwind safety: the core's shared state is the thread pools and the token-count caches,
/// behind mutexes whose poisoning every user ignores (a cache half-filled by a panicking
/// call holds only correct counts), so carrying on after a caught panic is sound.
pub(crate) fn detach<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    F: Send + FnOnce() -> T,
    T: Send,
{
    py.detach(|| std::panic::catch_unwind(AssertUnwindSafe(work)))
        .map_err(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|text| (*text).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            PyRuntimeError::new_err(format!(
                "spanchunk's core panicked (a bug: please report it with the input): {message}"
            ))
        })
}
