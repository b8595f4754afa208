//! The splitting engine: one level of recursive separator splitting, parameterised by a list
//! of separator levels and a [`Sizer`]. Every strategy and every tree level runs this code.
//!
//! A range of text becomes a list of *atoms* (pieces that fit `chunk_size`): a piece that fits
//! is an atom; one that does not is cut at the coarsest separator level that occurs in it, and
//! each part is handled the same way one level down; after the literal levels come grapheme
//! clusters, then code points. `merge.rs` then packs atoms greedily into chunks.
//!
//! Performance notes (release build, `tree_spans` with parent 2000 / child 400 chars over
//! the shared corpus, best of 40 on a loaded 2-core machine; gutenberg / markdown-en /
//! markdown-zh in ms, 2.61 / 1.22 / 1.12 MB):
//! - first version, one `aho-corasick` automaton per level and a scalar char count:
//!   12.3 / 5.7 / 3.4 ms;
//! - `bytecount::num_chars` (SIMD) for sizes and offsets: 4.8 / 2.4 / 1.4;
//! - separator search by `memmem` per pattern, see `search.rs`: 3.0 / 1.4 / 0.96;
//! - matches streamed, never collected (no allocation per piece; flat memory on 10 MB of
//!   newlines, which holds 10 million matches); pieces
//!   whose lower bound (bytes / 4 chars) exceeds the size are cut without being measured;
//!   an ASCII fast path for trimming; char offsets derived from char sizes instead of a
//!   second counting pass per level (`merge.rs`): 2.6 / 1.3 / 0.89;
//! - separators masked out per text when it lacks one of their bytes: 2.9 / 1.3 / 0.88
//!   (within noise here; it saves whole passes on texts with no CJK or "\r");
//! - the level below starts from the atoms of the level above when it shares their pieces
//!   (`Splitter::shares_pieces_with`): a child pass no longer searches and measures each
//!   parent's paragraphs again: 2.2 / 1.03 / 0.60. Children then come from atoms that can be
//!   finer than a direct cut of the parent's text would find (10 of 1392 corpus files
//!   cut differently, both within the contract).
//! - Graphemes are packed into maximal runs while iterating, instead of becoming one atom
//!   each: text with no separators (10 MB of CJK) would otherwise allocate an atom per
//!   grapheme.
//! - Char sizes looked up in a per-text [`CharIndex`] (built once per text for every level,
//!   SSE2, 33 GB/s) instead of counted per piece: `core` divan `tree_spans` 2.06 / 0.94 /
//!   0.58 ms -> 2.00 / 0.82 / 0.55. The lookups' popcounts are software on the x86-64
//!   baseline; `target-cpu=x86-64-v2` (hardware popcount) gained only 3% more, not worth
//!   narrowing the wheels' CPUs. The index's own build does use the instruction, picked at
//!   run time (`size.rs`).
//! - Then, each step timed by a loop over the same job (best pass over each folder, ms,
//!   gutenberg / markdown-en / markdown-zh): trimming walks ASCII bytes instead of decoding chars (most pieces end in
//!   their separator's line breaks): 1.76 / 0.82 / 0.53 -> 1.65 / 0.78 / 0.50; working
//!   buffers kept per thread across documents (`tree.rs`): 1.42 / 0.62 / 0.42; the index
//!   built with hardware popcount: 1.38 / 0.59 / 0.38; gaps of a few bytes counted directly
//!   and the sizer asked once per cut whether it is additive: 1.33 / 0.58 / 0.37; a level with
//!   a single possible pattern iterates it with no merge (`search.rs`): 1.23 / 0.53 / 0.35.
//!   `cargo bench --bench core` then gives 1.26 / 0.55 / 0.36 ms (2.1 / 2.2 / 3.1 GB/s).
//! - Left, judged not worth it: fusing the separator-byte check into the index build (one
//!   pass less, about 23 us on markdown-en, but four more compares per 16 bytes would about
//!   double the build's 31 us); a hardware popcount for the look-ups (only by compiling the
//!   whole engine for x86-64-v2, see above).
//! - Where the time went then (perf, markdown-en): the recursive piece handling (trim, size,
//!   push) about 35%, separator search about 30% (the parent level's blank-line pass over
//!   every document is a sixth of it), merging 6%, the index build 6%, the byte check 4%.
//! - Then, counted in instructions (callgrind, one pass of the same job, markdown-en /
//!   markdown-zh; repeatable where timings here are +-2%): 10.08 M / 6.32 M. A trimmed edge on
//!   a byte that no non-ASCII whitespace begins or ends with is not decoded (since then,
//!   whitespace is matched by its bytes, `space_after`); the gap before an atom is the difference of two char offsets, the
//!   last atom's end char being remembered, instead of a count of the gap's bytes (42
//!   instructions per gap): 9.90 / 6.26; the separator masks of a text from a per-byte table
//!   built with the splitter (600 instructions per level and text before): 9.88 / 6.16; the
//!   char index built with AVX2 where the CPU has it (`size.rs`): 9.73 / 6.02. Best pass
//!   in ms, gutenberg / markdown-en / markdown-zh: 1.245 / 0.537 / 0.358 -> 1.207 / 0.530 /
//!   0.340.
//! - Tried and dropped: skipping the popcount of an all-ASCII block in the index look-up
//!   (a branch per look-up: markdown-en 0.537 -> 0.564 ms); handing the child level the
//!   gaps the parent level measured (no change: the remembered end char already covers the
//!   parent level, and the child level's gaps are few).
//! - The spans bar on the Markdown folders (25x semantic-text-splitter: about 0.28 ms for
//!   markdown-en's 1.2 MB in the core, Python's per-call cost taken off) was out of this
//!   design's reach: a minimal loop of the same algorithm, written for this one job (blank
//!   lines, then lines, tuple atoms, no settings, no trimming of non-ASCII) takes 0.35 ms,
//!   and the engine 0.53. Every paragraph becomes an atom at both levels (53 per file, 32
//!   children per file). Seeking (`seek.rs`) finds the chunk ends without an atom per piece
//!   for the common settings, with the same chunks.
//! - Token sizers: graphemes measured one by one and packed by `pack.rs` (one exact count
//!   per run) instead of re-measuring a growing run for every grapheme, which was quadratic.

use std::borrow::Cow;
use std::cell::RefCell;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use unicode_segmentation::UnicodeSegmentation;

use crate::error::ChunkError;
use crate::markdown::{self, Outline, HEADING_LEVELS, STRUCTURE_LEVELS};
use crate::merge::Merger;
use crate::search::Searcher;
use crate::seek::SeekPattern;
use crate::size::{is_ascii_space, is_whitespace, CharIndex, Sizer, Unit};
use crate::span::Span;

/// Where a separator goes when text is cut at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepSeparator {
    /// The separator ends the piece before it (the default).
    End,
    /// The separator starts the piece after it.
    Start,
    /// The separator's trailing whitespace never stands at a chunk edge; its other characters
    /// stay with the piece before it, so nothing but whitespace is ever dropped.
    None,
}

