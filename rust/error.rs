//! The one error type of the core.

use thiserror::Error;

/// Why a sizer could not measure a text: the sizer's own error, boxed (a Python exception,
/// for a `length_function`), carried through the engine as [`ChunkError::Sizer`] and handed
/// back unchanged.
pub type SizeError = Box<dyn std::error::Error + Send + Sync>;

/// Everything the core can refuse. Messages name the setting and the fix; the Python layer
/// shows them unchanged.
#[derive(Debug, Error)]
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
    /// A span table given to the core (or read back from it) has a row out of range or out
    /// of place; the message names the row.
    #[error("{0}")]
    InvalidTable(String),
    /// The sizer could not measure a text (a Python `length_function` raised): its own
    /// error, handed back unchanged (the bindings raise the original exception).
    #[error("{0}")]
    Sizer(SizeError),
    /// The `SQLite` store could not be written (a full disk, an I/O error, a file that is not
    /// a store): `SQLite`'s own message.
    #[error("{0}")]
    Store(String),
}

impl From<SizeError> for ChunkError {
    fn from(error: SizeError) -> Self {
        Self::Sizer(error)
    }
}

impl ChunkError {
    pub(crate) fn setting(setting: &'static str, message: impl Into<String>) -> Self {
        Self::InvalidSetting {
            setting,
            message: message.into(),
        }
    }
}
