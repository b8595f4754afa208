//! `Splitter`: one level of the engine, its settings and its sizer.

use std::sync::Arc;

use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use crate::engine::{
    default_separators_for, KeepSeparator, Merge, Splitter, SplitterConfig, Structure,
};
use crate::error::ChunkError;
use crate::py::convert::{non_negative, rows_to_numpy};
use crate::py::sizing::CallableSizer;
use crate::sizing::token::TokenSizer;
use crate::sizing::{SegmentUnit, Sizer, Unit};
use crate::table::as_i64;
use crate::text::pages::PagePattern;

/// The sizer of `unit` when it is not "char" or "byte" (`None` for those): "token" needs
/// exactly one of a tiktoken encoding name, a tokenizer.json text, or a callable; "word",
/// "sentence", "passage" and "page" none.
pub(crate) fn token_sizer(
    unit: &str,
    encoding: Option<&str>,
    tokenizer_json: Option<&str>,
    length_function: Option<Py<PyAny>>,
) -> Result<Option<Box<dyn Sizer>>, ChunkError> {
    match (unit, encoding, tokenizer_json, length_function) {
        ("token", Some(encoding), None, None) => Ok(Some(Box::new(TokenSizer::tiktoken(encoding)?))),
        ("token", None, Some(json), None) => Ok(Some(Box::new(TokenSizer::hugging_face(json)?))),
        ("token", None, None, Some(function)) => Ok(Some(Box::new(CallableSizer { function }))),
        ("token", ..) => Err(ChunkError::setting(
            "unit",
            "unit=\"token\" needs exactly one of encoding, tokenizer or length_function",
        )),
        (unit, None, None, None) => Ok(SegmentUnit::named(unit).map(|unit| Box::new(unit) as Box<dyn Sizer>)),
        (other, ..) => Err(ChunkError::setting(
            "unit",
            format!("encoding, tokenizer and length_function apply to unit=\"token\" only, not {other:?}: pass unit=\"token\" or drop them"),
        )),
    }
}

/// One level of the splitting engine.
#[pyclass(frozen, name = "Splitter", module = "spanchunk._core")]
pub struct PySplitter {
    pub(crate) inner: Arc<Splitter>,
}

#[pymethods]
impl PySplitter {
    #[new]
    #[pyo3(signature = (chunk_size, *, overlap = 0, min_chunk_size = 0, separators = None, keep_separator = "end", trim = true, unit = "char", structure = None, merge = "boundary", encoding = None, tokenizer_json = None, length_function = None, language = None, html_content = None, pages = None))]
    fn new(
        chunk_size: i64,
        overlap: i64,
        min_chunk_size: i64,
        separators: Option<Vec<Vec<String>>>,
        keep_separator: &str,
        trim: bool,
        unit: &str,
        structure: Option<&str>,
        merge: &str,
        encoding: Option<&str>,
        tokenizer_json: Option<&str>,
        length_function: Option<Py<PyAny>>,
        language: Option<&str>,
        html_content: Option<&str>,
        pages: Option<&str>,
    ) -> PyResult<Self> {
        let config = SplitterConfig {
            chunk_size: non_negative("chunk_size", chunk_size)?,
            overlap: non_negative("overlap", overlap)?,
            min_chunk_size: non_negative("min_chunk_size", min_chunk_size)?,
            separators: separators.unwrap_or_else(|| default_separators_for(unit)),
            keep_separator: KeepSeparator::parse(keep_separator)?,
            trim,
            structure: Structure::parse(structure, language)?.with_html_content(html_content)?,
            merge: Merge::parse(merge)?,
            pages: pages.map(PagePattern::new).transpose()?,
        };
        let splitter = match token_sizer(unit, encoding, tokenizer_json, length_function)? {
            Some(sizer) => Splitter::with_sizer(config, sizer)?,
            None => Splitter::new(config, Unit::parse(unit)?)?,
        };
        Ok(Self {
            inner: Arc::new(splitter),
        })
    }

