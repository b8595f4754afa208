//! Levels of chunks in one call: the top level is cut from the document, each lower level
//! inside every span of the level above, and byte spans become char spans by one incremental
//! pass per level.
//!
//! Performance notes: a document's working buffers (its char index, the atoms, every level's
//! spans) are kept per thread and reused by the next document ([`Scratch`]); only the span
//! table handed to the caller is allocated, once, at its exact size. Each document made 22
//! allocations and 17 reallocations on markdown-en (files of 11 KB), 13% of the engine's time
//! there.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rayon::prelude::*;

use crate::error::ChunkError;
use crate::markdown::Outline;
use crate::size::CharIndex;
use crate::span::{CharCursor, Span};
use crate::split::{absent_bytes, Atom, LevelAtoms, Splitter};

/// Columns of a [`SpanTable`] row.
pub const SPAN_COLUMNS: [&str; 7] = [
    "level",
    "index",
    "parent",
    "start_byte",
    "end_byte",
    "start_char",
    "end_char",
];

/// The chunks of one level inside a list of parent spans.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelSpans {
    /// Row of each chunk's parent in the parent list.
    pub parent: Vec<usize>,
    /// Byte spans, relative to the document.
    pub spans: Vec<(usize, usize)>,
    /// Char spans, relative to the document.
    pub chars: Vec<(usize, usize)>,
}

/// One chunk's row of a [`SpanTable`]: its [`SPAN_COLUMNS`], in that order. Seven `i64`s and
/// nothing else, so that the Python layer hands a table to numpy as a structured array without
/// copying it.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpanRecord(pub [i64; SPAN_COLUMNS.len()]);

/// Every chunk of a document, one record per chunk: the top level first, then each level
/// below, each in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpanTable {
    /// One record per chunk.
    pub records: Vec<SpanRecord>,
}

impl SpanTable {
    /// Number of rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.records.len()
    }
}

/// Cuts `splitter`'s chunks inside each parent byte span, in parent order.
///
/// # Errors
/// A character larger than the chunk size (token sizers only).
pub fn level_spans(
    splitter: &Splitter,
    text: &str,
    parents: &[(usize, usize)],
) -> Result<LevelSpans, ChunkError> {
    let _memo = crate::token::TextMemo::start();
    let mut cursor = CharCursor::new(text);
    let parents: Vec<Span> = parents
        .iter()
        .map(|&(start_byte, end_byte)| Span {
            start_byte,
            end_byte,
            start_char: cursor.char_at(start_byte),
            end_char: 0,
        })
        .collect();
    cut_inside(splitter, text, &parents)
}

/// Cuts inside parents whose start char offsets are known.
fn cut_inside(splitter: &Splitter, text: &str, parents: &[Span]) -> Result<LevelSpans, ChunkError> {
    let absent = absent_bytes(text, splitter.check_bytes(text.len()));
    let outline = splitter.is_markdown().then(|| Outline::parse(text));
    let chars = splitter
        .sizer()
        .counts_chars()
        .then(|| CharIndex::new(text));
    let mut level = LevelSpans::default();
    cut_level(
        splitter,
        text,
        (&absent, outline.as_ref(), chars.as_ref()),
        parents,
        (None, None),
        (&mut level, &mut Vec::new(), &mut Vec::new()),
    )?;
    Ok(level)
}

