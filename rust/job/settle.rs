//! Settling a store re-run's files by their state alone, as the walk lists them: a file
//! whose size, times and inode are those the store recorded when it read the file (a stat
//! cache, as git's index keeps) is unchanged and not read; one the store recorded as
//! skipped (binary, not text) with that state is skipped again unread. Which recorded
//! documents the walk never found (gone, for `--prune`) is known at the end.
//!
//! Why in the core: on a tree of tens of thousands of files, a Python object per listed
//! file and a set lookup for it had been a third of an unchanged re-run (`benches/NOTES.md`);
//! here the listed files never become Python objects.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};

use super::walk::Listed;

/// A file's state as the store records it: size, `mtime_ns`, `ctime_ns`, inode.
pub type State = (i64, i64, i64, i64);

#[derive(Debug)]
struct Record {
    /// The recorded state (None: none trusted, the file is read).
    state: Option<State>,
    /// Which recorded skip this is (its index in the order added); None for a document.
    skip: Option<usize>,
    /// A skip that is only counted when settled, never said (a binary, unless verbose).
    quiet: bool,
    /// Whether the walk found this path.
    seen: bool,
    /// Whether it was settled by its state.
    settled: bool,
}

/// What became of a listed file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Not settled: the file must be read.
    No,
    /// A recorded document, unchanged.
    Unchanged,
    /// The recorded skip of this index, still skipped.
    Skipped(usize),
    /// A quiet recorded skip, still skipped: its index is kept in [`Recorded::quiet_settled`].
    Quiet,
}

/// The documents and skipped files a store recorded, by resolved path.
#[derive(Debug, Default)]
pub struct Recorded {
    documents: HashMap<OsString, Record>,
    skipped: HashMap<OsString, Record>,
    /// Files settled unchanged so far, and their bytes.
    pub unchanged: u64,
    /// The bytes of the files settled unchanged.
    pub unchanged_bytes: u64,
    /// The indices of the quiet skips settled so far, in the walk's order: counted by the
    /// caller at the end, where one call each had been a tenth of a re-run over a tree
    /// whose binaries are a third of its files.
    pub quiet_settled: Vec<usize>,
}

impl Recorded {
    /// Records a document of the store (`state` None: its file is read whatever its state).
    pub fn add_document(&mut self, id: OsString, state: Option<State>) {
        self.documents.insert(id, record(state, None));
    }

    /// Records a skipped file; `index` is what [`Settled::Skipped`] gives back for it, or
    /// [`Recorded::quiet_settled`] keeps for a `quiet` one.
    pub fn add_skipped(&mut self, path: OsString, index: usize, state: State, quiet: bool) {
        let mut skip = record(Some(state), Some(index));
        skip.quiet = quiet;
        self.skipped.insert(path, skip);
    }

    /// Whether nothing is recorded (a walk need not ask).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty() && self.skipped.is_empty()
    }

    /// What becomes of a listed file: settled when its state is the one recorded (a
    /// document's first, then a skip's); every recorded path it matches is marked found.
    pub fn settle(&mut self, file: &Listed) -> Settled {
        let state = state_of(file);
        let mut settled = Settled::No;
        if let Some(record) = self.documents.get_mut(&file.resolved) {
            record.seen = true;
            if state.is_some() && record.state == state {
                record.settled = true;
                self.unchanged += 1;
                self.unchanged_bytes += file.size;
                settled = Settled::Unchanged;
            }
        }
        if let Some(record) = self.skipped.get_mut(&file.resolved) {
            record.seen = true;
            if settled == Settled::No && state.is_some() && record.state == state {
                record.settled = true;
                let index = record.skip.unwrap_or_default();
                settled = if record.quiet {
                    self.quiet_settled.push(index);
                    Settled::Quiet
                } else {
                    Settled::Skipped(index)
                };
            }
        }
        settled
    }

    /// Whether the walk found this recorded path (a document's or a skip's).
    #[must_use]
    pub fn seen(&self, path: &OsStr) -> bool {
        self.documents.get(path).is_some_and(|record| record.seen)
            || self.skipped.get(path).is_some_and(|record| record.seen)
    }

    /// The recorded documents the walk did not find.
    #[must_use]
    pub fn unseen_documents(&self) -> Vec<&OsStr> {
        let mut unseen: Vec<&OsStr> = self
            .documents
            .iter()
            .filter(|(_, record)| !record.seen)
            .map(|(path, _)| path.as_os_str())
            .collect();
        unseen.sort_unstable();
        unseen
    }

    /// The indices of the recorded skips not settled (found changed, or not found), in order.
    #[must_use]
    pub fn unsettled_skips(&self) -> Vec<usize> {
        let mut indices: Vec<usize> = self
            .skipped
            .values()
            .filter(|record| !record.settled)
            .filter_map(|record| record.skip)
            .collect();
        indices.sort_unstable();
        indices
    }
}

fn record(state: Option<State>, skip: Option<usize>) -> Record {
    Record {
        state,
        skip,
        quiet: false,
        seen: false,
        settled: false,
    }
}

/// A listed file's state as the store records it (None: beyond what the store's integers hold).
fn state_of(file: &Listed) -> Option<State> {
    Some((
        i64::try_from(file.size).ok()?,
        file.mtime_ns,
        file.ctime_ns,
        i64::try_from(file.inode).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(path: &str, size: u64, inode: u64) -> Listed {
        Listed {
            path: path.into(),
            size,
            mtime_ns: 10,
            ctime_ns: 20,
            inode,
            device: 1,
            resolved: path.into(),
        }
    }

    #[test]
    fn files_settle_by_their_recorded_state() {
        let mut recorded = Recorded::default();
        recorded.add_document("/a".into(), Some((5, 10, 20, 7)));
        recorded.add_document("/b".into(), Some((5, 10, 20, 8)));
        recorded.add_document("/gone".into(), Some((1, 1, 1, 1)));
        recorded.add_document("/untrusted".into(), None);
        recorded.add_skipped("/bin".into(), 0, (9, 10, 20, 9), false);
        recorded.add_skipped("/bin2".into(), 1, (9, 10, 20, 10), false);
        recorded.add_skipped("/quiet".into(), 2, (9, 10, 20, 12), true);
        recorded.add_skipped("/quiet2".into(), 3, (9, 10, 20, 13), true);
        assert_eq!(recorded.settle(&listed("/a", 5, 7)), Settled::Unchanged);
        assert_eq!(recorded.settle(&listed("/b", 6, 8)), Settled::No); // grew
        assert_eq!(recorded.settle(&listed("/untrusted", 1, 1)), Settled::No);
        assert_eq!(recorded.settle(&listed("/bin", 9, 9)), Settled::Skipped(0));
        assert_eq!(recorded.settle(&listed("/bin2", 9, 11)), Settled::No); // a new inode
        assert_eq!(recorded.settle(&listed("/new", 1, 1)), Settled::No);
        assert_eq!(recorded.settle(&listed("/quiet", 9, 12)), Settled::Quiet);
        assert_eq!(recorded.settle(&listed("/quiet2", 8, 13)), Settled::No); // shrank
        assert_eq!(recorded.quiet_settled, [2]);
        assert_eq!((recorded.unchanged, recorded.unchanged_bytes), (1, 5));
        assert_eq!(recorded.unseen_documents(), [OsStr::new("/gone")]);
        assert_eq!(recorded.unsettled_skips(), [1, 3]);
        assert!(recorded.seen(OsStr::new("/b")) && recorded.seen(OsStr::new("/bin2")));
        assert!(!recorded.seen(OsStr::new("/gone")) && !recorded.seen(OsStr::new("/new")));
    }
}
