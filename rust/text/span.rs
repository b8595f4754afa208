//! Byte offsets to char offsets, counted incrementally.
//!
//! Spans come out of the engine in byte offsets, in (nearly) document order. A cursor that
//! remembers where it last stopped converts each offset by counting only the bytes between
//! the previous offset and this one, so a whole level costs one pass over the text, not one
//! scan from the start per chunk. It also walks backwards (overlapping chunks and the first
//! child of a parent start before the previous chunk ends) at the cost of the distance.

use crate::error::ChunkError;
use crate::text::chars::count_chars;

/// One chunk's place in the document, in bytes and in chars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// Byte offset of the first byte.
    pub start_byte: usize,
    /// Byte offset past the last byte.
    pub end_byte: usize,
    /// Char offset of the first char.
    pub start_char: usize,
    /// Char offset past the last char.
    pub end_char: usize,
}

/// Converts byte offsets of one text to char (code point) offsets.
#[derive(Debug, Clone)]
pub struct CharCursor<'t> {
    bytes: &'t [u8],
    byte: usize,
    char: usize,
}

impl<'t> CharCursor<'t> {
    /// A cursor at the start of `text`.
    #[must_use]
    pub fn new(text: &'t str) -> Self {
        Self {
            bytes: text.as_bytes(),
            byte: 0,
            char: 0,
        }
    }

    /// A cursor at byte offset `byte`, known to be char offset `char`.
    #[must_use]
    pub fn at(text: &'t str, byte: usize, char: usize) -> Self {
        Self {
            bytes: text.as_bytes(),
            byte,
            char,
        }
    }

    /// The char offset of byte offset `byte`, which must lie on a char boundary.
    pub fn char_at(&mut self, byte: usize) -> usize {
        if byte >= self.byte {
            self.char += count_chars(&self.bytes[self.byte..byte]);
        } else {
            self.char -= count_chars(&self.bytes[byte..self.byte]);
        }
        self.byte = byte;
        self.char
    }
}

/// Byte offset of every char offset in `char_offsets` (any order), one incremental pass
/// when they are sorted. Returns `None` for an offset past the end of the text.
#[must_use]
pub fn char_to_byte(text: &str, char_offsets: &[usize]) -> Vec<Option<usize>> {
    let bytes = text.as_bytes();
    let mut byte = 0usize;
    let mut char = 0usize;
    char_offsets
        .iter()
        .map(|&target| {
            if target < char {
                byte = 0;
                char = 0;
            }
            while char < target {
                if byte >= bytes.len() {
                    return None;
                }
                byte += utf8_width(bytes[byte]);
                char += 1;
            }
            Some(byte)
        })
        .collect()
}

/// Converts the byte spans of one level to char spans with one cursor that visits start,
/// end, start, end...: one pass over the text when chunks do not overlap, plus the length of
/// each overlap when they do (one cursor beats a start and an end cursor by a whole pass).
#[must_use]
pub fn char_spans(text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut cursor = CharCursor::new(text);
    spans
        .iter()
        .map(|&(start, end)| {
            let start_char = cursor.char_at(start);
            (start_char, cursor.char_at(end))
        })
        .collect()
}

/// Byte spans given from outside (parents to cut inside), checked against `text`.
///
/// # Errors
/// [`ChunkError::InvalidSpan`] for the first span that is out of range, reversed or not on a
/// char boundary.
pub fn checked_byte_spans(
    text: &str,
    spans: impl IntoIterator<Item = (i64, i64)>,
) -> Result<Vec<(usize, usize)>, ChunkError> {
    let valid = |offset: i64| {
        usize::try_from(offset)
            .ok()
            .filter(|&offset| offset <= text.len() && text.is_char_boundary(offset))
    };
    spans
        .into_iter()
        .map(|(start, end)| match (valid(start), valid(end)) {
            (Some(start_byte), Some(end_byte)) if start_byte <= end_byte => {
                Ok((start_byte, end_byte))
            }
            _ => Err(ChunkError::InvalidSpan {
                start,
                end,
                len: text.len(),
                unit: "bytes",
                reason: "out of range, reversed or not on a character boundary",
            }),
        })
        .collect()
}

