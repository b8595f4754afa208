//! The memos of token counts kept while texts are chunked: a piece's (or a word's) count
//! depends on its bytes and the tokenizer alone, so it is counted once per thread however
//! many chunks, levels and texts it is counted in.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

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

/// Merged pieces (tiktoken) or words (`count_tokens_by_word`) and their counts. A count
/// depends on the bytes and the counter alone, so a memo serves every text the counter chunks
/// on the thread.
#[derive(Default)]
pub(super) struct Memo {
    counts: FxHashMap<Box<[u8]>, usize>,
    bytes: usize,
}

impl Memo {
    pub(super) fn get(&self, key: &[u8]) -> Option<usize> {
        self.counts.get(key).copied()
    }

    pub(super) fn insert(&mut self, key: &[u8], count: usize) {
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
    static MEMOS: RefCell<Memos> = RefCell::new(Memos::default());
}

/// The key of a counter's memos: a hash of its identity (the encoding's name, the hash of
/// the tokenizer's JSON), so that every sizer of the same tokenizer, at every level and in
/// every chunker, shares them.
pub(super) fn memo_key(identity: &str) -> u64 {
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
    pub(super) fn with<R>(key: u64, work: impl FnOnce(Option<&mut Memo>) -> R) -> R {
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

/// Whether a chunking call is on on this thread (for tests).
#[cfg(test)]
pub(super) fn active() -> bool {
    MEMOS.with(|memos| memos.borrow().active)
}
