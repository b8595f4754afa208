//! Token sizers: tiktoken encodings (their BPE ranks compiled into the binary by
//! `tiktoken-rs`, so nothing is ever downloaded) and `HuggingFace` `tokenizer.json` files (the
//! `tokenizers` crate, pure Rust).
//!
//! Token counts are not additive: the engine packs by summing the counts of pieces, then
//! checks every chunk with one exact count of its own text (see `pack.rs`).
//!
//! Performance notes (`o200k_base`, parent 1024 / child 256 tokens, release build):
//! - Chunking counts every byte about three times (its atom, its parent, its child), each
//!   time with tiktoken's loop: split the text with the encoding's regex, look each piece up
//!   in the vocabulary, run byte-pair merges on the pieces that are not in it. perf on
//!   markdown-zh: 60% of the time in the merges (hash lookups of byte pairs), because the
//!   regex keeps a run of CJK letters as one long piece; 18% in the regex.
//! - So for `o200k_base` and `cl100k_base` the loop is rebuilt here from the public parts of
//!   tiktoken-rs (its pattern, its ranks read back through `decode_bytes`, its
//!   `byte_pair_split`), with one change: while a text is being chunked (`TextMemo`), the
//!   count of every piece that needed merges is kept, so a piece is merged once per text
//!   however many chunks it is counted in. A piece's count depends on its bytes alone, so
//!   the memo cannot change a count; tests compare every count with tiktoken's.
//!   `Splitter.measure` and counts outside a chunking call take tiktoken-rs's own loop.
//!   The ranks are read back once per process: 53 ms and 17 MB for `o200k_base`, on top of
//!   tiktoken-rs's own 99 ms and 45 MB.
//!   Measured against one plain encoding (`measure`) of each folder: markdown-zh 2.98x ->
//!   1.63x (183 -> 99 ms; semantic-text-splitter: 465 ms), markdown-en 3.05x -> 3.0x,
//!   gutenberg 2.6x: in English most pieces are whole tokens, and the regex, run once per
//!   pass, is what is left (40% of the time).

use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

use fancy_regex::Regex;
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};
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
    /// Special tokens counted as ordinary text; `pieces` is the memoising loop (`o200k_base`
    /// and `cl100k_base`).
    Tiktoken {
        bpe: &'static CoreBPE,
        pieces: Option<&'static Pieces>,
    },
    /// Special tokens left out; truncation and padding switched off on load.
    HuggingFace(Box<Tokenizer>),
}

impl Counter {
    fn count(&self, text: &str) -> usize {
        match self {
            Self::Tiktoken {
                bpe,
                pieces: Some(pieces),
            } => TextMemo::with(pieces, |memo| match memo {
                Some(memo) => pieces
                    .count(text, memo)
                    .unwrap_or_else(|| bpe.count_ordinary(text)),
                None => bpe.count_ordinary(text),
            }),
            Self::Tiktoken { bpe, pieces: None } => bpe.count_ordinary(text),
            Self::HuggingFace(tokenizer) => count(tokenizer, text),
        }
    }
}

/// tiktoken's counting loop for one encoding: its pre-tokenising regex and its ranks (the
/// ordinary tokens only), as tiktoken-rs builds them.
pub(crate) struct Pieces {
    /// The pre-tokenising pattern, compiled by each thread that counts (see `REGEXES`).
    pattern: &'static str,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

/// The pattern of `cl100k_base`, as tiktoken-rs compiles it (tiktoken-rs exports only
/// `o200k_base`'s; a test checks the two encoders count alike).
const CL100K_BASE_PAT_STR: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// Largest token id tried when reading the ranks back (`o200k_base` has about 200,000).
const MAX_RANK: Rank = 1 << 18;

impl Pieces {
    /// The loop of `bpe`, whose pre-tokenising pattern is `pattern`. None if the pattern
    /// does not compile (then tiktoken-rs's own loop is used).
    fn new(bpe: &CoreBPE, pattern: &'static str) -> Option<Self> {
        // Checked here once; each thread compiles its own copy when it first counts.
        Regex::new(pattern).ok()?;
        let special: Vec<Rank> = bpe
            .special_tokens()
            .into_iter()
            .flat_map(|token| bpe.encode_with_special_tokens(token))
            .collect();
        let ranks = (0..MAX_RANK)
            .filter(|rank| !special.contains(rank))
            .filter_map(|rank| bpe.decode_bytes(&[rank]).ok().map(|bytes| (bytes, rank)))
            .collect();
        Some(Self { pattern, ranks })
    }

