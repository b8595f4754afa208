//! The Markdown rules of merging: a chunk takes the start of a section (a heading) that is
//! not its own first line only when the chunk began at a heading of the same or a higher
//! level (or at the start of the range being cut), and only with the whole section: small
//! sibling sections merge up to the size, but a chunk never ends inside a section it
//! entered, and never runs from one section into a section of a higher level or of another
//! parent heading. The cut positions themselves come from `markdown/`.

use super::atom::Atom;
use super::plan::Splitter;
use crate::markdown::HEADING_LEVELS;
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
    fn no_run_from_a_section_tail_into_the_next() {
        let text = "## A\n\naaaa aaaa.\n\nbbbb.\n\n## B\n\nc.\n";
        assert_eq!(
            chunks(text, 20),
            ["## A\n\naaaa aaaa.", "bbbb.", "## B\n\nc."]
        );
    }
}
