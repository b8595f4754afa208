//! Word counts (`unit="word"`, see `text::sentences::count_words`) of any range of one text
//! in constant time, while that text is being chunked.
//!
//! Words do not add: a piece cut inside a word counts one on each side, so the engine counts
//! every piece it considers at every separator level and every chunk it grows, and on text
//! with few spaces (Chinese: a "word" is a whole clause) the same bytes were counted again
//! and again: `count_words` was 80% of the engine's time on markdown-zh at 200/50 words. The
//! index keeps, per 64-byte block, the words that start before the block and a bit mask of
//! the block's word starts (16 bytes per 64, like `CharIndex`); a count is two look-ups, two
//! popcounts, and a look at the first chars of the range (a range that starts inside a word
//! counts that word too). Written here because no crate keeps a rank index of word starts.
//!
//! The index lives in a per-thread slot while a text is chunked ([`TextWords::start`], next
//! to the token memos), so that every count of the word sizer, wherever in the engine it is
//! asked, finds it: a range is looked up when its bytes lie inside the indexed text (compared
//! by address: the guard borrows the text, so nothing else can live there meanwhile), and
//! counted directly otherwise.

use std::cell::RefCell;
use std::marker::PhantomData;

use crate::text::chars::{space_after, whitespace_after};
use crate::text::sentences::{count_words, walk_word_starts};

/// Word starts of one text: per 64-byte block (and one for the tail), the starts before it and
/// its start mask. A start is the first byte of a visible non-whitespace char whose nearest
/// char before it that is not invisible is whitespace, or that has none.
#[derive(Debug, Default)]
pub struct WordIndex {
    blocks: Vec<(u64, u64)>,
}

impl WordIndex {
    /// The index of `text`.
    #[must_use]
    pub fn new(text: &str) -> Self {
        let mut index = Self::default();
        index.rebuild(text);
        index
    }

    /// Makes this the index of `text`, reusing its memory.
    pub fn rebuild(&mut self, text: &str) {
        let bytes = text.as_bytes();
        self.blocks.clear();
        self.blocks.resize(bytes.len() / 64 + 1, (0, 0));
        mark_starts(&mut self.blocks, bytes);
        let mut before = 0;
        for block in &mut self.blocks {
            block.0 = before;
            before += u64::from(block.1.count_ones());
        }
    }

    /// Word starts in `text[..byte]`.
    #[inline]
    #[allow(clippy::cast_possible_truncation)]
    fn starts_before(&self, byte: usize) -> usize {
        let (before, mask) = self.blocks[byte / 64];
        (before + u64::from((mask & ((1_u64 << (byte % 64)) - 1)).count_ones())) as usize
    }

    /// Whether a word starts at `byte`.
    #[inline]
    fn starts_at(&self, byte: usize) -> bool {
        self.blocks[byte / 64].1 >> (byte % 64) & 1 != 0
    }

    /// Words of `range`, the bytes `start..start + range.len()` of the indexed text: the same
    /// as `count_words(range)`.
    #[must_use]
    pub fn count(&self, range: &str, start: usize) -> usize {
        let bytes = range.as_bytes();
        let mut count = self.starts_before(start + bytes.len()) - self.starts_before(start);
        // The range's first char that is not invisible, when it is no whitespace, starts a
        // word of the range even where it does not start one of the text.
        let mut at = 0;
        while at < bytes.len() {
            let blank = space_after(bytes, at);
            if blank == 0 {
                count += usize::from(!self.starts_at(start + at));
                break;
            }
            if whitespace_after(bytes, at) > 0 {
                break;
            }
            at += blank;
        }
        count
    }
}

/// Sets the bit of every word start of `bytes` in the masks of `blocks` (cleared).
fn mark_starts(blocks: &mut [(u64, u64)], bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        mark_starts_sse2(blocks, bytes);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        walk_word_starts(bytes, (0, true), bytes.len(), |at, starts| {
            set_starts(blocks, at, gathered(starts));
        });
    }
}

