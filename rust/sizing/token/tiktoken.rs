//! tiktoken's counting loop, rebuilt from the public parts of `tiktoken-rs` with a memo of
//! every merged piece's count (see the module notes in `token/mod.rs`).

use std::cell::RefCell;
use std::sync::OnceLock;

use fancy_regex::Regex;
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

use super::memo::Memo;
use super::pretoken::{self, PretokenPattern};

/// tiktoken's counting loop for one encoding: its pre-tokenising regex and its ranks (the
/// ordinary tokens only), as tiktoken-rs builds them.
pub(super) struct Pieces {
    /// The pre-tokenising pattern (see `for_each_piece`).
    split: PretokenPattern,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

/// Largest token id tried when reading the ranks back (`o200k_base` has about 200,000).
const MAX_RANK: Rank = 1 << 18;

impl Pieces {
    /// The loop of `bpe`, whose pre-tokenising pattern is `split`. None if the pattern
    /// does not compile (then tiktoken-rs's own loop is used).
    fn new(bpe: &CoreBPE, split: PretokenPattern) -> Option<Self> {
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
    pub(super) fn of(encoding: &str, bpe: &'static CoreBPE) -> Option<&'static Self> {
        static O200K: OnceLock<Option<Pieces>> = OnceLock::new();
        static CL100K: OnceLock<Option<Pieces>> = OnceLock::new();
        static P50K: OnceLock<Option<Pieces>> = OnceLock::new();
        static R50K: OnceLock<Option<Pieces>> = OnceLock::new();
        let (cell, split) = match encoding {
            "o200k_base" => (&O200K, PretokenPattern::O200k),
            "cl100k_base" => (&CL100K, PretokenPattern::Cl100k),
            "p50k_base" => (&P50K, PretokenPattern::Gpt2),
            "r50k_base" => (&R50K, PretokenPattern::Gpt2),
            _ => return None,
        };
        cell.get_or_init(|| Self::new(bpe, split)).as_ref()
    }

    /// Tokens of `text` as `CoreBPE::encode_ordinary` counts them, each merged piece's count
    /// taken from or put in `memo`; None if the regex gives up (backtrack limit), for the
    /// caller to count with tiktoken-rs's loop.
    pub(super) fn count(&self, text: &str, memo: &mut Memo) -> Option<usize> {
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
pub(super) fn for_each_piece(
    split: PretokenPattern,
    text: &str,
    mut each: impl FnMut(&[u8]),
) -> Option<()> {
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
            let (start, end) = match pretoken::piece_end(split, text, at) {
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

thread_local! {
    /// Per pattern, this thread's own compiled regex: a regex
    /// shared by threads hands its scratch space to one thread at a time, and the others take
    /// a slower path through a lock (a clone shares those pools too). perf on `chunk_many`
    /// with 2 threads: 19% of the time in the pools' slow paths.
    static REGEXES: RefCell<Vec<(PretokenPattern, Option<Regex>)>> =
        const { RefCell::new(Vec::new()) };
}
