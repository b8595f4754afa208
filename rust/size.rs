//! Sizers: how big a piece of text is in a chunker's unit.
//!
//! The engine only asks a [`Sizer`] for sizes, so token sizers slot in without touching the
//! splitting or merging code. Additive sizers (chars, bytes) let the engine add piece sizes
//! instead of measuring merged text again.

use std::fmt::Debug;

/// Measures text in one unit.
pub trait Sizer: Debug + Send + Sync {
    /// The exact size of `text`.
    fn size(&self, text: &str) -> usize;
    /// True when `size(a + b) == size(a) + size(b)` for every split of a text at a char
    /// boundary; the engine then sums sizes instead of measuring merged text.
    fn is_additive(&self) -> bool;
    /// The name of the unit, as the Python API spells it.
    fn name(&self) -> &'static str;
    /// True when `size` counts code points: the engine then derives char offsets from the
    /// sizes it already has instead of counting the text again.
    fn counts_chars(&self) -> bool {
        false
    }
    /// True when every ASCII character is exactly one unit (chars and bytes): runs of
    /// ASCII text are then cut by arithmetic instead of being measured.
    fn ascii_is_one_unit(&self) -> bool {
        false
    }
    /// A cheap lower bound of `size(text)`: a piece whose bound exceeds the chunk size is
    /// cut without being measured. The default, 0, always measures. Token sizers give an
    /// estimate instead: cutting a piece that would have fit only makes finer atoms, which
    /// merging joins again, so the size rule never depends on it.
    fn lower_bound(&self, text: &str) -> usize {
        let _ = text;
        0
    }
    /// What identifies the sizer among those sharing a `name` ("token:" sizers differ by
    /// encoding or tokenizer): two splitters with equal identities measure any text alike and
    /// may share atoms. `None` (a Python callable) never shares.
    fn identity(&self) -> Option<&str> {
        Some(self.name())
    }
    /// A cheap upper bound of `size(text)`: a chunk whose bound fits needs no exact check.
    /// The default, `usize::MAX`, always checks.
    fn upper_bound(&self, text: &str) -> usize {
        let _ = text;
        usize::MAX
    }
    /// A byte offset at or before `end` such that `text[offset..end]` holds at least `units`
    /// units (or starts at `floor`). Lets the engine look for overlap boundaries in a short
    /// window at the end of a chunk instead of the whole chunk. The default is `floor`.
    fn window_start(&self, text: &str, floor: usize, end: usize, units: usize) -> usize {
        let _ = (text, end, units);
        floor
    }
}

/// The built-in units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Unicode code points, as Python's `len`.
    Char,
    /// UTF-8 bytes.
    Byte,
}

impl Unit {
    /// Parses the Python spelling.
    ///
    /// # Errors
    /// An unknown unit, with the list of known ones.
    pub fn parse(name: &str) -> Result<Self, crate::ChunkError> {
        match name {
            "char" => Ok(Self::Char),
            "byte" => Ok(Self::Byte),
            other => Err(crate::ChunkError::setting(
                "unit",
                format!("unknown unit {other:?}: use \"char\" or \"byte\""),
            )),
        }
    }
}

impl Sizer for Unit {
    fn size(&self, text: &str) -> usize {
        match self {
            Self::Char => count_chars(text.as_bytes()),
            Self::Byte => text.len(),
        }
    }

    fn is_additive(&self) -> bool {
        true
    }

    fn counts_chars(&self) -> bool {
        *self == Self::Char
    }

    fn ascii_is_one_unit(&self) -> bool {
        true
    }

