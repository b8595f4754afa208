//! Binding of the command line's walk (`output/walk.rs`): `FileWalk(paths, file_class,
//! excludes, picks)` iterates over lists of what it finds, in order: `file_class(path, size,
//! mtime_ns, ctime_ns, inode)` for each file, `(path, kind, message)` for each skip.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyList;

use super::detach;
use crate::output::walk::{Event, Globs, NoGlobs, Walk};

/// Registers the class of this file in the `_core` module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyFileWalk>()
}

/// Events handed to Python per step: one call's worth, enough that the per-call cost
/// vanishes, few enough that the first files are cut while the walk goes on.
const EVENTS_PER_STEP: usize = 256;

/// The files of the PATHs, in order (see `spanchunk.cli._files.iter_files`).
///
/// `excludes(relative)` is asked of each folder and `picks(relative)` of each file inside a
/// folder (paths relative to their PATH, `/`-separated), each only when given; without
/// them the folders are read and the files looked at with the GIL released.
#[pyclass(name = "FileWalk", module = "spanchunk._core")]
pub struct PyFileWalk {
    walk: Walk,
    file_class: Py<PyAny>,
    excludes: Option<Py<PyAny>>,
    picks: Option<Py<PyAny>>,
}

/// The globs as Python callables.
struct PyGlobs<'a, 'py> {
    py: Python<'py>,
    excludes: Option<&'a Py<PyAny>>,
    picks: Option<&'a Py<PyAny>>,
}

impl Globs for PyGlobs<'_, '_> {
    type Error = PyErr;

    fn prunes(&self) -> bool {
        self.excludes.is_some()
    }

    fn filters(&self) -> bool {
        self.picks.is_some()
    }

    fn excludes(&mut self, relative: &OsStr) -> PyResult<bool> {
        ask(self.py, self.excludes, relative, false)
    }

    fn picks(&mut self, relative: &OsStr) -> PyResult<bool> {
        ask(self.py, self.picks, relative, true)
    }
}

fn ask(
    py: Python<'_>,
    glob: Option<&Py<PyAny>>,
    relative: &OsStr,
    otherwise: bool,
) -> PyResult<bool> {
    match glob {
        Some(glob) => glob.bind(py).call1((relative,))?.is_truthy(),
        None => Ok(otherwise),
    }
}

#[pymethods]
impl PyFileWalk {
    #[new]
    #[pyo3(signature = (paths, file_class, excludes = None, picks = None))]
    fn new(
        paths: Vec<PathBuf>,
        file_class: Py<PyAny>,
        excludes: Option<Py<PyAny>>,
        picks: Option<Py<PyAny>>,
    ) -> Self {
        Self {
            walk: Walk::new(paths.into_iter().map(OsString::from).collect()),
            file_class,
            excludes,
            picks,
        }
    }

    fn __iter__(this: PyRef<'_, Self>) -> PyRef<'_, Self> {
        this
    }

    /// The next events (a list), or the end of the walk.
    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let mut events = Vec::with_capacity(EVENTS_PER_STEP);
        let more = if self.excludes.is_none() && self.picks.is_none() {
            let walk = &mut self.walk;
            detach(py, || {
                let Ok(more) = walk.next_events(&mut NoGlobs, &mut events, EVENTS_PER_STEP);
                more
            })?
        } else {
            let mut globs = PyGlobs {
                py,
                excludes: self.excludes.as_ref(),
                picks: self.picks.as_ref(),
            };
            self.walk
                .next_events(&mut globs, &mut events, EVENTS_PER_STEP)?
        };
        if events.is_empty() && !more {
            return Ok(None);
        }
        let file_class = self.file_class.bind(py);
        let items = PyList::empty(py);
        for event in events {
            match event {
                Event::File(file) => items.append(file_class.call1((
                    file.path,
                    file.size,
                    file.mtime_ns,
                    file.ctime_ns,
                    file.inode,
                    file.device,
                    file.resolved,
                ))?)?,
                Event::Skip(path, kind, message) => items.append((path, kind, message))?,
            }
        }
        Ok(Some(items))
    }
}
