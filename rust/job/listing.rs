//! One folder's listing, as the walk (`walk.rs`) and its helpers listing ahead of it
//! (`prefetch.rs`) both take it: the entries in the order of their names as Python decodes
//! them, each regular file with what the walk keeps of its `stat`.

use std::ffi::{OsStr, OsString};
use std::fs::{self, FileType};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;

/// A folder's entry: its name, its type, and, for a regular file that is not hidden, its
/// state.
pub(crate) type Entry = (OsString, Option<FileType>, Option<FileStat>);

/// What the walk keeps of a file's `stat`: a fifth of `fs::Metadata`'s size, which a tree's
/// listings held ahead of the walk by the tens of thousands (their pages' first touch was a
/// tenth of a re-run, `benches/NOTES.md`).
#[derive(Debug, Clone, Copy)]
pub struct FileStat {
    pub(crate) is_file: bool,
    pub(crate) is_dir: bool,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
    pub(crate) inode: u64,
    pub(crate) device: u64,
}

impl FileStat {
    pub(crate) fn of(metadata: &fs::Metadata) -> Self {
        Self {
            is_file: metadata.is_file(),
            is_dir: metadata.is_dir(),
            size: metadata.size(),
            mtime_ns: metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
            ctime_ns: metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
            inode: metadata.ino(),
            device: metadata.dev(),
        }
    }
}

/// The entries of a folder in the order of their names as Python decodes them. A regular
/// file's state is looked up here, relative to the open folder (`DirEntry::metadata`, an
/// `fstatat` on the folder's descriptor): looking it up by its whole path later walked every
/// folder of the path again in the kernel, a third of the listing of a deep tree.
pub(crate) fn list(folder: &OsStr) -> io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(folder)? {
        let entry = entry?;
        let name = entry.file_name();
        let kind = entry.file_type().ok();
        let state =
            if kind.is_some_and(|kind| kind.is_file()) && name.as_bytes().first() != Some(&b'.') {
                entry
                    .metadata()
                    .ok()
                    .map(|metadata| FileStat::of(&metadata))
            } else {
                None
            };
        entries.push((name, kind, state));
    }
    if entries
        .iter()
        .all(|(name, _, _)| std::str::from_utf8(name.as_bytes()).is_ok())
    {
        // UTF-8 orders as its code points.
        entries.sort_unstable_by(|(a, _, _), (b, _, _)| a.as_bytes().cmp(b.as_bytes()));
    } else {
        entries.sort_by_cached_key(|(name, _, _)| python_name(name.as_bytes()));
    }
    Ok(entries)
}

/// The code points Python decodes a file name into (UTF-8 with `surrogateescape`: each byte
/// of an invalid sequence becomes U+DC80..U+DCFF), which its sort compares.
fn python_name(name: &[u8]) -> Vec<u32> {
    let mut points = Vec::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        points.extend(chunk.valid().chars().map(u32::from));
        points.extend(chunk.invalid().iter().map(|&byte| 0xDC00 + u32::from(byte)));
    }
    points
}

/// `folder` and `name` joined as `os.scandir` joins them (no second `/` after one).
pub(crate) fn join(folder: &OsStr, name: &OsStr) -> OsString {
    let mut path = Vec::with_capacity(folder.len() + 1 + name.len());
    path.extend_from_slice(folder.as_bytes());
    if !path.is_empty() && path.last() != Some(&b'/') {
        path.push(b'/');
    }
    path.extend_from_slice(name.as_bytes());
    OsString::from_vec(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    fn python_order(a: &OsStr, b: &OsStr) -> Ordering {
        python_name(a.as_bytes()).cmp(&python_name(b.as_bytes()))
    }

    #[test]
    fn names_sort_as_python_decodes_them() {
        // b"\xff" decodes to U+DCFF, which sorts below U+E000 and above U+D7FF.
        let invalid = OsStr::from_bytes(b"\xff");
        assert_eq!(
            python_order(invalid, OsStr::new("\u{e000}")),
            Ordering::Less
        );
        assert_eq!(
            python_order(invalid, OsStr::new("\u{d7ff}")),
            Ordering::Greater
        );
        assert_eq!(
            python_order(OsStr::new("a"), OsStr::new("b")),
            Ordering::Less
        );
        assert_eq!(python_name(b"a\xe2\x82"), vec![0x61, 0xDCE2, 0xDC82]);
        assert_eq!(join(OsStr::new("a/"), OsStr::new("b")), "a/b");
        assert_eq!(join(OsStr::new("."), OsStr::new("b")), "./b");
    }
}