/// Cuts one level inside its parents into `level` (cleared first); starts from the parents'
/// atoms when given (`from`), and keeps this level's atoms when `keep` is given. `spans` and
/// `atoms` are working buffers.
fn cut_level(
    splitter: &Splitter,
    text: &str,
    (absent, outline, chars): (&[u8], Option<&Outline>, Option<&CharIndex>),
    parents: &[Span],
    (from, mut keep): (Option<&LevelAtoms>, Option<&mut LevelAtoms>),
    (level, spans, atoms): (&mut LevelSpans, &mut Vec<Span>, &mut Vec<Atom>),
) -> Result<(), ChunkError> {
    level.parent.clear();
    level.spans.clear();
    level.chars.clear();
    let prepared = splitter.prepare_without(absent, outline, chars);
    prepared.swap_buffer(atoms);
    for (row, parent) in parents.iter().enumerate() {
        spans.clear();
        let atoms = from.map(|above| {
            let (first, last) = above.ranges[row];
            &above.atoms[first..=last]
        });
        prepared.cut_with(
            text,
            (parent.start_byte, parent.start_char),
            parent.end_byte,
            atoms,
            spans,
            keep.as_deref_mut(),
        )?;
        level.parent.extend(std::iter::repeat_n(row, spans.len()));
        level
            .spans
            .extend(spans.iter().map(|span| (span.start_byte, span.end_byte)));
        level
            .chars
            .extend(spans.iter().map(|span| (span.start_char, span.end_char)));
    }
    prepared.swap_buffer(atoms);
    Ok(())
}

/// The buffers of one document's cut, kept per thread and reused by the next document.
#[derive(Debug, Default)]
struct Scratch {
    chars: CharIndex,
    levels: Vec<LevelSpans>,
    parents: Vec<Span>,
    spans: Vec<Span>,
    atoms: Vec<Atom>,
    above: LevelAtoms,
    kept: LevelAtoms,
}

/// Scratch capacity, in bytes, a thread keeps after a document: a larger one (left by a long
/// document) is freed rather than held for the life of the thread.
const SCRATCH_KEPT: usize = 4 << 20;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

impl Scratch {
    /// Runs `work` with this thread's scratch; with a fresh one when the thread's is in use
    /// (a Python length function that chunks another text while measuring).
    fn with<T>(work: impl FnOnce(&mut Self) -> T) -> T {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                let result = work(&mut scratch);
                if scratch.capacity_bytes() > SCRATCH_KEPT {
                    *scratch = Self::default();
                }
                result
            }
            Err(_) => work(&mut Self::default()),
        })
    }

    fn capacity_bytes(&self) -> usize {
        use std::mem::size_of;
        let level_bytes: usize = self
            .levels
            .iter()
            .map(|level| {
                level.parent.capacity() * size_of::<usize>()
                    + (level.spans.capacity() + level.chars.capacity())
                        * size_of::<(usize, usize)>()
            })
            .sum();
        let atoms = |kept: &LevelAtoms| {
            kept.atoms.capacity() * size_of::<Atom>()
                + kept.ranges.capacity() * size_of::<(usize, usize)>()
        };
        self.chars.capacity_bytes()
            + level_bytes
            + (self.parents.capacity() + self.spans.capacity()) * size_of::<Span>()
            + self.atoms.capacity() * size_of::<Atom>()
            + atoms(&self.above)
            + atoms(&self.kept)
    }
}

/// Converts the byte spans of one level to char spans with one cursor that visits start,
/// end, start, end...: one pass over the text when chunks do not overlap, plus the length of
/// each overlap when they do (one cursor beats a start and an end cursor by a whole pass).
#[must_use]
pub fn char_spans(text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut cursor = CharCursor::new(text);
    spans
        .iter()
        .map(|&(start, end)| {
            let start_char = cursor.char_at(start);
            (start_char, cursor.char_at(end))
        })
        .collect()
}

/// All levels of `text`: `levels[0]` cuts the document and is numbered `levels.len() - 1`;
/// each following splitter cuts inside the spans of the one before; the last is level 0.
///
/// # Errors
/// A character larger than the chunk size (token sizers only).
pub fn tree_spans(levels: &[&Splitter], text: &str) -> Result<SpanTable, ChunkError> {
    tree_spans_outlined(levels, text).map(|(table, _)| table)
}

