//! Char (code point) counts of any range of one text in constant time.

use crate::text::chars::{is_char_start, prefetch};

/// Char (code point) counts of any range of one text in constant time, from one pass over it.
///
/// The engine measures every piece it considers, and most pieces are short (a line, a
/// sentence, the gap between two pieces): `bytecount::num_chars` is fast per byte but each
/// call pays for its dispatch, alignment and tail, and a piece measured at the parent level is
/// measured again piece by piece at the child level. Counting was a quarter of the engine's
/// time on the corpus. The index keeps, per 64-byte block, the chars before the block and a
/// bit mask of the block's char starts; a count is two look-ups and two popcounts. Memory is
/// a quarter of the text (16 bytes per 64). Written here because no crate found keeps a rank
/// index over UTF-8 char starts.
#[derive(Debug, Clone, Default)]
pub struct CharIndex {
    /// Per 64-byte block (and one for the tail): chars before it, and its char-start mask.
    blocks: Vec<(u64, u64)>,
    /// The text is ASCII: every byte is a char, and `blocks` is left empty (no build, no
    /// memory: 20 MB of `"x"` in `benches/scale.py` went from 4.1 to 3.5 ms).
    ascii: bool,
    /// The CPU has the popcount instruction (x86-64 only; see [`CharIndex::chars_before`]).
    popcnt: bool,
}

impl CharIndex {
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
        // `is_ascii` stops at the first non-ASCII byte: at once on CJK text.
        self.ascii = text.is_ascii();
        #[cfg(target_arch = "x86_64")]
        {
            self.popcnt = std::arch::is_x86_feature_detected!("popcnt");
        }
        if self.ascii {
            return;
        }
        self.blocks.reserve(bytes.len() / 64 + 1);
        // The x86-64 baseline has no popcount instruction: its software form was most of
        // the build (10% of the engine on markdown-en). The build is one self-contained
        // loop, so it alone is compiled a second time with the instruction, and picked at run
        // time.
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("popcnt")
            {
                // SAFETY: the CPU running this has both extensions (checked just above).
                unsafe { fill_blocks_avx2(&mut self.blocks, bytes) };
                return;
            }
            if std::arch::is_x86_feature_detected!("popcnt") {
                // SAFETY: the CPU running this has the instruction (checked just above).
                unsafe { fill_blocks_popcnt(&mut self.blocks, bytes) };
                return;
            }
        }
        fill_blocks(&mut self.blocks, bytes);
    }

    /// Whether the text is ASCII (every byte a char).
    #[must_use]
    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// Bytes of memory it holds.
    #[must_use]
    pub fn capacity_bytes(&self) -> usize {
        self.blocks.capacity() * std::mem::size_of::<(u64, u64)>()
    }

    /// Chars in `text[..byte]`; `byte` must be at most the text's length.
    #[inline]
    #[must_use]
    #[allow(clippy::cast_possible_truncation)]
    pub fn chars_before(&self, byte: usize) -> usize {
        if self.ascii {
            return byte;
        }
        let (before, mask) = self.blocks[byte / 64];
        let below = mask & ((1_u64 << (byte % 64)) - 1);
        (before + u64::from(self.ones(below))) as usize
    }

    /// Asks the CPU to fetch the index's memory for the bytes `[from, to)` into cache.
    #[inline]
    pub(crate) fn prefetch(&self, from: usize, to: usize) {
        // Four blocks (16 bytes each) per cache line.
        for block in (from / 64..to.div_ceil(64).min(self.blocks.len())).step_by(4) {
            prefetch(std::ptr::from_ref(&self.blocks[block]).cast());
        }
    }

    /// Chars in `text[start..end]`; both must be char boundaries.
    #[inline]
    #[must_use]
    pub fn count(&self, start: usize, end: usize) -> usize {
        self.chars_before(end) - self.chars_before(start)
    }
}

impl CharIndex {
    /// The set bits of `word`. The x86-64 baseline has no popcount instruction, and its
    /// software form (a dozen instructions around a multiply) was a tenth of the time of a
    /// seeking cut (`engine/seek.rs`); the engine is not compiled for a newer CPU, so the
    /// instruction is written out and used where the CPU has it (a branch that always goes
    /// the same way).
    #[inline]
    fn ones(&self, word: u64) -> u32 {
        // Miri runs no inline assembly: under it, `count_ones` (the same instruction where
        // `popcnt` is compiled in).
        #[cfg(miri)]
        let _ = self.popcnt;
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.popcnt {
            let ones: u64;
            // SAFETY: `popcnt` is set only where the CPU has the instruction (checked in
            // `rebuild`); it reads one register and writes another, nothing else.
            unsafe {
                std::arch::asm!(
                    "popcnt {ones}, {word}",
                    word = in(reg) word,
                    ones = lateout(reg) ones,
                    options(pure, nomem, nostack),
                );
            }
            #[allow(clippy::cast_possible_truncation)]
            return ones as u32;
        }
        word.count_ones()
    }
}

