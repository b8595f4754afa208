//! The rules of merging sections (Markdown's, HTML's and code's): a chunk takes the start
//! of a section (a heading) that is not its own first line only when the chunk began at a
//! heading of the same or a higher level (or at the start of the range being cut), and only
//! with the whole section: small sibling sections merge up to the size, but a chunk never
//! ends inside a section it entered, and never runs from one section into a section of a
//! higher level or of another parent heading. The cut positions themselves come from
//! `markdown/`, `code/` and `html/`.
//!
//! Leads and closers. A section's lead (a heading's line; a definition's comments,
//! decorators and signature) starts the chunk of what follows it: a chunk never ends right
//! after a lead while the text after it in its section fits with it. The piece after a lead
//! that fits alone but not after the lead is cut further, at the structure levels and the
//! first [`PULL_LITERAL_LEVELS`] separator levels, so that its first part joins the lead (a
//! pull, `Splitter::pull`); a chunk made of leads takes the start of a sub-section without
//! the whole of it when the sub-section's first text fits ([`leads_reach`]); the cut after
//! a lead is the worst end of all (`merge.rs`). In code, an atom that is only closing
//! delimiters ([`only_closers`]) joins the chunk of the atom before it: the cut before it is
//! the worst end of all. Where the size does not allow, the chunks are what they are
//! without these rules.

use super::atom::Atom;
use super::plan::Splitter;
use crate::markdown::{Outline, HEADING_LEVELS};
use crate::sizing::SizeError;

/// Marks, on the atoms of one cut, where each section opened by a heading atom ends: the end
/// byte and the size of the section's atoms, for [`may_join`].
///
/// # Errors
/// The sizer failed.
pub(crate) fn mark_sections(
    splitter: &Splitter,
    text: &str,
    atoms: &mut [Atom],
) -> Result<(), SizeError> {
    let Some(last) = atoms.last() else {
        return Ok(());
    };
    let range_end = last.end;
    let additive = splitter.sizer().is_additive();
    // Running sizes: `before[i]` is the size of atoms[..i] with the gaps between them.
    let mut next_at_level = [atoms.len(); HEADING_LEVELS + 1];
    let mut running = 0_usize;
    let mut before = Vec::with_capacity(if additive { atoms.len() + 1 } else { 0 });
    if additive {
        before.push(0);
        for atom in atoms.iter() {
            running += atom.lead_gap + atom.size;
            before.push(running);
        }
    }
    for row in (0..atoms.len()).rev() {
        let level = usize::from(atoms[row].heading);
        if level == 0 {
            continue;
        }
        let end_row = next_at_level[1..=level]
            .iter()
            .copied()
            .min()
            .unwrap_or(atoms.len());
        let section_end = if end_row == atoms.len() {
            range_end
        } else {
            atoms[end_row - 1].end
        };
        let atom = &mut atoms[row];
        atom.section_end = section_end;
        atom.section_size = if additive {
            before[end_row] - before[row] - atom.lead_gap
        } else {
            splitter.sizer().size(&text[atom.start..section_end])?
        };
        next_at_level[level] = row;
    }
    Ok(())
}

/// Whether a chunk of `size` that starts at `chunk_start` with the atom `first` (the first
/// atom of the range being cut when `range_start`) may take `next`, a heading atom: only when
/// the chunk began at a heading of the same or a higher level, or at the start of the range,
/// and only with `next`'s whole section.
///
/// # Errors
/// The sizer failed.
pub(crate) fn may_join(
    splitter: &Splitter,
    text: &str,
    chunk_start: usize,
    size: usize,
    first: &Atom,
    range_start: bool,
    next: &Atom,
) -> Result<bool, SizeError> {
    let start_level = match first.heading {
        0 if range_start => 0,
        0 => u8::MAX,
        level => level,
    };
    if start_level > next.heading {
        return Ok(false);
    }
    let whole = if splitter.sizer().is_additive() {
        size + next.lead_gap + next.section_size
    } else {
        splitter
            .sizer()
            .size(&text[chunk_start..next.section_end])?
    };
    Ok(whole <= splitter.config().chunk_size)
}

/// Consecutive lead atoms (a heading and the sub-headings right after it; a definition's
/// comments, decorators and signature lines), for the piece that follows them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeadRun {
    /// Start byte of the first lead.
    pub(crate) start: usize,
    /// Start byte of the innermost lead.
    pub(crate) inner_start: usize,
    /// Level of the innermost section led.
    pub(crate) level: u8,
    /// End byte of the innermost lead (its heading's [`crate::markdown::Heading::lead_end`]).
    lead_end: usize,
}

impl LeadRun {
    /// The run of the innermost lead alone.
    pub(crate) fn innermost(self) -> Self {
        Self {
            start: self.inner_start,
            ..self
        }
    }

    /// The lead level (0: none) of the atom `text[start..end]` that starts the section of
    /// `heading` (0: none), and `run` after it: a lead starts a run, or continues the one
    /// before when it is inside its section; any other atom ends it.
    pub(crate) fn follow(
        run: &mut Option<Self>,
        outline: &Outline,
        text: &str,
        (start, end): (usize, usize),
        heading: u8,
    ) -> u8 {
        let piece = &text[start..end];
        let (start, end) = (
            start + piece.len() - piece.trim_start().len(),
            start + piece.trim_end().len(),
        );
        // Positions are line starts; an atom starts after its line's indent.
        let indent = text.as_bytes()[..start]
            .iter()
            .rev()
            .take_while(|&&byte| byte == b' ' || byte == b'\t')
            .count();
        if let Some((level, lead_end)) = outline.lead_at(start - indent) {
            if end <= lead_end {
                let run_start = match *run {
                    Some(open) if heading == 0 || heading > open.level => open.start,
                    _ => start,
                };
                *run = Some(Self {
                    start: run_start,
                    inner_start: start,
                    level,
                    lead_end,
                });
                return level;
            }
        } else if let Some(open) = run.filter(|open| end <= open.lead_end && heading == 0) {
            // A later line of the lead (a signature over several lines).
            return open.level;
        }
        *run = None;
        0
    }
}

