//! Reading the job's files: whole, checked for a change while they were read and for binary
//! content (`text::decode`), with no Python in between (the per-file Python of `open`, two
//! `fstat`s and `read` was a fifth of a 100 MB run's CPU, and held the GIL that the other
//! workers wait for).

use std::io::Read;
use std::path::Path;

use crate::text::decode::{is_binary, BINARY_PROBE};

/// Why a file is not chunked.
#[derive(Debug)]
pub enum Skip {
    /// It could not be opened or read.
    Unreadable(std::io::Error),
    /// Its size or modification time changed while it was read (or it was not read to the
    /// size it had).
    Changed,
    /// A NUL byte in its first [`BINARY_PROBE`] bytes.
    Binary,
}

/// The bytes of the file at `path`, or why it is skipped.
///
/// # Errors
/// The [`Skip`] that applies: unreadable, changed while read, or binary.
pub fn read_text_file(path: &Path) -> Result<Vec<u8>, Skip> {
    let mut data = Vec::new();
    read_text_file_into(path, &mut data)?;
    Ok(data)
}

/// [`read_text_file`] into `data` (emptied first): one buffer for a batch's files, whose
/// pages are mapped once, where a new buffer per file faulted in every page of every large
/// file again.
///
/// # Errors
/// The [`Skip`] that applies: unreadable, changed while read, or binary.
pub fn read_text_file_into(path: &Path, data: &mut Vec<u8>) -> Result<(), Skip> {
    data.clear();
    let mut file = std::fs::File::open(path).map_err(Skip::Unreadable)?;
    let before = file.metadata().map_err(Skip::Unreadable)?;
    let size = usize::try_from(before.len()).unwrap_or(usize::MAX - 1);
    // One more byte than the size is asked for, so that a file that grew is read past it
    // and caught. The first `BINARY_PROBE` bytes decide whether the file is binary: a binary
    // file is read no further.
    let wanted = size.saturating_add(1);
    data.reserve(wanted);
    read_up_to(&mut file, data, wanted.min(BINARY_PROBE), size)?;
    if is_binary(data) {
        return Err(Skip::Binary);
    }
    if data.len() == BINARY_PROBE && wanted > BINARY_PROBE {
        read_up_to(&mut file, data, wanted, size)?;
    }
    // A file whose size changed, or that was modified, while it was read (or that held more
    // or less than its size said: a /proc file) is not what was listed.
    let after = file.metadata().map_err(Skip::Unreadable)?;
    let same_time = match (before.modified(), after.modified()) {
        (Ok(first), Ok(second)) => first == second,
        _ => true, // a platform without modification times: the sizes decide
    };
    if before.len() != after.len() || !same_time || data.len() as u64 != after.len() {
        return Err(Skip::Changed);
    }
    Ok(())
}

/// Reads from `file` into `data` until it holds `limit` bytes, or the file ends. Written here
/// rather than with `read_to_end`, which asks the file for its size and position again: on
/// a tree of small files, two more system calls for each of the four a file needs. A read
/// that returns less than asked, once `data` holds the file's `size`, is its end (a regular
/// file reads short only there); the size check after the read catches a file that grew.
fn read_up_to(
    file: &mut std::fs::File,
    data: &mut Vec<u8>,
    limit: usize,
    size: usize,
) -> Result<(), Skip> {
    while data.len() < limit {
        let filled = data.len();
        data.resize(limit, 0);
        let read = loop {
            match file.read(&mut data[filled..]) {
                Ok(read) => break read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    data.truncate(filled);
                    return Err(Skip::Unreadable(error));
                }
            }
        };
        data.truncate(filled + read);
        if read == 0 || data.len() >= size {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_file_is_read_no_further_than_its_probe() {
        let folder = std::env::temp_dir().join(format!("spanchunk-probe-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let binary = folder.join("big.bin");
        let mut bytes = vec![0_u8; 4 * BINARY_PROBE];
        bytes[0] = b'x';
        std::fs::write(&binary, &bytes).unwrap();
        let mut data = Vec::new();
        assert!(matches!(
            read_text_file_into(&binary, &mut data),
            Err(Skip::Binary)
        ));
        assert_eq!(data.len(), BINARY_PROBE);
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn text_binary_and_missing_files() {
        let folder = std::env::temp_dir().join(format!("spanchunk-files-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let text = folder.join("a.txt");
        std::fs::write(&text, "héllo\n").unwrap();
        assert_eq!(read_text_file(&text).unwrap(), "héllo\n".as_bytes());
        let binary = folder.join("b.bin");
        let mut bytes = vec![b'x'; BINARY_PROBE - 1];
        bytes.push(0);
        std::fs::write(&binary, &bytes).unwrap();
        assert!(matches!(read_text_file(&binary), Err(Skip::Binary)));
        // A NUL past the first 8 KB: text, as git decides.
        bytes.insert(0, b'x');
        std::fs::write(&binary, &bytes).unwrap();
        assert_eq!(read_text_file(&binary).unwrap().len(), BINARY_PROBE + 1);
        let missing = folder.join("missing.txt");
        match read_text_file(&missing) {
            Err(Skip::Unreadable(error)) => {
                assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("expected unreadable, got {other:?}"),
        }
        assert!(matches!(read_text_file(&folder), Err(Skip::Unreadable(_))));
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