/// Appends the blocks of `bytes` to `blocks` (see [`CharIndex`]).
// Always inlined: the copy inside `fill_blocks_popcnt` is what gets the instruction.
#[allow(clippy::inline_always)]
#[inline(always)]
fn fill_blocks(blocks: &mut Vec<(u64, u64)>, bytes: &[u8]) {
    let mut before = 0_u64;
    let mut whole = bytes.chunks_exact(64);
    for block in &mut whole {
        let mask = start_mask(block);
        blocks.push((before, mask));
        before += u64::from(mask.count_ones());
    }
    blocks.push((before, tail_mask(whole.remainder())));
}

/// The char-start mask of the last, partial block.
#[inline]
fn tail_mask(tail: &[u8]) -> u64 {
    tail.iter()
        .enumerate()
        .filter(|&(_, &byte)| is_char_start(byte))
        .fold(0_u64, |mask, (offset, _)| mask | (1 << offset))
}

/// [`fill_blocks`] with the popcount instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn fill_blocks_popcnt(blocks: &mut Vec<(u64, u64)>, bytes: &[u8]) {
    fill_blocks(blocks, bytes);
}

/// [`fill_blocks`] with AVX2 (32 bytes per compare: the build takes a quarter fewer
/// instructions than with SSE2) and the popcount instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn fill_blocks_avx2(blocks: &mut Vec<(u64, u64)>, bytes: &[u8]) {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpgt_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    };
    let mut before = 0_u64;
    let mut whole = bytes.chunks_exact(64);
    for block in &mut whole {
        // SAFETY: AVX2 is enabled for this function, which runs only where the CPU has it;
        // each load reads 32 bytes of `block`, a slice of exactly 64 bytes (unaligned loads
        // are allowed).
        #[allow(clippy::cast_sign_loss, clippy::cast_ptr_alignment)]
        let (low, high) = unsafe {
            let floor = _mm256_set1_epi8(-0x41);
            let low = _mm256_loadu_si256(block.as_ptr().cast::<__m256i>());
            let high = _mm256_loadu_si256(block.as_ptr().add(32).cast::<__m256i>());
            (
                _mm256_movemask_epi8(_mm256_cmpgt_epi8(low, floor)) as u32,
                _mm256_movemask_epi8(_mm256_cmpgt_epi8(high, floor)) as u32,
            )
        };
        let mask = u64::from(low) | (u64::from(high) << 32);
        blocks.push((before, mask));
        before += u64::from(mask.count_ones());
    }
    blocks.push((before, tail_mask(whole.remainder())));
}

/// Bit `i` set when `block[i]` (64 bytes) starts a char: SSE2 (every x86-64 CPU) compares 16
/// bytes at a time, 33 GB/s here; elsewhere eight bytes per u64, 11 GB/s (a byte-at-a-time
/// loop, which the compiler does not vectorise into a mask, was 2.4 GB/s).
#[inline]
fn start_mask(block: &[u8]) -> u64 {
    debug_assert_eq!(block.len(), 64);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpgt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let mut mask = 0_u64;
        for (part, sixteen) in block.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 is part of the x86-64 baseline, so the intrinsics are available on
            // every CPU this code runs on; the load reads the 16 bytes of `sixteen`, a slice
            // of exactly 16 bytes (unaligned loads are allowed).
            // `_mm_loadu_si128` is the unaligned load: the pointer's alignment does not matter.
            #[allow(clippy::cast_sign_loss, clippy::cast_ptr_alignment)]
            let bits = unsafe {
                let bytes = _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>());
                // A char starts at a byte that is not 0b10xx_xxxx: as i8, not below -0x40.
                _mm_movemask_epi8(_mm_cmpgt_epi8(bytes, _mm_set1_epi8(-0x41))) as u32
            };
            mask |= u64::from(bits) << (16 * part);
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        start_mask_portable(block)
    }
}

