//! Cut points found without an atom per piece: the engine's seek mode.
//!
//! The atom engine (`split.rs`, `merge.rs`) walks every piece of a text: each paragraph is
//! trimmed, measured and pushed at every level of a tree, though most of them only ever sit
//! inside a chunk. For the common settings (sizes in chars, trimmed chunks, no overlap, no
//! joining of small pieces, plain text, the separator placed at the end of its piece) a
//! chunk may take the atoms from its start that end by the char `chunk_size` past it, its
//! *reach*; it ends after the coarsest cut among them (`Merge::Boundary`, the latest such
//! cut) or after the last of them (`Merge::Greedy`). Seeking finds that end directly: down
//! the pieces of the recursive split that hold the reach, from the whole text; the first
//! piece whose cut falls inside the chunk gives the end (boundary), or the deepest one does
//! (greedy). It returns exactly the atom engine's chunks; whatever it does not handle (a
//! piece with no separator at all, cut by graphemes) makes it give up, and the atom engine
//! cuts the text instead.
//!
//! Searching back for a boundary finds the same boundaries as the engine's forward
//! leftmost-longest search only for some separator levels ([`Splitter::seekable`]): levels
//! whose separators cannot overlap (every occurrence is then a match), and levels made of
//! whitespace only (overlapping matches there only move a cut inside a run of whitespace,
//! which trimming removes).
//!
//! Speed: `benches/NOTES.md`, under `rust/engine/seek.rs`.

use super::plan::{SeekPatternRef, Splitter};
use crate::sizing::CharIndex;
use crate::text::chars::{prefetch, trimmed, trimmed_start};
use crate::text::lines::LineMask;
use crate::text::span::Span;

/// How far ahead of a walk its memory is asked for (see [`Seeker::fetch_ahead`]).
const FETCH_AHEAD: usize = 16 * 1024;

/// Texts from this length on have their memory asked for ahead of the walk: a shorter one
/// is still in the caches from the passes that built its char index and line mask, and
/// asking cost 10% on markdown-en's files (11 KB).
const FETCH_FROM: usize = 1 << 20;

/// The text could not be cut by seeking: the atom engine cuts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unseekable;

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
/// `cascade.rs`): a seeker per level and text allocated it anew, 6% of the time on
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
                let chunk_end = if self.splitter.ends_at_boundaries() {
                    self.coarsest_end(chunk_start, reach)
                } else {
                    self.last_end(reach)?
                }
                .ok_or(Unseekable)?;
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
            chunk_start = trimmed_start(self.text, chunk_end, content_end);
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
        trimmed(self.text, start, end)
    }

    /// The end of the chunk that starts at `chunk_start` and may reach to `reach` under
    /// [`Merge::Boundary`]: the last atom end by `reach` that follows the coarsest cut after
    /// `chunk_start`. Down the pieces that hold `reach`, from the root: the first piece
    /// whose cut has a boundary inside the chunk decides (its child's end when that comes by
    /// `reach`, else where the text before the child ends); `None` when no piece does.
    ///
    /// [`Merge::Boundary`]: super::config::Merge::Boundary
    #[inline]
    fn coarsest_end(&mut self, chunk_start: usize, reach: usize) -> Option<usize> {
        let mut depth = 0;
        loop {
            let node = self.path[depth];
            let (content_start, content_end) = node.content;
            if depth > 0 {
                if content_end <= reach {
                    return Some(content_end);
                }
                // Where the pieces of the parent's cut before this one end.
                let parent = self.path[depth - 1].content.0;
                let (before_start, before_end) = self.trimmed(parent, node.piece.0);
                if before_start < before_end && before_end > chunk_start {
                    return Some(before_end);
                }
            }
            if reach <= content_start || !node.oversized {
                return None;
            }
            self.descend(depth, reach).ok()?;
            depth += 1;
        }
    }

    /// Makes `path[depth + 1]` the piece of `path[depth]`'s cut that holds `reach`.
    ///
    /// # Errors
    /// [`Unseekable`]: no separator level cuts `path[depth]`.
    #[inline]
    fn descend(&mut self, depth: usize, reach: usize) -> Result<(), Unseekable> {
        let (content_start, content_end) = self.path[depth].content;
        let level = if let Some(level) = self.path[depth].cut_at {
            level
        } else {
            let level = (self.path[depth].depth..self.splitter.literal_levels())
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
        Ok(())
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
            self.descend(depth, reach)?;
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
    fn patterns(&self, level: usize) -> impl Iterator<Item = SeekPatternRef<'a>> + 'a {
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
    fn only_pattern(&self, level: usize) -> Option<SeekPatternRef<'a>> {
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
        pattern: SeekPatternRef<'_>,
        low: usize,
        start_limit: usize,
        to: usize,
    ) -> Option<usize> {
        let end_limit = (start_limit + pattern.len() - 1).min(to);
        let pattern = match pattern {
            SeekPatternRef::LineFeeds(width) => return self.lines.find(width, low, end_limit),
            SeekPatternRef::Bytes(bytes) => bytes,
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
        pattern: SeekPatternRef<'_>,
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
            SeekPatternRef::LineFeeds(width) => {
                return self.lines.rfind(width, low, high - 1 + width);
            }
            SeekPatternRef::Bytes(bytes) => bytes,
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
