//! Sizers: how big a piece of text is in a chunker's unit.
//!
//! The engine only asks a [`Sizer`] for sizes, so token sizers slot in without touching the
//! splitting or merging code. Additive sizers (chars, bytes) let the engine add piece sizes
//! instead of measuring merged text again; sizes in chars are looked up in a per-text
//! [`CharIndex`] instead of counted.
//!
//! - `char_index.rs`: the char index (constant-time char counts of any range);
//! - `segments.rs`: words, sentences, passages and pages (the units of Haystack's
//!   `split_by`), counted by `text/sentences.rs`;
//! - `token/`: tiktoken encodings and `HuggingFace` tokenizers, with the memos and the
//!   hand-written pre-tokenising that make counting while chunking cheap.

use std::fmt::Debug;

use crate::error::ChunkError;
use crate::text::chars::{count_chars, is_char_start};

pub mod char_index;
pub mod segments;
pub mod token;
pub mod word_index;

pub use crate::error::SizeError;
pub use char_index::CharIndex;
pub use segments::SegmentUnit;
pub use word_index::TextWords;

/// Measures text in one unit.
pub trait Sizer: Debug + Send + Sync {
    /// The exact size of `text`.
    ///
    /// # Errors
    /// The sizer could not measure the text (a Python `length_function` raised, or returned
    /// something that is not a non-negative int): the cut stops and the error is handed back
    /// unchanged to whoever asked for it.
    fn size(&self, text: &str) -> Result<usize, SizeError>;
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
    // The bounds and the window below are cheap, never call out, and cannot fail: a sizer
    // that cannot give one keeps the default.
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
    /// True when a prefix of a text never measures more than the text (chars, bytes, words,
    /// passages, pages): a chunk that ends earlier than one that fits fits too, unmeasured.
    fn prefixes_fit(&self) -> bool {
        false
    }
    /// The size of `text` when it is at most `limit`; otherwise any size above `limit`. The
    /// engine asks this wherever it only compares with the chunk size, so a sizer that can
    /// stop counting early (sentences: a paragraph of a book is not segmented whole to learn
    /// it holds more than ten) does.
    ///
    /// # Errors
    /// The sizer failed.
    fn size_up_to(&self, text: &str, limit: usize) -> Result<usize, SizeError> {
        let _ = limit;
        self.size(text)
    }
    /// True when it counts words (`unit="word"`): while a text is chunked, the engine keeps
    /// an index of its word starts ([`TextWords`]) that makes every count constant time.
    fn counts_words(&self) -> bool {
        false
    }
    /// True when two texts joined at whitespace measure the sum of their sizes (words: a
    /// word never runs across whitespace), so the engine need not count a join it can add.
    fn adds_at_whitespace(&self) -> bool {
        false
    }
    /// Byte offsets in `text` where the sizer's own tokens of `text` end, in order, when it
    /// has tokens: a run that only graphemes can cut is cut where a token ends, so a chunk
    /// takes its whole budget and no token is split between two chunks. The default, `None`
    /// (chars, bytes, a Python callable), has no tokens.
    fn token_ends(&self, text: &str) -> Option<Vec<usize>> {
        let _ = text;
        None
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
    pub fn parse(name: &str) -> Result<Self, ChunkError> {
        match name {
            "char" => Ok(Self::Char),
            "byte" => Ok(Self::Byte),
            other => Err(ChunkError::setting(
                "unit",
                format!(
                    "unknown unit {other:?}: use \"char\", \"byte\", \"token\", \"word\", \"sentence\", \"passage\" or \"page\""
                ),
            )),
        }
    }
}

impl Sizer for Unit {
    fn size(&self, text: &str) -> Result<usize, SizeError> {
        Ok(match self {
            Self::Char => count_chars(text.as_bytes()),
            Self::Byte => text.len(),
        })
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

    fn prefixes_fit(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_measure() {
        assert_eq!(Unit::Char.size("aé😀中").unwrap(), 4);
        assert_eq!(Unit::Byte.size("aé😀中").unwrap(), 1 + 2 + 4 + 3);
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
