//! Bindings of the Parquet output (`output/parquet.rs`): the file the writer appends row
//! groups to, the encoder the workers take, and an encoded row group between the two.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::output::parquet::{self, Codec, EncodedGroup, Encoder, ParquetFile};

/// Registers the classes of this file in the `_core` module.
pub(crate) fn register_output_parquet(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyParquetFile>()?;
    module.add_class::<PyParquetEncoder>()?;
    module.add_class::<PyParquetGroup>()
}

/// The Python exception of a Parquet error: `OSError` (with its errno) for a failed write,
/// `ValueError` otherwise.
pub(crate) fn parquet_error(py: Python<'_>, error: &::parquet::errors::ParquetError) -> PyErr {
    match parquet::io_error(error) {
        Some(io) => super::jsonl::os_error(py, io),
        None => PyValueError::new_err(format!("Parquet output: {error}")),
    }
}

/// A Parquet file being written: `append` each encoded batch in order, then `close`.
#[pyclass(name = "ParquetFile", module = "spanchunk._core")]
pub(crate) struct PyParquetFile {
    file: Option<ParquetFile>,
}

impl PyParquetFile {
    fn open(&mut self) -> PyResult<&mut ParquetFile> {
        self.file
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("the Parquet file is closed"))
    }
}

#[pymethods]
impl PyParquetFile {
    /// Creates the file at `path` (truncated if it exists) with pages compressed by
    /// `compression` ("snappy", "lz4" or "none").
    #[new]
    #[pyo3(signature = (path, compression = "snappy"))]
    fn new(py: Python<'_>, path: PathBuf, compression: &str) -> PyResult<Self> {
        let codec = Codec::named(compression).map_err(PyValueError::new_err)?;
        let file = py
            .detach(|| ParquetFile::create(&path, codec))
            .map_err(|error| parquet_error(py, &error))?;
        Ok(Self { file: Some(file) })
    }

    /// What `write_files(..., format="parquet", parquet=...)` encodes row groups with.
    fn encoder(&mut self) -> PyResult<PyParquetEncoder> {
        Ok(PyParquetEncoder {
            inner: self.open()?.encoder(),
        })
    }

    /// Writes `group` as the next row group (GIL released); an empty group writes nothing.
    fn append(&mut self, py: Python<'_>, group: &PyParquetGroup) -> PyResult<()> {
        let taken = group
            .inner
            .lock()
            .map_err(|_| PyValueError::new_err("a Parquet row group was poisoned"))?
            .take()
            .ok_or_else(|| PyValueError::new_err("this row group was appended already"))?;
        if taken.rows() == 0 {
            return Ok(());
        }
        let file = self.open()?;
        py.detach(|| file.append(taken))
            .map_err(|error| parquet_error(py, &error))
    }

    /// Writes the footer and closes the file.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        let file = self
            .file
            .take()
            .ok_or_else(|| PyOSError::new_err("the Parquet file is closed already"))?;
        py.detach(|| file.finish())
            .map_err(|error| parquet_error(py, &error))
    }

    /// Closes the file without a footer (what is written is not a Parquet file).
    fn discard(&mut self) {
        self.file = None;
    }
}

/// The schema, properties and codec of one Parquet file, for the workers.
#[pyclass(name = "ParquetEncoder", module = "spanchunk._core", frozen)]
pub(crate) struct PyParquetEncoder {
    pub(crate) inner: Encoder,
}

/// One batch's chunks encoded as a row group, waiting for `ParquetFile.append`.
#[pyclass(name = "ParquetGroup", module = "spanchunk._core", frozen)]
pub(crate) struct PyParquetGroup {
    inner: Mutex<Option<EncodedGroup>>,
    rows: usize,
}

impl PyParquetGroup {
    pub(crate) fn new(group: EncodedGroup) -> Self {
        Self {
            rows: group.rows(),
            inner: Mutex::new(Some(group)),
        }
    }
}

#[pymethods]
impl PyParquetGroup {
    /// How many chunks (rows) the group holds.
    #[getter]
    const fn rows(&self) -> usize {
        self.rows
    }

    fn __len__(&self) -> usize {
        self.rows
    }
}
