//! Packing atoms into chunks, with overlap.
//!
//! Atoms arrive in document order, each within the chunk size. A chunk takes atoms while its
//! size fits; then (the default, [`Merge::Boundary`]) it gives back the atoms after the
//! coarsest cut among those it took, so that it ends where its text does: the coarsest
//! separator level whose next piece fits decides, and the chunk holds whole pieces of it.
//! Each atom knows the level of the cut before it ([`Atom::boundary`]), so this costs one
//! pass back over the chunk's atoms. With an overlap, the next chunk starts at the earliest separator boundary inside
//! the last `overlap` units of the previous chunk whose tail, plus the next atom, still fits;
//! a later boundary when it does not; no overlap when none fits.
//!
//!
//! [`Merge::Boundary`]: super::config::Merge::Boundary
//!
//! Speed: `benches/NOTES.md`, under `rust/engine/merge.rs`.

use super::atom::Atom;
use super::config::KeepSeparator;
use super::plan::Splitter;
use super::{pack, sections};
use crate::sizing::SizeError;
use crate::text::chars::count_chars;
use crate::text::span::{CharCursor, Span};

/// Packs atoms into chunks as they come: the engine feeds it the atoms found so far and it
/// closes every chunk whose end is certain, so a level never holds more than a few chunks'
/// worth of atoms (10 MB of "a a a ..." is 5 million atoms).
///
/// With a sizer that counts chars, every atom's size and gap already is its char count, so
/// char offsets are running sums and the text is not read again; otherwise a cursor counts.
pub(crate) struct Merger<'t> {
    splitter: &'t Splitter,
    text: &'t str,
    cursor: CharCursor<'t>,
    origin: (usize, usize),
    /// Char offset of the first pending atom's start (when sizes are chars), once known.
    next_start_char: Option<usize>,
    /// Start, size and start char of the overlap carried into the next chunk.
    carry: Option<(usize, usize, usize)>,
    /// Atoms consumed by earlier calls (0: the next atom is the first of the range).
    consumed: usize,
}

impl<'t> Merger<'t> {
    /// A merger for a range that starts at the (byte, char) offset pair `origin`.
    pub(crate) fn new(splitter: &'t Splitter, text: &'t str, origin: (usize, usize)) -> Self {
        Self {
            splitter,
            text,
            cursor: CharCursor::at(text, origin.0, origin.1),
            origin,
            next_start_char: None,
            carry: None,
            consumed: 0,
        }
    }

