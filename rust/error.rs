//! The one error type of the core.

use thiserror::Error;

/// Everything the core can refuse. Messages name the setting and the fix; the Python layer
/// shows them unchanged.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ChunkError {
    /// A setting that cannot work, refused when the splitter is built.
    #[error("{setting}: {message}")]
    InvalidSetting {
        /// The name of the setting, as the Python API spells it.
        setting: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A span given to the core lies outside the text, is reversed, or cuts a UTF-8 sequence.
    #[error("span {start}..{end} is not valid for a text of {len} {unit}: {reason}")]
    InvalidSpan {
        /// Start offset as given.
        start: i64,
        /// End offset as given.
        end: i64,
        /// Length of the text in the same unit.
        len: usize,
        /// "bytes" or "chars".
        unit: &'static str,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A single code point is larger than the chunk size in the splitter's unit, so no cut
    /// can satisfy the strict size rule.
    #[error("a single character {character:?} at byte {position} is {size} units, more than chunk_size {chunk_size}: raise chunk_size")]
    Unsplittable {
        /// The character.
        character: char,
        /// Its byte offset in the document.
        position: usize,
        /// Its size in the unit.
        size: usize,
        /// The limit.
        chunk_size: usize,
    },
}

impl ChunkError {
    pub(crate) fn setting(setting: &'static str, message: impl Into<String>) -> Self {
        Self::InvalidSetting {
            setting,
            message: message.into(),
        }
    }
}
