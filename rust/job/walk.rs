//! Listing the command line job's files: each PATH as given, folders walked depth first in
//! the order of their sorted names (the order of sorting every relative path, name by name),
//! hidden entries (names starting with ".") left out, folder links not followed, each file
//! once (by device and inode), with its size, times and inode as the store's stat cache
//! compares them.
//!
//! Why here and not `os.scandir` (and not a walking crate): a re-run into an unchanged store
//! reads no file, so listing is most of its work, and in Python it cost 10 us a file (a
//! `stat_result` and a `DirEntry` per file, and the loop around them): 50-70 ms of 4,660
//! files, a third of the re-run. The order and the skips must stay those of the Python walk
//! this replaced (sorted by the names as Python decodes them, the same reasons), which
//! `walkdir` and `ignore` do not give; the globs stay the command line's own, asked through
//! [`Globs`].

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;

use rustc_hash::FxHashSet;

use super::listing::{join, list, Entry, FileStat};
use super::prefetch::Prefetch;

/// A PATH that does not exist, or a broken link.
pub const MISSING: &str = "missing";
/// A PATH given explicitly that is neither a file nor a folder.
pub const NOT_REGULAR: &str = "not a regular file";
/// A folder that cannot be listed, or a file that cannot be looked at.
pub const UNREADABLE: &str = "unreadable";
/// A link to a folder inside a folder: not followed (no folder is walked twice, and a link
/// to a folder above it would never end).
pub const FOLDER_LINK: &str = "folder link";

/// A file to chunk: its path (the PATH's, or its folder's joined with its name) and its
/// state when listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The path, as written in the output.
    pub path: OsString,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, in ns since the epoch.
    pub mtime_ns: i64,
    /// Its status change time, in ns since the epoch.
    pub ctime_ns: i64,
    /// Its inode.
    pub inode: u64,
    /// Its device.
    pub device: u64,
    /// Its resolved path: absolute, every symbolic link resolved (the PATH's folder
    /// canonicalised once, and the names under it joined: folder links are not followed).
    pub resolved: OsString,
}

/// What the walk finds, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A file to chunk.
    File(Listed),
    /// A path that is skipped: the path, the kind of reason, and the message.
    Skip(OsString, &'static str, String),
}

/// The `--include` / `--exclude` globs, matched on paths relative to the PATH, with `/`
/// between folders.
pub trait Globs {
    /// What asking fails with (a Python callback raising).
    type Error;
    /// Whether folders are ever excluded (when not, `excludes` is never asked).
    fn prunes(&self) -> bool;
    /// Whether files are ever left out (when not, `picks` is never asked).
    fn filters(&self) -> bool;
    /// Whether the folder at `relative` is excluded (not walked).
    ///
    /// # Errors
    /// The globs could not answer.
    fn excludes(&mut self, relative: &OsStr) -> Result<bool, Self::Error>;
    /// Whether the file at `relative` is chunked.
    ///
    /// # Errors
    /// The globs could not answer.
    fn picks(&mut self, relative: &OsStr) -> Result<bool, Self::Error>;
}

/// No globs: every file is picked.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGlobs;

impl Globs for NoGlobs {
    type Error = std::convert::Infallible;

    fn prunes(&self) -> bool {
        false
    }

    fn filters(&self) -> bool {
        false
    }

    fn excludes(&mut self, _relative: &OsStr) -> Result<bool, Self::Error> {
        Ok(false)
    }

    fn picks(&mut self, _relative: &OsStr) -> Result<bool, Self::Error> {
        Ok(true)
    }
}

/// A folder being walked: its path, its path relative to the PATH, its entries in order.
#[derive(Debug)]
struct FolderFrame {
    folder: OsString,
    /// The folder's resolved path (see [`Listed::resolved`]).
    resolved: OsString,
    relative: OsString,
    entries: Vec<Entry>,
    next: usize,
}

/// The walk over the PATHs, event by event.
#[derive(Debug)]
pub struct Walk {
    paths: std::vec::IntoIter<OsString>,
    stack: Vec<FolderFrame>,
    /// The files found so far, by device and inode.
    seen: FxHashSet<(u64, u64)>,
    /// Helpers listing folders ahead of the walk (none: each folder is listed when opened).
    prefetch: Option<Prefetch>,
}

impl Walk {
    /// A walk over `paths`, in their order.
    #[must_use]
    pub fn new(paths: Vec<OsString>) -> Self {
        Self {
            paths: paths.into_iter(),
            stack: Vec::new(),
            seen: FxHashSet::default(),
            prefetch: None,
        }
    }

