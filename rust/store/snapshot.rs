//! The store's snapshot of its file states (the `file_states` table): what the `documents`
//! and `skipped_files` tables record of each file's state, as one value each, which a
//! re-run reads in one fetch instead of a row at a time.
//!
//! Why: on a tree of tens of thousands of files, reading the two tables' rows through
//! Python's `sqlite3` (a tuple and five objects a row) was the larger half of a re-run into
//! an unchanged store (`benches/NOTES.md`). `SQLite` makes the snapshot itself
//! (`group_concat` in the statement `stores/schema.py` gives), so no row becomes an object
//! on either side, and triggers delete it on any change to either table, so a stale
//! snapshot is never read: a run that finds none reads the rows and writes it again.
//!
//! The format, made by that statement and read here alone: each row is its fields in the
//! table's order, a text as `LENGTH:BYTES` (its length in bytes, in decimal) and an
//! integer as its decimal digits (empty for NULL) followed by `,`, with `;` after the last
//! field. A document's row: id, whether a content hash is recorded (`0` or `1`), size,
//! `mtime_ns`, `ctime_ns`, inode. A skipped file's: path, kind, message, size, `mtime_ns`,
//! `ctime_ns`, inode.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use thiserror::Error;

/// A file's state as the store records it: size, `mtime_ns`, `ctime_ns`, inode.
pub type RecordedState = (i64, i64, i64, i64);

/// A snapshot that is not in the format above (written by something else): the caller reads
/// the tables' rows instead.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("the store's file-state snapshot is malformed at byte {0}")]
pub struct SnapshotError(pub usize);

/// A document's row: its id, whether a content hash is recorded, and its file's state
/// (None where any of the four is NULL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentState {
    /// The document id (the file's resolved path).
    pub id: OsString,
    /// Whether the store holds the document's content hash.
    pub hashed: bool,
    /// The file's state when it was read.
    pub state: Option<RecordedState>,
}

/// A skipped file's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    /// Its resolved path.
    pub path: OsString,
    /// Why it was skipped (the summary's kind: `binary`, `not UTF-8`).
    pub kind: String,
    /// The message said of it.
    pub message: String,
    /// Its state when it was looked at.
    pub state: RecordedState,
}

/// The documents' rows of a snapshot.
///
/// # Errors
/// The snapshot is malformed.
pub fn documents(snapshot: &[u8]) -> Result<Vec<DocumentState>, SnapshotError> {
    let mut reader = Reader {
        bytes: snapshot,
        at: 0,
    };
    let mut rows = Vec::new();
    while !reader.done() {
        let id = OsString::from_vec(reader.text()?.to_vec());
        let hashed = reader.integer()? == Some(1);
        let state = reader.state()?;
        reader.end_row()?;
        rows.push(DocumentState { id, hashed, state });
    }
    Ok(rows)
}