/// [`start_mask`] eight bytes at a time in a u64.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn start_mask_portable(block: &[u8]) -> u64 {
    let mut mask = 0_u64;
    for (part, eight) in block.chunks_exact(8).enumerate() {
        let mut word = [0_u8; 8];
        word.copy_from_slice(eight);
        let word = u64::from_le_bytes(word);
        // Bit 7 of each byte: set for a char start (not bit 7 set with bit 6 clear).
        let starts = !(word & !(word << 1)) & 0x8080_8080_8080_8080;
        // Gathers bit 7 of byte i into bit 56 + i.
        let gathered = ((starts >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
        mask |= gathered << (8 * part);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_at_every_block_edge() {
        // Every length across the 16-, 32- and 64-byte blocks, at several alignments, with
        // multi-byte chars straddling them: every build of the blocks, and the counts.
        let mut index = CharIndex::default();
        for (holder, offset) in crate::testing::block_edge_texts() {
            let text = &holder[offset..];
            index.rebuild(text);
            let mut baseline = Vec::new();
            fill_blocks(&mut baseline, text.as_bytes());
            if !index.is_ascii() {
                assert_eq!(index.blocks, baseline, "{text:?}");
            }
            #[cfg(target_arch = "x86_64")]
            {
                // Where the extensions are compiled in (Miri with `-C target-feature=+avx2,
                // +popcnt`), the detection must report them, so that their builds run.
                if cfg!(target_feature = "popcnt") {
                    assert!(std::arch::is_x86_feature_detected!("popcnt"));
                }
                if cfg!(target_feature = "avx2") {
                    assert!(std::arch::is_x86_feature_detected!("avx2"));
                }
                if std::arch::is_x86_feature_detected!("popcnt") {
                    let mut blocks = Vec::new();
                    // SAFETY: the CPU has the instruction (checked just above).
                    unsafe { fill_blocks_popcnt(&mut blocks, text.as_bytes()) };
                    assert_eq!(blocks, baseline, "{text:?}");
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("popcnt")
                {
                    let mut blocks = Vec::new();
                    // SAFETY: the CPU has both extensions (checked just above).
                    unsafe { fill_blocks_avx2(&mut blocks, text.as_bytes()) };
                    assert_eq!(blocks, baseline, "{text:?}");
                }
            }
            let starts = text.char_indices().chain([(text.len(), ' ')]);
            for (chars, (at, _)) in starts.enumerate() {
                assert_eq!(index.chars_before(at), chars, "{text:?} at {at}");
            }
            assert_eq!(index.count(0, text.len()), text.chars().count());
            index.prefetch(0, text.len());
        }
    }

    #[test]
    fn index_counts_every_range() {
        // Every mix of widths, across block edges, and texts ending on and off a block edge.
        for text in [
            "aé😀中 b\u{301}\n".repeat(23),
            "x".repeat(128),
            "x".repeat(127) + "é",
            "中".repeat(64),
            String::new(),
            "é".repeat(40),
        ] {
            let index = CharIndex::new(&text);
            let boundaries: Vec<usize> = (0..=text.len())
                .filter(|&offset| text.is_char_boundary(offset))
                .collect();
            for (position, &start) in boundaries.iter().enumerate() {
                assert_eq!(index.chars_before(start), position, "{text:?} at {start}");
                for &end in boundaries[position..].iter().step_by(7) {
                    assert_eq!(index.count(start, end), text[start..end].chars().count());
                }
            }
            for block in text.as_bytes().chunks_exact(64) {
                let expected = (0..64)
                    .filter(|&offset| is_char_start(block[offset]))
                    .fold(0_u64, |mask, offset| mask | (1 << offset));
                assert_eq!(start_mask(block), expected);
                assert_eq!(start_mask_portable(block), expected);
            }
            // Every build of the blocks agrees with the baseline one (the index above used
            // the best this CPU has).
            let mut baseline = Vec::new();
            fill_blocks(&mut baseline, text.as_bytes());
            if !index.is_ascii() {
                assert_eq!(index.blocks, baseline);
            }
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("popcnt") {
                    let mut blocks = Vec::new();
                    // SAFETY: the CPU has the instruction (checked just above).
                    unsafe { fill_blocks_popcnt(&mut blocks, text.as_bytes()) };
                    assert_eq!(blocks, baseline);
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("popcnt")
                {
                    let mut blocks = Vec::new();
                    // SAFETY: the CPU has both extensions (checked just above).
                    unsafe { fill_blocks_avx2(&mut blocks, text.as_bytes()) };
                    assert_eq!(blocks, baseline);
                }
            }
        }
    }
}
