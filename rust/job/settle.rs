//! Settling a store re-run's files by their state alone, as the walk lists them: a file
//! whose size, times and inode are those the store recorded when it read the file (a stat
//! cache, as git's index keeps) is unchanged and not read; one the store recorded as
//! skipped (binary, not text) with that state is skipped again unread. Which recorded
//! documents the walk never found (gone, for `--prune`) is known at the end.
//!
//! Why in the core: on a tree of tens of thousands of files, a Python object per listed
//! file and a set lookup for it would be a third of an unchanged re-run (`benches/NOTES.md`);
//! here the listed files never become Python objects.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use rustc_hash::FxHashMap;

use super::walk::Listed;
pub use crate::store::snapshot::{RecordedState, SkippedFile};

#[derive(Debug)]
struct Record {
    /// The recorded state (None: none trusted, the file is read).
    state: Option<RecordedState>,
    /// Whether it was settled by its state.
    settled: bool,
}

/// What the store recorded at one path: a document, a skip, or both (a document whose file
/// later became binary keeps its record until it is pruned).
#[derive(Debug, Default)]
struct Path {
    document: Option<Record>,
    /// The skip's record and its index.
    skip: Option<(Record, usize)>,
    /// A skip that is only counted when settled, never said (a binary, unless verbose).
    quiet: bool,
    /// Whether the walk found this path.
    seen: bool,
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
///
/// One map for both, hashed with `FxHash`: each listed file is one lookup (`SipHash` and two
/// maps would be a third of reading a tree's 80,000 records, `benches/NOTES.md`).
#[derive(Debug, Default)]
pub struct Recorded {
    paths: FxHashMap<OsString, Path>,
    /// Files settled unchanged so far, and their bytes.
    pub unchanged: u64,
    /// The bytes of the files settled unchanged.
    pub unchanged_bytes: u64,
    /// The indices of the quiet skips settled so far, in the walk's order: counted by the
    /// caller at the end, where one call each would be a tenth of a re-run over a tree
    /// whose binaries are a third of its files.
    pub quiet_settled: Vec<usize>,
    /// The skipped files recorded, by index.
    skips: Vec<SkippedFile>,
}

impl Recorded {
    /// Room for `paths` records.
    #[must_use]
    pub fn with_capacity(paths: usize) -> Self {
        Self {
            paths: FxHashMap::with_capacity_and_hasher(paths, rustc_hash::FxBuildHasher),
            ..Self::default()
        }
    }

    /// Records a document of the store (`state` None: its file is read whatever its state).
    pub fn add_document(&mut self, id: OsString, state: Option<RecordedState>) {
        self.paths.entry(id).or_default().document = Some(Record {
            state,
            settled: false,
        });
    }

    /// Records a skipped file; its index (the number recorded before it) is what
    /// [`Settled::Skipped`] gives back for it, or [`Recorded::quiet_settled`] keeps for a
    /// `quiet` one.
    pub fn add_skipped(&mut self, file: SkippedFile, quiet: bool) {
        let path = self.paths.entry(file.path.clone()).or_default();
        let record = Record {
            state: Some(file.state),
            settled: false,
        };
        path.skip = Some((record, self.skips.len()));
        path.quiet = quiet;
        self.skips.push(file);
    }

    /// The skipped files recorded, in the order added (their indices).
    #[must_use]
    pub fn skips(&self) -> &[SkippedFile] {
        &self.skips
    }

    /// How many quiet skips were settled so far, by kind.
    #[must_use]
    pub fn quiet_settled_kinds(&self) -> BTreeMap<&str, usize> {
        let mut counts = BTreeMap::new();
        for &index in &self.quiet_settled {
            *counts.entry(self.skips[index].kind.as_str()).or_default() += 1;
        }
        counts
    }

    /// Whether nothing is recorded (a walk need not ask).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// What becomes of a listed file: settled when its state is the one recorded (a
    /// document's first, then a skip's); a recorded path it matches is marked found.
    pub fn settle(&mut self, file: &Listed) -> Settled {
        let Some(path) = self.paths.get_mut(&file.resolved) else {
            return Settled::No;
        };
        path.seen = true;
        let state = state_of(file);
        if state.is_none() {
            return Settled::No;
        }
        if let Some(document) = &mut path.document {
            if document.state == state {
                document.settled = true;
                self.unchanged += 1;
                self.unchanged_bytes += file.size;
                return Settled::Unchanged;
            }
        }
        if let Some((skip, index)) = &mut path.skip {
            if skip.state == state {
                skip.settled = true;
                if path.quiet {
                    self.quiet_settled.push(*index);
                    return Settled::Quiet;
                }
                return Settled::Skipped(*index);
            }
        }
        Settled::No
    }