    /// A walk over `paths` whose folders `threads` helpers list ahead of it, starting now
    /// (the same events; only for a walk that opens every folder it finds, without exclude globs:
    /// a helper does not ask them).
    #[must_use]
    pub fn with_prefetch(paths: Vec<OsString>, threads: usize) -> Self {
        let prefetch = Prefetch::new(threads);
        // The helpers start on the PATHs now (those that are files fail to list, and are
        // never asked for).
        prefetch.queue(&paths);
        Self {
            prefetch: Some(prefetch),
            ..Self::new(paths)
        }
    }

    /// Appends the next events to `out` until it holds at least `wanted` or the walk ends;
    /// false once there is nothing more.
    ///
    /// # Errors
    /// The globs failed; the walk stops where it was.
    pub fn next_events<G: Globs>(
        &mut self,
        globs: &mut G,
        out: &mut Vec<Event>,
        wanted: usize,
    ) -> Result<bool, G::Error> {
        while out.len() < wanted {
            let Some(frame) = self.stack.last_mut() else {
                let Some(path) = self.paths.next() else {
                    return Ok(false);
                };
                self.path(path, out);
                continue;
            };
            let Some((name, kind, listed)) = frame.entries.get_mut(frame.next) else {
                self.stack.pop();
                continue;
            };
            frame.next += 1;
            if name.as_bytes().first() == Some(&b'.') {
                continue;
            }
            let name = std::mem::take(name);
            let kind = *kind;
            let listed = listed.take();
            let relative = if frame.relative.is_empty() {
                name.clone()
            } else {
                join(&frame.relative, &name)
            };
            let path = join(&frame.folder, &name);
            let resolved = if kind.is_some_and(|kind| kind.is_symlink()) {
                None // a file link: resolved when it is found
            } else {
                Some(join(&frame.resolved, &name))
            };
            if kind.is_some_and(|kind| kind.is_dir()) {
                if !(globs.prunes() && globs.excludes(&relative)?) {
                    self.open(path, resolved.unwrap_or_default(), relative, out);
                }
                continue;
            }
            if globs.filters() && !globs.picks(&relative)? {
                continue;
            }
            match listed.map_or_else(|| fs::metadata(&path).map(|m| FileStat::of(&m)), Ok) {
                Ok(state) if state.is_dir && kind.is_some_and(|kind| kind.is_symlink()) => {
                    out.push(Event::Skip(
                        path,
                        FOLDER_LINK,
                        "a link to a folder, not followed (give it as a PATH to chunk it)".into(),
                    ));
                }
                Ok(state) => self.found(path, resolved, &state, out),
                // A dangling link, or a file removed since the folder was read.
                Err(error) => {
                    if kind.is_some_and(|kind| kind.is_symlink())
                        && error.kind() == io::ErrorKind::NotFound
                    {
                        out.push(broken_link(path));
                    } else {
                        out.push(Event::Skip(path, UNREADABLE, message(&error)));
                    }
                }
            }
        }
        Ok(true)
    }

    /// A PATH as given: a file, a folder to walk, or a skip.
    fn path(&mut self, path: OsString, out: &mut Vec<Event>) {
        match fs::metadata(&path) {
            Ok(metadata) if metadata.is_dir() => {
                let resolved = resolve(&path);
                self.open(path, resolved, OsString::new(), out);
            }
            Ok(metadata) if metadata.is_file() => {
                self.found(path, None, &FileStat::of(&metadata), out);
            }
            Ok(_) => out.push(Event::Skip(path, NOT_REGULAR, "not a regular file".into())),
            Err(error) => {
                let link = fs::symlink_metadata(&path).is_ok_and(|link| link.is_symlink());
                if link {
                    out.push(broken_link(path));
                } else {
                    let kind = if error.kind() == io::ErrorKind::NotFound {
                        MISSING
                    } else {
                        UNREADABLE
                    };
                    out.push(Event::Skip(path, kind, message(&error)));
                }
            }
        }
    }

    /// A regular file, the first time it is found (others are left out); `resolved` is its
    /// resolved path when the walk knows it (None: resolved here).
    fn found(
        &mut self,
        path: OsString,
        resolved: Option<OsString>,
        state: &FileStat,
        out: &mut Vec<Event>,
    ) {
        if state.is_file && self.seen.insert((state.device, state.inode)) {
            let resolved = resolved.unwrap_or_else(|| resolve(&path));
            out.push(Event::File(Listed {
                path,
                size: state.size,
                mtime_ns: state.mtime_ns,
                ctime_ns: state.ctime_ns,
                inode: state.inode,
                device: state.device,
                resolved,
            }));
        }
    }

