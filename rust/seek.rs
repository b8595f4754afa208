//! Cut points found without an atom per piece: the engine's seek mode.
//!
//! The atom engine (`split.rs`, `merge.rs`) walks every piece of a text: each paragraph is
//! trimmed, measured and pushed at every level of a tree, though most of them only ever sit
//! inside a chunk. For the common settings (sizes in chars, trimmed chunks, no overlap, no
//! joining of small pieces, plain text, the separator placed at the end of its piece) a
//! chunk is the longest run of atoms from its start whose char count fits, so its end is the
//! last atom end at or before the char `chunk_size` past its start. Seeking finds that end
//! directly: from that char back to the nearest boundary of the coarsest separator level
//! that cuts there, going down a level only inside the piece that holds the char, as the
//! recursive split would. It returns exactly the atom engine's chunks; whatever it does not
//! handle (a piece with no separator at all, cut by graphemes) makes it give up, and the
//! atom engine cuts the text instead.
//!
//! Searching back for a boundary finds the same boundaries as the engine's forward
//! leftmost-longest search only for some separator levels ([`Splitter::seekable`]): levels
//! whose separators cannot overlap (every occurrence is then a match), and levels made of
//! whitespace only (overlapping matches there only move a cut inside a run of whitespace,
//! which trimming removes).
//!
//! Performance notes (parent 2000 / child 400 chars over the corpus, best pass in ms,
//! gutenberg / markdown-en / markdown-zh; the atom engine: 1.21 / 0.53 / 0.34):
//! - a first version with one-shot `memmem` searches back and forth: 2.43 / 0.96 / 0.49;
//!   then the separators' first bytes found by `memchr` / `memrchr` and checked in place
//!   (a `memmem` searcher built per call cost more than the search), patterns the text
//!   lacks skipped: 1.23 / 0.52 / 0.25;
//! - separators made of line feeds only ("\n\n", "\n") found in a bit mask of the text's
//!   line feeds, built once per text with SIMD ([`LineMask`]): a search back or forth is a
//!   few word operations instead of a `memchr` call per line. With Unicode trimming, searches
//!   in doubling windows (so that a pattern absent from a long piece is not searched to its
//!   end for every chunk) and char offsets for the output, in the engine: 0.83 / 0.36 / 0.27;
//! - the walk down the pieces as a loop, the search for a piece's end started just before
//!   the char sought instead of at the piece's start: 0.77 / 0.33 / 0.26;
//! - the popcount instruction for char look-ups where the CPU has it (`size.rs`; the
//!   software form was a tenth of the time): 0.71 / 0.32 / 0.23;
//! - the path's memory kept per thread ([`SeekPath`]), not allocated per level and text:
//!   0.72 / 0.31 / 0.22; trimming by whitespace bytes instead of decoding edge chars
//!   (`split.rs`): 0.71 / 0.30 / 0.22; separators kept as they are searched for
//!   ([`SeekPattern`]), and the next chunk's start trimmed at its start only:
//!   0.71 / 0.30 / 0.21;
//! - the table's records written as the chunks are found (no spans to convert and gather
//!   per level): 0.68 / 0.29 / 0.20;
//! - the line-feed pass, with AVX2, also learns whether the text holds a carriage return
//!   and its largest byte ([`ByteFacts`]), which answers the check for absent separator
//!   bytes without its own pass: 0.69 / 0.28 / 0.19;
//! - a level with one pattern that can occur (blank lines, or line breaks, in a text with
//!   no "\r") searched for directly, not in windows: 0.64 / 0.26 / 0.18. Where the time
//!   goes then (perf, markdown-en): the walk and its searches about 70%, the char index
//!   build 7%, trimming 6%, the line-feed pass 4%.
//! - Large texts (the corpus repeated, best pass in ms at 5 / 10 / 20 / 40 MB; the atom
//!   engine: 2.8 / 4.3 / 9.5 / 19.7): with each level cut over the whole text in turn,
//!   1.3 / 2.8 / 8.3 / 21.0, 3x the time for twice the text once it outgrew the caches;
//!   with the levels cut as a cascade (`tree::seek_tree`), 2.4 / 2.7 / 7.5 / 19.6 (each
//!   walk jumps `chunk_size` chars ahead, and waited for memory at every jump); with the
//!   memory asked for 16 KB ahead of the top level's walk ([`Seeker::fetch_ahead`], texts of
//!   1 MB and more), 2.4 / 2.7 / 6.3 / 13.0.
//! - Tried and dropped: the whole seek compiled a second time with the popcount
//!   instruction (helpers inlined into one function): no better than the instruction
//!   written out in the look-up, and code layout moved the figures by 5% either way; the
//!   separator-byte check folded into the line-feed pass (three more SSE2 compares per 16
//!   bytes): slower than its own `memchr3` pass (markdown-en 0.30 -> 0.32).