impl KeepSeparator {
    /// Parses the Python spelling ("end", "start", "none").
    ///
    /// # Errors
    /// Any other value, with the choices.
    pub fn parse(name: &str) -> Result<Self, ChunkError> {
        match name {
            "end" => Ok(Self::End),
            "start" => Ok(Self::Start),
            "none" => Ok(Self::None),
            other => Err(ChunkError::setting(
                "keep_separator",
                format!("unknown value {other:?}: use \"end\", \"start\" or \"none\""),
            )),
        }
    }

    /// The Python spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::End => "end",
            Self::Start => "start",
            Self::None => "none",
        }
    }
}

/// The document structure a splitter cuts at before its literal separators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Structure {
    /// None: the separators only.
    #[default]
    Plain,
    /// Markdown (CommonMark): sections, then blocks, then the separators; see `markdown.rs`.
    Markdown,
}

impl Structure {
    /// Parses the Python spelling (None or "text" for plain, "markdown").
    ///
    /// # Errors
    /// Any other value, with the choices.
    pub fn parse(name: Option<&str>) -> Result<Self, ChunkError> {
        match name {
            None | Some("text") => Ok(Self::Plain),
            Some("markdown") => Ok(Self::Markdown),
            Some(other) => Err(ChunkError::setting(
                "structure",
                format!("unknown structure {other:?}: use None (plain text) or \"markdown\""),
            )),
        }
    }

    /// The Python spelling (None for plain text).
    #[must_use]
    pub fn name(self) -> Option<&'static str> {
        match self {
            Self::Plain => None,
            Self::Markdown => Some("markdown"),
        }
    }
}

/// The settings of one level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitterConfig {
    /// Largest chunk, in the sizer's unit.
    pub chunk_size: usize,
    /// Largest overlap with the previous chunk, in the sizer's unit.
    pub overlap: usize,
    /// Pieces smaller than this join a neighbour when the result still fits.
    pub min_chunk_size: usize,
    /// Separator levels, coarsest first; each level holds alternatives.
    pub separators: Vec<Vec<String>>,
    /// Where separators go.
    pub keep_separator: KeepSeparator,
    /// Strip whitespace from chunk edges.
    pub trim: bool,
    /// Document structure cut at before the separators.
    pub structure: Structure,
}

impl SplitterConfig {
    /// Settings with the default separators and no overlap.
    #[must_use]
    pub fn new(chunk_size: usize) -> Self {
        Self {
            chunk_size,
            overlap: 0,
            min_chunk_size: 0,
            separators: default_separators(),
            keep_separator: KeepSeparator::End,
            trim: true,
            structure: Structure::Plain,
        }
    }
}

/// The default separator levels, coarsest first: blank lines, line breaks, sentence ends,
/// clause marks, spaces. Graphemes and code points always follow as fallbacks.
#[must_use]
pub fn default_separators() -> Vec<Vec<String>> {
    let levels: [&[&str]; 5] = [
        &["\n\n", "\r\n\r\n"],
        &["\r\n", "\n"],
        &[". ", "! ", "? ", "。", "！", "？"],
        &["; ", ", ", "，", "、", "；"],
        &[" ", "\t", "\u{3000}"],
    ];
    levels
        .iter()
        .map(|level| level.iter().map(|sep| (*sep).to_owned()).collect())
        .collect()
}

/// Texts from this length on are checked for every separator's first byte (see
/// [`Splitter::check_bytes`]).
const CHECK_EVERY_BYTE_FROM: usize = 256 * 1024;

/// One level of splitting: validated settings, a sizer and the compiled separator automata.
#[derive(Debug)]
pub struct Splitter {
    config: SplitterConfig,
    sizer: Box<dyn Sizer>,
    levels: Vec<Searcher>,
    /// First bytes of the separators, checked once per text (see [`absent_bytes`]) to drop
    /// the separators that cannot match: all of them on a long text, on a short one only
    /// those many texts lack ("\r", the lead bytes of CJK punctuation).
    first_bytes: Vec<u8>,
    rare_first_bytes: Vec<u8>,
    /// Per separator level, the mask of all its patterns (see `Searcher::mask`).
    all_patterns: Vec<u64>,
    /// Per byte of any separator (sorted), per level, the patterns a text lacking it cannot
    /// hold.
    ruled_out: Vec<(u8, Vec<u64>)>,
    /// Whether its chunks can be found by seeking (`seek.rs`).
    seekable: bool,
    /// Per literal level, its patterns as seeking searches for them (seekable only).
    seek_patterns: Vec<Vec<SeekPattern>>,
    /// Every literal separator of every level, for overlap boundaries.
    any_separator: Option<AhoCorasick>,
    longest_separator: usize,
}

/// A piece of content that fits the chunk size: `text[start..end]`, already trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Atom {
    pub start: usize,
    pub end: usize,
    /// Size of `text[start..end]`.
    pub size: usize,
    /// Size of the text between the previous atom's end and this atom's start (additive
    /// sizers only; 0 otherwise and for the first atom).
    pub lead_gap: usize,
    /// The separator level at which cutting this atom further would start.
    pub depth: usize,
    /// Markdown: the level (1 to 6) of the heading whose section this atom starts, else 0.
    pub heading: u8,
    /// Markdown heading atoms: end byte of the section's last atom in this cut.
    pub section_end: usize,
    /// Markdown heading atoms: size of the section's atoms, from this atom's start.
    pub section_size: usize,
}

impl Splitter {
    /// A splitter in a built-in unit.
    ///
    /// # Errors
    /// Settings that cannot work; see [`Splitter::with_sizer`].
    pub fn new(config: SplitterConfig, unit: Unit) -> Result<Self, ChunkError> {
        if unit == Unit::Byte && config.chunk_size < 4 {
            return Err(ChunkError::setting(
                "chunk_size",
                format!(
                    "chunk_size {} is too small for unit=\"byte\": one character can take 4 bytes; use chunk_size >= 4",
                    config.chunk_size
                ),
            ));
        }
        Self::with_sizer(config, Box::new(unit))
    }