    /// Closes the chunks that `atoms` (every atom not yet consumed, in order) determine,
    /// appending their spans to `out` and, with `ranges`, their first and last atom
    /// (indices into `atoms`). Unless `done`, the last two atoms are left alone: the last
    /// may still grow (small pieces join the next one) and the end may join the last to the
    /// one before. Returns how many atoms are consumed: the caller drops them.
    ///
    /// # Errors
    /// The sizer failed.
    // One greedy loop: splitting it would thread its six running values through helpers.
    #[allow(clippy::too_many_lines)]
    pub(crate) fn advance(
        &mut self,
        atoms: &[Atom],
        done: bool,
        out: &mut Vec<Span>,
        mut ranges: Option<&mut Vec<(usize, usize)>>,
    ) -> Result<usize, SizeError> {
        let splitter = self.splitter;
        let text = self.text;
        let sizer = splitter.sizer();
        let additive = sizer.is_additive();
        let sizes_are_chars = sizer.counts_chars();
        let chunk_size = splitter.config().chunk_size;
        let overlap = splitter.config().overlap;
        let usable = if done {
            atoms.len()
        } else {
            atoms.len().saturating_sub(2)
        };
        let mut index = 0;
        while index < usable {
            let first = &atoms[index];
            let next_start_char = match self.next_start_char {
                Some(offset) => offset,
                None if sizes_are_chars => {
                    self.origin.1 + count_chars(&text.as_bytes()[self.origin.0..first.start])
                }
                None => 0,
            };
            self.next_start_char = Some(next_start_char);
            let (chunk_start, mut size, chunk_start_char) = match self.carry {
                Some((start, carried, start_char)) if additive => {
                    (start, carried + first.lead_gap + first.size, start_char)
                }
                // The overlap's start and its size with `first`, measured exactly when found.
                Some((start, total, start_char)) => (start, total, start_char),
                None => (first.start, first.size, next_start_char),
            };
            let mut end_char = next_start_char + first.size;
            let mut last = index;
            // Markdown: a heading comes only with its whole section (see `may_join`).
            let range_start = self.consumed + index == 0;
            let heading_stops = |size: usize, next: &Atom| -> Result<bool, SizeError> {
                Ok(next.heading > 0
                    && !sections::may_join(
                        splitter,
                        text,
                        chunk_start,
                        size,
                        first,
                        range_start,
                        next,
                    )?)
            };
            // A chunk of leads only takes the start of a sub-section (see `leads_reach`).
            let mut leads = LeadsSoFar::new(first, self.carry.is_none());
            let mut closed = false;
            if additive {
                while last + 1 < usable {
                    let next = &atoms[last + 1];
                    let grown = size + next.lead_gap + next.size;
                    if grown > chunk_size
                        || (!leads.pull(
                            splitter,
                            text,
                            &atoms[..usable],
                            chunk_start,
                            size,
                            last + 1,
                        )? && heading_stops(size, next)?)
                    {
                        closed = true;
                        break;
                    }
                    size = grown;
                    end_char += next.lead_gap + next.size;
                    last += 1;
                    leads.took(next);
                }
            } else {
                (last, _) = pack::grow(splitter, text, &atoms[..usable], chunk_start, index, size)?;
                for row in index + 1..=last {
                    let next = &atoms[row];
                    if !leads.pull(splitter, text, &atoms[..usable], chunk_start, size, row)?
                        && heading_stops(size, next)?
                    {
                        last = row - 1;
                        break;
                    }
                    leads.took(next);
                }
                closed = last + 1 < usable;
            }
            if !closed && !done {
                // The chunk may still take atoms that have not arrived: keep it open.
                break;
            }
            if splitter.ends_at_boundaries() && last > index {
                let mut floor = index;
                loop {
                    let (chosen, dropped) =
                        coarsest_end(&atoms[..=last], floor, atoms.get(last + 1));
                    // Additive sizes fit any prefix of what fits; other sizers are checked
                    // (a prefix of a text may take more tokens than the text, rarely).
                    if chosen == last
                        || additive
                        || sizer.prefixes_fit()
                        || pack::measure(splitter, text, chunk_start, atoms[chosen].end)?
                            <= chunk_size
                    {
                        if additive {
                            end_char -= dropped;
                        }
                        last = chosen;
                        break;
                    }
                    floor = chosen + 1;
                }
            }
            let chunk_end = atoms[last].end;
            let span = if sizes_are_chars {
                Span {
                    start_byte: chunk_start,
                    end_byte: chunk_end,
                    start_char: chunk_start_char,
                    end_char,
                }
            } else {
                let start_char = self.cursor.char_at(chunk_start);
                Span {
                    start_byte: chunk_start,
                    end_byte: chunk_end,
                    start_char,
                    end_char: self.cursor.char_at(chunk_end),
                }
            };
            out.push(span);
            if let Some(ranges) = ranges.as_deref_mut() {
                ranges.push((index, last));
            }
            index = last + 1;
            let Some(next) = atoms.get(index) else { break };
            self.next_start_char = Some(span.end_char + next.lead_gap);
            self.carry = if overlap > 0 && !additive {
                pack::pack_overlap_start(splitter, text, chunk_start, chunk_end, next)?
                    .map(|(start, _, total)| (start, total, 0))
            } else if overlap > 0 {
                merge_overlap_start(splitter, text, chunk_start, chunk_end, next)?.map(
                    |(start, tail)| {
                        // With char sizes the tail's size is its char count.
                        let start_char = if sizes_are_chars {
                            span.end_char - tail
                        } else {
                            0
                        };
                        (start, tail, start_char)
                    },
                )
            } else {
                None
            };
        }
        self.consumed += index;
        Ok(index)
    }
}

/// Where a chunk of `atoms[first..]` (all of which fit) ends under [`Merge::Boundary`]: after
/// the atom followed by the coarsest cut, the latest of those (`after` is the atom past the
/// last, `None` at the end of the range, the coarsest cut of all). Returns the atom and the
/// size of the atoms and gaps left out (additive sizers).
///
/// [`Merge::Boundary`]: super::config::Merge::Boundary
fn coarsest_end(atoms: &[Atom], first: usize, after: Option<&Atom>) -> (usize, usize) {
    let last = atoms.len() - 1;
    let Some(after) = after else {
        return (last, 0);
    };
    let (mut chosen, mut level, mut dropped, mut chosen_dropped) =
        (last, cut_after(&atoms[last], after), 0, 0);
    for row in (first..last).rev() {
        let next = &atoms[row + 1];
        dropped += next.lead_gap + next.size;
        let cut = cut_after(&atoms[row], next);
        if cut < level {
            (chosen, level, chosen_dropped) = (row, cut, dropped);
        }
    }
    (chosen, chosen_dropped)
}

/// The level of the cut between `atom` and `next`, as chunk ends go: the cut after a lead,
/// inside its section (a heading's line, a signature: a chunk that ends in one says nothing
/// of what it leads), and the cut before closing delimiters (code) are the worst ends of
/// all, taken only when nothing else fits; next to worst, a cut between the lines of one
/// lead (a definition's comments and its signature: where nothing after the lead fits, the
/// signature goes with its body rather than with its comments).
#[inline]
fn cut_after(atom: &Atom, next: &Atom) -> usize {
    if next.closer {
        usize::MAX
    } else if atom.lead > 0 && next.lead > 0 && next.heading == 0 {
        usize::MAX - 1
    } else if atom.lead > 0 && (next.heading == 0 || next.heading > atom.lead) {
        usize::MAX
    } else {
        next.boundary
    }
}

