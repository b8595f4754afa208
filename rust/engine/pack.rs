//! Packing for sizers that are not additive (tokens, a Python callable): the count of a
//! joined text is not the sum of its parts, so every chunk is checked exactly.
//!
//! Speed: `benches/NOTES.md`, under `rust/engine/pack.rs`.
//!
//! Runs of graphemes (a piece no separator cuts) were packed the same way, by summing
//! per-grapheme counts: eight "x" are one token, not eight, so `"x" * 20000` at 512 tokens
//! gave 40 chunks of 64 tokens, and words were cut inside their tokens. Now a run is found
//! in a window that just holds more than the budget: it ends at the last token end (of the
//! window's own encoding) on a grapheme boundary whose prefix fits, one encoding and mostly
//! one exact count per run; a sizer without tokens bisects over grapheme boundaries.

use unicode_segmentation::UnicodeSegmentation;

use super::atom::Atom;
use super::config::KeepSeparator;
use super::plan::Splitter;
use crate::error::ChunkError;
use crate::sizing::SizeError;
use crate::text::chars::is_whitespace;

/// The size of `text[start..end]`, or a cheap upper bound of it when that bound fits the chunk
/// size; above the chunk size, any size above it (see `Sizer::size_up_to`).
pub(crate) fn measure(
    splitter: &Splitter,
    text: &str,
    start: usize,
    end: usize,
) -> Result<usize, SizeError> {
    let sizer = splitter.sizer();
    let region = &text[start..end];
    if sizer.adds_at_whitespace() {
        // Exact always: `grow` adds to it (see there).
        return sizer.size(region);
    }
    let limit = splitter.config().chunk_size;
    let bound = sizer.upper_bound(region);
    if bound <= limit {
        Ok(bound)
    } else {
        sizer.size_up_to(region, limit)
    }
}

/// Whether `text[start..end]` holds a whitespace char (not only invisible ones).
fn holds_whitespace(text: &str, start: usize, end: usize) -> bool {
    text[start..end].chars().any(is_whitespace)
}

/// The last atom of the chunk that starts at `chunk_start` and holds `atoms[first]` (whose
/// own text, from `chunk_start`, measures `first_size`), and the chunk's size (exact, or an
/// upper bound within the limit): the longest run of atoms whose text fits, the atom after
/// it checked exactly (a chunk may end at any cut inside that run, so the run must be whole).
///
/// # Errors
/// The sizer failed.
pub(crate) fn grow(
    splitter: &Splitter,
    text: &str,
    atoms: &[Atom],
    chunk_start: usize,
    first: usize,
    first_size: usize,
) -> Result<(usize, usize), SizeError> {
    let limit = splitter.config().chunk_size;
    let size_to = |row: usize| measure(splitter, text, chunk_start, atoms[row].end);
    let (mut fitted, mut fitted_size) = (first, first_size);
    for round in 0.. {
        let mut estimate = fitted_size;
        let mut proposed = fitted;
        while let Some(next) = atoms.get(proposed + 1) {
            let grown = estimate
                .saturating_add(next.lead_gap)
                .saturating_add(next.size);
            if grown > limit {
                break;
            }
            estimate = grown;
            proposed += 1;
        }
        if round >= SUM_ROUNDS && proposed > fitted {
            // The sums keep falling short (words of text with no spaces: each sentence
            // counts one, the joined text one too): double the run instead, so a chunk
            // takes a few counts, not one per sum's worth of atoms.
            proposed = proposed.max((2 * fitted + 1 - first).min(atoms.len() - 1));
        }
        if proposed == fitted {
            if let Some(next) = atoms.get(fitted + 1) {
                // Sizes that add where the text is joined at whitespace (words): the run and
                // the next atom, both counted exactly, prove it without a count.
                if splitter.sizer().adds_at_whitespace()
                    && holds_whitespace(text, atoms[fitted].end, next.start)
                    && fitted_size.saturating_add(next.size) > limit
                {
                    return Ok((fitted, fitted_size));
                }
            }
            // The sums say the next atom does not fit: they over-estimate (BPE merges across
            // the joins), so check, and gallop when it does fit after all.
            let mut step = 1;
            let mut low = fitted;
            loop {
                let candidate = (low + step).min(atoms.len() - 1);
                if candidate == low {
                    return Ok((fitted, fitted_size));
                }
                let size = size_to(candidate)?;
                if size > limit {
                    return bisect(&size_to, limit, (low, fitted_size), candidate);
                }
                (low, fitted, fitted_size) = (candidate, candidate, size);
                step *= 2;
            }
        }
        let exact = size_to(proposed)?;
        if exact <= limit {
            (fitted, fitted_size) = (proposed, exact);
            continue;
        }
        // The sum under-estimated.
        return bisect(&size_to, limit, (fitted, fitted_size), proposed);
    }
    unreachable!("the rounds never end but by returning")
}