    /// A splitter with any sizer.
    ///
    /// # Errors
    /// `chunk_size` 0, `overlap >= chunk_size`, `min_chunk_size > chunk_size`, an empty
    /// separator level or an empty separator.
    pub fn with_sizer(config: SplitterConfig, sizer: Box<dyn Sizer>) -> Result<Self, ChunkError> {
        if config.chunk_size == 0 {
            return Err(ChunkError::setting(
                "chunk_size",
                "chunk_size must be at least 1, got 0: pass a positive size",
            ));
        }
        if config.overlap >= config.chunk_size {
            return Err(ChunkError::setting(
                "overlap",
                format!(
                    "overlap {} must be smaller than chunk_size {}: lower overlap or raise chunk_size",
                    config.overlap, config.chunk_size
                ),
            ));
        }
        if config.min_chunk_size > config.chunk_size {
            return Err(ChunkError::setting(
                "min_chunk_size",
                format!(
                    "min_chunk_size {} must not exceed chunk_size {}: lower min_chunk_size",
                    config.min_chunk_size, config.chunk_size
                ),
            ));
        }
        let mut levels = Vec::with_capacity(config.separators.len());
        for level in &config.separators {
            if level.is_empty() {
                return Err(ChunkError::setting(
                    "separators",
                    "a separator level is empty: give at least one string per level",
                ));
            }
            if level.iter().any(String::is_empty) {
                return Err(ChunkError::setting(
                    "separators",
                    "separators must be non-empty strings: remove \"\" from the list",
                ));
            }
            levels.push(Searcher::new(level)?);
        }
        let all: Vec<&String> = config.separators.iter().flatten().collect();
        // The first byte is enough: a separator whose first byte a text lacks cannot occur
        // in it.
        let mut first_bytes: Vec<u8> = all.iter().filter_map(|sep| sep.bytes().next()).collect();
        first_bytes.sort_unstable();
        first_bytes.dedup();
        let rare_first_bytes = first_bytes
            .iter()
            .copied()
            .filter(|&byte| byte == b'\r' || byte >= 0x80)
            .collect();
        let any_separator = if all.is_empty() {
            None
        } else {
            Some(build_automaton(all.iter().copied())?)
        };
        let longest_separator = all.iter().map(|sep| sep.len()).max().unwrap_or(0);
        let all_patterns: Vec<u64> = levels.iter().map(|level| level.mask(|_| false)).collect();
        let mut separator_bytes: Vec<u8> = all.iter().flat_map(|sep| sep.bytes()).collect();
        separator_bytes.sort_unstable();
        separator_bytes.dedup();
        let ruled_out = separator_bytes
            .into_iter()
            .map(|byte| {
                let out = levels
                    .iter()
                    .zip(&all_patterns)
                    .map(|(level, all)| all & !level.mask(|other| other == byte))
                    .collect();
                (byte, out)
            })
            .collect();
        let seek_patterns = seek_patterns(&config, sizer.as_ref(), &levels);
        let seekable = seek_patterns.is_some();
        let seek_patterns = seek_patterns.unwrap_or_default();
        Ok(Self {
            config,
            sizer,
            levels,
            first_bytes,
            rare_first_bytes,
            all_patterns,
            ruled_out,
            seekable,
            seek_patterns,
            any_separator,
            longest_separator,
        })
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &SplitterConfig {
        &self.config
    }

    /// The sizer.
    #[must_use]
    pub fn sizer(&self) -> &dyn Sizer {
        self.sizer.as_ref()
    }

    pub(crate) fn any_separator(&self) -> Option<&AhoCorasick> {
        self.any_separator.as_ref()
    }

    pub(crate) fn longest_separator(&self) -> usize {
        self.longest_separator
    }

    /// Chunks of the whole text, as byte spans in document order.
    ///
    /// # Errors
    /// A character larger than the chunk size (only possible with token sizers).
    pub fn split(&self, text: &str) -> Result<Vec<(usize, usize)>, ChunkError> {
        Ok(self
            .spans(text)?
            .iter()
            .map(|span| (span.start_byte, span.end_byte))
            .collect())
    }

    /// Chunks of the whole text, with byte and char offsets, in document order.
    ///
    /// # Errors
    /// A character larger than the chunk size (only possible with token sizers).
    pub fn spans(&self, text: &str) -> Result<Vec<Span>, ChunkError> {
        let mut out = Vec::new();
        self.cut(text, (0, 0), text.len(), &mut out)?;
        Ok(out)
    }

    /// Chunks of `text[start..end]`, appended to `out` as byte spans relative to the whole
    /// text. `start` and `end` must be char boundaries.
    ///
    /// # Errors
    /// A character larger than the chunk size (only possible with token sizers).
    pub fn split_range(
        &self,
        text: &str,
        start: usize,
        end: usize,
        out: &mut Vec<(usize, usize)>,
    ) -> Result<(), ChunkError> {
        let mut spans = Vec::new();
        self.cut(
            text,
            (start, crate::size::count_chars(&text.as_bytes()[..start])),
            end,
            &mut spans,
        )?;
        out.extend(spans.iter().map(|span| (span.start_byte, span.end_byte)));
        Ok(())
    }

    /// Chunks of `text[start.0..end]`, appended to `out` with byte and char offsets relative
    /// to the whole text. `start` is the (byte, char) offset pair where the range begins;
    /// `start.0` and `end` must be char boundaries.
    ///
    /// # Errors
    /// A character larger than the chunk size (only possible with token sizers).
    pub fn cut(
        &self,
        text: &str,
        start: (usize, usize),
        end: usize,
        out: &mut Vec<Span>,
    ) -> Result<(), ChunkError> {
        let _memo = crate::token::TextMemo::start();
        self.prepare(text).cut(text, start, end, out)
    }

    /// True when cutting a chunk of `upper` with this splitter may start from the atoms
    /// `upper` found, instead of searching the chunk's text again: same separators, same
    /// separator placement, both trimmed, the same sizer, and `upper` neither joins small
    /// pieces nor overlaps (so its atoms are exactly the pieces this splitter would find).
    #[must_use]
    pub fn shares_pieces_with(&self, upper: &Splitter) -> bool {
        self.config.separators == upper.config.separators
            && self.config.keep_separator == upper.config.keep_separator
            && self.config.trim
            && upper.config.trim
            && upper.config.min_chunk_size == 0
            && upper.config.overlap == 0
            && self.config.structure == Structure::Plain
            && upper.config.structure == Structure::Plain
            && self.sizer.identity().is_some()
            && self.sizer.identity() == upper.sizer.identity()
    }

    /// Whether its chunks can be found by seeking instead of from atoms (`seek.rs`): sizes in
    /// chars, trimmed, no overlap, no joining of small pieces, plain text, the separator
    /// not at the start of its piece, and every separator level such that searching back
    /// finds the boundaries the forward search finds (see `seek::cannot_overlap`).
    #[must_use]
    pub fn seekable(&self) -> bool {
        self.seekable
    }

    /// Number of literal separator levels.
    pub(crate) fn literal_levels(&self) -> usize {
        self.levels.len()
    }

    /// The patterns of literal level `level` as seeking searches for them, in the order of
    /// the bits of the level's mask (none when the splitter is not seekable).
    pub(crate) fn seek_patterns(&self, level: usize) -> &[SeekPattern] {
        self.seek_patterns.get(level).map_or(&[], Vec::as_slice)
    }

    /// Per literal level, the mask of the patterns that can occur in a text lacking the
    /// bytes in `absent`.
    pub(crate) fn masks_without(&self, absent: &[u8]) -> Vec<u64> {
        let mut masks = Vec::new();
        self.masks_into(absent, &mut masks);
        masks
    }

    /// [`Splitter::masks_without`] appended to `masks`, reusing its memory.
    pub(crate) fn masks_into(&self, absent: &[u8], masks: &mut Vec<u64>) {
        // Per absent byte, the patterns it rules out, found at construction: checking every
        // needle byte against the absent ones here cost about 600 instructions per level
        // and text (2% of the engine on markdown-zh's short files).
        let first = masks.len();
        masks.extend_from_slice(&self.all_patterns);
        for byte in absent {
            if let Ok(row) = self
                .ruled_out
                .binary_search_by_key(byte, |&(candidate, _)| candidate)
            {
                for (mask, out) in masks[first..].iter_mut().zip(&self.ruled_out[row].1) {
                    *mask &= !out;
                }
            }
        }
    }

    /// Whether this splitter cuts at Markdown structure (and needs the text's [`Outline`]).
    #[must_use]
    pub fn is_markdown(&self) -> bool {
        self.config.structure == Structure::Markdown
    }

    /// Structure levels before the literal separator levels.
    fn structure_levels(&self) -> usize {
        if self.is_markdown() {
            STRUCTURE_LEVELS
        } else {
            0
        }
    }

    /// This splitter readied for one text: separators that cannot occur in it are dropped,
    /// and a Markdown text is parsed. Cut many ranges of one text (the children of every
    /// parent) with one `Prepared`.
    #[must_use]
    pub fn prepare(&self, text: &str) -> Prepared<'_> {
        let absent = absent_bytes(text, self.check_bytes(text.len()));
        let mut prepared = self.prepare_without(&absent, None, None);
        if self.is_markdown() {
            prepared.outline = Some(Cow::Owned(Outline::parse(text)));
        }
        if self.sizer.counts_chars() {
            prepared.chars = Some(Cow::Owned(CharIndex::new(text)));
        }
        prepared
    }

