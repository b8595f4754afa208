//! A text's line feeds as a bit mask, built once per text with SIMD, so that a search for
//! "\n" or "\n\n" (the default paragraph and line separators) back or forth is a few word
//! operations instead of a `memchr` call per line.

#[cfg(test)]
use crate::text::chars::absent_bytes;
use crate::text::chars::prefetch;

/// One bit per byte of a text, set at its line feeds, with a zero word after the end (so a
/// two-byte look-ahead never leaves the mask).
#[derive(Debug, Clone, Default)]
pub struct LineMask {
    words: Vec<u64>,
}

/// What a [`LineMask`] build learnt of the text's bytes on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteFacts {
    /// The text holds a carriage return.
    pub carriage_return: bool,
    /// Its largest byte.
    pub largest: u8,
}

impl ByteFacts {
    /// Which of `candidates` the text lacks: a carriage return and any byte above the
    /// largest are known; others are looked for, stopping at the first ([`absent_bytes`]
    /// read the whole text for a byte it lacked: 5% of a seeking cut on markdown-en, whose
    /// files lack the lead bytes of CJK punctuation).
    #[must_use]
    pub fn absent(self, text: &str, candidates: &[u8]) -> Vec<u8> {
        candidates
            .iter()
            .copied()
            .filter(|&byte| match byte {
                b'\r' => !self.carriage_return,
                _ if byte > self.largest => true,
                _ => memchr::memchr(byte, text.as_bytes()).is_none(),
            })
            .collect()
    }
}

impl LineMask {
    /// Makes this the mask of `text`, reusing its memory; with AVX2, also learns whether the
    /// text holds a carriage return and its largest byte, in the same pass (`None`: not
    /// learnt).
    pub fn rebuild(&mut self, text: &str) -> Option<ByteFacts> {
        let bytes = text.as_bytes();
        self.words.clear();
        self.words.reserve(bytes.len() / 64 + 2);
        let mut whole = bytes.chunks_exact(64);
        #[cfg(target_arch = "x86_64")]
        let facts = if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU running this has AVX2 (checked just above).
            Some(unsafe { line_feeds_avx2(&mut self.words, &mut whole) })
        } else {
            None
        };
        #[cfg(not(target_arch = "x86_64"))]
        let facts = None;
        for block in &mut whole {
            self.words.push(line_feeds(block));
        }
        let tail = whole.remainder();
        self.words.push(
            tail.iter()
                .enumerate()
                .filter(|&(_, &byte)| byte == b'\n')
                .fold(0_u64, |mask, (offset, _)| mask | (1 << offset)),
        );
        self.words.push(0);
        facts.map(|facts: ByteFacts| ByteFacts {
            carriage_return: facts.carriage_return || tail.contains(&b'\r'),
            largest: tail.iter().copied().fold(facts.largest, u8::max),
        })
    }

    /// Bytes of memory it holds.
    #[must_use]
    pub fn capacity_bytes(&self) -> usize {
        self.words.capacity() * std::mem::size_of::<u64>()
    }

    /// Asks the CPU to fetch the mask's memory for the bytes `[from, to)` into cache.
    #[inline]
    pub fn prefetch(&self, from: usize, to: usize) {
        // Eight words per cache line.
        for word in (from / 64..to.div_ceil(64).min(self.words.len())).step_by(8) {
            prefetch(std::ptr::from_ref(&self.words[word]).cast());
        }
    }

    /// Word `word` of the mask of starts of `width` line feeds in a row (1 or 2).
    #[inline]
    fn starts(&self, word: usize, width: usize) -> u64 {
        let mask = self.words[word];
        if width == 1 {
            mask
        } else {
            mask & ((mask >> 1) | (self.words[word + 1] << 63))
        }
    }

    /// The first start of `width` line feeds (1 or 2) in a row inside `[from, to)`.
    #[inline]
    #[must_use]
    pub fn find(&self, width: usize, from: usize, to: usize) -> Option<usize> {
        let last = to.checked_sub(width).filter(|&last| last >= from)?;
        let mut word = from / 64;
        let mut mask = self.starts(word, width) & (u64::MAX << (from % 64));
        loop {
            if mask != 0 {
                let found = word * 64 + mask.trailing_zeros() as usize;
                return (found <= last).then_some(found);
            }
            word += 1;
            if word * 64 > last {
                return None;
            }
            mask = self.starts(word, width);
        }
    }

    /// The last start of `width` line feeds (1 or 2) in a row inside `[from, to)`.
    #[inline]
    #[must_use]
    pub fn rfind(&self, width: usize, from: usize, to: usize) -> Option<usize> {
        let last = to.checked_sub(width).filter(|&last| last >= from)?;
        let mut word = last / 64;
        let shift = 63 - last % 64;
        let mut mask = (self.starts(word, width) << shift) >> shift;
        loop {
            if mask != 0 {
                let found = word * 64 + 63 - mask.leading_zeros() as usize;
                return (found >= from).then_some(found);
            }
            if word == 0 || word * 64 <= from {
                return None;
            }
            word -= 1;
            mask = self.starts(word, width);
        }
    }
}