/// One bit per byte, byte i at bit i, from the high bit of each byte of `starts`: moved to
/// the low bit of each byte, then gathered by one multiply (no two of its products overlap).
#[inline]
fn gathered(starts: u64) -> u64 {
    (starts >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Sets the start bits `bits` (bit i: the byte `at + i`, at most 16 of them) in `blocks`.
#[inline]
fn set_starts(blocks: &mut [(u64, u64)], at: usize, bits: u64) {
    let (word, shift) = (at / 64, at % 64);
    blocks[word].1 |= bits << shift;
    if shift > 48 && bits >> (64 - shift) != 0 {
        blocks[word + 1].1 |= bits >> (64 - shift);
    }
}

/// [`mark_starts`] sixteen bytes at a time with SSE2 (every x86-64 CPU has it): the
/// whitespace bytes of a block are two range compares, its word starts the other bytes after
/// a whitespace byte. A block where a non-ASCII blank char may start (the lead bytes of
/// `text::sentences::blank_leads`, with the bytes after them: "、", "。" and "，" are none)
/// is walked eight bytes at a time instead. The SWAR walk alone built the index at about
/// 1 GB/s on markdown-zh, a fifth of chunking it in words; this runs at 2.9 GB/s.
#[cfg(target_arch = "x86_64")]
fn mark_starts_sse2(blocks: &mut [(u64, u64)], bytes: &[u8]) {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_or_si128, _mm_set1_epi8,
    };
    let (mut at, mut after_space) = (0, true);
    // Each block reads two bytes past its sixteen (the bytes after a lead).
    while at + 18 <= bytes.len() {
        // SAFETY: SSE2 is part of the x86-64 baseline, so the intrinsics are available on
        // every CPU this code runs on; the three loads read `bytes[at..at + 18]`, in bounds
        // (checked by the loop), and `_mm_loadu_si128` takes any alignment.
        #[allow(
            clippy::cast_sign_loss,
            clippy::cast_ptr_alignment,
            clippy::cast_possible_wrap
        )]
        let (leads, space) = unsafe {
            let at_byte = |byte: u8| _mm_set1_epi8(byte as i8);
            let block = _mm_loadu_si128(bytes.as_ptr().add(at).cast::<__m128i>());
            let next = _mm_loadu_si128(bytes.as_ptr().add(at + 1).cast::<__m128i>());
            let after_next = _mm_loadu_si128(bytes.as_ptr().add(at + 2).cast::<__m128i>());
            let equal = |bytes: __m128i, byte: u8| _mm_cmpeq_epi8(bytes, at_byte(byte));
            // As i8, ASCII is not negative and every other byte is: the ranges hold ASCII
            // whitespace alone (tab to carriage return, U+001C to space).
            let between = |low: u8, high: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(block, at_byte(low - 1)),
                    _mm_cmpgt_epi8(at_byte(high + 1), block),
                )
            };
            let space = _mm_or_si128(between(0x09, 0x0d), between(0x1c, 0x20));
            let ideographic_space = _mm_and_si128(
                equal(block, 0xe3),
                _mm_and_si128(equal(next, 0x80), equal(after_next, 0x80)),
            );
            let byte_order_mark = _mm_and_si128(equal(block, 0xef), equal(next, 0xbb));
            let leads = _mm_or_si128(
                _mm_or_si128(
                    _mm_or_si128(equal(block, 0xc2), equal(block, 0xd8)),
                    _mm_or_si128(equal(block, 0xe0), equal(block, 0xe1)),
                ),
                _mm_or_si128(
                    equal(block, 0xe2),
                    _mm_or_si128(ideographic_space, byte_order_mark),
                ),
            );
            (
                _mm_movemask_epi8(leads) as u32,
                _mm_movemask_epi8(space) as u32,
            )
        };
        if leads != 0 {
            (at, after_space) =
                walk_word_starts(bytes, (at, after_space), at + 16, |found, starts| {
                    set_starts(blocks, found, gathered(starts));
                });
            continue;
        }
        let starts = !space & ((space << 1) | u32::from(after_space)) & 0xffff;
        set_starts(blocks, at, u64::from(starts));
        after_space = space >> 15 & 1 != 0;
        at += 16;
    }
    walk_word_starts(bytes, (at, after_space), bytes.len(), |found, starts| {
        set_starts(blocks, found, gathered(starts));
    });
}

/// The text being chunked on this thread: its address, length and word index.
#[derive(Default)]
struct WordIndexSlot {
    active: bool,
    base: usize,
    len: usize,
    index: WordIndex,
}

thread_local! {
    static SLOT: RefCell<WordIndexSlot> = RefCell::new(WordIndexSlot::default());
}