    /// [`Splitter::prepare`] for a text known to lack the bytes in `absent` (computed once
    /// per text for every level of a tree, see [`absent_bytes`]), with its Markdown outline
    /// when this splitter is Markdown and its char index when this splitter counts chars
    /// (each built once per text for every level).
    #[must_use]
    pub fn prepare_without<'s>(
        &'s self,
        absent: &[u8],
        outline: Option<&'s Outline>,
        chars: Option<&'s CharIndex>,
    ) -> Prepared<'s> {
        Prepared {
            splitter: self,
            masks: self.masks_without(absent),
            lacks_cr: absent.contains(&b'\r'),
            buffers: RefCell::default(),
            ranges: RefCell::default(),
            outline: outline.filter(|_| self.is_markdown()).map(Cow::Borrowed),
            chars: chars
                .filter(|_| self.sizer.counts_chars())
                .map(Cow::Borrowed),
        }
    }

    /// The separators' first bytes worth checking for in a text of `length` bytes: every
    /// one on a long text, where a separator it lacks would cost a `memmem` pass over the
    /// whole text from memory (see the notes in `search.rs`), only the rare ones on a short
    /// text, where checking the common ones cost more than it saved (markdown-en's short
    /// files: 3% slower).
    #[must_use]
    pub fn check_bytes(&self, length: usize) -> &[u8] {
        if length >= CHECK_EVERY_BYTE_FROM {
            &self.first_bytes
        } else {
            &self.rare_first_bytes
        }
    }

    /// Trimmed bounds of `text[start..limit]`; equal bounds mean the region is blank.
    #[inline]
    pub(crate) fn trimmed(text: &str, start: usize, limit: usize) -> (usize, usize) {
        // Byte by byte, never decoding a char: most pieces end with their separator's line
        // breaks, and `trim_end_matches` decoded every one (10% of the engine's time on
        // markdown-zh); then decoding only the non-ASCII edges was still a tenth of a
        // seeking cut on markdown-zh, whose pieces mostly end in "。".
        let bytes = text.as_bytes();
        let content_start = Self::trimmed_start(text, start, limit);
        let mut content_end = limit;
        while content_end > content_start {
            let width = space_before(bytes, content_end);
            if width == 0 {
                break;
            }
            content_end -= width;
        }
        (content_start, content_end)
    }

    /// [`Splitter::trimmed`]'s start alone.
    #[inline]
    pub(crate) fn trimmed_start(text: &str, start: usize, limit: usize) -> usize {
        let bytes = text.as_bytes();
        let mut content_start = start;
        while content_start < limit {
            let width = space_after(bytes, content_start);
            if width == 0 {
                break;
            }
            content_start += width;
        }
        content_start
    }

    /// Content bounds of a piece, `None` when it is blank.
    #[inline]
    pub(crate) fn content(&self, text: &str, start: usize, limit: usize) -> Option<(usize, usize)> {
        let (trimmed_start, trimmed_end) = Self::trimmed(text, start, limit);
        if trimmed_start == trimmed_end {
            None
        } else if self.config.trim {
            Some((trimmed_start, trimmed_end))
        } else {
            Some((start, limit))
        }
    }

    /// Hands the run `text[start..end]` of graphemes (of size `size`) to `sink` as an atom.
    pub(crate) fn push_run(
        &self,
        text: &str,
        start: usize,
        end: usize,
        size: usize,
        sink: &mut AtomSink<'_, '_, '_>,
    ) {
        Run { start, end, size }.flush(self, text, sink);
    }

    /// Handles the piece `text[start..limit]` (under `KeepSeparator::None` the separator
    /// whitespace after `limit` is left out) at separator level `level` and below.
    fn split_piece(
        &self,
        text: &str,
        start: usize,
        limit: usize,
        level: usize,
        sink: &mut AtomSink<'_, '_, '_>,
    ) -> Result<(), ChunkError> {
        if let Some(error) = sink.failed.take() {
            return Err(error);
        }
        let Some((content_start, content_end)) = self.content(text, start, limit) else {
            sink.blank(start, limit);
            return Ok(());
        };
        let content = &text[content_start..content_end];
        // With a char index, the piece's start char too: the gap before it is then one
        // subtraction (see `AtomSink::push_counted`).
        let (size, start_char) = match sink.chars {
            Some(index) => {
                let start_char = index.chars_before(content_start);
                (
                    Some(index.chars_before(content_end) - start_char),
                    Some(start_char),
                )
            }
            // A piece that is certainly too big is not measured (the whole document, at
            // first).
            None => (
                (self.sizer.lower_bound(content) <= self.config.chunk_size)
                    .then(|| self.sizer.size(content)),
                None,
            ),
        };
        if let Some(size) = size.filter(|&size| size <= self.config.chunk_size) {
            sink.push_counted(content_start, content_end, size, level, start_char);
            return Ok(());
        }
        let structure = self.structure_levels();
        if level < structure {
            if let Some(outline) = sink.outline {
                return self.split_structure(
                    text,
                    outline,
                    (content_start, content_end),
                    level,
                    sink,
                );
            }
        }
        let keep = self.config.keep_separator;
        let first_literal = level.saturating_sub(structure);
        for (literal, searcher) in self.levels.iter().enumerate().skip(first_literal) {
            let depth = structure + literal;
            let mut piece_start = content_start;
            let any = searcher.for_each(
                content.as_bytes(),
                sink.masks[literal],
                |found_start, found_end| {
                    let (sep_start, sep_end) =
                        (content_start + found_start, content_start + found_end);
                    let (piece_limit, next_start) = match keep {
                        KeepSeparator::End => (sep_end, sep_end),
                        KeepSeparator::Start => (sep_start, sep_start),
                        KeepSeparator::None => {
                            let kept = text[sep_start..sep_end]
                                .trim_end_matches(is_whitespace)
                                .len();
                            (sep_start + kept, sep_end)
                        }
                    };
                    if piece_limit > piece_start {
                        self.split_piece(text, piece_start, piece_limit, depth + 1, sink)?;
                    }
                    piece_start = next_start;
                    Ok(())
                },
            )?;
            if !any {
                continue;
            }
            if content_end > piece_start {
                self.split_piece(text, piece_start, content_end, depth + 1, sink)?;
            }
            return Ok(());
        }
        self.pack_graphemes(text, content_start, content_end, sink)
    }

    /// [`Splitter::split_piece`] at the Markdown structure levels from `level` on: the piece
    /// `content` (trimmed bounds) is cut at the coarsest level with a position inside it; a
    /// part that starts a section tells the sink its heading level.
    fn split_structure(
        &self,
        text: &str,
        outline: &Outline,
        content: (usize, usize),
        level: usize,
        sink: &mut AtomSink<'_, '_, '_>,
    ) -> Result<(), ChunkError> {
        let (content_start, content_end) = content;
        for depth in level..STRUCTURE_LEVELS {
            let positions = &outline.boundaries[depth];
            let first = positions.partition_point(|&position| position <= content_start);
            let last = positions.partition_point(|&position| position < content_end);
            if first == last {
                continue;
            }
            let heading = if depth < HEADING_LEVELS {
                u8::try_from(depth + 1).unwrap_or(0)
            } else {
                0
            };
            let mut piece_start = content_start;
            for &position in &positions[first..last] {
                self.split_piece(text, piece_start, position, depth + 1, sink)?;
                sink.pending_heading = heading;
                piece_start = position;
            }
            self.split_piece(text, piece_start, content_end, depth + 1, sink)?;
            sink.pending_heading = 0;
            return Ok(());
        }
        self.split_piece(text, content_start, content_end, STRUCTURE_LEVELS, sink)
    }

    /// Packs the graphemes of `text[start..end]` greedily into runs that fit; a grapheme
    /// larger than the chunk size is packed by code points instead.
    fn pack_graphemes(
        &self,
        text: &str,
        start: usize,
        end: usize,
        sink: &mut AtomSink<'_, '_, '_>,
    ) -> Result<(), ChunkError> {
        if !self.sizer.is_additive() {
            return crate::pack::pack_graphemes(self, text, start, end, sink);
        }
        let region = &text[start..end];
        // A text its char index found ASCII needs no second look.
        if self.sizer.ascii_is_one_unit()
            && (sink.chars.is_some_and(CharIndex::is_ascii) || region.is_ascii())
            && (sink.lacks_cr || memchr::memchr(b'\r', region.as_bytes()).is_none())
        {
            // ASCII without "\r" (CR LF is the one multi-char ASCII grapheme): every byte is
            // a grapheme of one unit, so the runs are cut by arithmetic (10 MB of "x": 30 MB/s
            // through the segmenter, memory speed here).
            let mut run_start = start;
            while run_start < end {
                let run_end = (run_start + self.config.chunk_size).min(end);
                Run {
                    start: run_start,
                    end: run_end,
                    size: run_end - run_start,
                }
                .flush(self, text, sink);
                run_start = run_end;
            }
            return Ok(());
        }
        let mut run = Run::new(start);
        for (offset, grapheme) in region.grapheme_indices(true) {
            let grapheme_start = start + offset;
            let grapheme_size = self.sizer.size(grapheme);
            if grapheme_size <= self.config.chunk_size {
                run.add(
                    self,
                    text,
                    sink,
                    grapheme_start,
                    grapheme_start + grapheme.len(),
                    grapheme_size,
                );
                continue;
            }
            for (char_offset, character) in grapheme.char_indices() {
                let char_start = grapheme_start + char_offset;
                let char_size = self
                    .sizer
                    .size(&text[char_start..char_start + character.len_utf8()]);
                if char_size > self.config.chunk_size {
                    return Err(ChunkError::Unsplittable {
                        character,
                        position: char_start,
                        size: char_size,
                        chunk_size: self.config.chunk_size,
                    });
                }
                run.add(
                    self,
                    text,
                    sink,
                    char_start,
                    char_start + character.len_utf8(),
                    char_size,
                );
            }
        }
        run.flush(self, text, sink);
        Ok(())
    }
}

