//! The atom engine: one level of recursive separator splitting, parameterised by a list
//! of separator levels and a [`Sizer`]. Every strategy and every tree level can run this
//! code; seeking (`seek.rs`) is a shortcut that gives the same chunks for some settings.
//!
//! A range of text becomes a list of *atoms* (pieces that fit `chunk_size`): a piece that fits
//! is an atom; one that does not is cut at the coarsest separator level that occurs in it, and
//! each part is handled the same way one level down; after the literal levels come grapheme
//! clusters, then code points. `merge.rs` packs atoms into chunks as they come.
//!
//! Speed: `benches/NOTES.md`, under `rust/engine/split.rs`.

use std::borrow::Cow;
use std::cell::RefCell;

use unicode_segmentation::UnicodeSegmentation;

use super::atom::Atom;
use super::config::KeepSeparator;
use super::merge::Merger;
use super::plan::Splitter;
use super::sections::{LeadRun, Pull};
use super::{pack, sections};
use crate::error::ChunkError;
use crate::markdown::{Outline, HEADING_LEVELS, STRUCTURE_LEVELS};
use crate::sizing::token::TextMemo;
use crate::sizing::{CharIndex, SizeError, TextWords};
use crate::text::chars::{absent_bytes, count_chars, is_char_start, is_whitespace};
use crate::text::span::Span;