/// Whether the atoms a chunk took so far are all leads, and the level of the last.
struct LeadsSoFar {
    only: bool,
    level: u8,
}

impl LeadsSoFar {
    /// From the chunk's first atom (`fresh`: the chunk starts with it, no overlap before).
    fn new(first: &Atom, fresh: bool) -> Self {
        Self {
            only: fresh && first.lead > 0,
            level: first.lead,
        }
    }

    /// Whether the chunk takes `atoms[next]`, the start of a section inside the last lead's,
    /// whole or not (see `sections::leads_reach`).
    fn pull(
        &self,
        splitter: &Splitter,
        text: &str,
        atoms: &[Atom],
        chunk_start: usize,
        size: usize,
        next: usize,
    ) -> Result<bool, SizeError> {
        if !self.only || atoms[next].heading <= self.level {
            return Ok(false);
        }
        sections::leads_reach(splitter, text, atoms, chunk_start, size, next)
    }

    fn took(&mut self, atom: &Atom) {
        self.only &= atom.lead > 0;
        self.level = atom.lead;
    }
}

/// Start and size of the overlap that the chunk after `text[chunk_start..chunk_end]` takes,
/// given that `next` is its first new atom.
fn merge_overlap_start(
    splitter: &Splitter,
    text: &str,
    chunk_start: usize,
    chunk_end: usize,
    next: &Atom,
) -> Result<Option<(usize, usize)>, SizeError> {
    let Some(automaton) = splitter.any_separator() else {
        return Ok(None);
    };
    let sizer = splitter.sizer();
    let config = splitter.config();
    let additive = sizer.is_additive();
    // A separator that begins up to `longest_separator` bytes before the window can still
    // end inside it.
    let mut window = sizer.window_start(text, chunk_start, chunk_end, config.overlap + 1);
    window = window
        .saturating_sub(splitter.longest_separator())
        .max(chunk_start);
    while !text.is_char_boundary(window) {
        window -= 1;
    }
    let mut previous: Option<(usize, usize)> = None; // (content start, tail size)
    for found in automaton.find_iter(&text[window..chunk_end]) {
        let boundary = match config.keep_separator {
            KeepSeparator::Start => window + found.start(),
            KeepSeparator::End | KeepSeparator::None => window + found.end(),
        };
        if boundary <= chunk_start || boundary >= chunk_end {
            continue;
        }
        let Some((start, _)) = splitter.content(text, boundary, chunk_end) else {
            continue;
        };
        if start <= chunk_start {
            continue;
        }
        let tail = match previous {
            Some((previous_start, previous_size)) if additive => {
                if start <= previous_start {
                    continue;
                }
                previous_size - sizer.size(&text[previous_start..start])?
            }
            _ => sizer.size(&text[start..chunk_end])?,
        };
        previous = Some((start, tail));
        if tail > config.overlap {
            continue;
        }
        let total = if additive {
            tail + next.lead_gap + next.size
        } else {
            sizer.size(&text[start..next.end])?
        };
        if total <= config.chunk_size {
            return Ok(Some((start, tail)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(start: usize, end: usize, lead: u8, closer: bool) -> Atom {
        Atom {
            start,
            end,
            size: end - start,
            lead_gap: 1,
            depth: 9,
            boundary: 9,
            lead,
            closer,
            heading: 0,
            section_end: end,
            section_size: end - start,
        }
    }

    #[test]
    fn a_closer_joins_the_chunk_of_the_atom_before_it() {
        let atoms = [atom(0, 10, 0, false), atom(11, 20, 0, false)];
        // Nothing special after the chunk: the latest cut of the coarsest level.
        assert_eq!(coarsest_end(&atoms, 0, Some(&atom(21, 30, 0, false))).0, 1);
        // A closer after it that does not fit: the chunk ends one atom earlier, so that the
        // closer goes with the atom before it.
        assert_eq!(coarsest_end(&atoms, 0, Some(&atom(21, 22, 0, true))).0, 0);
        // One atom: nothing else fits, the closer stays apart.
        assert_eq!(
            coarsest_end(&atoms[1..], 0, Some(&atom(21, 22, 0, true))).0,
            0
        );
    }

    #[test]
    fn a_chunk_ends_after_a_lead_only_when_nothing_else_fits() {
        // A lead of two lines (comments, then a signature) and the body after it.
        let atoms = [
            atom(0, 10, 0, false),
            atom(11, 20, 1, false),
            atom(21, 30, 1, false),
        ];
        let body = atom(31, 40, 0, false);
        // The body does not fit: the chunk ends before the lead, which starts the next.
        assert_eq!(coarsest_end(&atoms, 0, Some(&body)).0, 0);
        // A chunk of the lead alone ends between its lines: the signature goes with the body.
        assert_eq!(coarsest_end(&atoms, 1, Some(&body)).0, 1);
        // No cut left but the one after the lead.
        assert_eq!(coarsest_end(&atoms, 2, Some(&body)).0, 2);
    }
}