/// The separators of each level as seeking searches for them, `None` when the settings
/// cannot be cut by seeking (see [`Splitter::seekable`]).
fn seek_patterns(
    config: &SplitterConfig,
    sizer: &dyn Sizer,
    levels: &[Searcher],
) -> Option<Vec<Vec<SeekPattern>>> {
    let seekable = config.structure == Structure::Plain
        && config.trim
        && config.overlap == 0
        && config.min_chunk_size == 0
        && config.keep_separator != KeepSeparator::Start
        && sizer.counts_chars()
        && levels
            .iter()
            .all(|level| matches!(level, Searcher::Finders(_)))
        && config.separators.iter().all(|level| {
            level.iter().all(|sep| crate::seek::is_blank(sep)) || crate::seek::cannot_overlap(level)
        });
    seekable.then(|| {
        levels
            .iter()
            .map(|level| level.patterns().map(SeekPattern::new).collect())
            .collect()
    })
}

/// The width in bytes of the char that starts at `bytes[at]` (a char boundary) when it is
/// whitespace ([`is_whitespace`]), else 0. The non-ASCII whitespace chars are few and fixed
/// (Unicode `White_Space`: U+0085, U+00A0, U+1680, U+2000..=U+200A, U+2028, U+2029, U+202F,
/// U+205F, U+3000), so their UTF-8 bytes are matched as they are, with no decoding.
#[inline]
fn space_after(bytes: &[u8], at: usize) -> usize {
    match bytes[at..] {
        [byte, ..] if byte.is_ascii() => usize::from(is_ascii_space(byte)),
        [0xc2, 0x85 | 0xa0, ..] => 2,
        [0xe1, 0x9a, 0x80, ..]
        | [0xe2, 0x80, 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf, ..]
        | [0xe2, 0x81, 0x9f, ..]
        | [0xe3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// [`space_after`] for the char that ends at `bytes[end]` (a char boundary).
#[inline]
fn space_before(bytes: &[u8], end: usize) -> usize {
    match bytes[..end] {
        [.., byte] if byte.is_ascii() => usize::from(is_ascii_space(byte)),
        [.., 0xc2, 0x85 | 0xa0] => 2,
        [.., 0xe1, 0x9a, 0x80]
        | [.., 0xe2, 0x80, 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf]
        | [.., 0xe2, 0x81, 0x9f]
        | [.., 0xe3, 0x80, 0x80] => 3,
        _ => 0,
    }
}

/// Which of `candidates` do not occur in `text`, in one pass over it: the text is read in
/// blocks that stay in the L1/L2 cache, each searched (`memchr3`, three bytes at a time) for
/// the candidates not found yet, and the scan stops once every candidate has been found
/// (within the first block, for most texts). One whole-text pass per group of three bytes
/// read the text from memory once per group on a text that lacks them.
#[must_use]
pub fn absent_bytes(text: &str, candidates: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 32 * 1024;
    let mut missing = candidates.to_vec();
    let mut found = Vec::with_capacity(candidates.len());
    for block in text.as_bytes().chunks(BLOCK) {
        if missing.is_empty() {
            break;
        }
        found.clear();
        for group in missing.chunks(3) {
            let hit = match *group {
                [one] => memchr::memchr(one, block).is_some(),
                [one, two] => memchr::memchr2(one, two, block).is_some(),
                [one, two, three] => memchr::memchr3(one, two, three, block).is_some(),
                _ => false,
            };
            if hit {
                found.extend(
                    group
                        .iter()
                        .copied()
                        .filter(|&byte| memchr::memchr(byte, block).is_some()),
                );
            }
        }
        missing.retain(|byte| !found.contains(byte));
    }
    missing
}

/// The level below a cut, told of each chunk the cut closes as soon as it is closed, with the
/// chunk's atoms: a tree cuts the chunk's children right then, while the chunk's text is in
/// cache, and no level keeps the atoms of a whole document for the next.
pub(crate) trait Below {
    /// `chunk` is closed; `atoms` are the atoms it was made of, in order.
    ///
    /// # Errors
    /// The level below failed (a character larger than its chunk size, with token sizers).
    fn closed(&mut self, chunk: Span, atoms: &[Atom]) -> Result<(), ChunkError>;
}

/// A [`Splitter`] readied for one text by [`Splitter::prepare`].
#[derive(Debug)]
pub struct Prepared<'s> {
    splitter: &'s Splitter,
    /// Per separator level, the patterns that can occur in the text.
    masks: Vec<u64>,
    /// Known to lack "\r" (checked with the separators' bytes).
    lacks_cr: bool,
    /// The atom buffer, reused from one range to the next (a parent's children are cut one
    /// parent at a time: no allocation per parent).
    buffers: RefCell<Vec<Atom>>,
    /// The closed chunks' atom ranges handed to the level below, reused likewise.
    ranges: RefCell<Vec<(usize, usize)>>,
    /// The text's Markdown structure (Markdown splitters only).
    outline: Option<Cow<'s, Outline>>,
    /// The text's char index (splitters that count chars).
    chars: Option<Cow<'s, CharIndex>>,
}

impl Prepared<'_> {
    /// Chunks of `text[start.0..end]` (the text this was prepared for), appended to `out`
    /// with byte and char offsets; `start` is the (byte, char) offset pair of the range.
    ///
    /// # Errors
    /// A character larger than the chunk size (only possible with token sizers).
    pub fn cut(
        &self,
        text: &str,
        start: (usize, usize),
        end: usize,
        out: &mut Vec<Span>,
    ) -> Result<(), ChunkError> {
        self.cut_with(text, start, end, None, out, None)
    }

    /// Swaps the atom and range buffers with `atoms` and `ranges`: lends this buffers that
    /// already have capacity, and takes them back after the last cut.
    pub(crate) fn swap_buffers(&self, atoms: &mut Vec<Atom>, ranges: &mut Vec<(usize, usize)>) {
        std::mem::swap(&mut *self.buffers.borrow_mut(), atoms);
        std::mem::swap(&mut *self.ranges.borrow_mut(), ranges);
    }

    /// [`Prepared::cut`], optionally starting from the atoms that a splitter sharing this
    /// one's pieces found in the range (`from`), and optionally telling the level `below` of
    /// every chunk as it closes.
    pub(crate) fn cut_with(
        &self,
        text: &str,
        start: (usize, usize),
        end: usize,
        from: Option<&[Atom]>,
        out: &mut Vec<Span>,
        below: Option<&mut dyn Below>,
    ) -> Result<(), ChunkError> {
        let splitter = self.splitter;
        let merger = Merger::new(splitter, text, start);
        let mut sink = AtomSink::new(
            splitter,
            text,
            (&self.masks, self.lacks_cr),
            self.outline.as_deref(),
            self.chars.as_deref(),
            (self.buffers.take(), self.ranges.take()),
            merger,
            out,
            below,
        );
        match from {
            None => splitter.split_piece(text, start.0, end, 0, &mut sink)?,
            Some(atoms) => {
                for atom in atoms {
                    if atom.size <= splitter.config.chunk_size {
                        sink.push(atom.start, atom.end, atom.size, atom.depth);
                    } else {
                        splitter.split_piece(text, atom.start, atom.end, atom.depth, &mut sink)?;
                    }
                }
            }
        }
        let (atoms, ranges) = sink.finish()?;
        self.buffers.replace(atoms);
        self.ranges.replace(ranges);
        Ok(())
    }
}

/// A greedy run of graphemes (or code points) being packed, for additive sizers (others pack
/// in `pack.rs`).
struct Run {
    start: usize,
    end: usize,
    size: usize,
}

impl Run {
    fn new(start: usize) -> Self {
        Self {
            start,
            end: start,
            size: 0,
        }
    }

    fn add(
        &mut self,
        splitter: &Splitter,
        text: &str,
        sink: &mut AtomSink<'_, '_, '_>,
        start: usize,
        end: usize,
        size: usize,
    ) {
        let limit = splitter.config.chunk_size;
        let grown = self.size + size;
        if self.end > self.start && grown > limit {
            self.flush(splitter, text, sink);
            *self = Self { start, end, size };
        } else {
            self.end = end;
            self.size = grown;
        }
    }

    fn flush(&mut self, splitter: &Splitter, text: &str, sink: &mut AtomSink<'_, '_, '_>) {
        if self.end == self.start {
            return;
        }
        match splitter.content(text, self.start, self.end) {
            None => sink.blank(self.start, self.end),
            Some((start, end)) => {
                let size = if (start, end) == (self.start, self.end) {
                    self.size
                } else {
                    sink.size_of(start, end)
                };
                sink.push(
                    start,
                    end,
                    size,
                    splitter.structure_levels() + splitter.levels.len(),
                );
            }
        }
        self.start = self.end;
        self.size = 0;
    }
}

/// Collects atoms in document order, joining small pieces (`min_chunk_size`) and, without
/// trim, keeping blank pieces with a neighbour so that chunks keep all the text they can; it
/// hands them to the [`Merger`] as they come, so only the atoms of the chunks still open are
/// held.
pub(crate) struct AtomSink<'t, 'o, 'b> {
    splitter: &'t Splitter,
    text: &'t str,
    atoms: Vec<Atom>,
    /// Start of blank text waiting to be prepended to the next atom (trim off only).
    pending_blank: Option<usize>,
    /// Per separator level, the patterns that can occur in this text.
    masks: &'t [u64],
    /// Known to lack "\r": the ASCII fast path of `pack_graphemes` need not look for it.
    lacks_cr: bool,
    /// The text's Markdown structure (Markdown splitters only).
    outline: Option<&'t Outline>,
    /// The text's char index, when sizes are chars: every size is then looked up.
    chars: Option<&'t CharIndex>,
    /// The sizer is additive (asked once: a virtual call per atom was 2% of the engine).
    additive: bool,
    /// The heading level of the section whose first atom comes next (0: none).
    pending_heading: u8,
    /// (byte, char) offsets of the end of the atom pushed last, when known.
    last_end: (usize, usize),
    merger: Merger<'t>,
    out: &'o mut Vec<Span>,
    below: Option<&'o mut (dyn Below + 'b)>,
    /// The atom ranges of the chunks closed by one flush (for `below`).
    ranges: Vec<(usize, usize)>,
    /// The first error of the level below: the cut stops at its next piece.
    failed: Option<ChunkError>,
    /// Atom count at which the merger is asked to close chunks again. Markdown holds every
    /// atom of the range: where a section ends is only known at its end.
    flush_at: usize,
}

