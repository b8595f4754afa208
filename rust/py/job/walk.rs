//! Binding of the command line's walk (`job/walk.rs`): `FileWalk(paths, file_class,
//! excludes, picks, recorded)` iterates over lists of what it finds, in order:
//! `file_class(path, size, mtime_ns, ctime_ns, inode, device, resolved)` for each file,
//! `(path, kind, message)` for each skip, and with a store's `RecordedFiles`
//! (`job/settle.rs`) `(path, index)` for each recorded skip settled (the files settled
//! unchanged, and the quiet skips settled, are counted there, not handed over).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyList;

use super::settle::PyRecordedFiles;
use crate::job::settle::{Recorded, Settled};
use crate::job::walk::{Event, Globs, NoGlobs, Walk};
use crate::py::gil::detach;

/// Registers the classes of this file in the `_core` module.
pub(crate) fn register_job_walk(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyFileWalk>()
}

/// Helpers listing folders ahead of a walk without exclude globs: with one, the walk
/// waits for the folder it lists; two halve the listing of a tree on two cores
/// (`benches/NOTES.md`).
const PREFETCH_THREADS: usize = 2;

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
    recorded: Option<Py<PyRecordedFiles>>,
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
    #[pyo3(signature = (paths, file_class, excludes = None, picks = None, recorded = None))]
    fn new(
        paths: Vec<PathBuf>,
        file_class: Py<PyAny>,
        excludes: Option<Py<PyAny>>,
        picks: Option<Py<PyAny>>,
        recorded: Option<Py<PyRecordedFiles>>,
    ) -> Self {
        let paths = paths.into_iter().map(OsString::from).collect();
        // Folders are listed ahead only where the walk opens every one it finds.
        let walk = if excludes.is_none() {
            Walk::with_prefetch(paths, PREFETCH_THREADS)
        } else {
            Walk::new(paths)
        };
        Self {
            walk,
            file_class,
            excludes,
            picks,
            recorded,
        }
    }

    /// What a store recorded of its files, to settle them by (given once the walk has
    /// started listing, before its first step).
    fn settle_with(&mut self, recorded: Py<PyRecordedFiles>) {
        self.recorded = Some(recorded);
    }

    fn __iter__(this: PyRef<'_, Self>) -> PyRef<'_, Self> {
        this
    }

    /// The next events (a list), or the end of the walk.
    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let mut events = Vec::with_capacity(EVENTS_PER_STEP);
        let mut kept = Vec::with_capacity(EVENTS_PER_STEP);
        let mut guard = self
            .recorded
            .as_ref()
            .map(|recorded| recorded.bind(py).borrow_mut());
        let mut recorded = guard.as_deref_mut().map(|files| &mut files.recorded);
        let more = if self.excludes.is_none() && self.picks.is_none() {
            let walk = &mut self.walk;
            detach(py, || {
                // Files settled unread do not count towards a step's list.
                loop {
                    let Ok(more) = walk.next_events(&mut NoGlobs, &mut events, EVENTS_PER_STEP);
                    settle(recorded.as_deref_mut(), &mut events, &mut kept);
                    if !more || kept.len() >= EVENTS_PER_STEP / 2 {
                        return more;
                    }
                }
            })?
        } else {
            let mut globs = PyGlobs {
                py,
                excludes: self.excludes.as_ref(),
                picks: self.picks.as_ref(),
            };
            let more = self
                .walk
                .next_events(&mut globs, &mut events, EVENTS_PER_STEP)?;
            settle(recorded, &mut events, &mut kept);
            more
        };
        drop(guard);
        if kept.is_empty() && !more {
            return Ok(None);
        }
        let file_class = self.file_class.bind(py);
        let items = PyList::empty(py);
        for item in kept {
            match item {
                Kept::Event(Event::File(file)) => items.append(file_class.call1((
                    file.path,
                    file.size,
                    file.mtime_ns,
                    file.ctime_ns,
                    file.inode,
                    file.device,
                    file.resolved,
                ))?)?,
                Kept::Event(Event::Skip(path, kind, message)) => {
                    items.append((path, kind, message))?;
                }
                Kept::Skipped(index, path) => items.append((path, index))?,
            }
        }
        Ok(Some(items))
    }
}

/// What a step hands to Python: an event, or the index of a recorded skip settled.
enum Kept {
    Event(Event),
    Skipped(usize, OsString),
}

/// Moves `events` into `kept`, less the files `recorded` settles (those unchanged are
/// counted there; a recorded skip gives its index).
fn settle(recorded: Option<&mut Recorded>, events: &mut Vec<Event>, kept: &mut Vec<Kept>) {
    let Some(recorded) = recorded.filter(|recorded| !recorded.is_empty()) else {
        kept.extend(events.drain(..).map(Kept::Event));
        return;
    };
    for event in events.drain(..) {
        if let Event::File(file) = &event {
            match recorded.settle(file) {
                Settled::No => {}
                Settled::Unchanged | Settled::Quiet => continue,
                Settled::Skipped(index) => {
                    kept.push(Kept::Skipped(index, file.path.clone()));
                    continue;
                }
            }
        }
        kept.push(Kept::Event(event));
    }
}
