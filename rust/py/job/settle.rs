//! Binding of a store re-run's recorded files (`job/settle.rs`): what the store recorded of
//! its documents and skipped files, for the walk to settle them by their state.

use std::collections::{BTreeMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::job::settle::{Recorded, RecordedState, SkippedFile};
use crate::store::snapshot;

/// Registers the class of this file in the `_core` module.
pub(crate) fn register_job_settle(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyRecordedFiles>()
}

/// What a store recorded of its files (`RecordedFiles(documents, skipped, quiet)`):
/// `documents` as `(id, hashed, size, mtime_ns, ctime_ns, inode)` rows (settled only when
/// `hashed` is true, a hash or a flag, and the state whole), `skipped` as `(path, kind,
/// message, size, mtime_ns, ctime_ns, inode)` rows, whose index in the list a settled skip
/// is given back as, unless its kind is one of `quiet` (only counted: `quiet_settled`).
/// `RecordedFiles.from_snapshot(documents, skipped, quiet)` reads the same from the store's
/// snapshot of the two tables (`store/snapshot.rs`).
#[pyclass(name = "RecordedFiles", module = "spanchunk._core")]
pub struct PyRecordedFiles {
    pub(crate) recorded: Recorded,
}

fn state_at(row: &Bound<'_, PyTuple>, first: usize) -> PyResult<Option<RecordedState>> {
    let mut values = [0_i64; 4];
    for (offset, value) in values.iter_mut().enumerate() {
        let item = row.get_item(first + offset)?;
        if item.is_none() {
            return Ok(None);
        }
        *value = item.extract()?;
    }
    Ok(Some((values[0], values[1], values[2], values[3])))
}

fn skip_row<'py>(py: Python<'py>, file: &SkippedFile) -> PyResult<Bound<'py, PyTuple>> {
    let (size, mtime_ns, ctime_ns, inode) = file.state;
    (
        file.path.as_os_str(),
        file.kind.as_str(),
        file.message.as_str(),
        size,
        mtime_ns,
        ctime_ns,
        inode,
    )
        .into_pyobject(py)
}

#[pymethods]
impl PyRecordedFiles {
    #[new]
    fn new(
        documents: &Bound<'_, PyList>,
        skipped: &Bound<'_, PyList>,
        quiet: HashSet<String>,
    ) -> PyResult<Self> {
        let mut recorded = Recorded::with_capacity(documents.len() + skipped.len());
        for row in documents.iter() {
            let row = row.cast_into::<PyTuple>()?;
            let id: OsString = row.get_item(0)?.extract()?;
            let state = if row.get_item(1)?.is_truthy()? {
                state_at(&row, 2)?
            } else {
                None
            };
            recorded.add_document(id, state);
        }
        for row in skipped.iter() {
            let row = row.cast_into::<PyTuple>()?;
            let path: OsString = row.get_item(0)?.extract()?;
            let kind: String = row.get_item(1)?.extract()?;
            let message: String = row.get_item(2)?.extract()?;
            let Some(state) = state_at(&row, 3)? else {
                return Err(PyValueError::new_err(format!(
                    "the skipped file {path:?} has no whole state"
                )));
            };
            let quiet = quiet.contains(&kind);
            let file = SkippedFile {
                path,
                kind,
                message,
                state,
            };
            recorded.add_skipped(file, quiet);
        }
        Ok(Self { recorded })
    }

    /// From the store's snapshot of its documents' and skipped files' states.
    #[staticmethod]
    fn from_snapshot(documents: &[u8], skipped: &[u8], quiet: HashSet<String>) -> PyResult<Self> {
        let error = |error: snapshot::SnapshotError| PyValueError::new_err(error.to_string());
        let documents = snapshot::documents(documents).map_err(error)?;
        let skipped = snapshot::skipped(skipped).map_err(error)?;
        let mut recorded = Recorded::with_capacity(documents.len() + skipped.len());
        for document in documents {
            let state = if document.hashed {
                document.state
            } else {
                None
            };
            recorded.add_document(document.id, state);
        }
        for file in skipped {
            let quiet = quiet.contains(&file.kind);
            recorded.add_skipped(file, quiet);
        }
        Ok(Self { recorded })
    }

    /// How many skipped files are recorded.
    fn skip_count(&self) -> usize {
        self.recorded.skips().len()
    }

    /// The recorded skip of this index, as a `skipped_files` row.
    fn skip_row<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyTuple>> {
        let file = self
            .recorded
            .skips()
            .get(index)
            .ok_or_else(|| PyIndexError::new_err(index))?;
        skip_row(py, file)
    }

    /// Every recorded skip, as `skipped_files` rows.
    fn skip_rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        self.recorded
            .skips()
            .iter()
            .map(|file| skip_row(py, file))
            .collect()
    }

    /// How many quiet skips the walk settled, by kind.
    fn quiet_settled_kinds(&self) -> BTreeMap<String, usize> {
        self.recorded
            .quiet_settled_kinds()
            .into_iter()
            .map(|(kind, count)| (kind.to_owned(), count))
            .collect()
    }

    /// `(files, bytes)` settled unchanged so far.
    fn unchanged(&self) -> (u64, u64) {
        (self.recorded.unchanged, self.recorded.unchanged_bytes)
    }

    /// The indices of the quiet skips settled, in the walk's order.
    fn quiet_settled(&self) -> Vec<usize> {
        self.recorded.quiet_settled.clone()
    }

    /// Whether the walk found this recorded path.
    fn seen(&self, path: PathBuf) -> bool {
        self.recorded.seen(path.as_os_str())
    }

    /// The recorded documents the walk did not find, sorted.
    fn unseen_documents(&self) -> Vec<OsString> {
        self.recorded
            .unseen_documents()
            .into_iter()
            .map(OsStr::to_owned)
            .collect()
    }

    /// The indices of the recorded skips not settled, in order.
    fn unsettled_skips(&self) -> Vec<usize> {
        self.recorded.unsettled_skips()
    }
}
