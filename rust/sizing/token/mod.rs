//! Token sizers: tiktoken encodings (their BPE ranks compiled into the binary by
//! `tiktoken-rs`, so nothing is ever downloaded) and `HuggingFace` `tokenizer.json` files (the
//! `tokenizers` crate, pure Rust).
//!
//! Token counts are not additive: the engine packs by summing the counts of pieces, then
//! checks every chunk with one exact count of its own text (see `engine/pack.rs`).
//!
//! Speed: `benches/NOTES.md`, under `rust/sizing/token/mod.rs`.

use std::fmt;

use aho_corasick::AhoCorasick;
use tiktoken_rs::CoreBPE;
use tokenizers::Tokenizer;

use crate::error::ChunkError;
use crate::sizing::{SizeError, Sizer};

mod hugging_face;
mod memo;
mod pretoken;
mod tiktoken;

use hugging_face::{count, count_byte_pieces, count_tokens_by_word, word_cuts, Words};
use memo::memo_key;
pub use memo::{forget_counts, TextMemo};
use tiktoken::Pieces;

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
    /// Special tokens counted as ordinary text; `pieces` is the memoising loop (`o200k_base`
    /// and `cl100k_base`).
    Tiktoken {
        bpe: &'static CoreBPE,
        pieces: Option<&'static Pieces>,
        /// The key of its memos (see `memo_key`).
        key: u64,
    },
    /// Special tokens left out; truncation and padding switched off on load. `words`: where
    /// the tokenizer's count can be cut into words (`word_cuts`), each distinct word counted
    /// once while chunking.
    HuggingFace {
        tokenizer: Box<Tokenizer>,
        words: Words,
        /// The contents of its added tokens (`Words::BytePieces` only), found in a text
        /// before counting it by pieces.
        added: Option<AhoCorasick>,
        /// The key of its memos (see `memo_key`).
        key: u64,
    },
}

impl Counter {
    /// See [`Sizer::token_ends`].
    fn token_ends(&self, text: &str) -> Option<Vec<usize>> {
        let mut ends = match self {
            Self::Tiktoken { bpe, .. } => {
                let mut end = 0;
                bpe._decode_native_and_split(bpe.encode_ordinary(text))
                    .map(|bytes| {
                        end += bytes.len();
                        end
                    })
                    .collect::<Vec<_>>()
            }
            Self::HuggingFace { tokenizer, .. } => tokenizer
                .encode(text, false)
                .ok()?
                .get_offsets()
                .iter()
                .map(|&(_, end)| end)
                .collect(),
        };
        // Offsets of tokens that stand for part of a character, or for nothing (normalisers
        // may map several tokens onto one span), are not places to cut.
        ends.retain(|&end| end > 0 && end <= text.len() && text.is_char_boundary(end));
        ends.sort_unstable();
        ends.dedup();
        Some(ends)
    }