use crate::size::{is_whitespace, prefetch, CharIndex};
use crate::span::Span;
use crate::split::Splitter;

/// How far ahead of a walk its memory is asked for (see [`Seeker::fetch_ahead`]).
const FETCH_AHEAD: usize = 16 * 1024;

/// Texts from this length on have their memory asked for ahead of the walk: a shorter one
/// is still in the caches from the passes that built its char index and line mask, and
/// asking cost 10% on markdown-en's files (11 KB).
const FETCH_FROM: usize = 1 << 20;

/// The text could not be cut by seeking: the atom engine cuts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unseekable;

/// One bit per byte of a text, set at its line feeds, with a zero word after the end (so a
/// two-byte look-ahead never leaves the mask).
#[derive(Debug, Clone, Default)]
pub(crate) struct LineMask {
    words: Vec<u64>,
}

/// What a [`LineMask`] build learnt of the text's bytes on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ByteFacts {
    /// The text holds a carriage return.
    pub(crate) carriage_return: bool,
    /// Its largest byte.
    pub(crate) largest: u8,
}

impl ByteFacts {
    /// Which of `candidates` the text lacks: a carriage return and any byte above the
    /// largest are known; others are looked for, stopping at the first (`split::absent_bytes`
    /// read the whole text for a byte it lacked: 5% of a seeking cut on markdown-en, whose
    /// files lack the lead bytes of CJK punctuation).
    pub(crate) fn absent(self, text: &str, candidates: &[u8]) -> Vec<u8> {
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
    pub(crate) fn rebuild(&mut self, text: &str) -> Option<ByteFacts> {
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
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.words.capacity() * std::mem::size_of::<u64>()
    }

    /// Asks the CPU to fetch the mask's memory for the bytes `[from, to)` into cache.
    #[inline]
    fn prefetch(&self, from: usize, to: usize) {
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
    fn find(&self, width: usize, from: usize, to: usize) -> Option<usize> {
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
    fn rfind(&self, width: usize, from: usize, to: usize) -> Option<usize> {
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

/// A separator of a seekable splitter, kept as it is searched for (see [`Pattern`]).
#[derive(Debug, Clone)]
pub(crate) enum SeekPattern {
    /// One or two line feeds.
    LineFeeds(usize),
    /// Any other.
    Bytes(Box<[u8]>),
}

impl SeekPattern {
    /// How `pattern` is searched for.
    pub(crate) fn new(pattern: &[u8]) -> Self {
        match pattern {
            b"\n" | b"\n\n" => Self::LineFeeds(pattern.len()),
            _ => Self::Bytes(pattern.into()),
        }
    }

    #[inline]
    fn borrowed(&self) -> Pattern<'_> {
        match self {
            Self::LineFeeds(width) => Pattern::LineFeeds(*width),
            Self::Bytes(bytes) => Pattern::Bytes(bytes),
        }
    }
}

/// A separator, as it is searched for.
#[derive(Debug, Clone, Copy)]
enum Pattern<'a> {
    /// One or two line feeds: found in the text's [`LineMask`].
    LineFeeds(usize),
    /// Any other: its first byte found by `memchr`, the rest compared in place.
    Bytes(&'a [u8]),
}

impl Pattern<'_> {
    fn len(self) -> usize {
        match self {
            Self::LineFeeds(width) => width,
            Self::Bytes(bytes) => bytes.len(),
        }
    }
}

/// A piece of the recursive split: its bounds, its trimmed content, the first separator
/// level that may cut it, and (once asked) the level that does.
#[derive(Debug, Clone, Copy)]
struct Node {
    piece: (usize, usize),
    content: (usize, usize),
    /// The content is larger than the chunk size (measured once, when the node is found).
    oversized: bool,
    depth: usize,
    cut_at: Option<usize>,
}

/// The memory of a [`Seeker`]'s path, kept from one text to the next (per thread, see
/// `tree.rs`): a seeker per level and text allocated it anew, 6% of the time on
/// markdown-zh's short files.
#[derive(Debug, Default)]
pub(crate) struct SeekPath(Vec<Node>);

impl SeekPath {
    /// Bytes of memory it holds.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<Node>()
    }
}

/// One level of a tree cut by seeking, over one text.
pub(crate) struct Seeker<'a> {
    splitter: &'a Splitter,
    text: &'a str,
    chars: &'a CharIndex,
    lines: &'a LineMask,
    /// Per separator level, the patterns that can occur in the text (see `Searcher::mask`).
    masks: &'a [u64],
    /// Where the memory ahead of the walk has been asked for, up to (see
    /// [`Seeker::fetch_ahead`]); `usize::MAX` when it is not asked for.
    fetched: usize,
    /// The pieces holding the last position sought, outermost first: the next position is
    /// further on, so most of them still hold it and are not searched for again.
    path: Vec<Node>,
}

impl<'a> Seeker<'a> {
    /// A seeker for `splitter`'s chunks in `text`, whose char index is `chars` and line-feed
    /// mask `lines`; `masks` are the splitter's separator masks for the text; `path` lends
    /// its memory (see [`Seeker::finish`]).
    pub(crate) fn new(
        splitter: &'a Splitter,
        text: &'a str,
        chars: &'a CharIndex,
        lines: &'a LineMask,
        masks: &'a [u64],
        path: &mut SeekPath,
    ) -> Self {
        Self {
            splitter,
            text,
            chars,
            lines,
            masks,
            fetched: usize::MAX,
            path: std::mem::take(&mut path.0),
        }
    }

