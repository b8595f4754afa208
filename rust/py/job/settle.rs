//! Binding of a store re-run's recorded files (`job/settle.rs`): what the store recorded of
//! its documents and skipped files, for the walk to settle them by their state.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::job::settle::{Recorded, State};

/// Registers the class of this file in the `_core` module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyRecordedFiles>()
}

/// What a store recorded of its files (`RecordedFiles(documents, skipped, quiet)`):
/// `documents` as `(id, hashed, size, mtime_ns, ctime_ns, inode)` rows (settled only when
/// `hashed` is true, a hash or a flag, and the state whole), `skipped` as `(path, kind,
/// message, size, mtime_ns, ctime_ns, inode)` rows, whose index in the list a settled skip
/// is given back as, unless its kind is one of `quiet` (only counted: `quiet_settled`).
#[pyclass(name = "RecordedFiles", module = "spanchunk._core")]
pub struct PyRecordedFiles {
    pub(crate) recorded: Recorded,
}

fn state_at(row: &Bound<'_, PyTuple>, first: usize) -> PyResult<Option<State>> {
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

#[pymethods]
impl PyRecordedFiles {
    #[new]
    fn new(
        documents: &Bound<'_, PyList>,
        skipped: &Bound<'_, PyList>,
        quiet: HashSet<String>,
    ) -> PyResult<Self> {
        let mut recorded = Recorded::default();
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
        for (index, row) in skipped.iter().enumerate() {
            let row = row.cast_into::<PyTuple>()?;
            let path: OsString = row.get_item(0)?.extract()?;
            let kind: String = row.get_item(1)?.extract()?;
            if let Some(state) = state_at(&row, 3)? {
                recorded.add_skipped(path, index, state, quiet.contains(&kind));
            }
        }
        Ok(Self { recorded })
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