    /// Lists a folder, to walk it next; a folder that cannot be read is skipped whole.
    fn open(
        &mut self,
        folder: OsString,
        resolved: OsString,
        relative: OsString,
        out: &mut Vec<Event>,
    ) {
        let listing = match &self.prefetch {
            Some(prefetch) => prefetch.take(&folder),
            None => list(&folder),
        };
        match listing {
            Ok(entries) => self.stack.push(FolderFrame {
                folder,
                resolved,
                relative,
                entries,
                next: 0,
            }),
            Err(error) => {
                let text = message(&error);
                out.push(Event::Skip(folder, UNREADABLE, text));
            }
        }
    }
}

/// The resolved path of `path` (`os.path.realpath`): absolute, links resolved; the
/// absolute path as given when it cannot be resolved (it vanished since it was listed).
#[must_use]
pub fn resolve(path: &OsStr) -> OsString {
    fs::canonicalize(path).map_or_else(
        |_| {
            std::path::absolute(path)
                .map_or_else(|_| path.to_owned(), std::path::PathBuf::into_os_string)
        },
        std::path::PathBuf::into_os_string,
    )
}

fn broken_link(path: OsString) -> Event {
    Event::Skip(path, MISSING, "broken symbolic link".into())
}

/// The system's words for an error, as Python's `strerror` gives them (without the
/// "(os error N)" that Rust adds).
fn message(error: &io::Error) -> String {
    let text = error.to_string();
    match error.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map_or_else(|| text.clone(), str::to_owned),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, MetadataExt};
    use std::path::PathBuf;

    /// An empty folder of this test's own.
    fn scratch(name: &str) -> PathBuf {
        let folder =
            std::env::temp_dir().join(format!("spanchunk-walk-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&folder);
        fs::create_dir_all(&folder).unwrap();
        folder
    }

    fn walk(paths: &[&OsStr]) -> Vec<Event> {
        let mut walk = Walk::new(paths.iter().map(|path| path.to_os_string()).collect());
        let mut out = Vec::new();
        // Three events a step, as the binding asks for a few hundred.
        loop {
            let wanted = out.len() + 3;
            if !walk.next_events(&mut NoGlobs, &mut out, wanted).unwrap() {
                break;
            }
        }
        out
    }

    fn names(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|event| match event {
                Event::File(file) => file.path.to_string_lossy().into_owned(),
                Event::Skip(path, kind, message) => {
                    format!("skip {} {kind}: {message}", path.to_string_lossy())
                }
            })
            .collect()
    }

    #[test]
    fn folders_are_walked_in_the_order_of_sorted_relative_paths() {
        let base = &scratch("order");
        for name in [
            "b.txt",
            "a-b",
            "a.txt",
            "B",
            ".hidden",
            "a/z.txt",
            "a/.x/y.txt",
        ] {
            let path = base.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "x").unwrap();
        }
        symlink(base.join("a"), base.join("c")).unwrap(); // a folder link: said, not followed
        symlink(base.join("gone"), base.join("d")).unwrap(); // dangling
        symlink(base.join("b.txt"), base.join("e")).unwrap(); // the same file again
        let folder = base.as_os_str().to_owned();
        let shown: Vec<String> = names(&walk(&[&folder]))
            .into_iter()
            .map(|name| name.replace(&*folder.to_string_lossy(), "R"))
            .collect();
        assert_eq!(
            shown,
            [
                "R/B",
                "R/a/z.txt",
                "R/a-b",
                "R/a.txt",
                "R/b.txt",
                "skip R/c folder link: a link to a folder, not followed (give it as a PATH to \
                 chunk it)",
                "skip R/d missing: broken symbolic link",
            ]
        );
    }

    #[test]
    fn paths_given_are_files_folders_or_skips() {
        let root = scratch("paths");
        let file = root.join("f.txt");
        fs::write(&file, "hello").unwrap();
        let missing = root.join("nope");
        let events = walk(&[
            file.as_os_str(),
            missing.as_os_str(),
            OsStr::new("/dev/null"),
        ]);
        let Event::File(listed) = &events[0] else {
            panic!("{events:?}")
        };
        let metadata = fs::metadata(&file).unwrap();
        assert_eq!(listed.size, 5);
        assert_eq!(listed.inode, metadata.ino());
        assert_eq!(
            listed.mtime_ns,
            metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec()
        );
        assert_eq!(
            events[1],
            Event::Skip(
                missing.into_os_string(),
                MISSING,
                "No such file or directory".into()
            )
        );
        assert_eq!(
            events[2],
            Event::Skip("/dev/null".into(), NOT_REGULAR, "not a regular file".into())
        );
    }
}