    /// Asks for the memory ahead of each walk (see [`Seeker::fetch_ahead`]): for the top
    /// level of a text larger than [`FETCH_FROM`] (the levels below walk inside the chunks
    /// of the top level, which it asked for already).
    pub(crate) fn fetch_ahead_of_walks(&mut self) {
        if self.text.len() >= FETCH_FROM {
            self.fetched = 0;
        }
    }

    /// Cuts from the piece `root` (the document, or a parent when this level does not share
    /// the pieces of the level above) down: starts a new tree of pieces.
    pub(crate) fn reset(&mut self, root: (usize, usize)) {
        self.path.clear();
        self.path.push(self.node(root, 0));
    }

    /// The chunks of `text[start..end]`, a range of whole atoms of the current tree (the
    /// whole root, or a chunk of the level above), handed to `emit` in order.
    ///
    /// # Errors
    /// [`Unseekable`]: a piece only graphemes can cut.
    #[inline]
    pub(crate) fn cut(
        &mut self,
        start: usize,
        end: usize,
        emit: &mut dyn FnMut(Span) -> Result<(), Unseekable>,
    ) -> Result<(), Unseekable> {
        let limit = self.splitter.config().chunk_size;
        let (mut chunk_start, content_end) = self.trimmed(start, end);
        let end_char = self.chars.chars_before(content_end);
        while chunk_start < content_end {
            self.fetch_ahead(chunk_start, content_end);
            let start_char = self.chars.chars_before(chunk_start);
            let (chunk_end, chunk_end_char) = if end_char - start_char <= limit {
                (content_end, end_char)
            } else {
                let reach = self.char_position((chunk_start, start_char), start_char + limit);
                let chunk_end = self.last_end(reach)?.ok_or(Unseekable)?;
                (chunk_end, self.chars.chars_before(chunk_end))
            };
            if chunk_end <= chunk_start {
                return Err(Unseekable);
            }
            emit(Span {
                start_byte: chunk_start,
                end_byte: chunk_end,
                start_char,
                end_char: chunk_end_char,
            })?;
            chunk_start = Splitter::trimmed_start(self.text, chunk_end, content_end);
        }
        Ok(())
    }

