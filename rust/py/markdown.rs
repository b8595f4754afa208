//! `Outline`: a Markdown document's structure, parsed in the core.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use crate::markdown::Outline;

/// The Markdown structure of one document (its headings and cut positions), parsed in the
/// core: what `build_chunks` takes to give chunks cut by custom levels their heading paths
/// (built-in levels get theirs in `chunk_documents`, from the parse the splitting used).
#[pyclass(frozen, name = "Outline", module = "spanchunk._core")]
pub struct PyOutline {
    pub(crate) inner: Outline,
}

#[pymethods]
impl PyOutline {
    #[new]
    fn new(py: Python<'_>, text: PyBackedStr) -> PyResult<Self> {
        Ok(Self {
            inner: crate::py::detach(py, || Outline::parse(&text))?,
        })
    }

    /// (start_byte, level, plain text) of every top-level heading, in document order.
    #[getter]
    fn headings(&self) -> Vec<(usize, u8, String)> {
        self.inner
            .headings
            .iter()
            .map(|heading| (heading.start, heading.level, heading.text.clone()))
            .collect()
    }

    /// The heading path (plain texts, outermost first) of a chunk starting at `start_byte`.
    fn path(&self, start_byte: usize) -> Vec<String> {
        let outline = &self.inner;
        outline
            .path(outline.headings_before(start_byte))
            .into_iter()
            .map(|row| outline.headings[row].text.clone())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("Outline(headings={})", self.inner.headings.len())
    }
}