    fn count(&self, text: &str) -> usize {
        match self {
            Self::Tiktoken {
                bpe,
                pieces: Some(pieces),
                key,
            } => TextMemo::with(*key, |memo| match memo {
                Some(memo) => pieces
                    .count(text, memo)
                    .unwrap_or_else(|| bpe.count_ordinary(text)),
                None => bpe.count_ordinary(text),
            }),
            Self::Tiktoken {
                bpe, pieces: None, ..
            } => bpe.count_ordinary(text),
            Self::HuggingFace {
                tokenizer,
                words: Words::Never,
                ..
            } => count(tokenizer, text),
            Self::HuggingFace {
                tokenizer,
                words: Words::BytePieces,
                added,
                key,
            } => TextMemo::with(*key, |memo| match memo {
                Some(memo) => count_byte_pieces(tokenizer, added.as_ref(), text, memo),
                None => count(tokenizer, text),
            }),
            Self::HuggingFace {
                tokenizer,
                words,
                key,
                ..
            } => TextMemo::with(*key, |memo| match memo {
                Some(memo) => count_tokens_by_word(tokenizer, text, memo, *words),
                None => count(tokenizer, text),
            }),
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
            Counter::Tiktoken {
                bpe,
                pieces: Pieces::of(name, bpe),
                key: memo_key(&format!("tiktoken:{name}")),
            },
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
        let words = word_cuts(&tokenizer);
        let added = if words == Words::BytePieces {
            let contents: Vec<String> = tokenizer
                .get_added_tokens_decoder()
                .into_values()
                .map(|token| token.content)
                .filter(|content| !content.is_empty())
                .collect();
            if contents.is_empty() {
                None
            } else {
                Some(AhoCorasick::new(&contents).map_err(|error| {
                    ChunkError::setting(
                        "tokenizer",
                        format!("cannot index the tokenizer's added tokens: {error}"),
                    )
                })?)
            }
        } else {
            None
        };
        let identity = format!("tokenizer:{hash:016x}");
        Ok(Self::with_counter(
            identity.clone(),
            Counter::HuggingFace {
                tokenizer: Box::new(tokenizer),
                words,
                added,
                key: memo_key(&identity),
            },
        ))
    }
}

impl Sizer for TokenSizer {
    fn size(&self, text: &str) -> Result<usize, SizeError> {
        if text.is_empty() {
            return Ok(0);
        }
        if let Some(count) = self.gaps.get(text) {
            return Ok(count);
        }
        Ok(self.counter.count(text))
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
            Counter::Tiktoken { .. } => text.len(),
            Counter::HuggingFace { .. } => usize::MAX,
        }
    }

    fn lower_bound(&self, text: &str) -> usize {
        estimated_floor(text)
    }

    fn token_ends(&self, text: &str) -> Option<Vec<usize>> {
        self.counter.token_ends(text)
    }
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
    use memo::Memo;

    #[test]
    fn counts_offline() {
        let sizer = TokenSizer::tiktoken("cl100k_base").unwrap();
        assert_eq!(sizer.size("hello world").unwrap(), 2);
        for gap in [" ", "\n", "\n\n", " \n", "\r\n", "\t\t"] {
            assert_eq!(
                sizer.size(gap).unwrap(),
                sizer.counter.count(gap),
                "{gap:?}"
            );
        }
        assert_eq!(sizer.size("").unwrap(), 0);
        assert!(TokenSizer::tiktoken("gpt2").is_err());
    }

    #[test]
    fn memoised_loop_counts_as_tiktoken() {
        let mut texts: Vec<String> = vec![
            String::new(),
            "hello world".into(),
            "  leading\n\n\n   trailing   \r\n\tx  y   ".into(),
            "I'm sure they'll've DON'T 12345 3.14159 foo/bar\n//\n".into(),
            "汉字没有空格".repeat(80) + "，标点。" + &"ひらがなカタカナ".repeat(40),
            "fn main() { let x_y = vec![1, 2, 3]; println!(\"{x_y:?}\"); }\n".repeat(20),
            "👨‍👩‍👧‍👦 emoji 🇫🇷 and combining e\u{301}\u{301} marks ".repeat(30),
            "<|endoftext|> is ordinary text here".into(),
        ];
        texts.extend(crate::testing::corpus_texts(6, 40_000));
        for name in ENCODINGS {
            let sizer = TokenSizer::tiktoken(name).unwrap();
            let Counter::Tiktoken { bpe, pieces, .. } = &sizer.counter else {
                panic!("{name} is a tiktoken encoding");
            };
            let pieces = pieces.expect("every compiled-in encoding has the memoising loop");
            let _memo = TextMemo::start().unwrap();
            for text in &texts {
                // Twice: once merging, once from the memo.
                for _ in 0..2 {
                    assert_eq!(
                        sizer.counter.count(text),
                        bpe.count_ordinary(text),
                        "{name}: {:?}",
                        text.chars().take(60).collect::<String>()
                    );
                }
            }
            let mut memo = Memo::default();
            assert_eq!(pieces.count("hello world", &mut memo), Some(2));
        }
        // Random texts over the characters the patterns treat specially: contractions,
        // runs of spaces before letters, digits, CR LF, marks, CJK, emoji, punctuation.
        let alphabet: Vec<&str> = vec![
            "a",
            "Z",
            "é",
            "e\u{301}",
            "'s",
            "'LL",
            "'",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\u{a0}",
            "1",
            "234",
            "-",
            "/",
            "...",
            "汉",
            "字",
            "。",
            "，",
            "😀",
            "👨\u{200d}👩",
            "\u{3000}",
            "x",
        ];
        let random = crate::testing::random_texts(&alphabet, 3000, 40, 0x2545_f491_4f6c_dd1d);
        for name in ENCODINGS {
            let sizer = TokenSizer::tiktoken(name).unwrap();
            let Counter::Tiktoken { bpe, .. } = &sizer.counter else {
                panic!("{name} is a tiktoken encoding");
            };
            let _memo = TextMemo::start().unwrap();
            for text in &random {
                assert_eq!(
                    sizer.counter.count(text),
                    bpe.count_ordinary(text),
                    "{name}: {text:?}"
                );
            }
        }
        // Outside a chunking call there is no memo, and the count is still exact.
        assert!(!memo::active());
        let sizer = TokenSizer::tiktoken("o200k_base").unwrap();
        assert_eq!(sizer.size("hello world").unwrap(), 2);
    }

