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
//! Other sizers (tokens) pack in `pack.rs`: summed atom counts propose a chunk, one exact
//! count checks it; a growing chunk is never measured atom by atom.

use crate::size::count_chars;
use crate::span::{CharCursor, Span};
use crate::split::{Atom, KeepSeparator, Splitter};

/// Appends the spans of the chunks packed from `atoms` to `out`. `origin` is a (byte, char)
/// offset pair at or before the first atom, from which char offsets are counted. With
/// `ranges`, the first and last atom of every chunk are appended there.
///
/// With a sizer that counts chars, every atom's size and gap already is its char count, so
/// char offsets are running sums and the text is not read again; otherwise a cursor counts.
pub(crate) fn merge_atoms(
    splitter: &Splitter,
    text: &str,
    atoms: &[Atom],
    origin: (usize, usize),
    out: &mut Vec<Span>,
    mut ranges: Option<&mut Vec<(usize, usize)>>,
) {
    let sizer = splitter.sizer();
    let additive = sizer.is_additive();
    let sizes_are_chars = sizer.counts_chars();
    let chunk_size = splitter.config().chunk_size;
    let overlap = splitter.config().overlap;
    let mut cursor = CharCursor::at(text, origin.0, origin.1);
    let mut index = 0;
    // Char offset of atoms[index].start (only kept when sizes are chars).
    let mut next_start_char = match atoms.first() {
        Some(first) if sizes_are_chars => {
            origin.1 + count_chars(&text.as_bytes()[origin.0..first.start])
        }
        _ => 0,
    };
    // Start, size (and start char) of the overlap carried into the chunk at atoms[index].
    let mut carry: Option<(usize, usize, usize)> = None;
    while index < atoms.len() {
        let first = &atoms[index];
        let (chunk_start, mut size, chunk_start_char) = match carry {
            Some((start, carried, start_char)) if additive => {
                (start, carried + first.lead_gap + first.size, start_char)
            }
            // The overlap's start and its size with `first`, measured exactly when found.
            Some((start, total, start_char)) => (start, total, start_char),
            None => (first.start, first.size, next_start_char),
        };
        let mut end_char = next_start_char + first.size;
        let mut last = index;
        if !additive {
            (last, _) = crate::pack::grow(splitter, text, atoms, chunk_start, index, size);
        }
        while let Some(next) = atoms.get(last + 1).filter(|_| additive) {
            let grown = size + next.lead_gap + next.size;
            if grown > chunk_size {
                break;
            }
            size = grown;
            end_char += next.lead_gap + next.size;
            last += 1;
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
            let start_char = cursor.char_at(chunk_start);
            Span {
                start_byte: chunk_start,
                end_byte: chunk_end,
                start_char,
                end_char: cursor.char_at(chunk_end),
            }
        };
        out.push(span);
        if let Some(ranges) = ranges.as_deref_mut() {
            ranges.push((index, last));
        }
        index = last + 1;
        let Some(next) = atoms.get(index) else { break };
        if sizes_are_chars {
            next_start_char = span.end_char + next.lead_gap;
        }
        carry = if overlap > 0 && !additive {
            crate::pack::overlap_start(splitter, text, chunk_start, chunk_end, next)
                .map(|(start, _, total)| (start, total, 0))
        } else if overlap > 0 {
            overlap_start(splitter, text, chunk_start, chunk_end, next).map(|(start, tail)| {
                // With char sizes the tail's size is its char count.
                let start_char = if sizes_are_chars {
                    span.end_char - tail
                } else {
                    0
                };
                (start, tail, start_char)
            })
        } else {
            None
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