/// An [`AtomSink`]'s buffers, handed back for the next cut: atoms and atom ranges.
type SinkBuffers = (Vec<Atom>, Vec<(usize, usize)>);

/// Atoms held before the merger closes the chunks they determine.
const FLUSH_AT: usize = 4096;

impl<'t, 'o, 'b> AtomSink<'t, 'o, 'b> {
    fn new(
        splitter: &'t Splitter,
        text: &'t str,
        (masks, lacks_cr): (&'t [u64], bool),
        outline: Option<&'t Outline>,
        chars: Option<&'t CharIndex>,
        (mut atoms, mut ranges): SinkBuffers,
        merger: Merger<'t>,
        out: &'o mut Vec<Span>,
        below: Option<&'o mut (dyn Below + 'b)>,
    ) -> Self {
        atoms.clear();
        ranges.clear();
        Self {
            splitter,
            text,
            atoms,
            pending_blank: None,
            masks,
            lacks_cr,
            outline,
            chars,
            additive: splitter.sizer.is_additive(),
            pending_heading: 0,
            last_end: (usize::MAX, 0),
            merger,
            out,
            below,
            ranges,
            failed: None,
            flush_at: if outline.is_some() {
                usize::MAX
            } else {
                FLUSH_AT
            },
        }
    }