    /// Whether the walk found this recorded path (a document's or a skip's).
    #[must_use]
    pub fn seen(&self, path: &OsStr) -> bool {
        self.paths.get(path).is_some_and(|path| path.seen)
    }

    /// The recorded documents the walk did not find.
    #[must_use]
    pub fn unseen_documents(&self) -> Vec<&OsStr> {
        let mut unseen: Vec<&OsStr> = self
            .paths
            .iter()
            .filter(|(_, path)| path.document.is_some() && !path.seen)
            .map(|(id, _)| id.as_os_str())
            .collect();
        unseen.sort_unstable();
        unseen
    }

    /// The indices of the recorded skips not settled (found changed, or not found), in order.
    #[must_use]
    pub fn unsettled_skips(&self) -> Vec<usize> {
        let mut indices: Vec<usize> = self
            .paths
            .values()
            .filter_map(|path| path.skip.as_ref())
            .filter(|(skip, _)| !skip.settled)
            .map(|&(_, index)| index)
            .collect();
        indices.sort_unstable();
        indices
    }
}

/// A listed file's state as the store records it (None: beyond what the store's integers hold).
fn state_of(file: &Listed) -> Option<RecordedState> {
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

    fn skip(path: &str, state: RecordedState) -> SkippedFile {
        SkippedFile {
            path: path.into(),
            kind: "binary".into(),
            message: "a NUL byte".into(),
            state,
        }
    }

    #[test]
    fn files_settle_by_their_recorded_state() {
        let mut recorded = Recorded::default();
        recorded.add_document("/a".into(), Some((5, 10, 20, 7)));
        recorded.add_document("/b".into(), Some((5, 10, 20, 8)));
        recorded.add_document("/gone".into(), Some((1, 1, 1, 1)));
        recorded.add_document("/untrusted".into(), None);
        recorded.add_skipped(skip("/bin", (9, 10, 20, 9)), false);
        recorded.add_skipped(skip("/bin2", (9, 10, 20, 10)), false);
        recorded.add_skipped(skip("/quiet", (9, 10, 20, 12)), true);
        recorded.add_skipped(skip("/quiet2", (9, 10, 20, 13)), true);
        assert_eq!(recorded.settle(&listed("/a", 5, 7)), Settled::Unchanged);
        assert_eq!(recorded.settle(&listed("/b", 6, 8)), Settled::No); // grew
        assert_eq!(recorded.settle(&listed("/untrusted", 1, 1)), Settled::No);
        assert_eq!(recorded.settle(&listed("/bin", 9, 9)), Settled::Skipped(0));
        assert_eq!(recorded.settle(&listed("/bin2", 9, 11)), Settled::No); // a new inode
        assert_eq!(recorded.settle(&listed("/new", 1, 1)), Settled::No);
        assert_eq!(recorded.settle(&listed("/quiet", 9, 12)), Settled::Quiet);
        assert_eq!(recorded.settle(&listed("/quiet2", 8, 13)), Settled::No); // shrank
        assert_eq!(recorded.quiet_settled, [2]);
        assert_eq!(
            recorded
                .quiet_settled_kinds()
                .into_iter()
                .collect::<Vec<_>>(),
            [("binary", 1)]
        );
        assert_eq!(recorded.skips()[1].path, "/bin2");
        assert_eq!((recorded.unchanged, recorded.unchanged_bytes), (1, 5));
        assert_eq!(recorded.unseen_documents(), [OsStr::new("/gone")]);
        assert_eq!(recorded.unsettled_skips(), [1, 3]);
        assert!(recorded.seen(OsStr::new("/b")) && recorded.seen(OsStr::new("/bin2")));
        assert!(!recorded.seen(OsStr::new("/gone")) && !recorded.seen(OsStr::new("/new")));
    }
}