    /// Asks for the text, char index and line mask ahead of a walk at `position` into cache.
    /// Each chunk's walk jumps `chunk_size` chars ahead, past where the hardware prefetches:
    /// on a text larger than the caches every jump waited for memory, and the corpus
    /// repeated 4x (20 MB) took 3x the time of 2x (the atom engine reads the text in order
    /// and did not). Asked [`FETCH_AHEAD`] bytes ahead, the memory comes in while the walk
    /// works, as it does for the atom engine.
    #[inline]
    fn fetch_ahead(&mut self, position: usize, end: usize) {
        let until = (position + FETCH_AHEAD).min(end);
        if until <= self.fetched {
            return;
        }
        let from = self.fetched.max(position);
        let bytes = self.text.as_bytes();
        for line in (from..until).step_by(64) {
            prefetch(bytes[line..].as_ptr());
        }
        self.chars.prefetch(from, until);
        self.lines.prefetch(from, until);
        self.fetched = until;
    }

    /// The byte offset of char `target` (counted from the text's start), which lies after
    /// `from`, itself char `from_char`: each char is at least a byte, so stepping by the
    /// chars still missing never overshoots (one step on ASCII, a few on CJK).
    #[inline]
    fn char_position(&self, (from, from_char): (usize, usize), target: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut position = from + (target - from_char);
        loop {
            let before = self.chars.chars_before(position);
            if before >= target {
                // `position` is inside the char before the target one, or at its start.
                while !self.text.is_char_boundary(position) {
                    position += 1;
                }
                return position;
            }
            position += target - before;
            if position >= bytes.len() {
                return bytes.len();
            }
        }
    }

    /// The node of the piece `piece`, cut from separator level `depth` on.
    #[inline]
    fn node(&self, piece: (usize, usize), depth: usize) -> Node {
        let content = self.trimmed(piece.0, piece.1);
        Node {
            piece,
            content,
            oversized: self.chars.count(content.0, content.1) > self.splitter.config().chunk_size,
            depth,
            cut_at: None,
        }
    }

    #[inline]
    fn trimmed(&self, start: usize, end: usize) -> (usize, usize) {
        Splitter::trimmed(self.text, start, end)
    }

    /// The last atom end at or before `reach`, `None` when none ends by then: down the
    /// pieces that hold `reach`, from the root, to one that is an atom or ends by `reach`;
    /// when none of its atoms ends by `reach`, the answer is where the atoms before it end,
    /// at the deepest level where some do.
    #[inline]
    fn last_end(&mut self, reach: usize) -> Result<Option<usize>, Unseekable> {
        let mut depth = 0;
        let found = loop {
            let node = &self.path[depth];
            let (content_start, content_end) = node.content;
            if content_end <= reach {
                break Some(content_end);
            }
            if reach <= content_start || !node.oversized {
                // No atom ends by `reach` (the node is one atom, which ends after it).
                break None;
            }
            let level = if let Some(level) = node.cut_at {
                level
            } else {
                let level = (node.depth..self.splitter.literal_levels())
                    .find(|&level| self.find(level, content_start, content_end).is_some())
                    .ok_or(Unseekable)?;
                self.path[depth].cut_at = Some(level);
                level
            };
            let known = self.path.get(depth + 1).map(|child| child.piece);
            if !known.is_some_and(|(start, end)| start <= reach && reach < end) {
                // The piece holding `reach` starts after the last one sought in this node.
                let floor = known.map_or(content_start, |(_, end)| end);
                self.path.truncate(depth + 1);
                let piece_start = self
                    .rfind(level, floor, reach)
                    .map_or(floor.max(content_start), |(_, found_end)| found_end);
                // An occurrence starting before `reach - longest + 1` ends by `reach`.
                let longest = self.splitter.longest_separator();
                let mut from = piece_start.max((reach + 1).saturating_sub(longest));
                let piece_end = loop {
                    match self.find(level, from, content_end) {
                        Some((_, found_end)) if found_end > reach => break found_end,
                        Some((_, found_end)) => from = found_end,
                        None => break content_end,
                    }
                };
                let child = self.node((piece_start, piece_end), level + 1);
                self.path.push(child);
            }
            depth += 1;
            let (child_start, child_end) = self.path[depth].content;
            if child_start >= child_end {
                break None;
            }
        };
        if found.is_some() {
            return Ok(found);
        }
        // The atoms before a piece end where the text before it, trimmed, ends.
        for level in (0..depth).rev() {
            let (start, end) =
                self.trimmed(self.path[level].content.0, self.path[level + 1].piece.0);
            if start < end {
                return Ok(Some(end));
            }
        }
        Ok(None)
    }

