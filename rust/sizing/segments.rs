//! Sizes in the units of Haystack's `split_by`: words, sentences, passages and pages, each
//! counted by `text/sentences.rs` (see the rules there).
//!
//! None is additive: a piece cut inside a word (or a sentence, a passage, a page) counts one
//! on each side of the cut and one when joined, so the engine measures every chunk exactly.
//! Whitespace counts 0 in every one of them; a chunk is never blank, so it is at least 1.

use super::word_index::words;
use super::{SizeError, Sizer};
use crate::error::ChunkError;
use crate::text::sentences::{count_pages, count_passages, count_sentences, count_sentences_up_to};

/// A unit that counts segments of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentUnit {
    /// Runs of non-whitespace characters.
    Word,
    /// UAX #29 sentences, lone line breaks read as spaces.
    Sentence,
    /// Pieces between blank lines.
    Passage,
    /// Pieces between form feeds.
    Page,
}

impl SegmentUnit {
    /// Every segment unit, as the Python API spells it.
    pub const NAMES: [&'static str; 4] = ["word", "sentence", "passage", "page"];

    /// The unit named `name`, `None` for any other name.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "word" => Some(Self::Word),
            "sentence" => Some(Self::Sentence),
            "passage" => Some(Self::Passage),
            "page" => Some(Self::Page),
            _ => None,
        }
    }

    /// Parses the Python spelling.
    ///
    /// # Errors
    /// An unknown unit, with the list of known ones.
    pub fn parse(name: &str) -> Result<Self, ChunkError> {
        Self::named(name).ok_or_else(|| {
            ChunkError::setting(
                "unit",
                format!(
                    "unknown unit {name:?}: use \"word\", \"sentence\", \"passage\" or \"page\""
                ),
            )
        })
    }
}

impl Sizer for SegmentUnit {
    fn size(&self, text: &str) -> Result<usize, SizeError> {
        Ok(match self {
            Self::Word => words(text),
            Self::Sentence => count_sentences(text),
            Self::Passage => count_passages(text),
            Self::Page => count_pages(text),
        })
    }

    fn size_up_to(&self, text: &str, limit: usize) -> Result<usize, SizeError> {
        match self {
            Self::Sentence => Ok(count_sentences_up_to(text, limit)),
            _ => self.size(text),
        }
    }

    fn is_additive(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Word => "word",
            Self::Sentence => "sentence",
            Self::Passage => "passage",
            Self::Page => "page",
        }
    }

    fn prefixes_fit(&self) -> bool {
        // A prefix holds no more runs of non-whitespace, or non-blank pieces between
        // separators, than the text; UAX #29 sentences make no such promise.
        !matches!(self, Self::Sentence)
    }

    fn adds_at_whitespace(&self) -> bool {
        matches!(self, Self::Word)
    }

    fn counts_words(&self) -> bool {
        matches!(self, Self::Word)
    }

    fn upper_bound(&self, text: &str) -> usize {
        match self {
            Self::Sentence => usize::MAX,
            // A word takes a byte and all but the last are followed by whitespace, a passage
            // or a page by a separator of a byte or more: at most one per two bytes.
            Self::Word | Self::Passage | Self::Page => text.len().div_ceil(2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_units_measure() {
        assert_eq!(SegmentUnit::Word.size("one two  three").unwrap(), 3);
        assert_eq!(SegmentUnit::Sentence.size("One. Two! Three").unwrap(), 3);
        assert_eq!(SegmentUnit::Passage.size("one\n\ntwo\nthree").unwrap(), 2);
        assert_eq!(SegmentUnit::Page.size("one\x0ctwo").unwrap(), 2);
        for unit in SegmentUnit::NAMES {
            let unit = SegmentUnit::parse(unit).unwrap();
            assert_eq!(unit.size(" \n\t\x0c ").unwrap(), 0);
            assert!(!unit.is_additive());
            assert_eq!(SegmentUnit::named(unit.name()), Some(unit));
        }
        assert!(SegmentUnit::parse("line").is_err());
    }

    #[test]
    fn upper_bounds_hold() {
        for text in ["a", "a b", "a\n\nb\n\nc", "a\x0cb\x0c", "ab", ""] {
            for unit in [SegmentUnit::Word, SegmentUnit::Passage, SegmentUnit::Page] {
                assert!(
                    unit.size(text).unwrap() <= unit.upper_bound(text),
                    "{unit:?} {text:?}"
                );
            }
        }
    }
}
