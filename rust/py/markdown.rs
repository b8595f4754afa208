//! `Outline`: a Markdown document's or a source file's structure, parsed in the core.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use crate::engine::Structure;
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
            inner: crate::py::gil::detach(py, || Outline::parse(&text))?,
        })
    }

    /// The structure of `text` as source code in `language` (None: the language of the
    /// file name `source`, if it has one; else no structure).
    #[staticmethod]
    #[pyo3(signature = (text, language = None, source = None))]
    fn code(
        py: Python<'_>,
        text: PyBackedStr,
        language: Option<&str>,
        source: Option<&str>,
    ) -> PyResult<Self> {
        let structure = Structure::parse(Some("code"), language)?;
        let inner = crate::py::gil::detach(py, || structure.outline(&text, source))?;
        Ok(Self {
            inner: inner.unwrap_or_default(),
        })
    }

    /// The language of a source file's outline (None for Markdown).
    #[getter]
    fn language(&self) -> Option<&'static str> {
        self.inner.language
    }

    /// (start_byte, level, plain text) of every top-level heading (for source code, every
    /// definition: its start, depth and name), in document order.
    #[getter]
    fn headings(&self) -> Vec<(usize, u8, String)> {
        self.inner
            .headings
            .iter()
            .filter(|heading| heading.named)
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