/// Ranges shorter than this are counted directly: the walk is as fast as the look-ups.
const DIRECT_BELOW: usize = 64;

/// While it lives, word counts of ranges of `text` on this thread are looked up in its index.
pub struct TextWords<'t> {
    active: bool,
    _text: PhantomData<&'t str>,
}

impl<'t> TextWords<'t> {
    /// Indexes `text` for this thread until the guard drops; no effect inside another guard
    /// (the outer text keeps the slot) or for a short text.
    #[must_use]
    pub fn start(text: &'t str) -> Self {
        let active = text.len() >= DIRECT_BELOW
            && SLOT.with(|slot| {
                let Ok(mut slot) = slot.try_borrow_mut() else {
                    return false;
                };
                if slot.active {
                    return false;
                }
                slot.index.rebuild(text);
                (slot.active, slot.base, slot.len) = (true, text.as_ptr() as usize, text.len());
                true
            });
        Self {
            active,
            _text: PhantomData,
        }
    }
}

impl Drop for TextWords<'_> {
    fn drop(&mut self) {
        if self.active {
            SLOT.with(|slot| slot.borrow_mut().active = false);
        }
    }
}

/// `count_words(range)`, looked up when `range` lies in the text indexed on this thread.
#[must_use]
pub fn words(range: &str) -> usize {
    if range.len() < DIRECT_BELOW {
        return count_words(range);
    }
    SLOT.with(|slot| {
        let Ok(slot) = slot.try_borrow() else {
            return count_words(range);
        };
        let address = range.as_ptr() as usize;
        if slot.active && address >= slot.base && address + range.len() <= slot.base + slot.len {
            slot.index.count(range, address - slot.base)
        } else {
            count_words(range)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_every_range(text: &str) {
        let index = WordIndex::new(text);
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|&at| text.is_char_boundary(at))
            .collect();
        // Under Miri (which runs the SSE2 build here), the ranges that start or end the text.
        let every = !cfg!(miri);
        for (row, &start) in bounds.iter().enumerate() {
            for &end in &bounds[row..] {
                if !every && start != 0 && end != text.len() {
                    continue;
                }
                let range = &text[start..end];
                assert_eq!(
                    index.count(range, start),
                    count_words(range),
                    "{text:?} [{start}..{end}]"
                );
            }
        }
    }

    #[test]
    fn every_range_counts_as_count_words() {
        let pieces = [
            " ",
            "a",
            "bc",
            "\n",
            "\t",
            "中文",
            "\u{3000}",
            "\u{a0}",
            "\u{200b}",
            "\u{feff}",
            "\u{ad}",
            "é",
            "😀",
            "\u{200d}",
            "\u{2028}",
            "\u{85}",
            "x.",
            "  ",
            "\u{1c}",
            "word",
            "、",
            "。",
            "，",
            "“",
            "\u{3001}\u{3000}",
            "\u{e000}",
            "\u{2000}",
            "中文中文中文",
        ];
        let count = if cfg!(miri) { 40 } else { 1500 };
        for text in crate::testing::random_texts(&pieces, count, 60, 0x853c_49e6_748f_ea9b) {
            check_every_range(&text);
        }
        // ASCII runs that cross the eight-byte and 64-byte blocks at every offset.
        let long: String = (0..300)
            .map(|at| {
                if (at * 7 + at / 13) % 5 == 0 {
                    ' '
                } else {
                    'w'
                }
            })
            .collect();
        check_every_range(&long);
        check_every_range(&format!("\u{200b}{long}\u{3000}中{long}"));
    }

    #[test]
    fn the_slot_serves_ranges_of_the_text_alone() {
        let text = "one two 三四 five ".repeat(40);
        let other = text.clone();
        {
            let _words = TextWords::start(&text);
            // A second guard, for another text, leaves the first in place.
            let _inner = TextWords::start(&other);
            for (start, end) in [(0, text.len()), (3, 300), (5, text.len() - 1)] {
                assert_eq!(words(&text[start..end]), count_words(&text[start..end]));
                assert_eq!(words(&other[start..end]), count_words(&other[start..end]));
            }
        }
        assert!(!SLOT.with(|slot| slot.borrow().active));
        assert_eq!(words(&text), count_words(&text));
    }
}