/// The skipped files' rows of a snapshot.
///
/// # Errors
/// The snapshot is malformed (or a state holds a NULL, which the table refuses).
pub fn skipped(snapshot: &[u8]) -> Result<Vec<SkippedFile>, SnapshotError> {
    let mut reader = Reader {
        bytes: snapshot,
        at: 0,
    };
    let mut rows = Vec::new();
    while !reader.done() {
        let path = OsString::from_vec(reader.text()?.to_vec());
        let kind = reader.utf8()?;
        let message = reader.utf8()?;
        let at = reader.at;
        let state = reader.state()?.ok_or(SnapshotError(at))?;
        reader.end_row()?;
        rows.push(SkippedFile {
            path,
            kind,
            message,
            state,
        });
    }
    Ok(rows)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// `LENGTH:BYTES`.
    fn text(&mut self) -> Result<&'a [u8], SnapshotError> {
        let start = self.at;
        let colon = memchr::memchr(b':', &self.bytes[start..]).ok_or(SnapshotError(start))?;
        let digits = &self.bytes[start..start + colon];
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(SnapshotError(start));
        }
        let length: usize = std::str::from_utf8(digits)
            .ok()
            .and_then(|digits| digits.parse().ok())
            .ok_or(SnapshotError(start))?;
        let text_start = start + colon + 1;
        let text_end = text_start
            .checked_add(length)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(SnapshotError(start))?;
        self.at = text_end;
        Ok(&self.bytes[text_start..text_end])
    }

    fn utf8(&mut self) -> Result<String, SnapshotError> {
        let at = self.at;
        let text = self.text()?;
        String::from_utf8(text.to_vec()).map_err(|_| SnapshotError(at))
    }

    /// Decimal digits (with a sign) up to `,` or `;` (not taken); None when there are none.
    /// Read here digit by digit (`str::parse` after finding the end was a tenth of reading
    /// a tree's snapshot).
    fn integer(&mut self) -> Result<Option<i64>, SnapshotError> {
        let start = self.at;
        let negative = self.bytes.get(start) == Some(&b'-');
        let mut at = start + usize::from(negative);
        // Accumulated negative, so that i64::MIN fits.
        let mut value: i64 = 0;
        while let Some(&byte) = self.bytes.get(at) {
            if !byte.is_ascii_digit() {
                break;
            }
            value = value
                .checked_mul(10)
                .and_then(|value| value.checked_sub(i64::from(byte - b'0')))
                .ok_or(SnapshotError(start))?;
            at += 1;
        }
        let digits = at - start - usize::from(negative);
        if !matches!(self.bytes.get(at), Some(b',' | b';')) || (negative && digits == 0) {
            return Err(SnapshotError(at));
        }
        self.at = at;
        if digits == 0 {
            return Ok(None);
        }
        if negative {
            Ok(Some(value))
        } else {
            value.checked_neg().map(Some).ok_or(SnapshotError(start))
        }
    }

    /// `,` then an integer, four times: a whole state, or None when any is NULL.
    fn state(&mut self) -> Result<Option<RecordedState>, SnapshotError> {
        let mut values = [None; 4];
        for value in &mut values {
            self.expect(b',')?;
            *value = self.integer()?;
        }
        Ok(match values {
            [Some(size), Some(mtime_ns), Some(ctime_ns), Some(inode)] => {
                Some((size, mtime_ns, ctime_ns, inode))
            }
            _ => None,
        })
    }

    fn end_row(&mut self) -> Result<(), SnapshotError> {
        self.expect(b';')
    }

    fn expect(&mut self, byte: u8) -> Result<(), SnapshotError> {
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(SnapshotError(self.at))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_read_back_with_any_bytes_in_their_ids() {
        let snapshot = b"6:/a/b.c1,5,10,-20,7;8:/x;:1,2,0,,,,;0:0,,,,;";
        let rows = documents(snapshot).unwrap();
        assert_eq!(
            rows,
            [
                DocumentState {
                    id: "/a/b.c".into(),
                    hashed: true,
                    state: Some((5, 10, -20, 7)),
                },
                DocumentState {
                    id: "/x;:1,2,".into(),
                    hashed: false,
                    state: None,
                },
                DocumentState {
                    id: "".into(),
                    hashed: false,
                    state: None,
                },
            ]
        );
        assert_eq!(documents(b"").unwrap(), []);
        let extremes = b"1:/0,-9223372036854775808,9223372036854775807,0,-1;";
        assert_eq!(
            documents(extremes).unwrap()[0].state,
            Some((i64::MIN, i64::MAX, 0, -1))
        );
        let non_utf8 = b"2:\xff\xfe1,1,1,1,1;";
        assert_eq!(
            documents(non_utf8).unwrap()[0].id,
            OsString::from_vec(vec![0xff, 0xfe])
        );
    }

    #[test]
    fn skipped_files_are_read_back() {
        let snapshot = "4:/bin6:binary8:NUL byte,9,1,2,3;2:/t9:not UTF-86:0xb1 ;,1,1,1,1;";
        let rows = skipped(snapshot.as_bytes()).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].path, "/bin");
        assert_eq!(
            (rows[0].kind.as_str(), rows[0].message.as_str()),
            ("binary", "NUL byte")
        );
        assert_eq!(rows[0].state, (9, 1, 2, 3));
        assert_eq!(rows[1].message, "0xb1 ;");
    }

    #[test]
    fn a_malformed_snapshot_is_an_error_never_a_guess() {
        for bad in [
            &b"6:/a/b.c1,5,10,20,7"[..],         // no end of row
            b"9:/a1,1,1,1,1;",                   // a length past the end
            b"x:/a1,1,1,1,1;",                   // no length
            b"2:/a1,1,1,1;",                     // a field short
            b"2:/a1,1,1,1,z;",                   // not a number
            b"2:/a1,1,1,1,1;;",                  // trailing bytes
            b"2:/a1,1,1,1,-;",                   // a sign alone
            b"2:/a1,1,1,1,9223372036854775808;", // past i64
            b"2:/a1,1,1,1,1x;",                  // not a number's end
        ] {
            assert!(documents(bad).is_err(), "{bad:?}");
        }
        // A skipped file's state has no NULL.
        assert!(skipped(b"2:/b1:b1:m,1,,1,1;").is_err());
    }
}