    #[getter]
    fn chunk_size(&self) -> usize {
        self.inner.config().chunk_size
    }

    #[getter]
    fn overlap(&self) -> usize {
        self.inner.config().overlap
    }

    #[getter]
    fn min_chunk_size(&self) -> usize {
        self.inner.config().min_chunk_size
    }

    #[getter]
    fn separators(&self) -> Vec<Vec<String>> {
        self.inner.config().separators.clone()
    }

    #[getter]
    fn keep_separator(&self) -> &'static str {
        self.inner.config().keep_separator.name()
    }

    #[getter]
    fn trim(&self) -> bool {
        self.inner.config().trim
    }

    #[getter]
    fn structure(&self) -> Option<&'static str> {
        self.inner.config().structure.name()
    }

    /// The part of a page an HTML level reads ("main" or "body"; None: not HTML).
    #[getter]
    fn html_content(&self) -> Option<&'static str> {
        self.inner
            .config()
            .structure
            .html_content()
            .map(crate::html::Content::name)
    }

    /// The page marker pattern of the level (None: it marks no pages).
    #[getter]
    fn pages(&self) -> Option<&str> {
        self.inner.config().pages.as_ref().map(PagePattern::as_str)
    }

    /// The language of a code level (None: each document's, or not code).
    #[getter]
    fn language(&self) -> Option<&'static str> {
        self.inner.config().structure.language()
    }

    #[getter]
    fn merge(&self) -> &'static str {
        self.inner.config().merge.name()
    }

    /// Whether a tree of such levels finds its chunks by seeking rather than from atoms.
    #[getter]
    fn seekable(&self) -> bool {
        self.inner.seekable()
    }

    #[getter]
    fn unit(&self) -> &'static str {
        self.inner.sizer().name()
    }

    /// The size of `text` in this splitter's unit.
    fn measure(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<usize> {
        let splitter = Arc::clone(&self.inner);
        Ok(crate::py::gil::detach(py, || {
            splitter.sizer().size(&text).map_err(ChunkError::from)
        })??)
    }

    fn __repr__(&self) -> String {
        let config = self.inner.config();
        format!(
            "Splitter(chunk_size={}, overlap={}, min_chunk_size={}, keep_separator={:?}, trim={}, unit={:?})",
            config.chunk_size,
            config.overlap,
            config.min_chunk_size,
            config.keep_separator.name(),
            if config.trim { "True" } else { "False" },
            self.inner.sizer().name()
        )
    }

    /// (n, 4): start_byte, end_byte, start_char, end_char.
    fn split<'py>(
        &self,
        py: Python<'py>,
        text: PyBackedStr,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let splitter = Arc::clone(&self.inner);
        let spans = crate::py::gil::detach(py, || splitter.spans(&text))??;
        let rows = spans
            .iter()
            .map(|span| {
                [
                    as_i64(span.start_byte),
                    as_i64(span.end_byte),
                    as_i64(span.start_char),
                    as_i64(span.end_char),
                ]
            })
            .collect();
        rows_to_numpy(py, rows)
    }
}

pub(crate) fn splitters(levels: &[Bound<'_, PySplitter>]) -> Vec<Arc<Splitter>> {
    levels
        .iter()
        .map(|level| Arc::clone(&level.get().inner))
        .collect()
}

/// Drops the token counts that chunking keeps per tokenizer (merged tiktoken pieces, words),
/// so that the next chunking starts cold: benchmarks call it between repetitions.
#[pyfunction]
pub(crate) fn forget_token_counts() {
    crate::sizing::token::forget_counts();
}

/// The default separator levels of `unit`, coarsest first.
#[pyfunction(name = "default_separators")]
#[pyo3(signature = (unit = "char"))]
pub(crate) fn py_default_separators(unit: &str) -> Vec<Vec<String>> {
    default_separators_for(unit)
}

/// The separator that stands for a level of sentence boundaries (`spanchunk.SENTENCES`).
#[pyfunction]
pub(crate) fn sentence_separator() -> &'static str {
    crate::text::sentences::SENTENCES
}
