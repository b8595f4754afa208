//! `read_html`: an HTML page's readable text and headings, read in the core.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use crate::html::{Content, Page};

/// A heading as Python gets it: (start_byte, level, text).
type HeadingRow = (usize, u8, String);

/// The readable text of the page `source` (the part `content` names: "main" or "body"), and
/// its headings as (start_byte, level, text), as an HTML level reads them.
#[pyfunction]
#[pyo3(signature = (source, content = "main"))]
pub(crate) fn read_html(
    py: Python<'_>,
    source: PyBackedStr,
    content: &str,
) -> PyResult<(String, Vec<HeadingRow>)> {
    let content = Content::parse(content).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown content {content:?}: use \"main\" or \"body\""
        ))
    })?;
    let page = crate::py::gil::detach(py, || Page::parse(&source, content))?;
    let headings = page
        .outline
        .headings
        .iter()
        .map(|heading| (heading.start, heading.level, heading.text.clone()))
        .collect();
    Ok((page.text, headings))
}

/// How many tokenizer events the page `source` makes, nothing done for each: the bound of
/// `read_html` that `benches/html_tree.py` measures.
#[pyfunction]
pub(crate) fn html_events(py: Python<'_>, source: PyBackedStr) -> PyResult<usize> {
    crate::py::gil::detach(py, || crate::html::count_events(&source))
}
