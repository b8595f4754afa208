//! Reading the command line job's files: whole, checked for a change while they were read
//! and for binary content, with no Python in between (the per-file Python of `open`, two
//! `fstat`s and `read` was a fifth of a 100 MB run's CPU, and held the GIL that the other
//! workers wait for).

use std::io::Read;
use std::path::Path;

/// A file is binary, as git decides, when its first 8 KB hold a NUL byte.
pub const BINARY_PROBE: usize = 8192;

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
    // One more byte than the size, so that a file that grew is read past it and caught.
    let expected = usize::try_from(before.len()).unwrap_or(0);
    data.reserve(expected.saturating_add(1));
    file.read_to_end(data).map_err(Skip::Unreadable)?;
    let after = file.metadata().map_err(Skip::Unreadable)?;
    let same_time = match (before.modified(), after.modified()) {
        (Ok(first), Ok(second)) => first == second,
        _ => true, // a platform without modification times: the sizes decide
    };
    if before.len() != after.len() || !same_time || data.len() as u64 != after.len() {
        return Err(Skip::Changed);
    }
    if memchr::memchr(0, &data[..data.len().min(BINARY_PROBE)]).is_some() {
        return Err(Skip::Binary);
    }
    Ok(())
}

/// `data` as text, or why it is not UTF-8, worded as the command line reports it (the byte
/// and its offset). The check is `simdutf8`'s (SIMD, 4-10x the standard library's on the
/// corpus); the standard library's runs only to find where a file is not UTF-8.
///
/// # Errors
/// The message for a file that is not UTF-8.
pub fn utf8_text(data: &[u8]) -> Result<&str, String> {
    simdutf8::basic::from_utf8(data)
        .or_else(|_| std::str::from_utf8(data))
        .map_err(|error| {
            let at = error.valid_up_to();
            format!("not UTF-8 (byte 0x{:02x} at offset {at})", data[at])
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_utf8_names_the_byte_and_its_offset() {
        let data: Vec<u8> = [b"ab".as_slice(), &[0xff], b"c"].concat();
        assert_eq!(
            utf8_text(&data).unwrap_err(),
            "not UTF-8 (byte 0xff at offset 2)"
        );
        assert_eq!(utf8_text("é日".as_bytes()), Ok("é日"));
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