/// Bit `i` set when `block[i]` (64 bytes) is a line feed: SSE2 on x86-64 (every such CPU has
/// it), eight bytes per u64 elsewhere.
#[inline]
fn line_feeds(block: &[u8]) -> u64 {
    debug_assert_eq!(block.len(), 64);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let mut mask = 0_u64;
        for (part, sixteen) in block.chunks_exact(16).enumerate() {
            // SAFETY: SSE2 is part of the x86-64 baseline; the load reads the 16 bytes of
            // `sixteen`, a slice of exactly 16 bytes (unaligned loads are allowed).
            #[allow(clippy::cast_sign_loss, clippy::cast_ptr_alignment)]
            let bits = unsafe {
                let bytes = _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>());
                _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(0x0a))) as u32
            };
            mask |= u64::from(bits) << (16 * part);
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        line_feeds_portable(block)
    }
}

/// The line-feed words of the whole 64-byte blocks `blocks` (left empty), with AVX2, and
/// whether they hold a carriage return and their largest byte (kept in registers: a first
/// version kept three SSE2 accumulators in a struct and was slower than a separate pass).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn line_feeds_avx2(
    words: &mut Vec<u64>,
    blocks: &mut std::slice::ChunksExact<'_, u8>,
) -> ByteFacts {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_storeu_si256,
    };
    let line_feed = _mm256_set1_epi8(0x0a);
    let carriage_return = _mm256_set1_epi8(0x0d);
    let mut returns = _mm256_setzero_si256();
    let mut largest = _mm256_setzero_si256();
    for block in blocks {
        // SAFETY: each load reads 32 bytes of `block`, a slice of exactly 64 bytes
        // (unaligned loads are allowed).
        #[allow(clippy::cast_ptr_alignment)]
        let (low, high) = unsafe {
            (
                _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(block.as_ptr().add(32).cast::<__m256i>()),
            )
        };
        #[allow(clippy::cast_sign_loss)]
        let (low_feeds, high_feeds) = (
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(low, line_feed)) as u32,
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(high, line_feed)) as u32,
        );
        words.push(u64::from(low_feeds) | (u64::from(high_feeds) << 32));
        returns = _mm256_or_si256(
            returns,
            _mm256_or_si256(
                _mm256_cmpeq_epi8(low, carriage_return),
                _mm256_cmpeq_epi8(high, carriage_return),
            ),
        );
        largest = _mm256_max_epu8(largest, _mm256_max_epu8(low, high));
    }
    let mut lanes = [0_u8; 32];
    // SAFETY: the store writes the 32 bytes of `lanes` (unaligned stores are allowed).
    #[allow(clippy::cast_ptr_alignment)]
    unsafe {
        _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), largest);
    };
    ByteFacts {
        carriage_return: _mm256_movemask_epi8(returns) != 0,
        largest: lanes.iter().copied().max().unwrap_or(0),
    }
}

