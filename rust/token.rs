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
//! - So for every compiled-in encoding the loop is rebuilt here from the public parts of
//!   tiktoken-rs (its pattern, its ranks read back through `decode_bytes`, its
//!   `byte_pair_split`), with one change: while a text is being chunked (`TextMemo`), the
//!   count of every piece that needed merges is kept, so a piece is merged once
//!   however many chunks it is counted in. A piece's count depends on its bytes alone, so
//!   the memo cannot change a count; tests compare every count with tiktoken's.
//!   `Splitter.measure` and counts outside a chunking call take tiktoken-rs's own loop.
//!   The ranks are read back once per process: 53 ms and 17 MB for `o200k_base`, on top of
//!   tiktoken-rs's own 99 ms and 45 MB.
//!   Measured against one plain encoding (`measure`) of each folder: markdown-zh 2.98x ->
//!   1.63x (183 -> 99 ms; semantic-text-splitter: 465 ms), markdown-en 3.05x -> 3.0x,
//!   gutenberg 2.6x: in English most pieces are whole tokens, and the regex, run once per
//!   pass, is what is left (40% of the time).
//! - The regex itself: fancy-regex finds the pieces at 33-67 MB/s on English. The `regex`
//!   crate on `o200k_base`'s pattern without its look-ahead (emulated after the match) gave
//!   the same pieces at the same speed, and 5x slower on Chinese. `pretoken.rs` answers the
//!   pattern by hand wherever the bytes it depends on are ASCII (96-97% of the pieces in
//!   English, 66-69% in markdown-zh) and asks the regex otherwise: 239-345 MB/s on English,
//!   126-234 on markdown-zh, the same pieces (tested; figures per encoding in `pretoken.rs`).
//! - The memos outlive one text: a piece's count depends on its bytes alone, so they are kept
//!   per tokenizer and per thread, bounded (`MEMO_ENTRIES`, `MEMO_BYTES`, `MEMOS_KEPT`).
//! - `HuggingFace` tokenizers that cut at whitespace (BERT's, and others, see `word_cuts`)
//!   count a text as the sum of its words, each word counted once (`count_words`): the
//!   tokenizer's normalising and pre-tokenising, which track every byte's alignment, were
//!   70-85% of its time, and run only on a word's first sight. Byte-level BPE tokenizers
//!   (GPT-2's `ByteLevel` pre-tokeniser) count the pieces of GPT-2's pattern the same way
//!   (`count_byte_pieces`): with a byte-level BPE trained on the corpus (8,000 tokens),
//!   chunking / one encoding went from 2.90x to 0.18x on markdown-en, 0.81x on markdown-zh
//!   and 0.17x on gutenberg.
//! - Chunking / one plain encoding, each folder chunked from cold memos (parent 1024 / child
//!   256, `benches/compare_tokens.py`): `o200k_base` 2.90x / 2.98x / 1.70x -> 0.87x / 0.59x /
//!   1.12x (gutenberg / markdown-en / markdown-zh); all-MiniLM-L6-v2 2.92x / 3.24x / 3.16x ->
//!   0.40x / 0.46x / 0.37x. Counting costs less than one plain encoding because each pass is
//!   cheaper than one: fewer regex calls, and no merges or tokenizer calls for pieces seen
//!   before.

use std::cell::RefCell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use fancy_regex::Regex;
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};
use tokenizers::Tokenizer;

use crate::error::ChunkError;
use crate::pretoken::{self, Pattern};
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
                Some(memo) => count_words(tokenizer, text, memo, *words),
                None => count(tokenizer, text),
            }),
        }
    }
}

/// Where a `HuggingFace` tokenizer's count may be cut into the counts of words (see
/// `count_words`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Words {
    /// Nowhere: whole texts are counted.
    Never,
    /// At ASCII whitespace.
    AtWhitespace,
    /// At ASCII whitespace and around every CJK ideograph, which `BertNormalizer` with
    /// `handle_chinese_chars` surrounds with spaces.
    AtIdeographs,
    /// At the pieces of GPT-2's pattern, which the `ByteLevel` pre-tokeniser cuts (see
    /// `count_byte_pieces`).
    BytePieces,
}

