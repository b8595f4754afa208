//! The text of a file's bytes: whether they are binary (git's rule), and their text as UTF-8
//! (SIMD-checked) or, behind a byte order mark, UTF-16 or UTF-32 decoded, with the message
//! the job reports for bytes that are neither.

use std::borrow::Cow;

/// A file is binary, as git decides, when its first 8 KB hold a NUL byte.
pub const BINARY_PROBE: usize = 8192;

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
}