impl Splitter {
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
            (start, count_chars(&text.as_bytes()[..start])),
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
        let _memo = TextMemo::start();
        let _words = self.sizer.counts_words().then(|| TextWords::start(text));
        self.prepare(text).cut(text, start, end, out)
    }

    /// This splitter readied for one text: separators that cannot occur in it are dropped,
    /// and a Markdown text is parsed. Cut many ranges of one text (the children of every
    /// parent) with one `Prepared`.
    #[must_use]
    pub fn prepare(&self, text: &str) -> Prepared<'_> {
        let absent = absent_bytes(text, self.check_bytes(text.len()));
        let mut prepared = self.prepare_without(&absent, None, None);
        if let Some(outline) = self.outline(text, None) {
            prepared.outline = Some(Cow::Owned(outline));
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
            outline: outline
                .filter(|outline| self.config.structure.reads(outline))
                .map(Cow::Borrowed),
            chars: chars
                .filter(|_| self.sizer.counts_chars())
                .map(Cow::Borrowed),
        }
    }

    /// Hands the run `text[start..end]` of graphemes (of size `size`) to `sink` as an atom.
    fn push_run(
        &self,
        text: &str,
        (start, end, size): (usize, usize, usize),
        sink: &mut AtomSink<'_, '_, '_>,
    ) -> Result<(), ChunkError> {
        Ok(Run { start, end, size }.flush(self, text, sink)?)
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
        if sink.pull == Pull::Failed {
            // A pull gave up: its piece is pushed whole once the pull returns.
            return Ok(());
        }
        let Some((content_start, content_end)) = self.content(text, start, limit) else {
            return Ok(sink.blank(start, limit)?);
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
                    .then(|| self.sizer.size_up_to(content, self.config.chunk_size))
                    .transpose()?,
                None,
            ),
        };
        if let Some(size) = size.filter(|&size| size <= self.config.chunk_size) {
            if sink.lead_waits() && !sink.fits_after_lead(content_end)? {
                return self.pull(
                    text,
                    (content_start, content_end),
                    (size, start_char),
                    level,
                    sink,
                );
            }
            return Ok(sink.push_counted(content_start, content_end, size, level, start_char)?);
        }
        self.split_finer(text, (content_start, content_end), level, sink)
    }

    /// A piece that fits but does not fit after the lead waiting for it (see
    /// [`sections::PULL_LITERAL_LEVELS`]): it is cut further, so that its first part joins
    /// the lead, down to the separator levels a pull may use; where no such cut gives a
    /// first part that fits, the pull gives up and the piece is pushed whole, as it would be
    /// with no lead before it.
    fn pull(
        &self,
        text: &str,
        (content_start, content_end): (usize, usize),
        (size, start_char): (usize, Option<usize>),
        level: usize,
        sink: &mut AtomSink<'_, '_, '_>,
    ) -> Result<(), ChunkError> {
        if sink.pull != Pull::Off {
            // Inside a pull already: its first part, cut further by the same pull.
            return self.split_finer(text, (content_start, content_end), level, sink);
        }
        loop {
            let saved = sink.save();
            sink.pull = Pull::Cutting;
            self.split_finer(text, (content_start, content_end), level, sink)?;
            if std::mem::replace(&mut sink.pull, Pull::Off) != Pull::Failed {
                return Ok(());
            }
            sink.restore(&saved);
            // Not after every lead of the run: after the innermost one alone, if it differs
            // (a heading too long to share a chunk with its sub-heading's text).
            if let Some(run) = sink.lead_run.filter(|run| run.start < run.inner_start) {
                sink.lead_run = Some(run.innermost());
                if !sink.fits_after_lead(content_end)? {
                    continue;
                }
            }
            return Ok(sink.push_counted(content_start, content_end, size, level, start_char)?);
        }
    }

    /// Cuts the piece `content` (trimmed bounds), too big for an atom (or pulled), at the
    /// coarsest level from `level` on with a cut inside it: structure, then separators, then
    /// graphemes.
    fn split_finer(
        &self,
        text: &str,
        (content_start, content_end): (usize, usize),
        level: usize,
        sink: &mut AtomSink<'_, '_, '_>,
    ) -> Result<(), ChunkError> {
        if sink.pull_waits()
            && sink
                .outline
                .is_some_and(|outline| outline.in_code_block(content_start, content_end))
        {
            // A code block that fits is never cut, not even for a lead.
            sink.pull = Pull::Failed;
            return Ok(());
        }
        let content = &text[content_start..content_end];
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
                    if literal >= sections::PULL_LITERAL_LEVELS && sink.pull_waits() {
                        // A pull would cut too fine: it gives up.
                        sink.pull = Pull::Failed;
                    }
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
                    sink.cut_at(depth);
                    piece_start = next_start;
                    Ok::<(), ChunkError>(())
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
                sink.cut_at(depth);
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
        if sink.pull_waits() {
            // A pull never cuts between graphemes.
            sink.pull = Pull::Failed;
            return Ok(());
        }
        if !self.sizer.is_additive() {
            return pack::pack_graphemes(self, text, (start, end), &mut |run| {
                self.push_run(text, run, sink)
            });
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
                .flush(self, text, sink)?;
                run_start = run_end;
            }
            return Ok(());
        }
        let mut run = Run::new(start);
        for (offset, grapheme) in region.grapheme_indices(true) {
            let grapheme_start = start + offset;
            let grapheme_size = self.sizer.size(grapheme)?;
            if grapheme_size <= self.config.chunk_size {
                run.add(
                    self,
                    text,
                    sink,
                    grapheme_start,
                    grapheme_start + grapheme.len(),
                    grapheme_size,
                )?;
                continue;
            }
            for (char_offset, character) in grapheme.char_indices() {
                let char_start = grapheme_start + char_offset;
                let char_size = self
                    .sizer
                    .size(&text[char_start..char_start + character.len_utf8()])?;
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
                )?;
            }
        }
        Ok(run.flush(self, text, sink)?)
    }
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
                    sink.cut_at(atom.boundary);
                    if atom.size <= splitter.config.chunk_size {
                        sink.push(atom.start, atom.end, atom.size, atom.depth)?;
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
    ) -> Result<(), SizeError> {
        let limit = splitter.config.chunk_size;
        let grown = self.size + size;
        if self.end > self.start && grown > limit {
            self.flush(splitter, text, sink)?;
            *self = Self { start, end, size };
        } else {
            self.end = end;
            self.size = grown;
        }
        Ok(())
    }

    fn flush(
        &mut self,
        splitter: &Splitter,
        text: &str,
        sink: &mut AtomSink<'_, '_, '_>,
    ) -> Result<(), SizeError> {
        if self.end == self.start {
            return Ok(());
        }
        match splitter.content(text, self.start, self.end) {
            None => sink.blank(self.start, self.end)?,
            Some((start, end)) => {
                let size = if (start, end) == (self.start, self.end) {
                    self.size
                } else {
                    sink.size_of(start, end)?
                };
                sink.push(start, end, size, splitter.grapheme_level())?;
            }
        }
        // The next run of the same piece is cut from this one between graphemes.
        sink.cut_at(splitter.grapheme_level());
        self.start = self.end;
        self.size = 0;
        Ok(())
    }
}

/// Collects atoms in document order, joining small pieces (`min_chunk_size`) and, without
/// trim, keeping blank pieces with a neighbour so that chunks keep all the text they can; it
/// hands them to the [`Merger`] as they come, so only the atoms of the chunks still open are
/// held.
struct AtomSink<'t, 'o, 'b> {
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
    /// The coarsest separator level cut at since the atom pushed last (`usize::MAX`: none),
    /// the next atom's [`Atom::boundary`].
    boundary: usize,
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
    /// The leads pushed last, waiting for the text they lead (structure only).
    lead_run: Option<LeadRun>,
    /// Whether a piece is being cut so that its first part joins the lead before it.
    pull: Pull,
}

