//! Token sizers: tiktoken encodings (their BPE ranks compiled into the binary by
//! `tiktoken-rs`, so nothing is ever downloaded) and `HuggingFace` `tokenizer.json` files (the
//! `tokenizers` crate, pure Rust).
//!
//! Token counts are not additive: the engine packs by summing the counts of pieces, then
//! checks every chunk with one exact count of its own text (see `pack.rs`).

use std::fmt;

use tiktoken_rs::CoreBPE;
use tokenizers::Tokenizer;

use crate::error::ChunkError;
use crate::size::Sizer;

/// The tiktoken encodings compiled in, as the Python API spells them.
pub const ENCODINGS: [&str; 4] = ["o200k_base", "cl100k_base", "p50k_base", "r50k_base"];

/// The counts of the one- and two-character whitespace strings that separate most atoms
/// (" ", "\n", "\n\n", ...), computed once by the tokenizer itself: the engine measures
/// the gap before every atom, and a full encoder call per gap cost about a tenth of the time.
#[derive(Debug, Clone)]
struct GapCounts([usize; 20]);

const GAP_CHARS: [u8; 4] = [b' ', b'\n', b'\t', b'\r'];

impl GapCounts {
    fn new(count: impl Fn(&str) -> usize) -> Self {
        let mut counts = [0; 20];
        for (first_index, &first) in GAP_CHARS.iter().enumerate() {
            counts[first_index] = count(&char::from(first).to_string());
            for (second_index, &second) in GAP_CHARS.iter().enumerate() {
                let gap: String = [char::from(first), char::from(second)].iter().collect();
                counts[4 + first_index * 4 + second_index] = count(&gap);
            }
        }
        Self(counts)
    }

    fn get(&self, text: &str) -> Option<usize> {
        let index = |byte: u8| GAP_CHARS.iter().position(|&gap| gap == byte);
        match *text.as_bytes() {
            [only] => index(only).map(|only| self.0[only]),
            [first, second] => Some(self.0[4 + index(first)? * 4 + index(second)?]),
            _ => None,
        }
    }
}

/// What counts the tokens: a compiled-in tiktoken encoding, or a `HuggingFace` tokenizer.
enum Counter {
    /// Special tokens counted as ordinary text.
    Tiktoken(&'static CoreBPE),
    /// Special tokens left out; truncation and padding switched off on load.
    HuggingFace(Box<Tokenizer>),
}

impl Counter {
    fn count(&self, text: &str) -> usize {
        match self {
            Self::Tiktoken(bpe) => bpe.count_ordinary(text),
            Self::HuggingFace(tokenizer) => count(tokenizer, text),
        }
    }
}

/// Measures text in the tokens of one tokenizer.
pub struct TokenSizer {
    identity: String,
    counter: Counter,
    gaps: GapCounts,
}

impl fmt::Debug for TokenSizer {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "TokenSizer({})", self.identity)
    }
}

impl TokenSizer {
    fn with_counter(identity: String, counter: Counter) -> Self {
        let gaps = GapCounts::new(|gap| counter.count(gap));
        Self {
            identity,
            counter,
            gaps,
        }
    }