    /// The loop of a compiled-in encoding, built on first use (the ranks: about 50 ms).
    fn of(encoding: &str, bpe: &'static CoreBPE) -> Option<&'static Self> {
        static O200K: OnceLock<Option<Pieces>> = OnceLock::new();
        static CL100K: OnceLock<Option<Pieces>> = OnceLock::new();
        let (cell, pattern) = match encoding {
            "o200k_base" => (&O200K, tiktoken_rs::O200K_BASE_PAT_STR),
            "cl100k_base" => (&CL100K, CL100K_BASE_PAT_STR),
            _ => return None,
        };
        cell.get_or_init(|| Self::new(bpe, pattern)).as_ref()
    }

    /// Tokens of `text` as `CoreBPE::encode_ordinary` counts them, each merged piece's count
    /// taken from or put in `memo`; None if the regex gives up (backtrack limit), for the
    /// caller to count with tiktoken-rs's loop.
    fn count(&self, text: &str, memo: &mut Memo) -> Option<usize> {
        REGEXES.with(|regexes| {
            let mut regexes = regexes.borrow_mut();
            // Compiled anew, not cloned: a clone shares the original's scratch pools.
            let regex = entry(&mut regexes, self, || Regex::new(self.pattern).ok());
            self.count_with(regex.as_ref()?, text, memo)
        })
    }

    fn count_with(&self, regex: &Regex, text: &str, memo: &mut Memo) -> Option<usize> {
        let mut total = 0;
        for found in regex.find_iter(text) {
            let piece = found.ok()?.as_str().as_bytes();
            total += if self.ranks.contains_key(piece) {
                1
            } else if let Some(&count) = memo.get(piece) {
                count
            } else {
                // Not a token, so at least two bytes (every byte is a token).
                let count = tiktoken_rs::byte_pair_split(piece, &self.ranks).len();
                memo.insert(piece.into(), count);
                count
            };
        }
        Some(total)
    }
}

/// The merged pieces' counts of the text being chunked on this thread, per encoding; None
/// outside a chunking call.
pub struct TextMemo {
    _private: (),
}

/// More pieces than this and the memo starts again (a bound on memory, not a cache policy).
const MEMO_LIMIT: usize = 1 << 18;

/// Merged pieces and their counts.
type Memo = FxHashMap<Box<[u8]>, usize>;

thread_local! {
    /// Per encoding (keyed by its `Pieces` address), this thread's own compiled regex: a
    /// regex shared by threads hands its scratch space to one thread at a time, and the
    /// others take a slower path through a lock (a clone shares those pools too). perf on
    /// `chunk_many` with 2 threads: 19% of the time in the pools' slow paths.
    static REGEXES: RefCell<Vec<(usize, Option<Regex>)>> = const { RefCell::new(Vec::new()) };
    /// Per encoding (keyed by its `Pieces` address), the memo of the text being chunked.
    static MEMOS: RefCell<Option<Vec<(usize, Memo)>>> = const { RefCell::new(None) };
}

impl TextMemo {
    /// Keeps the merged pieces' counts from now until the guard drops (one text's chunking,
    /// every level of it); nested guards share the outer memo.
    #[must_use]
    pub fn start() -> Option<Self> {
        MEMOS.with(|memos| {
            let mut memos = memos.borrow_mut();
            if memos.is_some() {
                return None;
            }
            *memos = Some(Vec::new());
            Some(Self { _private: () })
        })
    }

    fn with<R>(pieces: &Pieces, work: impl FnOnce(Option<&mut Memo>) -> R) -> R {
        MEMOS.with(|memos| {
            let Ok(mut memos) = memos.try_borrow_mut() else {
                return work(None);
            };
            let Some(memos) = memos.as_mut() else {
                return work(None);
            };
            let memo = entry(memos, pieces, Memo::default);
            if memo.len() > MEMO_LIMIT {
                memo.clear();
            }
            work(Some(memo))
        })
    }
}

/// The value kept for `pieces` (an encoding's loop, by address) in a per-thread list, made by
/// `make` the first time.
fn entry<'a, T>(
    entries: &'a mut Vec<(usize, T)>,
    pieces: &Pieces,
    make: impl FnOnce() -> T,
) -> &'a mut T {
    let key = std::ptr::from_ref(pieces) as usize;
    let position = if let Some(position) = entries.iter().position(|(owner, _)| *owner == key) {
        position
    } else {
        entries.push((key, make()));
        entries.len() - 1
    };
    &mut entries[position].1
}

impl Drop for TextMemo {
    fn drop(&mut self) {
        MEMOS.with(|memos| *memos.borrow_mut() = None);
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
            Counter::Tiktoken { .. } => text.len(),
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
    #[allow(clippy::cast_possible_truncation)] // random indices below 40
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
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
        for folder in ["markdown-en", "markdown-zh", "gutenberg"] {
            let Ok(entries) = std::fs::read_dir(format!("{corpus}/{folder}")) else {
                continue; // the shared folder is not part of every checkout
            };
            let mut paths: Vec<_> = entries.flatten().map(|entry| entry.path()).collect();
            paths.sort();
            for path in paths.iter().take(6) {
                if let Ok(text) = std::fs::read_to_string(path) {
                    texts.push(text.chars().take(40_000).collect());
                }
            }
        }
        for name in ["o200k_base", "cl100k_base"] {
            let sizer = TokenSizer::tiktoken(name).unwrap();
            let Counter::Tiktoken { bpe, pieces } = &sizer.counter else {
                panic!("{name} is a tiktoken encoding");
            };
            let pieces = pieces.expect("o200k_base and cl100k_base have the memoising loop");
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
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for name in ["o200k_base", "cl100k_base"] {
            let sizer = TokenSizer::tiktoken(name).unwrap();
            let Counter::Tiktoken { bpe, .. } = &sizer.counter else {
                panic!("{name} is a tiktoken encoding");
            };
            let _memo = TextMemo::start().unwrap();
            for _ in 0..3000 {
                let length = (next() % 40) as usize;
                let text: String = (0..length)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect();
                assert_eq!(
                    sizer.counter.count(&text),
                    bpe.count_ordinary(&text),
                    "{name}: {text:?}"
                );
            }
        }
        // Outside a chunking call there is no memo, and the count is still exact.
        assert!(MEMOS.with(|memos| memos.borrow().is_none()));
        let sizer = TokenSizer::tiktoken("o200k_base").unwrap();
        assert_eq!(sizer.size("hello world"), 2);
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
