//! Greedy packing of atoms into chunks, with overlap.
//!
//! Atoms arrive in document order, each within the chunk size. A chunk takes atoms while its
//! size fits. With an overlap, the next chunk starts at the earliest separator boundary inside
//! the last `overlap` units of the previous chunk whose tail, plus the next atom, still fits;
//! a later boundary when it does not; no overlap when none fits.
//!
//! Performance notes: with an additive sizer (chars, bytes) no merged text is ever measured
//! again: a chunk's size is the running sum of atom sizes and the gaps between them, and the
//! overlap candidates' sizes are derived from one measurement of the window by subtraction.

use crate::split::{Atom, KeepSeparator, Splitter};

/// Appends the content spans of the chunks packed from `atoms` to `out`.
pub(crate) fn merge_atoms(
    splitter: &Splitter,
    text: &str,
    atoms: &[Atom],
    out: &mut Vec<(usize, usize)>,
) {
    let sizer = splitter.sizer();
    let additive = sizer.is_additive();
    let chunk_size = splitter.config().chunk_size;
    let overlap = splitter.config().overlap;
    let mut index = 0;
    // Start and size of the overlap carried into the chunk that begins at atoms[index].
    let mut carry: Option<(usize, usize)> = None;
    while index < atoms.len() {
        let first = &atoms[index];
        let (chunk_start, mut size) = match carry {
            Some((start, carried)) if additive => (start, carried + first.lead_gap + first.size),
            Some((start, _)) => (start, sizer.size(&text[start..first.end])),
            None => (first.start, first.size),
        };
        let mut last = index;
        while let Some(next) = atoms.get(last + 1) {
            let grown = if additive {
                size + next.lead_gap + next.size
            } else {
                sizer.size(&text[chunk_start..next.end])
            };
            if grown > chunk_size {
                break;
            }
            size = grown;
            last += 1;
        }
        let chunk_end = atoms[last].end;
        out.push((chunk_start, chunk_end));
        index = last + 1;
        carry = match atoms.get(index) {
            Some(next) if overlap > 0 => {
                overlap_start(splitter, text, chunk_start, chunk_end, next)
            }
            _ => None,
        };
    }
}

/// Start and size of the overlap that the chunk after `text[chunk_start..chunk_end]` takes,
/// given that `next` is its first new atom.
fn overlap_start(
    splitter: &Splitter,
    text: &str,
    chunk_start: usize,
    chunk_end: usize,
    next: &Atom,
) -> Option<(usize, usize)> {
    let automaton = splitter.any_separator()?;
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
                previous_size - sizer.size(&text[previous_start..start])
            }
            _ => sizer.size(&text[start..chunk_end]),
        };
        previous = Some((start, tail));
        if tail > config.overlap {
            continue;
        }
        let total = if additive {
            tail + next.lead_gap + next.size
        } else {
            sizer.size(&text[start..next.end])
        };
        if total <= config.chunk_size {
            return Some((start, tail));
        }
    }
    None
}