    /// Lets the merger close the chunks the atoms so far determine, tells the level below of
    /// each, and drops their atoms.
    fn flush(&mut self, done: bool) {
        let consumed = match self.below.as_deref_mut() {
            None => self.merger.advance(&self.atoms, done, self.out, None),
            Some(below) => {
                let first = self.out.len();
                self.ranges.clear();
                let consumed =
                    self.merger
                        .advance(&self.atoms, done, self.out, Some(&mut self.ranges));
                if self.failed.is_none() {
                    for (chunk, &(first_atom, last_atom)) in
                        self.out[first..].iter().zip(&self.ranges)
                    {
                        if let Err(error) =
                            below.closed(*chunk, &self.atoms[first_atom..=last_atom])
                        {
                            self.failed = Some(error);
                            break;
                        }
                    }
                }
                consumed
            }
        };
        self.atoms.drain(..consumed);
        // A chunk still open over many atoms is not rescanned at every push: wait for as
        // many new atoms again (linear however large the chunk size).
        if self.flush_at != usize::MAX {
            self.flush_at = FLUSH_AT.max(2 * self.atoms.len());
        }
    }

    #[inline]
    fn size_of(&self, start: usize, end: usize) -> usize {
        match self.chars {
            // Most gaps are a separator's few bytes: counting them beats two look-ups.
            Some(_) if end - start < 8 => self.text.as_bytes()[start..end]
                .iter()
                .filter(|&&byte| crate::size::is_char_start(byte))
                .count(),
            Some(index) => index.count(start, end),
            None => self.splitter.sizer.size(&self.text[start..end]),
        }
    }

    fn joined_size(&self, first: &Atom, lead_gap: usize, end: usize, size: usize) -> usize {
        if self.additive {
            first.size + lead_gap + size
        } else {
            self.size_of(first.start, end)
        }
    }

    /// Blank text between pieces. With trim it is simply not content; without trim it joins
    /// the previous atom, or else the next one, when the size allows.
    fn blank(&mut self, start: usize, end: usize) {
        let config = &self.splitter.config;
        if config.trim || config.keep_separator == KeepSeparator::None {
            return;
        }
        if let Some(last) = self.atoms.last() {
            if last.end == start && self.pending_blank.is_none() {
                let size = self.joined_size(last, 0, end, self.size_of(start, end));
                if size <= config.chunk_size {
                    let last = self.atoms.last_mut().expect("checked above");
                    last.end = end;
                    last.size = size;
                    return;
                }
            }
        }
        self.pending_blank.get_or_insert(start);
    }

    fn push(&mut self, start: usize, end: usize, size: usize, depth: usize) {
        self.push_counted(start, end, size, depth, None);
    }

    /// The size of the gap `text[from..to]` before an atom that starts at char `to_char`
    /// (when known): with a char index, the difference of the two char offsets, the end
    /// char of the atom pushed last being remembered (counting the gap's bytes cost a tenth
    /// of the engine on markdown-zh, whose gaps are mostly a blank line).
    #[inline]
    fn gap_size(&self, from: usize, to: usize, to_char: Option<usize>) -> usize {
        match (self.chars, to_char) {
            (Some(index), Some(to_char)) => {
                let from_char = if self.last_end.0 == from {
                    self.last_end.1
                } else {
                    index.chars_before(from)
                };
                to_char - from_char
            }
            _ => self.size_of(from, to),
        }
    }

    /// [`AtomSink::push`] of an atom whose start char is `start_char`, when known.
    fn push_counted(
        &mut self,
        mut start: usize,
        end: usize,
        mut size: usize,
        depth: usize,
        mut start_char: Option<usize>,
    ) {
        let chunk_size = self.splitter.config.chunk_size;
        let end_char = start_char.map(|start_char| start_char + size);
        // A section's first atom never joins the atom before it (see `markdown::may_join`).
        let heading = std::mem::take(&mut self.pending_heading);
        let additive = self.additive;
        if let Some(blank_start) = self.pending_blank.take() {
            let grown = if additive {
                size + self.size_of(blank_start, start)
            } else {
                self.size_of(blank_start, end)
            };
            if grown <= chunk_size {
                start = blank_start;
                size = grown;
                start_char = None;
            }
        }
        // Non-additive sizers get the gap's size too: `pack.rs` sums it into estimates.
        let lead_gap = match self.atoms.last() {
            Some(last) if last.end < start => self.gap_size(last.end, start, start_char),
            _ => 0,
        };
        // Whether the atom joins the one before or not, its end char is this.
        if let Some(end_char) = end_char {
            self.last_end = (end, end_char);
        }
        if let Some(last) = self.atoms.last().filter(|_| heading == 0) {
            if last.size < self.splitter.config.min_chunk_size {
                let joined = self.joined_size(last, lead_gap, end, size);
                if joined <= chunk_size {
                    let last = self.atoms.last_mut().expect("checked above");
                    last.end = end;
                    last.size = joined;
                    last.depth = last.depth.min(depth);
                    return;
                }
            }
        }
        self.atoms.push(Atom {
            start,
            end,
            size,
            lead_gap,
            depth,
            heading,
            section_end: end,
            section_size: size,
        });
        if self.atoms.len() >= self.flush_at {
            self.flush(false);
        }
    }

    /// Closes every chunk (a small last piece joins the one before it when the result
    /// fits); returns the atom and range buffers for reuse.
    ///
    /// # Errors
    /// The level below failed.
    fn finish(mut self) -> Result<SinkBuffers, ChunkError> {
        let min_chunk_size = self.splitter.config.min_chunk_size;
        if self.atoms.len() >= 2
            && self.atoms[self.atoms.len() - 1].size < min_chunk_size
            && self.atoms[self.atoms.len() - 1].heading == 0
        {
            let last = self.atoms[self.atoms.len() - 1];
            let previous = self.atoms[self.atoms.len() - 2];
            let joined = self.joined_size(&previous, last.lead_gap, last.end, last.size);
            if joined <= self.splitter.config.chunk_size {
                self.atoms.pop();
                let previous = self.atoms.last_mut().expect("two atoms");
                previous.end = last.end;
                previous.size = joined;
                previous.depth = previous.depth.min(last.depth);
            }
        }
        if self.outline.is_some() {
            markdown::mark_sections(self.splitter, self.text, &mut self.atoms);
        }
        self.flush(true);
        match self.failed {
            Some(error) => Err(error),
            None => Ok((self.atoms, self.ranges)),
        }
    }
}