/// The byte spans of char spans given from outside, checked against `text`: every span is
/// checked for sign and order first, then converted in one pass.
///
/// # Errors
/// [`ChunkError::InvalidSpan`] for the first span that is negative or reversed, else for the
/// first that runs past the end of the text.
pub fn char_spans_to_bytes(
    text: &str,
    spans: &[(i64, i64)],
) -> Result<Vec<(usize, usize)>, ChunkError> {
    let text_chars = || CharCursor::new(text).char_at(text.len());
    let mut offsets = Vec::with_capacity(spans.len() * 2);
    for &(start, end) in spans {
        match (usize::try_from(start), usize::try_from(end)) {
            (Ok(start_char), Ok(end_char)) if start_char <= end_char => {
                offsets.extend([start_char, end_char]);
            }
            _ => {
                return Err(ChunkError::InvalidSpan {
                    start,
                    end,
                    len: text_chars(),
                    unit: "chars",
                    reason: "negative or reversed",
                })
            }
        }
    }
    let bytes = char_to_byte(text, &offsets);
    bytes
        .chunks(2)
        .zip(spans)
        .map(|(pair, &(start, end))| match (pair[0], pair[1]) {
            (Some(start_byte), Some(end_byte)) => Ok((start_byte, end_byte)),
            _ => Err(ChunkError::InvalidSpan {
                start,
                end,
                len: text_chars(),
                unit: "chars",
                reason: "past the end of the text",
            }),
        })
        .collect()
}

/// Length of the UTF-8 sequence that starts with `lead`.
#[inline]
fn utf8_width(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_moves_both_ways() {
        let text = "aé😀中b";
        let mut cursor = CharCursor::new(text);
        assert_eq!(cursor.char_at(3), 2);
        assert_eq!(cursor.char_at(text.len()), 5);
        assert_eq!(cursor.char_at(1), 1);
        assert_eq!(cursor.char_at(0), 0);
    }

    #[test]
    fn char_offsets_to_bytes() {
        let text = "aé😀中b";
        assert_eq!(
            char_to_byte(text, &[0, 1, 2, 3, 4, 5, 2, 6]),
            vec![
                Some(0),
                Some(1),
                Some(3),
                Some(7),
                Some(10),
                Some(11),
                Some(3),
                None
            ]
        );
    }

    #[test]
    fn spans_from_outside_are_checked() {
        let text = "aé😀";
        assert_eq!(
            checked_byte_spans(text, [(0, 3), (3, 7)]).unwrap(),
            [(0, 3), (3, 7)]
        );
        for bad in [(-1, 2), (2, 1), (0, 2), (0, 8)] {
            let error = checked_byte_spans(text, [(0, 1), bad]).unwrap_err();
            assert!(
                matches!(
                    error,
                    ChunkError::InvalidSpan {
                        unit: "bytes",
                        len: 7,
                        ..
                    }
                ),
                "{bad:?}: {error}"
            );
        }
        assert_eq!(
            char_spans_to_bytes(text, &[(0, 2), (2, 3)]).unwrap(),
            [(0, 3), (3, 7)]
        );
        for (spans, reason, (start, end)) in [
            (&[(0, 9), (2, 1)][..], "negative or reversed", (2, 1)),
            (&[(0, 1), (1, 4)][..], "past the end of the text", (1, 4)),
        ] {
            let error = char_spans_to_bytes(text, spans).unwrap_err();
            assert!(
                matches!(error, ChunkError::InvalidSpan { reason: why, start: first, end: last, len: 3, unit: "chars" } if why == reason && (first, last) == (start, end)),
                "{error}"
            );
        }
    }
}