/// What a failed pull puts back: the sink as it was before the pull.
struct SinkState {
    atoms: usize,
    pending_blank: Option<usize>,
    pending_heading: u8,
    boundary: usize,
    last_end: (usize, usize),
    lead_run: Option<LeadRun>,
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
            boundary: usize::MAX,
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
            lead_run: None,
            pull: Pull::Off,
        }
    }

    /// Whether the next piece follows a lead in its section (a lead's own later lines, its
    /// text, or the start of a section inside it).
    fn lead_waits(&self) -> bool {
        self.lead_run
            .is_some_and(|run| self.pending_heading == 0 || self.pending_heading > run.level)
    }

    /// Whether a pull is cutting a piece whose first part has not joined its lead yet.
    fn pull_waits(&self) -> bool {
        self.pull == Pull::Cutting && self.lead_waits()
    }

    /// Whether the text from the waiting leads' start to `end` fits the chunk size.
    fn fits_after_lead(&self, end: usize) -> Result<bool, SizeError> {
        let Some(run) = self.lead_run else {
            return Ok(true);
        };
        let chunk_size = self.splitter.config.chunk_size;
        let size = match self.chars {
            Some(index) => index.count(run.start, end),
            None => self
                .splitter
                .sizer
                .size_up_to(&self.text[run.start..end], chunk_size)?,
        };
        Ok(size <= chunk_size)
    }

    /// The sink's state, for a pull that may give up (every atom is still held: only a
    /// structure has leads, and a structure flushes at the end of the range).
    fn save(&self) -> SinkState {
        SinkState {
            atoms: self.atoms.len(),
            pending_blank: self.pending_blank,
            pending_heading: self.pending_heading,
            boundary: self.boundary,
            last_end: self.last_end,
            lead_run: self.lead_run,
        }
    }

    /// Puts back the state of [`AtomSink::save`].
    fn restore(&mut self, saved: &SinkState) {
        self.atoms.truncate(saved.atoms);
        self.pending_blank = saved.pending_blank;
        self.pending_heading = saved.pending_heading;
        self.boundary = saved.boundary;
        self.last_end = saved.last_end;
        self.lead_run = saved.lead_run;
    }

    /// Lets the merger close the chunks the atoms so far determine, tells the level below of
    /// each, and drops their atoms.
    ///
    /// # Errors
    /// The sizer failed while merging. (An error of the level below is kept in `failed`
    /// and stops the cut at its next piece.)
    fn flush(&mut self, done: bool) -> Result<(), SizeError> {
        let consumed = match self.below.as_deref_mut() {
            None => self.merger.advance(&self.atoms, done, self.out, None)?,
            Some(below) => {
                let first = self.out.len();
                self.ranges.clear();
                let consumed =
                    self.merger
                        .advance(&self.atoms, done, self.out, Some(&mut self.ranges))?;
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
        Ok(())
    }

    #[inline]
    fn size_of(&self, start: usize, end: usize) -> Result<usize, SizeError> {
        Ok(match self.chars {
            // Most gaps are a separator's few bytes: counting them beats two look-ups.
            Some(_) if end - start < 8 => self.text.as_bytes()[start..end]
                .iter()
                .filter(|&&byte| is_char_start(byte))
                .count(),
            Some(index) => index.count(start, end),
            None => self.splitter.sizer.size(&self.text[start..end])?,
        })
    }

    #[inline]
    fn joined_size(
        &self,
        first: &Atom,
        lead_gap: usize,
        end: usize,
        size: usize,
    ) -> Result<usize, SizeError> {
        if self.additive {
            Ok(first.size + lead_gap + size)
        } else {
            self.size_of(first.start, end)
        }
    }

    /// Blank text between pieces. With trim it is simply not content; without trim it joins
    /// the previous atom, or else the next one, when the size allows.
    fn blank(&mut self, start: usize, end: usize) -> Result<(), SizeError> {
        let config = &self.splitter.config;
        if config.trim || config.keep_separator == KeepSeparator::None {
            return Ok(());
        }
        if let Some(last) = self.atoms.last() {
            if last.end == start && self.pending_blank.is_none() {
                let size = self.joined_size(last, 0, end, self.size_of(start, end)?)?;
                if size <= config.chunk_size {
                    let last = self.atoms.last_mut().expect("checked above");
                    last.end = end;
                    last.size = size;
                    return Ok(());
                }
            }
        }
        self.pending_blank.get_or_insert(start);
        Ok(())
    }

    /// The text was cut at separator level `level` since the atom pushed last.
    #[inline]
    fn cut_at(&mut self, level: usize) {
        self.boundary = self.boundary.min(level);
    }

    fn push(
        &mut self,
        start: usize,
        end: usize,
        size: usize,
        depth: usize,
    ) -> Result<(), SizeError> {
        self.push_counted(start, end, size, depth, None)
    }

    /// The size of the gap `text[from..to]` before an atom that starts at char `to_char`
    /// (when known): with a char index, the difference of the two char offsets, the end
    /// char of the atom pushed last being remembered (counting the gap's bytes cost a tenth
    /// of the engine on markdown-zh, whose gaps are mostly a blank line).
    #[inline]
    fn gap_size(&self, from: usize, to: usize, to_char: Option<usize>) -> Result<usize, SizeError> {
        match (self.chars, to_char) {
            (Some(index), Some(to_char)) => {
                let from_char = if self.last_end.0 == from {
                    self.last_end.1
                } else {
                    index.chars_before(from)
                };
                Ok(to_char - from_char)
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
    ) -> Result<(), SizeError> {
        let chunk_size = self.splitter.config.chunk_size;
        let end_char = start_char.map(|start_char| start_char + size);
        // A section's first atom never joins the atom before it (see `sections::may_join`).
        let heading = std::mem::take(&mut self.pending_heading);
        let boundary = std::mem::replace(&mut self.boundary, usize::MAX);
        let additive = self.additive;
        if let Some(blank_start) = self.pending_blank.take() {
            let grown = if additive {
                size + self.size_of(blank_start, start)?
            } else {
                self.size_of(blank_start, end)?
            };
            if grown <= chunk_size {
                start = blank_start;
                size = grown;
                start_char = None;
            }
        }
        // Non-additive sizers get the gap's size too: `pack.rs` sums it into estimates.
        let lead_gap = match self.atoms.last() {
            Some(last) if last.end < start => self.gap_size(last.end, start, start_char)?,
            _ => 0,
        };
        // Whether the atom joins the one before or not, its end char is this.
        if let Some(end_char) = end_char {
            self.last_end = (end, end_char);
        }
        let lead = self.outline.map_or(0, |outline| {
            LeadRun::follow(
                &mut self.lead_run,
                outline,
                self.text,
                (start, end),
                heading,
            )
        });
        let closer = self.outline.is_some_and(|outline| {
            outline.is_code() && sections::only_closers(&self.text[start..end])
        });
        if let Some(last) = self.atoms.last().filter(|_| heading == 0) {
            if last.size < self.splitter.config.min_chunk_size {
                let joined = self.joined_size(last, lead_gap, end, size)?;
                if joined <= chunk_size {
                    let last = self.atoms.last_mut().expect("checked above");
                    last.end = end;
                    last.size = joined;
                    last.depth = last.depth.min(depth);
                    last.lead = if lead > 0 { last.lead } else { 0 };
                    last.closer &= closer;
                    return Ok(());
                }
            }
        }
        self.atoms.push(Atom {
            start,
            end,
            size,
            lead_gap,
            depth,
            boundary,
            lead,
            closer,
            heading,
            section_end: end,
            section_size: size,
        });
        if self.atoms.len() >= self.flush_at {
            self.flush(false)?;
        }
        Ok(())
    }

    /// Closes every chunk (a small last piece joins the one before it when the result
    /// fits); returns the atom and range buffers for reuse.
    ///
    /// # Errors
    /// The sizer or the level below failed.
    fn finish(mut self) -> Result<SinkBuffers, ChunkError> {
        let min_chunk_size = self.splitter.config.min_chunk_size;
        if self.atoms.len() >= 2
            && self.atoms[self.atoms.len() - 1].size < min_chunk_size
            && self.atoms[self.atoms.len() - 1].heading == 0
        {
            let last = self.atoms[self.atoms.len() - 1];
            let previous = self.atoms[self.atoms.len() - 2];
            let joined = self.joined_size(&previous, last.lead_gap, last.end, last.size)?;
            if joined <= self.splitter.config.chunk_size {
                self.atoms.pop();
                let previous = self.atoms.last_mut().expect("two atoms");
                previous.end = last.end;
                previous.size = joined;
                previous.depth = previous.depth.min(last.depth);
                previous.lead = if last.lead > 0 { previous.lead } else { 0 };
                previous.closer &= last.closer;
            }
        }
        if self.outline.is_some() {
            sections::mark_sections(self.splitter, self.text, &mut self.atoms)?;
        }
        self.flush(true)?;
        match self.failed {
            Some(error) => Err(error),
            None => Ok((self.atoms, self.ranges)),
        }
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