/// [`tree_spans`], and the text's Markdown outline when a level is Markdown (parsed once for
/// every level, and returned for the chunks' heading paths).
///
/// # Errors
/// A character larger than the chunk size (token sizers only).
#[allow(clippy::cast_possible_wrap)]
pub fn tree_spans_outlined(
    levels: &[&Splitter],
    text: &str,
) -> Result<(SpanTable, Option<Outline>), ChunkError> {
    check_levels(levels)?;
    // Token sizers keep each merged piece's count for the whole text, every level.
    let _memo = crate::token::TextMemo::start();
    let outline = levels
        .iter()
        .any(|level| level.is_markdown())
        .then(|| Outline::parse(text));
    // Separator bytes the text lacks, checked once for every level.
    let mut check: Vec<u8> = levels
        .iter()
        .flat_map(|level| level.check_bytes(text.len()).iter().copied())
        .collect();
    check.sort_unstable();
    check.dedup();
    let absent = absent_bytes(text, &check);
    let counts_chars = levels.iter().any(|level| level.sizer().counts_chars());
    Scratch::with(|scratch| {
        let Scratch {
            chars,
            levels: found,
            parents,
            spans,
            atoms,
            above,
            kept,
        } = scratch;
        if counts_chars {
            chars.rebuild(text);
        }
        let chars = counts_chars.then_some(&*chars);
        if found.len() < levels.len() {
            found.resize_with(levels.len(), LevelSpans::default);
        }
        parents.clear();
        parents.push(Span {
            start_byte: 0,
            end_byte: text.len(),
            start_char: 0,
            end_char: 0,
        });
        // Whether `above` holds the atoms of the level above (see
        // `Splitter::shares_pieces_with`): the children of a parent then start from the
        // parent's paragraphs instead of searching and measuring the parent's text again.
        let mut shared = false;
        for (depth, splitter) in levels.iter().enumerate() {
            let shared_below = levels
                .get(depth + 1)
                .is_some_and(|lower| lower.shares_pieces_with(splitter));
            kept.clear();
            let level = &mut found[depth];
            cut_level(
                splitter,
                text,
                (&absent, outline.as_ref(), chars),
                parents,
                (
                    Some(&*above).filter(|above| shared && !above.abandoned),
                    shared_below.then_some(&mut *kept),
                ),
                (level, spans, atoms),
            )?;
            std::mem::swap(above, kept);
            shared = shared_below;
            parents.clear();
            parents.extend(level.spans.iter().zip(&level.chars).map(
                |(&(start_byte, end_byte), &(start_char, end_char))| Span {
                    start_byte,
                    end_byte,
                    start_char,
                    end_char,
                },
            ));
        }
        let found = &found[..levels.len()];
        let mut table = SpanTable {
            records: Vec::with_capacity(found.iter().map(|level| level.spans.len()).sum()),
        };
        for (depth, level) in found.iter().enumerate() {
            let number = (levels.len() - 1 - depth) as i64;
            for (index, ((&(start_byte, end_byte), &(start_char, end_char)), &parent)) in level
                .spans
                .iter()
                .zip(&level.chars)
                .zip(&level.parent)
                .enumerate()
            {
                let parent = if depth == 0 { -1 } else { parent as i64 };
                table.records.push(SpanRecord([
                    number,
                    index as i64,
                    parent,
                    start_byte as i64,
                    end_byte as i64,
                    start_char as i64,
                    end_char as i64,
                ]));
            }
        }
        Ok((table, outline))
    })
}

/// Refuses overlapping parents: children of two overlapping parents would repeat each other
/// and break document order within their level. Only the leaves may overlap.
///
/// # Errors
/// An upper level with a non-zero overlap.
pub fn check_levels(levels: &[&Splitter]) -> Result<(), ChunkError> {
    let upper = levels.len().saturating_sub(1);
    if let Some(level) = levels[..upper]
        .iter()
        .find(|level| level.config().overlap > 0)
    {
        return Err(ChunkError::setting(
            "overlap",
            format!(
                "parent levels must not overlap (got overlap {}): children of overlapping parents would repeat; set the parent overlap to 0 and give the overlap to the leaf level",
                level.config().overlap
            ),
        ));
    }
    Ok(())
}