/// [`line_feeds`] eight bytes at a time in a u64.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn line_feeds_portable(block: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut mask = 0_u64;
    for (part, eight) in block.chunks_exact(8).enumerate() {
        let mut word = [0_u8; 8];
        word.copy_from_slice(eight);
        let zeroed = u64::from_le_bytes(word) ^ 0x0a0a_0a0a_0a0a_0a0a;
        // Bit 7 of each byte set exactly where the byte is zero (no carries across bytes).
        let zero = !(((zeroed & LOW7) + LOW7) | zeroed | LOW7);
        let gathered = ((zero >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
        mask |= gathered << (8 * part);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_mask_finds_what_a_scan_finds() {
        // Line feeds alone and in pairs, across word edges, and a text ending on and off one.
        // (Under Miri, fewer: it interprets every scan; block edges are covered below.)
        let text: String = (0..if cfg!(miri) { 80 } else { 300 })
            .map(|index| match index % 7 {
                0 | 3 => "\n",
                5 if index % 3 == 0 => "\n\n",
                _ => "ab",
            })
            .collect();
        for text in [text.as_str(), "\n", "", "x\n\n"] {
            let mut lines = LineMask::default();
            let _ = lines.rebuild(text);
            let bytes = text.as_bytes();
            let starts = |width: usize, from: usize, to: usize| {
                (from..to.saturating_sub(width - 1).max(from))
                    .filter(move |&at| bytes[at..at + width].iter().all(|&byte| byte == b'\n'))
            };
            for from in (0..=bytes.len()).step_by(3) {
                for to in (from..=bytes.len()).step_by(5) {
                    for width in [1, 2] {
                        assert_eq!(lines.find(width, from, to), starts(width, from, to).next());
                        assert_eq!(
                            lines.rfind(width, from, to),
                            starts(width, from, to).next_back()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_line_pass_learns_the_bytes() {
        let long = "x".repeat(200);
        for text in [
            "",
            "a\rb",
            "中文。\n",
            &long,
            &(long.clone() + "\r"),
            &(long.clone() + "é\n\r" + &long),
            "\u{3000}",
        ] {
            let mut lines = LineMask::default();
            let Some(facts) = lines.rebuild(text) else {
                continue; // no AVX2 here: nothing learnt, nothing to check
            };
            assert_eq!(facts.carriage_return, text.contains('\r'), "{text:?}");
            assert_eq!(facts.largest, text.bytes().max().unwrap_or(0), "{text:?}");
            for candidates in [&b"\r\xe3\xef"[..], b"\r", b"\xc3", b""] {
                assert_eq!(
                    facts.absent(text, candidates),
                    absent_bytes(text, candidates),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn line_mask_at_every_block_edge() {
        // Every length across the 16-, 32- and 64-byte blocks, at several alignments, with
        // multi-byte chars straddling them: the mask, and what the pass learns, by a scan.
        let mut lines = LineMask::default();
        for (holder, offset) in crate::testing::block_edge_texts() {
            let text = &holder[offset..];
            let facts = lines.rebuild(text);
            // Where AVX2 is compiled in (Miri with `-C target-feature=+avx2`), it must run.
            if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) {
                assert!(facts.is_some(), "the AVX2 pass did not run");
            }
            let bytes = text.as_bytes();
            assert_eq!(lines.words.len(), bytes.len() / 64 + 2, "{text:?}");
            for (word, &mask) in lines.words.iter().enumerate() {
                let expected = (0..64)
                    .filter(|&bit| bytes.get(word * 64 + bit) == Some(&b'\n'))
                    .fold(0_u64, |mask, bit| mask | (1 << bit));
                assert_eq!(mask, expected, "{text:?} word {word}");
            }
            if let Some(facts) = facts {
                assert_eq!(facts.carriage_return, text.contains('\r'), "{text:?}");
                assert_eq!(facts.largest, bytes.iter().copied().max().unwrap_or(0));
            }
            assert_eq!(lines.find(1, 0, bytes.len()), text.find('\n'), "{text:?}");
            assert_eq!(lines.rfind(1, 0, bytes.len()), text.rfind('\n'), "{text:?}");
            lines.prefetch(0, bytes.len());
        }
    }

    #[test]
    fn line_feeds_agree_with_the_portable_form() {
        let block: Vec<u8> = (0..64_u8)
            .map(|index| [b'\n', b'a', 0x8a, 0x0a][usize::from(index % 4)])
            .collect();
        let expected = (0..64)
            .filter(|&index| block[index] == b'\n')
            .fold(0_u64, |mask, index| mask | (1 << index));
        assert_eq!(line_feeds(&block), expected);
        assert_eq!(line_feeds_portable(&block), expected);
    }
}
