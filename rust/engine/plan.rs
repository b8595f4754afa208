//! The plan a splitter is built into: its settings validated, each separator level compiled
//! into a searcher, the per-byte masks that drop separators a text cannot hold, the
//! separators as seeking searches for them, and whether the splitter can be cut by seeking
//! at all. Both engines (`split.rs`, atoms; `seek.rs`, seeking) read a `Splitter` and
//! nothing else of the settings.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use super::config::{KeepSeparator, Merge, SplitterConfig, Structure};
use crate::error::ChunkError;
use crate::markdown::{Outline, STRUCTURE_LEVELS};
use crate::sizing::{Sizer, Unit};
use crate::text::chars::{is_whitespace, trimmed};
use crate::text::search::Searcher;
use crate::text::sentences::{SENTENCES, SENTENCE_ENDS};

/// Texts from this length on are checked for every separator's first byte (see
/// [`Splitter::check_bytes`]).
const CHECK_EVERY_BYTE_FROM: usize = 256 * 1024;

/// One level of splitting: validated settings, a sizer and the compiled separator automata.
#[derive(Debug)]
pub struct Splitter {
    pub(super) config: SplitterConfig,
    pub(super) sizer: Box<dyn Sizer>,
    /// Per literal separator level, its searcher.
    pub(super) levels: Vec<Searcher>,
    /// First bytes of the separators, checked once per text (see `text::chars::absent_bytes`) to drop
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
        let sentence_ends = sentence_ends(&levels);
        let all: Vec<&String> = config
            .separators
            .iter()
            .flatten()
            .filter(|sep| *sep != SENTENCES)
            .collect();
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
        let overlap_separators: Vec<&String> = all.iter().copied().chain(&sentence_ends).collect();
        let any_separator = if overlap_separators.is_empty() {
            None
        } else {
            Some(build_automaton(overlap_separators.iter().copied())?)
        };
        let longest_separator = overlap_separators.iter().map(|sep| sep.len()).max();
        let longest_separator = longest_separator.unwrap_or(0);
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
    /// finds the boundaries the forward search finds (see `cannot_overlap`). `cut_levels`
    /// in `engine/tree.rs` says exactly when the two engines give the same chunks.
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

    /// Whether this splitter cuts at heading sections, Markdown's or an HTML page's (and
    /// needs the text's [`Outline`]).
    #[must_use]
    pub fn is_markdown(&self) -> bool {
        matches!(
            self.config.structure,
            Structure::Markdown | Structure::Html(_)
        )
    }

    /// Whether this splitter cuts at a document structure, Markdown or code (and needs the
    /// text's [`Outline`]).
    #[must_use]
    pub fn is_structured(&self) -> bool {
        self.config.structure != Structure::Plain
    }

    /// The outline of `text` this splitter cuts at (`source`: the document's source, which
    /// names the language of code given none); `None` for plain text.
    #[must_use]
    pub fn outline(&self, text: &str, source: Option<&str>) -> Option<Outline> {
        self.config.structure.outline(text, source)
    }

    /// Structure levels before the literal separator levels.
    /// The level of cuts between graphemes (and code points): finer than every separator.
    pub(super) fn grapheme_level(&self) -> usize {
        self.structure_levels() + self.levels.len()
    }

    /// Whether chunks end at the coarsest boundary that fits ([`Merge::Boundary`]).
    pub(super) fn ends_at_boundaries(&self) -> bool {
        self.config.merge == Merge::Boundary
    }

    pub(super) fn structure_levels(&self) -> usize {
        if self.is_structured() {
            STRUCTURE_LEVELS
        } else {
            0
        }
    }

    /// The separators' first bytes worth checking for in a text of `length` bytes: every
    /// one on a long text, where a separator it lacks would cost a `memmem` pass over the
    /// whole text from memory (see the notes in `text/search.rs`), only the rare ones on a short
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