    /// Every text as `sizer` counts it while chunking (twice: counting, then from the memo)
    /// and as `tokenizer` counts it whole.
    fn assert_counts_whole(sizer: &TokenSizer, tokenizer: &Tokenizer, texts: &[String]) {
        let _memo = TextMemo::start().unwrap();
        for text in texts {
            for _ in 0..2 {
                assert_eq!(
                    sizer.size(text).unwrap(),
                    count(tokenizer, text),
                    "{:?}",
                    text.chars().take(60).collect::<String>()
                );
            }
        }
    }

    #[test]
    fn hugging_face_counts_word_by_word_as_a_whole() {
        let Some(json) = crate::testing::tokenizer_json() else {
            return;
        };
        let sizer = TokenSizer::hugging_face(&json).unwrap();
        let Counter::HuggingFace {
            tokenizer, words, ..
        } = &sizer.counter
        else {
            panic!("a HuggingFace tokenizer");
        };
        assert_eq!(
            *words,
            Words::AtIdeographs,
            "BERT's normaliser and pre-tokeniser cut at whitespace and ideographs"
        );
        // Words with whitespace inside, accents split from their letters by a space, CJK,
        // control characters, added tokens, and long runs.
        let alphabet: Vec<&str> = vec![
            "a",
            "Word",
            "É",
            "e\u{301}",
            "\u{301}",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\u{a0}",
            "\u{3000}",
            "\u{200b}",
            "\u{0}",
            "\u{fffd}",
            "\u{1}",
            "12",
            "-",
            "'s",
            "...",
            "汉",
            "字",
            "。",
            "😀",
            "👨\u{200d}👩",
            "[MASK]",
            "[CLS",
            "]",
            "ǅ",
            "ﬁ",
            "İ",
            "x",
            "\u{f900}",
            "\u{20000}",
            "ひ",
            "らが",
            "한국",
            "汉\u{301}",
            "ｱ",
            "\u{3007}",
        ];
        let mut texts: Vec<String> = vec![String::new(), " ".into(), "word ".repeat(300)];
        texts.extend(crate::testing::random_texts(
            &alphabet,
            3000,
            40,
            0x9e37_79b9_7f4a_7c15,
        ));
        texts.extend(crate::testing::corpus_texts(4, 30_000));
        assert_counts_whole(&sizer, tokenizer, &texts);
    }