/// The state of a pull (see `Splitter::pull`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pull {
    Off,
    /// Cutting the piece that follows a lead.
    Cutting,
    /// The pull found no cut that lets a first part join the lead: it gives up.
    Failed,
}

/// How many separator levels (the first ones: by default blank lines and line breaks) a
/// pull may cut the piece after a lead at: a heading or a signature takes the first
/// paragraphs or lines of what follows it, never part of a line. Chosen in
/// `benches/NOTES.md`, under `benches/quality.py`.
pub(crate) const PULL_LITERAL_LEVELS: usize = 2;

/// Whether `piece` is only closing delimiters (`}`, `)`, `]`, with `;`, `,` and whitespace).
pub(crate) fn only_closers(piece: &str) -> bool {
    let bytes = piece.as_bytes();
    bytes.len() <= CLOSERS_LONGEST
        && bytes.iter().any(|byte| matches!(byte, b'}' | b')' | b']'))
        && bytes.iter().all(|byte| {
            matches!(byte, b'}' | b')' | b']' | b';' | b',') || byte.is_ascii_whitespace()
        })
}

/// The longest run of closing delimiters (bytes) that joins the atom before it: the closing
/// lines of a few nested blocks.
const CLOSERS_LONGEST: usize = 64;

/// Whether a chunk of `size` from `chunk_start` whose atoms are all leads may take
/// `atoms[next]`, the start of a sub-section, without the whole sub-section: when the leads
/// from `next` on and the first atom after them fit in the chunk. (The pull has already cut
/// that atom to fit, where it could.)
///
/// # Errors
/// The sizer failed.
pub(crate) fn leads_reach(
    splitter: &Splitter,
    text: &str,
    atoms: &[Atom],
    chunk_start: usize,
    size: usize,
    next: usize,
) -> Result<bool, SizeError> {
    let chunk_size = splitter.config().chunk_size;
    let Some(offset) = atoms[next..].iter().position(|atom| atom.lead == 0) else {
        return Ok(false);
    };
    let through = next + offset;
    let reached = if splitter.sizer().is_additive() {
        atoms[next..=through]
            .iter()
            .map(|atom| atom.lead_gap + atom.size)
            .sum::<usize>()
            + size
    } else {
        splitter
            .sizer()
            .size(&text[chunk_start..atoms[through].end])?
    };
    Ok(reached <= chunk_size)
}

#[cfg(test)]
mod tests {
    use crate::engine::{Splitter, SplitterConfig, Structure};
    use crate::sizing::Unit;

    fn chunks(text: &str, chunk_size: usize) -> Vec<&str> {
        let mut config = SplitterConfig::new(chunk_size);
        config.structure = Structure::Markdown;
        let splitter = Splitter::new(config, Unit::Char).unwrap();
        splitter
            .split(text)
            .unwrap()
            .into_iter()
            .map(|(start, end)| &text[start..end])
            .collect()
    }

    #[test]
    fn sections_then_blocks() {
        let text = "# A\n\nintro\n\n## B\n\nbee\n\n## C\n\n```\n# x\n\ny\n```\n";
        assert_eq!(chunks(text, 100), [text.trim_end()]);
        // Sibling sections merge; the fence (14 chars) stays whole.
        assert_eq!(
            chunks(text, 30),
            ["# A\n\nintro\n\n## B\n\nbee", "## C\n\n```\n# x\n\ny\n```"]
        );
        assert_eq!(
            chunks(text, 14),
            ["# A\n\nintro", "## B\n\nbee", "## C", "```\n# x\n\ny\n```"]
        );
    }

    #[test]
    fn a_heading_starts_the_chunk_of_what_follows_it() {
        // The list fits alone, not after both headings: it is cut between its items.
        let text = "# 0.22.0\n\n### Added\n\n- one item\n- two items\n- three items\n";
        assert_eq!(
            chunks(text, 40),
            [
                "# 0.22.0\n\n### Added\n\n- one item",
                "- two items\n- three items"
            ]
        );
        // One line: a pull never cuts inside a line, so the heading stays alone.
        let text = "## FAQ\n\nSmall chunks are searched, parents read.\n";
        assert_eq!(
            chunks(text, 40),
            ["## FAQ", "Small chunks are searched, parents read."]
        );
        // A heading too long to share a chunk with its sub-heading's text: the sub-heading
        // takes its text.
        let text = "# a\n\n## a a a a\n\na\na\n";
        assert_eq!(chunks(text, 13), ["# a", "## a a a a\n\na", "a"]);
    }

    #[test]
    fn no_run_from_a_section_tail_into_the_next() {
        let text = "## A\n\naaaa aaaa.\n\nbbbb.\n\n## B\n\nc.\n";
        assert_eq!(
            chunks(text, 20),
            ["## A\n\naaaa aaaa.", "bbbb.", "## B\n\nc."]
        );
    }
}