/// The largest row in `[fitted, too_big)` whose size fits `limit`, with its size: `fitted`
/// fits (with `fitted_size`), `too_big` does not.
///
/// # Errors
/// The sizer failed.
fn bisect(
    size_to: &dyn Fn(usize) -> Result<usize, SizeError>,
    limit: usize,
    (fitted, fitted_size): (usize, usize),
    too_big: usize,
) -> Result<(usize, usize), SizeError> {
    let (mut low, mut low_size, mut high) = (fitted, fitted_size, too_big);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        let size = size_to(middle)?;
        if size <= limit {
            (low, low_size) = (middle, size);
        } else {
            high = middle;
        }
    }
    Ok((low, low_size))
}

/// The overlap the chunk after `text[chunk_start..chunk_end]` takes, given that `next` is its
/// first new atom: (start, size of the overlap, size of the overlap plus `next`), both exact.
///
/// # Errors
/// The sizer failed.
pub(crate) fn pack_overlap_start(
    splitter: &Splitter,
    text: &str,
    chunk_start: usize,
    chunk_end: usize,
    next: &Atom,
) -> Result<Option<(usize, usize, usize)>, SizeError> {
    let Some(automaton) = splitter.any_separator() else {
        return Ok(None);
    };
    let config = splitter.config();
    let sizer = splitter.sizer();
    let mut starts: Vec<usize> = Vec::new();
    for found in automaton.find_iter(&text[chunk_start..chunk_end]) {
        let boundary = chunk_start
            + match config.keep_separator {
                KeepSeparator::Start => found.start(),
                KeepSeparator::End | KeepSeparator::None => found.end(),
            };
        if boundary <= chunk_start || boundary >= chunk_end {
            continue;
        }
        let Some((start, _)) = splitter.content(text, boundary, chunk_end) else {
            continue;
        };
        if start > chunk_start && starts.last().is_none_or(|&last| start > last) {
            starts.push(start);
        }
    }
    // Tails shrink as their start moves right: the earliest start whose tail fits, found by
    // bisection, then a few later ones in case the tail plus `next` does not fit.
    let tail = |start: usize| sizer.size(&text[start..chunk_end]);
    let (mut low, mut high) = (0, starts.len());
    while low < high {
        let middle = low + (high - low) / 2;
        if tail(starts[middle])? <= config.overlap {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    for &start in starts.iter().skip(low).take(4) {
        let tail_size = tail(start)?;
        if tail_size > config.overlap {
            continue;
        }
        let total = sizer.size(&text[start..next.end])?;
        if total <= config.chunk_size {
            return Ok(Some((start, tail_size, total)));
        }
    }
    Ok(None)
}

/// Rounds of growing a run by summed counts before it grows by doubling instead.
const SUM_ROUNDS: usize = 2;

/// Bytes of text a run's window starts with per unit of the chunk size (English takes about
/// 4.5 bytes per token, runs of one letter 8); the window doubles while it holds no more
/// than the chunk size.
const WINDOW_BYTES_PER_UNIT: usize = 8;

/// Misses (a token end whose prefix, measured alone, does not fit) before a run's end is
/// found by bisection instead.
const TOKEN_END_TRIES: usize = 4;

/// Packs the graphemes of `text[start..end]` into runs that take the whole chunk size, as
/// the sizer measures the run (a sum of per-grapheme counts under-fills: eight "x" are one
/// token, not eight). Each run is found in a window of text from its start that holds just
/// more than the chunk size: with a sizer that has tokens, the run ends at the last token
/// end on a grapheme boundary whose prefix fits (one encoding of the window and, mostly, one
/// exact count); otherwise, or when that fails, at the last grapheme boundary that fits, by
/// bisection (a few exact counts). A grapheme larger than the chunk size is packed by code
/// points. Each run goes to `emit` as (start, end, size), in order.
///
/// # Errors
/// The sizer or `emit` failed, or a character is larger than the chunk size.
pub(crate) fn pack_graphemes(
    splitter: &Splitter,
    text: &str,
    (start, end): (usize, usize),
    emit: &mut dyn FnMut((usize, usize, usize)) -> Result<(), ChunkError>,
) -> Result<(), ChunkError> {
    let sizer = splitter.sizer();
    let limit = splitter.config().chunk_size;
    let mut boundaries: Vec<usize> = Vec::new();
    // A run becomes an atom once trimmed, and trimming can add a token (" cog" is one, "cog"
    // two): a run is measured as the atom it makes.
    let atom_size = |run_start: usize, run_end: usize| -> Result<usize, SizeError> {
        match splitter.content(text, run_start, run_end) {
            Some((content_start, content_end)) => sizer.size(&text[content_start..content_end]),
            None => Ok(0),
        }
    };
    let mut run_start = start;
    while run_start < end {
        let mut span = limit.saturating_mul(WINDOW_BYTES_PER_UNIT).max(64);
        let (window_end, window_size) = loop {
            let mut window_end = run_start.saturating_add(span).min(end);
            while !text.is_char_boundary(window_end) {
                window_end += 1;
            }
            let size = atom_size(run_start, window_end)?;
            if size > limit || window_end == end {
                break (window_end, size);
            }
            span = span.saturating_mul(2);
        };
        if window_size <= limit {
            // The rest fits (the window reached the end).
            emit((run_start, end, window_size))?;
            return Ok(());
        }
        // Grapheme boundaries inside the window: all but its end are those of the whole run.
        boundaries.clear();
        boundaries.extend(
            text[run_start..window_end]
                .grapheme_indices(true)
                .skip(1)
                .map(|(offset, _)| run_start + offset),
        );
        let fitting = |run_end: usize| -> Result<Option<usize>, SizeError> {
            let size = atom_size(run_start, run_end)?;
            Ok((size <= limit).then_some(size))
        };
        let mut run: Option<(usize, usize)> = None;
        if let Some(ends) = sizer.token_ends(&text[run_start..window_end]) {
            let mut misses = 0;
            for &offset in ends.iter().take(limit).rev() {
                let run_end = run_start + offset;
                if run_end >= window_end || boundaries.binary_search(&run_end).is_err() {
                    continue;
                }
                if let Some(size) = fitting(run_end)? {
                    run = Some((run_end, size));
                    break;
                }
                misses += 1;
                if misses == TOKEN_END_TRIES {
                    break;
                }
            }
        }
        if run.is_none() {
            // The last grapheme boundary whose prefix fits (sizes grow with the prefix; each
            // answer is measured, so a sizer for which they do not still never overfills).
            let (mut low, mut high) = (0, boundaries.len());
            while low < high {
                let middle = low + (high - low) / 2;
                match fitting(boundaries[middle])? {
                    Some(size) => {
                        run = Some((boundaries[middle], size));
                        low = middle + 1;
                    }
                    None => high = middle,
                }
            }
        }
        let (run_end, size) = if let Some(run) = run {
            run
        } else {
            let first_end = boundaries.first().copied().unwrap_or(window_end);
            code_point_run(splitter, text, run_start, first_end)?
        };
        emit((run_start, run_end, size))?;
        run_start = run_end;
    }
    Ok(())
}

/// The longest run of code points from `start` inside the grapheme `text[start..end]` (larger
/// than the chunk size) that fits: its end and size.
///
/// # Errors
/// The sizer failed, or the first character alone is larger than the chunk size.
fn code_point_run(
    splitter: &Splitter,
    text: &str,
    start: usize,
    end: usize,
) -> Result<(usize, usize), ChunkError> {
    let sizer = splitter.sizer();
    let chunk_size = splitter.config().chunk_size;
    let mut run: Option<(usize, usize)> = None;
    for (offset, character) in text[start..end].char_indices() {
        let char_end = start + offset + character.len_utf8();
        let size = sizer.size(&text[start..char_end])?;
        if size > chunk_size {
            if run.is_none() {
                return Err(ChunkError::Unsplittable {
                    character,
                    position: start + offset,
                    size,
                    chunk_size,
                });
            }
            break;
        }
        run = Some((char_end, size));
    }
    Ok(run.expect("a grapheme holds at least one character"))
}

#[cfg(test)]
mod tests {
    use crate::engine::{Splitter, SplitterConfig};
    use crate::error::ChunkError;
    use crate::sizing::token::TokenSizer;
    use crate::sizing::{SizeError, Sizer};

    /// Chars, plus 10 for every ". " inside the text: joining two sentences costs more than
    /// the sum of their parts, so packing by sums must be corrected by exact counts. With
    /// `fails_on`, it fails on any text holding that word, as a Python `length_function`
    /// may.
    #[derive(Debug)]
    struct Joins {
        fails_on: Option<&'static str>,
    }

    const JOINS: Joins = Joins { fails_on: None };

    impl Sizer for Joins {
        fn size(&self, text: &str) -> Result<usize, SizeError> {
            if let Some(word) = self.fails_on.filter(|word| text.contains(word)) {
                return Err(format!("no size for {word}").into());
            }
            Ok(text.chars().count() + 10 * text.matches(". ").count())
        }

        fn is_additive(&self) -> bool {
            false
        }

        fn name(&self) -> &'static str {
            "joins"
        }
    }

    fn chunks(chunk_size: usize, overlap: usize, text: &str) -> Vec<&str> {
        let mut config = SplitterConfig::new(chunk_size);
        config.overlap = overlap;
        let splitter = Splitter::with_sizer(config, Box::new(JOINS)).unwrap();
        let spans = splitter.split(text).unwrap();
        let pieces: Vec<&str> = spans
            .iter()
            .map(|&(start, end)| &text[start..end])
            .collect();
        for piece in &pieces {
            assert!(
                JOINS.size(piece).unwrap() <= chunk_size,
                "{piece:?} is too big"
            );
        }
        pieces
    }

    #[test]
    fn sums_that_under_estimate_are_corrected() {
        // "aa. bb." sums to 7 but measures 17; "aa. bb. cc." sums to 11 but measures 31.
        assert_eq!(chunks(12, 0, "aa. bb. cc"), ["aa.", "bb.", "cc"]);
        assert_eq!(
            chunks(30, 0, "aa. bb. cc. dd. ee"),
            ["aa. bb.", "cc. dd. ee"]
        );
    }

    #[test]
    fn long_runs_without_separators_fit() {
        let text = "abcdefghij".repeat(1000);
        let pieces = chunks(7, 0, &text);
        assert_eq!(pieces.concat(), text);
        assert!(pieces
            .iter()
            .all(|piece| piece.len() == 7 || piece.len() == text.len() % 7));
    }

    #[test]
    fn overlap_is_measured_exactly() {
        let text = "one two three four five six seven eight nine ten";
        let pieces = chunks(15, 6, text);
        assert!(pieces.len() > 3);
        for pair in pieces.windows(2) {
            let (previous, next) = (pair[0], pair[1]);
            let shared = (0..=next.len())
                .rev()
                .find(|&length| previous.ends_with(&next[..length]))
                .unwrap_or(0);
            assert!(JOINS.size(&next[..shared]).unwrap() <= 6);
        }
    }

    #[test]
    fn chunks_fit_in_tokens() {
        let sizer = TokenSizer::tiktoken("o200k_base").unwrap();
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(200)
            + &"汉字没有空格".repeat(300);
        for overlap in [0, 5] {
            let mut config = SplitterConfig::new(37);
            config.overlap = overlap;
            let splitter = Splitter::with_sizer(
                config,
                Box::new(TokenSizer::tiktoken("o200k_base").unwrap()),
            )
            .unwrap();
            let spans = splitter.split(&text).unwrap();
            assert!(spans.len() > 10);
            for &(start, end) in &spans {
                assert!(sizer.size(&text[start..end]).unwrap() <= 37);
            }
        }
    }

    fn token_chunks(chunk_size: usize, separators: Vec<Vec<String>>, text: &str) -> Vec<&str> {
        let mut config = SplitterConfig::new(chunk_size);
        config.separators = separators;
        let sizer = TokenSizer::tiktoken("cl100k_base").unwrap();
        let splitter = Splitter::with_sizer(config, Box::new(sizer)).unwrap();
        let spans = splitter.split(text).unwrap();
        spans
            .iter()
            .map(|&(start, end)| &text[start..end])
            .collect()
    }

    #[test]
    fn graphemes_fill_the_whole_token_budget() {
        let sizer = TokenSizer::tiktoken("cl100k_base").unwrap();
        let text = "x".repeat(20_000);
        let pieces = token_chunks(512, Vec::new(), &text);
        assert_eq!(pieces.concat(), text);
        let counts: Vec<usize> = pieces
            .iter()
            .map(|piece| sizer.size(piece).unwrap())
            .collect();
        assert_eq!(counts.len(), 5, "{counts:?}");
        assert!(counts[..4].iter().all(|&count| count == 512), "{counts:?}");
        // Cut where tokens end, not inside "final".
        assert_eq!(
            token_chunks(5, vec![vec![".".to_owned()]], "This is the final test."),
            ["This is the final test", "."]
        );
    }

    #[test]
    fn a_run_is_measured_as_the_atom_it_makes() {
        // Found by the fuzzer: a run " cogDDDDDD..." of 14 tokens is 15 once its leading space
        // is trimmed (" cog" is one token, "cog" two).
        let sizer = TokenSizer::tiktoken("cl100k_base").unwrap();
        let text = "\u{fffd}".repeat(9)
            + "\u{89}"
            + &"\u{fffd}".repeat(33)
            + " cogDDDDDD"
            + &"\u{fffd}".repeat(25)
            + " "
            + &"\u{fffd}".repeat(5)
            + ":";
        let pieces = token_chunks(14, vec![vec!["\n".to_owned()]], &text);
        assert!(pieces.len() > 1);
        for piece in pieces {
            assert!(sizer.size(piece).unwrap() <= 14, "{piece:?}");
        }
    }

    #[test]
    fn a_sizer_error_travels_as_a_value() {
        for overlap in [0, 1] {
            let mut config = SplitterConfig::new(3);
            config.overlap = overlap;
            let failing = Joins {
                fails_on: Some("boom"),
            };
            let splitter = Splitter::with_sizer(config, Box::new(failing)).unwrap();
            let text = "one two three four. five six boom seven";
            let error = splitter.split(text).unwrap_err();
            assert!(
                matches!(&error, ChunkError::Sizer(source) if source.to_string() == "no size for boom"),
                "{error:?}"
            );
            assert!(splitter.split("one two three four").is_ok());
        }
    }
}