    /// The sizer of a compiled-in tiktoken encoding.
    ///
    /// # Errors
    /// An unknown encoding name, with the list of known ones.
    pub fn tiktoken(encoding: &str) -> Result<Self, ChunkError> {
        let (name, bpe) = match encoding {
            "o200k_base" => ("o200k_base", tiktoken_rs::o200k_base_singleton()),
            "cl100k_base" => ("cl100k_base", tiktoken_rs::cl100k_base_singleton()),
            "p50k_base" => ("p50k_base", tiktoken_rs::p50k_base_singleton()),
            "r50k_base" => ("r50k_base", tiktoken_rs::r50k_base_singleton()),
            other => {
                return Err(ChunkError::setting(
                    "encoding",
                    format!(
                        "unknown encoding {other:?}: use one of {}",
                        ENCODINGS
                            .iter()
                            .map(|known| format!("{known:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        };
        Ok(Self::with_counter(
            format!("tiktoken:{name}"),
            Counter::Tiktoken(bpe),
        ))
    }

    /// A sizer from the JSON text of a `HuggingFace` `tokenizer.json` file.
    ///
    /// # Errors
    /// JSON that is not a tokenizer.
    pub fn hugging_face(json: &str) -> Result<Self, ChunkError> {
        let mut tokenizer = Tokenizer::from_bytes(json.as_bytes()).map_err(|error| {
            ChunkError::setting(
                "tokenizer",
                format!("cannot load the tokenizer: {error}: pass a HuggingFace tokenizer.json"),
            )
        })?;
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|error| {
            ChunkError::setting(
                "tokenizer",
                format!("cannot switch truncation off: {error}"),
            )
        })?;
        let hash = xxhash_rust::xxh3::xxh3_64(json.as_bytes());
        Ok(Self::with_counter(
            format!("tokenizer:{hash:016x}"),
            Counter::HuggingFace(Box::new(tokenizer)),
        ))
    }
}

impl Sizer for TokenSizer {
    fn size(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        if let Some(count) = self.gaps.get(text) {
            return count;
        }
        self.counter.count(text)
    }

    fn is_additive(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "token"
    }

    fn identity(&self) -> Option<&str> {
        Some(&self.identity)
    }

    fn upper_bound(&self, text: &str) -> usize {
        match self.counter {
            // Byte-level BPE: every token stands for at least one byte.
            Counter::Tiktoken(_) => text.len(),
            Counter::HuggingFace(_) => usize::MAX,
        }
    }

    fn lower_bound(&self, text: &str) -> usize {
        estimated_floor(text)
    }
}

/// Tokens of `text`, special tokens left out. Counting never fails for a loaded tokenizer; a
/// failure is reported as "too big", which surfaces as an unsplittable character rather than
/// an oversized chunk.
fn count(tokenizer: &Tokenizer, text: &str) -> usize {
    tokenizer
        .encode_fast(text, false)
        .map_or(usize::MAX / 4, |encoding| encoding.len())
}

/// A floor estimate of a token count (not a bound: a token can stand for more bytes), which
/// spares measuring pieces that are almost surely too big: the whole document, at first,
/// which alone cost as much as the rest of the chunking. A piece cut without need only makes
/// finer atoms, which merging joins again, so the guess never breaks the size rule.
fn estimated_floor(text: &str) -> usize {
    // English runs at about 4.5 bytes per token in tiktoken encodings and WordPiece, CJK at
    // 3 or fewer.
    text.len() / 5
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::{Splitter, SplitterConfig};

    #[test]
    fn counts_offline() {
        let sizer = TokenSizer::tiktoken("cl100k_base").unwrap();
        assert_eq!(sizer.size("hello world"), 2);
        for gap in [" ", "\n", "\n\n", " \n", "\r\n", "\t\t"] {
            assert_eq!(sizer.size(gap), sizer.counter.count(gap), "{gap:?}");
        }
        assert_eq!(sizer.size(""), 0);
        assert!(TokenSizer::tiktoken("gpt2").is_err());
    }

    #[test]
    fn chunks_fit_in_tokens() {
        let sizer = TokenSizer::tiktoken("o200k_base").unwrap();
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(200)
            + &"汉字没有空格".repeat(300);
        for overlap in [0, 5] {
            let mut config = SplitterConfig::new(37);
            config.overlap = overlap;
            let splitter = Splitter::with_sizer(
                config,
                Box::new(TokenSizer::tiktoken("o200k_base").unwrap()),
            )
            .unwrap();
            let spans = splitter.split(&text).unwrap();
            assert!(spans.len() > 10);
            for &(start, end) in &spans {
                assert!(sizer.size(&text[start..end]) <= 37);
            }
        }
    }

    #[test]
    fn hugging_face_ignores_truncation() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/tokenizers/all-MiniLM-L6-v2/tokenizer.json"
        );
        let Ok(json) = std::fs::read_to_string(path) else {
            return; // the shared folder is not part of every checkout
        };
        let sizer = TokenSizer::hugging_face(&json).unwrap();
        let long = "word ".repeat(1000);
        assert_eq!(sizer.size(&long), 1000);
        assert!(TokenSizer::hugging_face("{}").is_err());
    }
}