    /// The patterns of separator level `level` that can occur in the text.
    #[inline]
    fn patterns(&self, level: usize) -> impl Iterator<Item = Pattern<'a>> + 'a {
        let mask = self.masks[level];
        self.splitter
            .seek_patterns(level)
            .iter()
            .enumerate()
            .filter(move |&(index, _)| mask & (1 << index) != 0)
            .map(|(_, pattern)| pattern.borrowed())
    }

    /// The pattern of level `level` when it is the only one that can occur in the text.
    #[inline]
    fn only_pattern(&self, level: usize) -> Option<Pattern<'a>> {
        let mask = self.masks[level];
        mask.is_power_of_two()
            .then(|| self.splitter.seek_patterns(level)[mask.trailing_zeros() as usize].borrowed())
    }

    /// Hands the path's memory back for the next text.
    pub(crate) fn finish(mut self, path: &mut SeekPath) {
        self.path.clear();
        path.0 = self.path;
    }

    /// The first occurrence of a pattern of `level` inside `[from, to)`, as (start, end):
    /// searched in windows that double, so that a pattern absent from a long piece is not
    /// searched to its end each time.
    fn find(&self, level: usize, from: usize, to: usize) -> Option<(usize, usize)> {
        if let Some(pattern) = self.only_pattern(level) {
            // One pattern: nothing to bound its search by.
            return self
                .first_start(pattern, from, to, to)
                .map(|start| (start, start + pattern.len()));
        }
        let mut window = 256;
        let mut low = from;
        while low < to {
            let high = low.saturating_add(window).min(to);
            let mut best: Option<(usize, usize)> = None;
            for pattern in self.patterns(level) {
                // Occurrences that start inside [low, high), before the best so far.
                let start_limit = best.map_or(high, |(start, _)| start + 1);
                let found = self.first_start(pattern, low, start_limit, to);
                if let Some(start) = found {
                    let end = start + pattern.len();
                    if best.is_none_or(|(best_start, best_end)| {
                        start < best_start || (start == best_start && end > best_end)
                    }) {
                        best = Some((start, end));
                    }
                }
            }
            if best.is_some() {
                return best;
            }
            low = high;
            window = window.saturating_mul(2);
        }
        None
    }

    /// The first start in `[low, start_limit)` of `pattern` ending by `to`.
    #[inline]
    fn first_start(
        &self,
        pattern: Pattern<'_>,
        low: usize,
        start_limit: usize,
        to: usize,
    ) -> Option<usize> {
        let end_limit = (start_limit + pattern.len() - 1).min(to);
        let pattern = match pattern {
            Pattern::LineFeeds(width) => return self.lines.find(width, low, end_limit),
            Pattern::Bytes(bytes) => bytes,
        };
        let bytes = self.text.as_bytes();
        let mut at = low;
        while at + pattern.len() <= end_limit {
            let found = at + memchr::memchr(pattern[0], &bytes[at..end_limit])?;
            if found + pattern.len() > end_limit {
                return None;
            }
            if holds_at(bytes, found, pattern) {
                return Some(found);
            }
            at = found + 1;
        }
        None
    }

