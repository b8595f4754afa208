//! Reading the command line job's files: whole, checked for a change while they were read
//! and for binary content, with no Python in between (the per-file Python of `open`, two
//! `fstat`s and `read` was a fifth of a 100 MB run's CPU, and held the GIL that the other
//! workers wait for).

use std::borrow::Cow;
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

/// The text encodings told by a byte order mark, besides UTF-8 (whose mark is kept as it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wide {
    Utf16Le,
    Utf16Be,
    Utf32Le,
    Utf32Be,
}

/// The UTF-16 or UTF-32 encoding whose byte order mark `data` starts with (UTF-32's marks
/// first: UTF-32LE's starts with UTF-16LE's).
fn wide_encoding(data: &[u8]) -> Option<Wide> {
    if data.starts_with(&[0xFF, 0xFE, 0, 0]) {
        Some(Wide::Utf32Le)
    } else if data.starts_with(&[0, 0, 0xFE, 0xFF]) {
        Some(Wide::Utf32Be)
    } else if data.starts_with(&[0xFF, 0xFE]) {
        Some(Wide::Utf16Le)
    } else if data.starts_with(&[0xFE, 0xFF]) {
        Some(Wide::Utf16Be)
    } else {
        None
    }
}

/// Whether a file whose first bytes are `head` is binary: a NUL byte in its first
/// [`BINARY_PROBE`] bytes, as git decides, unless it starts with a UTF-16 or UTF-32 byte
/// order mark (such text is full of NUL bytes).
#[must_use]
pub fn is_binary(head: &[u8]) -> bool {
    wide_encoding(head).is_none()
        && memchr::memchr(0, &head[..head.len().min(BINARY_PROBE)]).is_some()
}

/// The text of a file's bytes: UTF-8 as it is (a byte order mark included, so offsets are
/// the file's), or UTF-16 or UTF-32 with a byte order mark decoded (the mark kept as U+FEFF;
/// offsets are then those of the decoded text, in its UTF-8 form). Written here rather than
/// with an encoding crate: the four decoders are a few lines of the standard library's.
///
/// # Errors
/// The message for bytes that are not text in their encoding (the byte and its offset).
pub fn decode_text(data: &[u8]) -> Result<Cow<'_, str>, String> {
    let Some(wide) = wide_encoding(data) else {
        return utf8_text(data).map(Cow::Borrowed);
    };
    let (name, width) = match wide {
        Wide::Utf16Le => ("UTF-16LE", 2),
        Wide::Utf16Be => ("UTF-16BE", 2),
        Wide::Utf32Le => ("UTF-32LE", 4),
        Wide::Utf32Be => ("UTF-32BE", 4),
    };
    if data.len() % width != 0 {
        return Err(format!(
            "not {name} (a byte order mark, then {} bytes: not a whole number of {width}-byte units)",
            data.len()
        ));
    }
    let mut text = String::with_capacity(data.len());
    match wide {
        Wide::Utf16Le | Wide::Utf16Be => {
            let units = data.chunks_exact(2).map(|pair| {
                let pair = [pair[0], pair[1]];
                if wide == Wide::Utf16Le {
                    u16::from_le_bytes(pair)
                } else {
                    u16::from_be_bytes(pair)
                }
            });
            let mut offset = 0;
            for decoded in char::decode_utf16(units) {
                match decoded {
                    Ok(character) => {
                        offset += 2 * character.len_utf16();
                        text.push(character);
                    }
                    Err(error) => {
                        return Err(format!(
                            "not {name} (an unpaired surrogate 0x{:04x} at offset {offset})",
                            error.unpaired_surrogate()
                        ))
                    }
                }
            }
        }
        Wide::Utf32Le | Wide::Utf32Be => {
            for (number, quad) in data.chunks_exact(4).enumerate() {
                let quad = [quad[0], quad[1], quad[2], quad[3]];
                let value = if wide == Wide::Utf32Le {
                    u32::from_le_bytes(quad)
                } else {
                    u32::from_be_bytes(quad)
                };
                let Some(character) = char::from_u32(value) else {
                    return Err(format!(
                        "not {name} (0x{value:08x} at offset {} is no character)",
                        number * 4
                    ));
                };
                text.push(character);
            }
        }
    }
    Ok(Cow::Owned(text))
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
    fn utf16_and_utf32_with_a_byte_order_mark_are_decoded() {
        let text = "\u{feff}héllo 🦀\n";
        let sixteen_little: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let sixteen_big: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let thirty_two_little: Vec<u8> = text
            .chars()
            .flat_map(|c| u32::from(c).to_le_bytes())
            .collect();
        let thirty_two_big: Vec<u8> = text
            .chars()
            .flat_map(|c| u32::from(c).to_be_bytes())
            .collect();
        for data in [
            &sixteen_little,
            &sixteen_big,
            &thirty_two_little,
            &thirty_two_big,
        ] {
            assert!(!is_binary(data));
            assert_eq!(decode_text(data).unwrap(), text);
        }
        assert!(decode_text(&sixteen_little[..sixteen_little.len() - 1])
            .unwrap_err()
            .starts_with("not UTF-16LE"));
        let lone: Vec<u8> = [0xFF, 0xFE, 0x00, 0xD8, 0x41, 0x00].to_vec();
        assert_eq!(
            decode_text(&lone).unwrap_err(),
            "not UTF-16LE (an unpaired surrogate 0xd800 at offset 2)"
        );
        // UTF-8, its mark included, is kept as it is.
        assert!(matches!(
            decode_text("\u{feff}a".as_bytes()),
            Ok(Cow::Borrowed(_))
        ));
        assert!(is_binary(b"a\0b"));
    }

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