fn build_automaton<'a>(
    patterns: impl Iterator<Item = &'a String>,
) -> Result<AhoCorasick, ChunkError> {
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .build(patterns)
        .map_err(|error| {
            ChunkError::setting(
                "separators",
                format!("cannot compile the separators: {error}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(config: SplitterConfig, unit: Unit, text: &str) -> Vec<String> {
        let splitter = Splitter::new(config, unit).unwrap();
        splitter
            .split(text)
            .unwrap()
            .into_iter()
            .map(|(start, end)| text[start..end].to_owned())
            .collect()
    }

    fn sized(chunk_size: usize) -> SplitterConfig {
        SplitterConfig::new(chunk_size)
    }

    #[test]
    fn whitespace_is_matched_by_its_bytes() {
        // Every char, alone and between others, at both edges.
        for character in (0..=0x10_ffff).filter_map(char::from_u32) {
            let expected = if is_whitespace(character) {
                character.len_utf8()
            } else {
                0
            };
            let text = format!("a{character}b");
            let bytes = text.as_bytes();
            assert_eq!(space_after(bytes, 1), expected, "{character:?}");
            assert_eq!(
                space_before(bytes, 1 + character.len_utf8()),
                expected,
                "{character:?}"
            );
        }
        assert_eq!(Splitter::trimmed("\u{3000}中\u{2009}", 0, 9), (3, 6));
        assert_eq!(Splitter::trimmed("。\u{a0}", 0, 5), (0, 3));
        assert_eq!(Splitter::trimmed(" \u{85}\u{2028} ", 0, 7), (7, 7));
    }

    #[test]
    fn masks_drop_exactly_the_patterns_with_an_absent_byte() {
        let mut config = SplitterConfig::new(10);
        config
            .separators
            .push(vec!["x\r".to_owned(), "。y".to_owned(), "z".to_owned()]);
        let splitter = Splitter::new(config, Unit::Char).unwrap();
        let absents: [&[u8]; 5] = [b"", b"\r", b"\r\xe3", b"\xe3\xef\r. ,", b"qz"];
        for absent in absents {
            let prepared = splitter.prepare_without(absent, None, None);
            let expected: Vec<u64> = splitter
                .levels
                .iter()
                .map(|level| level.mask(|byte| absent.contains(&byte)))
                .collect();
            assert_eq!(prepared.masks, expected, "{absent:?}");
            assert_eq!(prepared.lacks_cr, absent.contains(&b'\r'));
        }
    }

    #[test]
    fn prefers_blank_lines_then_words() {
        assert_eq!(
            chunks(sized(10), Unit::Char, "aaaa bbbb\n\ncccc dddd eeee"),
            ["aaaa bbbb", "cccc dddd", "eeee"]
        );
    }

    #[test]
    fn merges_small_paragraphs() {
        assert_eq!(
            chunks(sized(20), Unit::Char, "one\n\ntwo\n\nthree four five six"),
            ["one\n\ntwo", "three four five six"]
        );
    }

    #[test]
    fn sentences_before_clauses() {
        assert_eq!(
            chunks(sized(12), Unit::Char, "Hi there. Yes, no, ok."),
            ["Hi there.", "Yes, no, ok."]
        );
    }

    #[test]
    fn cjk_sentences() {
        assert_eq!(
            chunks(sized(4), Unit::Char, "你好。世界！"),
            ["你好。", "世界！"]
        );
    }

    #[test]
    fn long_word_cut_by_graphemes() {
        assert_eq!(
            chunks(sized(4), Unit::Char, "abcdefghij"),
            ["abcd", "efgh", "ij"]
        );
        // e + combining acute is one grapheme: never split from its base.
        assert_eq!(
            chunks(sized(3), Unit::Char, "abe\u{301}cd"),
            ["ab", "e\u{301}c", "d"]
        );
    }

    #[test]
    fn huge_grapheme_cut_by_code_points() {
        let family = "👨\u{200d}👩\u{200d}👧"; // 5 code points, one grapheme
        assert_eq!(
            chunks(sized(2), Unit::Char, family),
            ["👨\u{200d}", "👩\u{200d}", "👧"]
        );
    }

    #[test]
    fn byte_unit_never_cuts_a_character() {
        assert_eq!(chunks(sized(4), Unit::Byte, "éééé"), ["éé", "éé"]);
        assert_eq!(chunks(sized(5), Unit::Byte, "a😀b"), ["a😀", "b"]);
    }

    #[test]
    fn keep_separator_modes() {
        let text = "aa. bb. cc";
        let mut config = sized(6);
        config.trim = false;
        assert_eq!(chunks(config.clone(), Unit::Char, text), ["aa. ", "bb. cc"]);
        config.keep_separator = KeepSeparator::Start;
        assert_eq!(chunks(config.clone(), Unit::Char, text), ["aa. bb", ". cc"]);
        config.keep_separator = KeepSeparator::None;
        assert_eq!(chunks(config, Unit::Char, text), ["aa.", "bb. cc"]);
    }

    #[test]
    fn trim_off_keeps_every_character() {
        let text = "  one two\n\nthree  ";
        let mut config = sized(9);
        config.trim = false;
        let pieces = chunks(config, Unit::Char, text);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|piece| piece.chars().count() <= 9));
    }

    #[test]
    fn whitespace_only_text_gives_nothing() {
        assert!(chunks(sized(5), Unit::Char, " \n\t\u{3000} ").is_empty());
        assert!(chunks(sized(5), Unit::Char, "").is_empty());
    }

    #[test]
    fn min_chunk_size_joins_small_pieces() {
        // "Mr." alone would end a chunk; with min 5 it sticks to what follows.
        let text = "Sunshine. Mr. Darcy.";
        assert_eq!(
            chunks(sized(13), Unit::Char, text),
            ["Sunshine. Mr.", "Darcy."]
        );
        let mut config = sized(13);
        config.min_chunk_size = 4;
        assert_eq!(
            chunks(config, Unit::Char, text),
            ["Sunshine.", "Mr. Darcy."]
        );
    }

    #[test]
    fn overlap_starts_at_a_boundary() {
        let mut config = sized(11);
        config.overlap = 5;
        assert_eq!(
            chunks(config, Unit::Char, "aa bb cc dd ee ff"),
            ["aa bb cc dd", "cc dd ee ff"]
        );
    }

    #[test]
    fn refuses_impossible_settings() {
        assert!(Splitter::new(sized(0), Unit::Char).is_err());
        let mut config = sized(10);
        config.overlap = 10;
        assert!(Splitter::new(config, Unit::Char).is_err());
        assert!(Splitter::new(sized(3), Unit::Byte).is_err());
        let mut config = sized(10);
        config.separators = vec![vec![String::new()]];
        assert!(Splitter::new(config, Unit::Char).is_err());
    }
}