    /// The last occurrence of a pattern of `level` inside `[from, to)`, as (start, end):
    /// searched in windows of starts that double, from the end back.
    fn rfind(&self, level: usize, from: usize, to: usize) -> Option<(usize, usize)> {
        if let Some(pattern) = self.only_pattern(level) {
            return self
                .last_start(pattern, from, to, to)
                .map(|start| (start, start + pattern.len()));
        }
        let mut window = 256;
        let mut high = to;
        while high > from {
            let low = high.saturating_sub(window).max(from);
            let mut best: Option<(usize, usize)> = None;
            for pattern in self.patterns(level) {
                // Starts inside [low, high) whose occurrence ends after the best so far.
                let floor = best.map_or(low, |(_, end)| {
                    (end + 1).saturating_sub(pattern.len()).max(low)
                });
                if let Some(start) = self.last_start(pattern, floor, high, to) {
                    let end = start + pattern.len();
                    if best.is_none_or(|(_, best_end)| end > best_end) {
                        best = Some((start, end));
                    }
                }
            }
            if best.is_some() {
                return best;
            }
            high = low;
            window = window.saturating_mul(2);
        }
        None
    }

    /// The last start in `[low, high)` of `pattern` ending by `to`.
    #[inline]
    fn last_start(
        &self,
        pattern: Pattern<'_>,
        low: usize,
        high: usize,
        to: usize,
    ) -> Option<usize> {
        // Starts past `to - len` cannot end by `to`.
        let high = high.min((to + 1).checked_sub(pattern.len())?);
        if high <= low {
            return None;
        }
        let pattern = match pattern {
            Pattern::LineFeeds(width) => {
                return self.lines.rfind(width, low, high - 1 + width);
            }
            Pattern::Bytes(bytes) => bytes,
        };
        let bytes = self.text.as_bytes();
        let mut end = high;
        while end > low {
            let found = low + memchr::memrchr(pattern[0], &bytes[low..end])?;
            if holds_at(bytes, found, pattern) {
                return Some(found);
            }
            end = found;
        }
        None
    }
}

/// Whether `bytes` holds `pattern` at `at`: a loop, not a slice compare, which calls `memcmp`
/// (a fifth of the time in a first version, for separators of one to four bytes).
#[inline]
fn holds_at(bytes: &[u8], at: usize, pattern: &[u8]) -> bool {
    at + pattern.len() <= bytes.len()
        && pattern
            .iter()
            .enumerate()
            .all(|(offset, &byte)| bytes[at + offset] == byte)
}

/// Whether every char of `pattern` is whitespace.
pub(crate) fn is_blank(pattern: &str) -> bool {
    pattern.chars().all(is_whitespace)
}

/// Whether no two occurrences of `patterns` can overlap in any text: no pattern holds
/// another, and no pattern ends with the start of one (itself included). Every occurrence
/// is then a match of the forward search, whatever the text.
pub(crate) fn cannot_overlap(patterns: &[String]) -> bool {
    patterns.iter().all(|first| {
        patterns.iter().all(|second| {
            let (first, second) = (first.as_bytes(), second.as_bytes());
            let holds = first != second
                && second.len() <= first.len()
                && first.windows(second.len()).any(|window| window == second);
            // An occurrence of `second` starting inside one of `first`, running past it.
            let borders = (1..first.len().min(second.len()))
                .any(|length| first[first.len() - length..] == second[..length]);
            !holds && !borders
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_mask_finds_what_a_scan_finds() {
        // Line feeds alone and in pairs, across word edges, and a text ending on and off one.
        let text: String = (0..300)
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
                    crate::split::absent_bytes(text, candidates),
                    "{text:?}"
                );
            }
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

    #[test]
    fn separators_that_cannot_overlap() {
        let level = |patterns: &[&str]| -> Vec<String> {
            patterns.iter().map(|&pattern| pattern.to_owned()).collect()
        };
        assert!(cannot_overlap(&level(&[
            ". ", "! ", "? ", "。", "！", "？"
        ])));
        assert!(cannot_overlap(&level(&["; ", ", ", "，", "、", "；"])));
        assert!(cannot_overlap(&level(&["<br>", "<hr>"])));
        assert!(!cannot_overlap(&level(&["aa"])), "overlaps itself");
        assert!(!cannot_overlap(&level(&["ab", "b"])), "one holds the other");
        assert!(
            !cannot_overlap(&level(&["ab", "ba"])),
            "one ends with the other's start"
        );
        assert!(!cannot_overlap(&level(&["\n\n"])));
        assert!(is_blank("\n\n") && is_blank("\u{3000}\t") && !is_blank(". "));
    }
}