/// The bytes at which `count_words` cuts a text: the ASCII whitespace that every tokenizer
/// it serves drops (other whitespace stays inside a word, where the
/// tokenizer handles it as usual).
const fn is_word_gap(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Words longer than this are counted without being kept (a run of CJK with no space can be
/// a whole paragraph, and seldom repeats).
const WORD_MEMO_BYTES: usize = 128;

/// Tokens of `text` for a tokenizer that cuts at whitespace and drops it: the sum of its
/// words' counts, each word counted on its own by the tokenizer (or taken from `memo`).
///
/// Exact, not an estimate: such a tokenizer's normaliser works within a word (case, accents,
/// Unicode forms: no decomposition or composition crosses an ASCII space, tab or line
/// break), its pre-tokeniser makes every ASCII whitespace the end of a split and drops it,
/// its model tokenises each split on its own, and no added token holds whitespace. So the
/// splits of `text` are those of its words, in order, and the model sees the same strings.
/// With `Words::AtIdeographs`, each CJK ideograph is a word too: the normaliser itself puts
/// spaces around it before the pre-tokeniser cuts there.
/// Tests compare every count with the tokenizer's own over the corpus and random text.
///
/// Measured with all-MiniLM-L6-v2 on the corpus: keeping the model's output per split, but
/// still normalising and pre-tokenising each text (steps that track every byte's alignment),
/// left 70-85% of an encoding's time; counting words skips both steps for a word seen before.
fn count_words(tokenizer: &Tokenizer, text: &str, memo: &mut Memo, words: Words) -> usize {
    let mut total = 0;
    let mut count_word = |word: &[u8]| {
        if word.is_empty() {
            return;
        }
        let counted = if let Some(count) = memo.get(word) {
            count
        } else {
            // Cut at ASCII bytes and character boundaries, so still UTF-8.
            let word_text = std::str::from_utf8(word).unwrap_or_default();
            let counted = count(tokenizer, word_text);
            if word.len() <= WORD_MEMO_BYTES {
                memo.insert(word, counted);
            }
            counted
        };
        // Saturating: a word the tokenizer fails on counts as "too big" (see `count`).
        total = counted.saturating_add(total);
    };
    let bytes = text.as_bytes();
    if words != Words::AtIdeographs {
        bytes.split(|&byte| is_word_gap(byte)).for_each(count_word);
        return total;
    }
    let (mut start, mut at) = (0, 0);
    while let Some(&byte) = bytes.get(at) {
        if is_word_gap(byte) {
            count_word(&bytes[start..at]);
            at += 1;
            start = at;
        } else if byte >= 0xE3 {
            // The lead byte of a character from U+3000 up (continuation bytes are below
            // 0xC0, so `at` is a character boundary here).
            let character = text[at..].chars().next().unwrap_or_default();
            let end = at + character.len_utf8();
            if is_ideograph(character) {
                count_word(&bytes[start..at]);
                count_word(&bytes[at..end]);
                start = end;
            }
            at = end;
        } else {
            at += 1;
        }
    }
    count_word(&bytes[start..]);
    total
}

/// Tokens of `text` for a tokenizer with no normaliser and GPT-2's `ByteLevel`
/// pre-tokeniser (its regex on, no prefix space), as most byte-level BPE tokenizers are: the
/// sum of the counts of the pieces of GPT-2's pattern, each piece counted on its own by the
/// tokenizer (or taken from `memo`).
///
/// Exact: that pre-tokeniser cuts the text at exactly those pieces (its pattern,
/// `\s+(?!\S)|\s+` at the end, finds what tiktoken's GPT-2 pattern finds; tested), maps each
/// piece's bytes to characters on its own, and the model tokenises each split on its own; a
/// piece alone is cut as the one piece it is. Added tokens are cut out of the text before
/// that, so a text that holds one is counted whole.
fn count_byte_pieces(
    tokenizer: &Tokenizer,
    added: Option<&AhoCorasick>,
    text: &str,
    memo: &mut Memo,
) -> usize {
    if added.is_some_and(|added| added.is_match(text)) {
        return count(tokenizer, text);
    }
    let mut total = 0_usize;
    let pieces = for_each_piece(Pattern::Gpt2, text, |piece| {
        let counted = if let Some(count) = memo.get(piece) {
            count
        } else {
            // Pieces end at character boundaries.
            let counted = count(tokenizer, std::str::from_utf8(piece).unwrap_or_default());
            if piece.len() <= WORD_MEMO_BYTES {
                memo.insert(piece, counted);
            }
            counted
        };
        total = counted.saturating_add(total);
    });
    match pieces {
        Some(()) => total,
        None => count(tokenizer, text),
    }
}

/// The characters `BertNormalizer` pads with spaces when `handle_chinese_chars` is on (the
/// ranges of its `is_chinese_char`, which the crate does not export).
fn is_ideograph(character: char) -> bool {
    matches!(
        u32::from(character),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

/// Where `tokenizer` counts every text as the sum of its parts, given a deterministic model:
/// - with no normaliser and the `ByteLevel` pre-tokeniser (regex on, no prefix space), at
///   the pieces of GPT-2's pattern (`count_byte_pieces`);
/// - with a normaliser made only of per-character steps, a pre-tokeniser that drops
///   whitespace, and no added token that holds a cut, at whitespace (`count_words`), and
///   around CJK ideographs too when the normaliser is `BertNormalizer` with
///   `handle_chinese_chars`.
///
/// Any other tokenizer (sentencepiece's metaspace, a prefix space, replacements, custom
/// splits) counts whole texts.
fn word_cuts(tokenizer: &Tokenizer) -> Words {
    use tokenizers::models::ModelWrapper;
    use tokenizers::normalizers::NormalizerWrapper;
    use tokenizers::pre_tokenizers::PreTokenizerWrapper;

    fn per_character(normalizer: &NormalizerWrapper) -> bool {
        match normalizer {
            NormalizerWrapper::BertNormalizer(_)
            | NormalizerWrapper::StripNormalizer(_)
            | NormalizerWrapper::StripAccents(_)
            | NormalizerWrapper::NFC(_)
            | NormalizerWrapper::NFD(_)
            | NormalizerWrapper::NFKC(_)
            | NormalizerWrapper::NFKD(_)
            | NormalizerWrapper::Lowercase(_) => true,
            NormalizerWrapper::Sequence(steps) => steps.as_ref().iter().all(per_character),
            _ => false,
        }
    }
    fn drops_whitespace(pre_tokenizer: &PreTokenizerWrapper) -> bool {
        matches!(
            pre_tokenizer,
            PreTokenizerWrapper::BertPreTokenizer(_)
                | PreTokenizerWrapper::Whitespace(_)
                | PreTokenizerWrapper::WhitespaceSplit(_)
        )
    }
    fn only_splits(pre_tokenizer: &PreTokenizerWrapper) -> bool {
        drops_whitespace(pre_tokenizer)
            || matches!(
                pre_tokenizer,
                PreTokenizerWrapper::Punctuation(_) | PreTokenizerWrapper::Digits(_)
            )
    }

    let model = match tokenizer.get_model() {
        ModelWrapper::BPE(bpe) => bpe.dropout.is_none(),
        ModelWrapper::WordPiece(_) | ModelWrapper::WordLevel(_) | ModelWrapper::Unigram(_) => true,
    };
    if let Some(PreTokenizerWrapper::ByteLevel(byte_level)) = tokenizer.get_pre_tokenizer() {
        let plain = tokenizer.get_normalizer().is_none()
            && byte_level.use_regex
            && !byte_level.add_prefix_space;
        return if plain && model {
            Words::BytePieces
        } else {
            Words::Never
        };
    }
    let normalizer = tokenizer.get_normalizer().is_none_or(per_character);
    let pre_tokenizer = match tokenizer.get_pre_tokenizer() {
        Some(PreTokenizerWrapper::Sequence(steps)) => {
            let steps = steps.as_ref();
            steps.iter().all(only_splits) && steps.iter().any(drops_whitespace)
        }
        Some(single) => drops_whitespace(single),
        None => false,
    };
    if !(normalizer && pre_tokenizer && model) {
        return Words::Never;
    }
    let added = tokenizer.get_added_tokens_decoder();
    let added_hold =
        |cut: &dyn Fn(char) -> bool| added.values().any(|token| token.content.chars().any(cut));
    if added_hold(&|character| character.is_ascii() && is_word_gap(character as u8)) {
        return Words::Never;
    }
    match tokenizer.get_normalizer() {
        Some(NormalizerWrapper::BertNormalizer(bert))
            if bert.handle_chinese_chars && !added_hold(&is_ideograph) =>
        {
            Words::AtIdeographs
        }
        _ => Words::AtWhitespace,
    }
}

/// tiktoken's counting loop for one encoding: its pre-tokenising regex and its ranks (the
/// ordinary tokens only), as tiktoken-rs builds them.
pub(crate) struct Pieces {
    /// The pre-tokenising pattern (see `for_each_piece`).
    split: Pattern,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

/// Largest token id tried when reading the ranks back (`o200k_base` has about 200,000).
const MAX_RANK: Rank = 1 << 18;

impl Pieces {
    /// The loop of `bpe`, whose pre-tokenising pattern is `split`. None if the pattern
    /// does not compile (then tiktoken-rs's own loop is used).
    fn new(bpe: &CoreBPE, split: Pattern) -> Option<Self> {
        // Checked here once; each thread compiles its own copy when it first counts.
        Regex::new(split.source()).ok()?;
        let special: Vec<Rank> = bpe
            .special_tokens()
            .into_iter()
            .flat_map(|token| bpe.encode_with_special_tokens(token))
            .collect();
        let ranks = (0..MAX_RANK)
            .filter(|rank| !special.contains(rank))
            .filter_map(|rank| bpe.decode_bytes(&[rank]).ok().map(|bytes| (bytes, rank)))
            .collect();
        Some(Self { split, ranks })
    }

    /// The loop of a compiled-in encoding, built on first use (the ranks: about 50 ms).
    fn of(encoding: &str, bpe: &'static CoreBPE) -> Option<&'static Self> {
        static O200K: OnceLock<Option<Pieces>> = OnceLock::new();
        static CL100K: OnceLock<Option<Pieces>> = OnceLock::new();
        static P50K: OnceLock<Option<Pieces>> = OnceLock::new();
        static R50K: OnceLock<Option<Pieces>> = OnceLock::new();
        let (cell, split) = match encoding {
            "o200k_base" => (&O200K, Pattern::O200k),
            "cl100k_base" => (&CL100K, Pattern::Cl100k),
            "p50k_base" => (&P50K, Pattern::Gpt2),
            "r50k_base" => (&R50K, Pattern::Gpt2),
            _ => return None,
        };
        cell.get_or_init(|| Self::new(bpe, split)).as_ref()
    }

    /// Tokens of `text` as `CoreBPE::encode_ordinary` counts them, each merged piece's count
    /// taken from or put in `memo`; None if the regex gives up (backtrack limit), for the
    /// caller to count with tiktoken-rs's loop.
    fn count(&self, text: &str, memo: &mut Memo) -> Option<usize> {
        let mut total = 0;
        for_each_piece(self.split, text, |piece| {
            total += if self.ranks.contains_key(piece) {
                1
            } else if let Some(count) = memo.get(piece) {
                count
            } else {
                // Not a token, so at least two bytes (every byte is a token).
                let count = tiktoken_rs::byte_pair_split(piece, &self.ranks).len();
                memo.insert(piece, count);
                count
            };
        })?;
        Some(total)
    }
}

/// Calls `each` with every piece of `text` that the pattern `split` finds (as `find_iter`
/// gives them), most of them found by hand (`pretoken.rs`) and the others by this thread's
/// copy of the regex; None if the regex gives up (backtrack limit).
fn for_each_piece(split: Pattern, text: &str, mut each: impl FnMut(&[u8])) -> Option<()> {
    REGEXES.with(|regexes| {
        let mut regexes = regexes.borrow_mut();
        // Compiled anew, not cloned: a clone shares the original's scratch pools.
        let position = if let Some(found) = regexes.iter().position(|(owner, _)| *owner == split) {
            found
        } else {
            regexes.push((split, Regex::new(split.source()).ok()));
            regexes.len() - 1
        };
        let regex = regexes[position].1.as_ref()?;
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let (start, end) = match pretoken::piece_end(split, bytes, at) {
                Some(end) => (at, end),
                None => match regex.find_from_pos(text, at).ok()? {
                    Some(found) => (found.start(), found.end()),
                    None => break,
                },
            };
            at = end;
            each(&bytes[start..end]);
        }
        Some(())
    })
}

/// While a text is being chunked on this thread, counts go through the memos of `MEMOS`;
/// outside (`Splitter.measure`, say), each count is a plain encoding.
pub struct TextMemo {
    _private: (),
}

/// A memo is cleared when it holds more entries or more bytes of keys than this, and a
/// thread keeps the memos of its last `MEMOS_KEPT` counters: a bound on memory (a few MB per
/// thread), not a cache policy.
const MEMO_ENTRIES: usize = 1 << 16;
const MEMO_BYTES: usize = 4 << 20;
const MEMOS_KEPT: usize = 2;

/// Merged pieces (tiktoken) or words (`count_words`) and their counts. A count depends on the
/// bytes and the counter alone, so a memo serves every text the counter chunks on the thread.
#[derive(Default)]
struct Memo {
    counts: FxHashMap<Box<[u8]>, usize>,
    bytes: usize,
}

impl Memo {
    fn get(&self, key: &[u8]) -> Option<usize> {
        self.counts.get(key).copied()
    }

    fn insert(&mut self, key: &[u8], count: usize) {
        if self.counts.len() >= MEMO_ENTRIES || self.bytes + key.len() > MEMO_BYTES {
            self.counts.clear();
            self.bytes = 0;
        }
        self.bytes += key.len();
        self.counts.insert(key.into(), count);
    }
}

/// This thread's memos, the counter used last at the end, and whether a chunking call is on.
#[derive(Default)]
struct Memos {
    active: bool,
    kept: Vec<(u64, Memo)>,
    /// The `EPOCH` the memos were made in.
    epoch: u64,
}

thread_local! {
    /// Per pattern, this thread's own compiled regex: a regex
    /// shared by threads hands its scratch space to one thread at a time, and the others take
    /// a slower path through a lock (a clone shares those pools too). perf on `chunk_many`
    /// with 2 threads: 19% of the time in the pools' slow paths.
    static REGEXES: RefCell<Vec<(Pattern, Option<Regex>)>> = const { RefCell::new(Vec::new()) };
    static MEMOS: RefCell<Memos> = RefCell::new(Memos::default());
}

/// The key of a counter's memos: a hash of its identity (the encoding's name, the hash of
/// the tokenizer's JSON), so that every sizer of the same tokenizer, at every level and in
/// every chunker, shares them.
fn memo_key(identity: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(identity.as_bytes())
}

/// Bumped by `forget_counts`; a thread whose memos are older drops them.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Drops every thread's memos (lazily: each thread on its next count), so that the next
/// chunking starts cold. For benchmarks, which repeat a job and would otherwise time a memo
/// that already holds every piece of the corpus.
pub fn forget_counts() {
    EPOCH.fetch_add(1, Ordering::Relaxed);
}

impl TextMemo {
    /// Counts through the memos from now until the guard drops (one text's chunking, every
    /// level of it); None, and no effect, inside another guard.
    #[must_use]
    pub fn start() -> Option<Self> {
        MEMOS.with(|memos| {
            let mut memos = memos.borrow_mut();
            if memos.active {
                return None;
            }
            memos.active = true;
            Some(Self { _private: () })
        })
    }

    /// `work` with the memo of counter `key`, or None outside a chunking call.
    fn with<R>(key: u64, work: impl FnOnce(Option<&mut Memo>) -> R) -> R {
        MEMOS.with(|memos| {
            let Ok(mut memos) = memos.try_borrow_mut() else {
                return work(None);
            };
            if !memos.active {
                return work(None);
            }
            let epoch = EPOCH.load(Ordering::Relaxed);
            if memos.epoch != epoch {
                memos.kept.clear();
                memos.epoch = epoch;
            }
            let kept = &mut memos.kept;
            if let Some(position) = kept.iter().position(|(owner, _)| *owner == key) {
                let last = kept.len() - 1;
                kept.swap(position, last);
            } else {
                if kept.len() == MEMOS_KEPT {
                    kept.remove(0);
                }
                kept.push((key, Memo::default()));
            }
            work(kept.last_mut().map(|(_, memo)| memo))
        })
    }
}

impl Drop for TextMemo {
    fn drop(&mut self) {
        MEMOS.with(|memos| memos.borrow_mut().active = false);
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
            Counter::HuggingFace { .. } => usize::MAX,
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
        assert!(MEMOS.with(|memos| !memos.borrow().active));
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

    /// Every text as `sizer` counts it while chunking (twice: counting, then from the memo)
    /// and as `tokenizer` counts it whole.
    fn assert_counts_whole(sizer: &TokenSizer, tokenizer: &Tokenizer, texts: &[String]) {
        let _memo = TextMemo::start().unwrap();
        for text in texts {
            for _ in 0..2 {
                assert_eq!(
                    sizer.size(text),
                    count(tokenizer, text),
                    "{:?}",
                    text.chars().take(60).collect::<String>()
                );
            }
        }
    }

    #[test]
    fn hugging_face_counts_word_by_word_as_a_whole() {
        let sizer = TokenSizer::hugging_face(&crate::testing::tokenizer_json()).unwrap();
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
        let sizer = TokenSizer::hugging_face(&crate::testing::tokenizer_json()).unwrap();
        let long = "word ".repeat(1000);
        assert_eq!(sizer.size(&long), 1000);
        assert!(TokenSizer::hugging_face("{}").is_err());
    }
}