/// [`tree_spans`] for many texts on a pool of `workers` threads (`None`: all cores), in input
/// order.
///
/// # Errors
/// The first failing text's error, or a pool that cannot start.
pub fn tree_spans_many(
    levels: &[&Splitter],
    texts: &[&str],
    workers: Option<usize>,
) -> Result<Vec<SpanTable>, ChunkError> {
    let tables = tree_spans_outlined_many(levels, texts, workers)?;
    Ok(tables.into_iter().map(|(table, _)| table).collect())
}

/// [`tree_spans_outlined`] for many texts on a pool of `workers` threads (`None`: all cores),
/// in input order.
///
/// # Errors
/// The first failing text's error, or a pool that cannot start.
pub fn tree_spans_outlined_many(
    levels: &[&Splitter],
    texts: &[&str],
    workers: Option<usize>,
) -> Result<Vec<(SpanTable, Option<Outline>)>, ChunkError> {
    check_levels(levels)?;
    let run = || {
        texts
            .par_iter()
            // One document per task: documents differ in size by 1000x (a book and a
            // chapter), and rayon's default halving can leave one core with every book.
            .with_max_len(1)
            .map(|text| tree_spans_outlined(levels, text))
            .collect::<Result<Vec<_>, _>>()
    };
    match workers {
        None => Ok(run()?),
        Some(threads) => Ok(pool(threads)?.install(run)?),
    }
}

/// The thread pool of `threads` workers, started on first use and kept: a pool per call
/// cost its start, and its threads' warm state (a tokenizer's regex caches, see
/// `token.rs`) with it.
fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, ChunkError> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let threads = threads.max(1);
    let mut pools = POOLS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|error| {
            ChunkError::setting(
                "workers",
                format!("cannot start {threads} worker threads: {error}"),
            )
        })?;
    let pool = Arc::new(pool);
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
mod tests {
    use super::*;
    use crate::split::SplitterConfig;
    use crate::Unit;

    fn splitter(chunk_size: usize) -> Splitter {
        Splitter::new(SplitterConfig::new(chunk_size), Unit::Char).unwrap()
    }

    #[test]
    fn two_levels_nest() {
        let text = "é one two three\n\nfour five six seven";
        let (parent, child) = (splitter(20), splitter(8));
        let table = tree_spans(&[&parent, &child], text).unwrap();
        let rows: Vec<[i64; 7]> = table.records.iter().map(|record| record.0).collect();
        let texts: Vec<(i64, &str)> = rows
            .iter()
            .map(|row| (row[0], &text[row[3] as usize..row[4] as usize]))
            .collect();
        assert_eq!(
            texts,
            [
                (1, "é one two three"),
                (1, "four five six seven"),
                (0, "é one"),
                (0, "two"),
                (0, "three"),
                (0, "four"),
                (0, "five six"),
                (0, "seven")
            ]
        );
        // parent column: index of the parent row within level 1
        let parents: Vec<i64> = rows.iter().map(|row| row[2]).collect();
        assert_eq!(parents, [-1, -1, 0, 0, 0, 1, 1, 1]);
        // char offsets: "é" is 2 bytes, one char
        assert_eq!((rows[2][5], rows[2][6]), (0, 5));
        assert_eq!((rows[1][5], rows[1][6]), (17, 36));
    }

    #[test]
    fn parent_that_fits_gets_one_child() {
        let text = "  short  ";
        let table = tree_spans(&[&splitter(100), &splitter(50)], text).unwrap();
        assert_eq!(table.rows(), 2);
        assert_eq!(table.records[0].0[3..5], table.records[1].0[3..5]);
    }

    #[test]
    fn many_matches_one_by_one() {
        let (parent, child) = (splitter(30), splitter(10));
        let texts = ["a b c d e f g h i j k l m n o p", "", "x\n\ny"];
        let many = tree_spans_many(&[&parent, &child], &texts, Some(2)).unwrap();
        for (text, table) in texts.iter().zip(many) {
            assert_eq!(table, tree_spans(&[&parent, &child], text).unwrap());
        }
    }
}