    /// A byte-level BPE tokenizer as GPT-2's and `RoBERTa`'s are made (no normaliser, the
    /// `ByteLevel` pre-tokeniser without a prefix space), with merges across its pieces'
    /// leading spaces, line breaks and contractions, and added tokens.
    fn byte_level_json() -> String {
        use tokenizers::models::bpe::{Vocab, BPE};
        use tokenizers::pre_tokenizers::byte_level::ByteLevel;
        use tokenizers::AddedToken;

        let mut vocab = Vocab::default();
        let mut alphabet: Vec<char> = ByteLevel::alphabet().into_iter().collect();
        alphabet.sort_unstable();
        for character in alphabet {
            let next = u32::try_from(vocab.len()).unwrap();
            vocab.insert(character.to_string(), next);
        }
        let pairs = [
            ("Ġ", "t"),
            ("h", "e"),
            ("Ġt", "he"),
            ("Ġ", "Ġ"),
            ("ĠĠ", "Ġ"),
            ("Ċ", "Ċ"),
            ("i", "n"),
            ("Ġ", "a"),
            ("'", "s"),
            ("Ġ", "1"),
            ("1", "2"),
            ("Ã", "©"),
            ("Ġ", "ĉ"),
            ("ä", "¸"),
        ];
        let mut merges = Vec::new();
        for (left, right) in pairs {
            let next = u32::try_from(vocab.len()).unwrap();
            vocab.insert(format!("{left}{right}"), next);
            merges.push((left.to_string(), right.to_string()));
        }
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .build()
            .unwrap();
        let mut tokenizer = Tokenizer::new(bpe);
        tokenizer.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
        tokenizer.add_special_tokens(&[
            AddedToken::from("<mask>", true),
            AddedToken::from("</s>", true),
        ]);
        tokenizer.add_tokens(&[AddedToken::from(" the end", false)]);
        tokenizer.to_string(false).unwrap()
    }

    #[test]
    fn byte_level_counts_piece_by_piece_as_a_whole() {
        let sizer = TokenSizer::hugging_face(&byte_level_json()).unwrap();
        let Counter::HuggingFace {
            tokenizer, words, ..
        } = &sizer.counter
        else {
            panic!("a HuggingFace tokenizer");
        };
        assert_eq!(*words, Words::BytePieces);
        let alphabet = [
            "the", "The", " the", "he", "in", " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{3000}",
            "'s", "'S", "'ll", "'", "12", "3", "²", "é", "e\u{301}", "汉", "。", "😀", "-", "...",
            "<mask>", "</s>", "<", "mask>", " the end", "x",
        ];
        let mut texts: Vec<String> = vec![String::new(), "  the\n\n the  ".into()];
        texts.extend(crate::testing::random_texts(
            &alphabet,
            3000,
            40,
            0x5851_f42d_4c95_7f2d,
        ));
        texts.extend(crate::testing::corpus_texts(2, 20_000));
        assert_counts_whole(&sizer, tokenizer, &texts);
    }

    #[test]
    fn other_tokenizers_count_whole_texts() {
        use tokenizers::models::wordlevel::WordLevel;
        use tokenizers::normalizers::Lowercase;
        use tokenizers::pre_tokenizers::byte_level::ByteLevel;
        use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;

        let mut tokenizer = Tokenizer::new(WordLevel::default());
        // A prefix space belongs to the text, not to each piece.
        tokenizer.with_pre_tokenizer(Some(ByteLevel::new(true, true, true)));
        assert_eq!(word_cuts(&tokenizer), Words::Never);
        tokenizer.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
        assert_eq!(word_cuts(&tokenizer), Words::BytePieces);
        // A normaliser runs before the pieces are found.
        tokenizer.with_normalizer(Some(Lowercase));
        assert_eq!(word_cuts(&tokenizer), Words::Never);
        tokenizer.with_pre_tokenizer(Some(WhitespaceSplit));
        assert_eq!(word_cuts(&tokenizer), Words::AtWhitespace);
        tokenizer.with_pre_tokenizer(None::<WhitespaceSplit>);
        assert_eq!(word_cuts(&tokenizer), Words::Never);
    }

    #[test]
    fn hugging_face_ignores_truncation() {
        let Some(json) = crate::testing::tokenizer_json() else {
            return;
        };
        let sizer = TokenSizer::hugging_face(&json).unwrap();
        let long = "word ".repeat(1000);
        assert_eq!(sizer.size(&long).unwrap(), 1000);
        assert!(TokenSizer::hugging_face("{}").is_err());
    }
}