    fn lower_bound(&self, text: &str) -> usize {
        match self {
            // A code point is at most 4 bytes.
            Self::Char => text.len().div_ceil(4),
            Self::Byte => text.len(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Char => "char",
            Self::Byte => "byte",
        }
    }

    fn window_start(&self, text: &str, floor: usize, end: usize, units: usize) -> usize {
        match self {
            Self::Byte => {
                let mut start = end.saturating_sub(units).max(floor);
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
                start.max(floor)
            }
            Self::Char => {
                // Walk back `units` code points: count non-continuation bytes.
                let bytes = &text.as_bytes()[floor..end];
                let mut seen = 0;
                for (offset, &byte) in bytes.iter().enumerate().rev() {
                    if is_char_start(byte) {
                        seen += 1;
                        if seen == units {
                            return floor + offset;
                        }
                    }
                }
                floor
            }
        }
    }
}

/// True for a byte that starts a UTF-8 sequence (not a continuation byte).
#[inline]
#[allow(clippy::cast_possible_wrap)]
pub(crate) fn is_char_start(byte: u8) -> bool {
    // Continuation bytes are 0b10xx_xxxx, i.e. -64..=-65 as i8 and below.
    (byte as i8) >= -0x40
}

/// Number of code points in UTF-8 bytes: `bytecount::num_chars`, which picks AVX2 or SSE2 at
/// run time (about 4x a scalar count; it is the hottest loop of the engine).
#[inline]
#[must_use]
pub fn count_chars(bytes: &[u8]) -> usize {
    // Most calls measure a gap of a byte or two, or a short line: below 64 bytes the SIMD
    // dispatch costs more than the count itself, so eight bytes at a time in a u64
    // (continuation bytes are 0b10xx_xxxx: bit 7 set, bit 6 clear). The byte-at-a-time loop
    // it replaces was 8% of the engine's time on the Markdown folders (short lines).
    if bytes.len() < 64 {
        let mut words = bytes.chunks_exact(8);
        let mut continuation = 0;
        for word in &mut words {
            let mut eight = [0_u8; 8];
            eight.copy_from_slice(word);
            let word = u64::from_le_bytes(eight);
            continuation += (word & !(word << 1) & 0x8080_8080_8080_8080).count_ones() as usize;
        }
        let rest = words.remainder();
        continuation += rest.iter().filter(|&&byte| !is_char_start(byte)).count();
        bytes.len() - continuation
    } else {
        bytecount::num_chars(bytes)
    }
}

/// Whitespace as Python's `str.isspace` sees it: Unicode `White_Space` plus the information
/// separators U+001C..=U+001F, which Python counts and Rust's `char::is_whitespace` does not.
/// The contract ("no whitespace-only chunk", "every non-whitespace char covered") is checked
/// from Python, so the core must agree with Python exactly.
#[inline]
#[must_use]
pub fn is_whitespace(character: char) -> bool {
    character.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&character)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_code_points() {
        assert_eq!(count_chars("aé😀中".as_bytes()), 4);
        // Every length either side of a u64 word and of the SIMD threshold, every mix.
        let sample = "aé😀中 b\u{301}\n".repeat(20);
        for start in 0..12 {
            for end in start..sample.len().min(start + 140) {
                if let Some(slice) = sample.get(start..end) {
                    assert_eq!(
                        count_chars(slice.as_bytes()),
                        slice.chars().count(),
                        "{slice:?}"
                    );
                }
            }
        }
        assert_eq!(Unit::Char.size("aé😀中"), 4);
        assert_eq!(Unit::Byte.size("aé😀中"), 1 + 2 + 4 + 3);
    }

    #[test]
    fn whitespace_matches_python() {
        for character in [
            '\u{1c}', '\u{1f}', ' ', '\t', '\u{85}', '\u{3000}', '\u{a0}',
        ] {
            assert!(is_whitespace(character), "{character:?}");
        }
        for character in ['\u{200b}', '\u{feff}', 'a', '\0'] {
            assert!(!is_whitespace(character), "{character:?}");
        }
    }

    #[test]
    fn window_start_walks_back_units() {
        let text = "ab😀cd";
        let end = text.len();
        assert_eq!(Unit::Char.window_start(text, 0, end, 2), text.len() - 2);
        assert_eq!(Unit::Char.window_start(text, 0, end, 3), 2);
        assert_eq!(Unit::Char.window_start(text, 0, end, 99), 0);
        // 5 bytes back lands inside the emoji: moved to its start.
        assert_eq!(Unit::Byte.window_start(text, 0, end, 5), 2);
    }
}