    /// Content bounds of a piece, `None` when it is blank.
    #[inline]
    pub(crate) fn content(&self, text: &str, start: usize, limit: usize) -> Option<(usize, usize)> {
        let (trimmed_start, trimmed_end) = trimmed(text, start, limit);
        if trimmed_start == trimmed_end {
            None
        } else if self.config.trim {
            Some((trimmed_start, trimmed_end))
        } else {
            Some((start, limit))
        }
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
        && config
            .separators
            .iter()
            .all(|level| level.iter().all(|sep| is_all_whitespace(sep)) || cannot_overlap(level));
    seekable.then(|| {
        levels
            .iter()
            .map(|level| level.patterns().map(SeekPattern::new).collect())
            .collect()
    })
}

/// A separator of a seekable splitter, kept as it is searched for (see [`SeekPatternRef`]).
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
    pub(crate) fn borrowed(&self) -> SeekPatternRef<'_> {
        match self {
            Self::LineFeeds(width) => SeekPatternRef::LineFeeds(*width),
            Self::Bytes(bytes) => SeekPatternRef::Bytes(bytes),
        }
    }
}

/// A separator, as it is searched for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SeekPatternRef<'a> {
    /// One or two line feeds: found in the text's `LineMask`.
    LineFeeds(usize),
    /// Any other: its first byte found by `memchr`, the rest compared in place.
    Bytes(&'a [u8]),
}

impl SeekPatternRef<'_> {
    pub(crate) fn len(self) -> usize {
        match self {
            Self::LineFeeds(width) => width,
            Self::Bytes(bytes) => bytes.len(),
        }
    }
}

/// The literals an overlap may also start after when a level cuts at sentence boundaries
/// (none otherwise): that level is no literal, and the overlap search looks for literals.
fn sentence_ends(levels: &[Searcher]) -> Vec<String> {
    if levels
        .iter()
        .any(|level| matches!(level, Searcher::Sentences))
    {
        SENTENCE_ENDS.iter().map(|&end| (*end).to_owned()).collect()
    } else {
        Vec::new()
    }
}

/// Whether every char of `pattern` is whitespace.
fn is_all_whitespace(pattern: &str) -> bool {
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
        assert!(
            is_all_whitespace("\n\n")
                && is_all_whitespace("\u{3000}\t")
                && !is_all_whitespace(". ")
        );
    }

    #[test]
    fn segment_units_cut_and_are_not_seekable() {
        use crate::engine::config::default_separators_for;
        use crate::sizing::SegmentUnit;

        let cut = |unit: SegmentUnit, size: usize, text: &str| -> Vec<String> {
            let mut config = SplitterConfig::new(size);
            config.separators = default_separators_for(unit.name());
            let splitter = Splitter::with_sizer(config, Box::new(unit)).unwrap();
            assert!(!splitter.seekable());
            let spans = splitter.split(text).unwrap();
            spans
                .into_iter()
                .map(|(start, end)| text[start..end].to_owned())
                .collect()
        };
        assert_eq!(
            cut(SegmentUnit::Sentence, 1, "One\ntwo. Three!\n\nFour"),
            ["One\ntwo.", "Three!", "Four"]
        );
        assert_eq!(cut(SegmentUnit::Word, 2, "a b c d e"), ["a b", "c d", "e"]);
        assert_eq!(cut(SegmentUnit::Passage, 1, "a\nb\n\nc"), ["a\nb", "c"]);
        assert_eq!(cut(SegmentUnit::Page, 1, "a\x0cb"), ["a", "b"]);
        // The sentence level in a char splitter: not seekable either.
        let mut config = SplitterConfig::new(10);
        config.separators = vec![vec![SENTENCES.to_owned()]];
        assert!(!Splitter::new(config, Unit::Char).unwrap().seekable());
    }

    #[test]
    fn refuses_impossible_settings() {
        assert!(Splitter::new(SplitterConfig::new(0), Unit::Char).is_err());
        let mut config = SplitterConfig::new(10);
        config.overlap = 10;
        assert!(Splitter::new(config, Unit::Char).is_err());
        assert!(Splitter::new(SplitterConfig::new(3), Unit::Byte).is_err());
        let mut config = SplitterConfig::new(10);
        config.separators = vec![vec![String::new()]];
        assert!(Splitter::new(config, Unit::Char).is_err());
    }
}
