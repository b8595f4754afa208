//! Levels of chunks in one call: the top level is cut from the document, each lower level
//! inside every span of the level above, and byte spans become char spans by one incremental
//! pass per level.
//!
//! Performance notes:
//! - A document's working buffers (its char index, every level's atoms and spans) are kept
//!   per thread and reused by the next document (`Scratch`); only the span table handed to
//!   the caller is allocated, once, at its exact size. Each document made 22 allocations and
//!   17 reallocations on markdown-en (files of 11 KB), 13% of the engine's time there.
//! - Levels are cut as a cascade (`Cascade`): a chunk's children are cut as soon as the
//!   chunk closes, from its atoms, while its text is in cache. The first version cut each
//!   level over the whole document and kept every atom of a level for the next (a quarter to
//!   a whole text's size): on the corpus repeated 8x (40 MB) `spans` took 37 ms, against
//!   10.8 ms at 4x (3.5x for twice the text: the kept atoms and the re-read text no longer
//!   fit the caches, and the freed scratch was faulted in again on every call); now 20 ms
//!   (2.04x). Peak memory on 100 MB went from 1.01x to 0.64x the text, on 20 MB of `"a "`
//!   from 2.09x to 0.29x. The rule that dropped the kept atoms when they outgrew the text
//!   is gone with them, so children now always come from their parent's atoms: texts that
//!   hit that rule (parents of tiny pieces; `ParentChildChunker(60, 20)` on 33 of 533 test
//!   texts) are cut differently, all within the contract.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rayon::prelude::*;

use crate::error::ChunkError;
use crate::markdown::Outline;
use crate::seek::{LineMask, SeekPath, Seeker, Unseekable};
use crate::size::CharIndex;
use crate::span::{CharCursor, Span};
use crate::split::{absent_bytes, Atom, Below, Prepared, Splitter};

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
    let mut stage = Stage {
        prepared: splitter.prepare_without(&absent, outline.as_ref(), chars.as_ref()),
        from_above: false,
        found: LevelSpans::default(),
        spans: Vec::new(),
        parents: 0,
    };
    for &parent in parents {
        stage.cut(text, parent, &[], None)?;
    }
    Ok(stage.found)
}

/// One level of a tree being cut: its splitter readied for the text, and what it found.
struct Stage<'s> {
    prepared: Prepared<'s>,
    /// Whether it starts from the atoms of the level above (see
    /// `Splitter::shares_pieces_with`): the children of a parent then come from the parent's
    /// paragraphs instead of a new search and measure of the parent's text.
    from_above: bool,
    found: LevelSpans,
    /// One parent's chunks, before they join `found`.
    spans: Vec<Span>,
    /// Parents cut so far: the row of the next one in the level above.
    parents: usize,
}

impl Stage<'_> {
    /// Cuts this level's chunks inside `parent`, made of the level above's `atoms`, and tells
    /// `below` of each chunk as it closes.
    fn cut(
        &mut self,
        text: &str,
        parent: Span,
        atoms: &[Atom],
        below: Option<&mut dyn Below>,
    ) -> Result<(), ChunkError> {
        let row = self.parents;
        self.parents += 1;
        self.spans.clear();
        self.prepared.cut_with(
            text,
            (parent.start_byte, parent.start_char),
            parent.end_byte,
            self.from_above.then_some(atoms),
            &mut self.spans,
            below,
        )?;
        let found = &mut self.found;
        found
            .parent
            .extend(std::iter::repeat_n(row, self.spans.len()));
        found.spans.extend(
            self.spans
                .iter()
                .map(|span| (span.start_byte, span.end_byte)),
        );
        found.chars.extend(
            self.spans
                .iter()
                .map(|span| (span.start_char, span.end_char)),
        );
        Ok(())
    }
}

/// The levels below a chunk: the first cuts the chunk as soon as it closes, from its atoms
/// while its text is in cache; each next level cuts inside the chunks of the one before in
/// turn. A level no longer waits for the whole document's chunks above it, so no level keeps
/// a document's atoms (a quarter to a whole text's size) for the next.
struct Cascade<'c, 's> {
    text: &'c str,
    stages: &'c mut [Stage<'s>],
}

impl Below for Cascade<'_, '_> {
    fn closed(&mut self, chunk: Span, atoms: &[Atom]) -> Result<(), ChunkError> {
        let Some((stage, rest)) = self.stages.split_first_mut() else {
            return Ok(());
        };
        if rest.is_empty() {
            return stage.cut(self.text, chunk, atoms, None);
        }
        let mut below = Cascade {
            text: self.text,
            stages: rest,
        };
        stage.cut(self.text, chunk, atoms, Some(&mut below))
    }
}

/// The buffers of one level's cut, kept per thread and reused by the next document.
#[derive(Debug, Default)]
struct LevelBuffers {
    found: LevelSpans,
    /// The level's records, when it is cut by seeking.
    records: Vec<SpanRecord>,
    path: SeekPath,
    spans: Vec<Span>,
    atoms: Vec<Atom>,
    ranges: Vec<(usize, usize)>,
}

impl LevelBuffers {
    fn capacity_bytes(&self) -> usize {
        use std::mem::size_of;
        self.found.parent.capacity() * size_of::<usize>()
            + (self.found.spans.capacity() + self.found.chars.capacity() + self.ranges.capacity())
                * size_of::<(usize, usize)>()
            + self.spans.capacity() * size_of::<Span>()
            + self.records.capacity() * size_of::<SpanRecord>()
            + self.path.capacity_bytes()
            + self.atoms.capacity() * size_of::<Atom>()
    }
}

/// The buffers of one document's cut, kept per thread and reused by the next document.
#[derive(Debug, Default)]
struct Scratch {
    chars: CharIndex,
    lines: LineMask,
    /// A level's separator masks while it is cut by seeking.
    masks: Vec<u64>,
    levels: Vec<LevelBuffers>,
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
        self.chars.capacity_bytes()
            + self.lines.capacity_bytes()
            + self
                .levels
                .iter()
                .map(LevelBuffers::capacity_bytes)
                .sum::<usize>()
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
pub fn tree_spans_outlined(
    levels: &[&Splitter],
    text: &str,
) -> Result<(SpanTable, Option<Outline>), ChunkError> {
    cut_tree(levels, text, true)
}

/// [`tree_spans`] by the atom engine alone, never by seeking (`seek.rs`): the reference that
/// seeking is tested against, and the engine's own benchmark.
///
/// # Errors
/// A character larger than the chunk size (token sizers only).
pub fn tree_spans_by_atoms(levels: &[&Splitter], text: &str) -> Result<SpanTable, ChunkError> {
    cut_tree(levels, text, false).map(|(table, _)| table)
}

/// [`tree_spans_outlined`], seeking when `seek` and every level allows it.
fn cut_tree(
    levels: &[&Splitter],
    text: &str,
    seek: bool,
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
    let counts_chars = levels.iter().any(|level| level.sizer().counts_chars());
    let seekable = seek && outline.is_none() && levels.iter().all(|level| level.seekable());
    let table = Scratch::with(|scratch| {
        let Scratch {
            chars,
            lines,
            masks,
            levels: buffers,
        } = scratch;
        if counts_chars {
            chars.rebuild(text);
        }
        if buffers.len() < levels.len() {
            buffers.resize_with(levels.len(), LevelBuffers::default);
        }
        // A seeking cut reads the text once more, for its line feeds; that pass also tells
        // which separator bytes the text lacks, unless common ones are checked (long texts:
        // checked first, and a text that can hold no separator at all is cut by graphemes,
        // so not by seeking; 10 / 20 MB of "x" paid for a line-feed pass for nothing).
        let common = !check.iter().all(|&byte| byte == b'\r' || !byte.is_ascii());
        let checked = common.then(|| absent_bytes(text, &check));
        let seekable = seekable
            && checked.as_ref().is_none_or(|absent| {
                levels
                    .iter()
                    .any(|level| level.masks_without(absent).iter().any(|&mask| mask != 0))
            });
        let facts = if seekable { lines.rebuild(text) } else { None };
        let absent = match (checked, facts) {
            (Some(absent), _) => absent,
            (None, Some(facts)) => facts.absent(text, &check),
            (None, None) => absent_bytes(text, &check),
        };
        if seekable {
            if let Ok(table) = seek_tree(levels, text, &absent, chars, lines, masks, buffers) {
                return Ok(table);
            }
        }
        let chars = counts_chars.then_some(&*chars);
        let mut stages: Vec<Stage> = levels
            .iter()
            .zip(buffers.iter_mut())
            .enumerate()
            .map(|(depth, (splitter, buffer))| {
                let prepared = splitter.prepare_without(&absent, outline.as_ref(), chars);
                prepared.swap_buffers(&mut buffer.atoms, &mut buffer.ranges);
                let mut found = std::mem::take(&mut buffer.found);
                found.parent.clear();
                found.spans.clear();
                found.chars.clear();
                Stage {
                    prepared,
                    from_above: depth > 0 && splitter.shares_pieces_with(levels[depth - 1]),
                    found,
                    spans: std::mem::take(&mut buffer.spans),
                    parents: 0,
                }
            })
            .collect();
        let document = Span {
            start_byte: 0,
            end_byte: text.len(),
            start_char: 0,
            end_char: 0,
        };
        let cut = Cascade {
            text,
            stages: &mut stages,
        }
        .closed(document, &[]);
        let table = cut.map(|()| table_of(stages.iter().map(|stage| &stage.found)));
        // The buffers go back to the scratch, whatever the outcome.
        for (stage, buffer) in stages.into_iter().zip(buffers.iter_mut()) {
            stage
                .prepared
                .swap_buffers(&mut buffer.atoms, &mut buffer.ranges);
            buffer.found = stage.found;
            buffer.spans = stage.spans;
        }
        table
    })?;
    Ok((table, outline))
}

/// The table of the levels found, the top level first.
#[allow(clippy::cast_possible_wrap)]
fn table_of<'f>(found: impl ExactSizeIterator<Item = &'f LevelSpans> + Clone) -> SpanTable {
    let depths = found.len();
    let mut table = SpanTable {
        records: Vec::with_capacity(found.clone().map(|level| level.spans.len()).sum()),
    };
    for (depth, level) in found.enumerate() {
        let number = (depths - 1 - depth) as i64;
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
    table
}

/// The tree cut by seeking (`seek.rs`), every level being seekable: the top level over the
/// document, each level below inside each chunk of the one above as soon as it is found (a
/// cascade, as the atom engine cuts: cutting each level over the whole document in turn read
/// the text, its char index and its line feeds once per level, and on the corpus repeated 4x
/// (20 MB) took 3x the time of 2x), over the same pieces when it shares them (as the atom
/// engine cuts it from the parent's atoms), else from the chunk's own text.
///
/// # Errors
/// [`Unseekable`]: the text holds a piece only graphemes can cut; the atom engine cuts it.
fn seek_tree(
    levels: &[&Splitter],
    text: &str,
    absent: &[u8],
    chars: &CharIndex,
    lines: &LineMask,
    masks: &mut Vec<u64>,
    buffers: &mut [LevelBuffers],
) -> Result<SpanTable, Unseekable> {
    masks.clear();
    for splitter in levels {
        splitter.masks_into(absent, masks);
    }
    let mut first_mask = 0;
    let mut stages: Vec<SeekStage> = levels
        .iter()
        .zip(buffers.iter_mut())
        .enumerate()
        .map(|(depth, (splitter, buffer))| {
            let level_masks = &masks[first_mask..first_mask + splitter.literal_levels()];
            first_mask += splitter.literal_levels();
            buffer.records.clear();
            SeekStage {
                seeker: Seeker::new(splitter, text, chars, lines, level_masks, &mut buffer.path),
                shares: depth > 0 && splitter.shares_pieces_with(levels[depth - 1]),
                number: levels.len() - 1 - depth,
            }
        })
        .collect();
    stages[0].seeker.reset((0, text.len()));
    stages[0].seeker.fetch_ahead_of_walks();
    // The lowest level's records become the table (see below): room for about a chunk per
    // `chunk_size` bytes.
    buffers[levels.len() - 1].records =
        Vec::with_capacity(text.len() / levels[levels.len() - 1].config().chunk_size + 16);
    for stage in &mut stages[1..] {
        if stage.shares {
            stage.seeker.reset((0, text.len()));
        }
    }
    let cut = seek_level(&mut stages, buffers, (0, text.len()), None);
    for (stage, buffer) in stages.into_iter().zip(buffers.iter_mut()) {
        stage.seeker.finish(&mut buffer.path);
    }
    cut?;
    // The lowest level, the most numerous, was written straight into the table's memory;
    // the levels above go before it. (Gathered from the scratch into a new table, a large
    // text's records were written twice, and held twice: on 20 MB of "a " the scratch then
    // outgrew what a thread keeps, and was allocated and faulted in anew at every call.)
    let last = levels.len() - 1;
    let mut records = std::mem::take(&mut buffers[last].records);
    let upper: Vec<SpanRecord> = buffers[..last]
        .iter()
        .flat_map(|level| level.records.iter().copied())
        .collect();
    records.splice(0..0, upper);
    Ok(SpanTable { records })
}

/// One level of a tree cut by seeking.
struct SeekStage<'a> {
    seeker: Seeker<'a>,
    /// It shares the pieces of the level above: one tree of pieces for the document.
    shares: bool,
    /// Its number in the table (the top level is the highest).
    number: usize,
}

/// Cuts the range `range` (the document, or the chunk of row `row` of the level above) with
/// `stages[0]`, and each chunk it finds with the stages below, at once. The records are
/// written as the chunks are found: no spans to convert and gather afterwards.
// Offsets into a str fit an i64 (a str is at most isize::MAX bytes).
#[allow(clippy::cast_possible_wrap)]
fn seek_level(
    stages: &mut [SeekStage<'_>],
    buffers: &mut [LevelBuffers],
    range: (usize, usize),
    row: Option<usize>,
) -> Result<(), Unseekable> {
    let Some((stage, below)) = stages.split_first_mut() else {
        return Ok(());
    };
    let (buffer, buffers_below) = buffers.split_first_mut().expect("a buffer per level");
    if row.is_some() && !stage.shares {
        stage.seeker.reset(range);
    }
    let number = stage.number as i64;
    let parent = row.map_or(-1, |row| row as i64);
    let records = &mut buffer.records;
    stage.seeker.cut(range.0, range.1, &mut |span: Span| {
        let index = records.len();
        records.push(SpanRecord([
            number,
            index as i64,
            parent,
            span.start_byte as i64,
            span.end_byte as i64,
            span.start_char as i64,
            span.end_char as i64,
        ]));
        seek_level(
            below,
            buffers_below,
            (span.start_byte, span.end_byte),
            Some(index),
        )
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

    /// Texts of every kind of piece the seek handles: paragraphs, lines, sentences, clauses,
    /// words, CR LF, Unicode whitespace, CJK punctuation, blank runs of every length.
    fn seek_texts() -> Vec<String> {
        let pieces = [
            "word ",
            "longer words here",
            ". ",
            "! ",
            "\n",
            "\n\n",
            "\n\n\n",
            "\r\n",
            "\r\n\r\n",
            "中文字",
            "。",
            "，",
            "\u{3000}",
            "\u{a0}",
            "\u{2028}",
            ", ",
            "; ",
            "é",
            "😀",
            "\t",
        ];
        let mut seed = 7_u64;
        let mut texts = vec![String::new(), " \n ".to_owned(), "a".to_owned()];
        for _ in 0..400 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for step in 0..(seed % 200) {
                let pick = (seed.rotate_left((step % 60) as u32) % 20) as usize;
                text.push_str(pieces[pick]);
            }
            texts.push(text);
        }
        texts
    }

    #[test]
    fn seeking_cuts_as_the_atom_engine() {
        let mut sought = 0;
        for sizes in [[2000, 400], [60, 20], [25, 8], [9, 4]] {
            let splitters: Vec<Splitter> = sizes.iter().map(|&size| splitter(size)).collect();
            let levels: Vec<&Splitter> = splitters.iter().collect();
            assert!(levels.iter().all(|level| level.seekable()));
            for text in seek_texts() {
                let by_atoms = tree_spans_by_atoms(&levels, &text).unwrap();
                assert_eq!(tree_spans(&levels, &text).unwrap(), by_atoms, "{text:?}");
                // The comparison is only worth something where seeking did cut.
                let absent = absent_bytes(&text, &[]);
                let (chars, mut lines) = (CharIndex::new(&text), LineMask::default());
                let _ = lines.rebuild(&text);
                let mut buffers: Vec<LevelBuffers> =
                    levels.iter().map(|_| LevelBuffers::default()).collect();
                if let Ok(table) = seek_tree(
                    &levels,
                    &text,
                    &absent,
                    &chars,
                    &lines,
                    &mut Vec::new(),
                    &mut buffers,
                ) {
                    assert_eq!(table, by_atoms);
                    sought += 1;
                }
            }
        }
        assert!(sought > 1000, "only {sought} texts were cut by seeking");
    }

    fn splitter(chunk_size: usize) -> Splitter {
        Splitter::new(SplitterConfig::new(chunk_size), Unit::Char).unwrap()
    }

    /// Chars, except that "é" weighs 5: a child level of 3 cannot hold it.
    #[derive(Debug)]
    struct Heavy;

    impl crate::Sizer for Heavy {
        fn size(&self, text: &str) -> usize {
            text.chars()
                .map(|character| if character == 'é' { 5 } else { 1 })
                .sum()
        }

        fn is_additive(&self) -> bool {
            true
        }

        fn name(&self) -> &'static str {
            "heavy"
        }
    }

    #[test]
    fn an_error_below_stops_the_tree_and_the_next_text_is_cut_anew() {
        let parent = Splitter::with_sizer(SplitterConfig::new(40), Box::new(Heavy)).unwrap();
        let child = Splitter::with_sizer(SplitterConfig::new(3), Box::new(Heavy)).unwrap();
        assert!(child.shares_pieces_with(&parent));
        for levels in [vec![&parent, &child], vec![&parent, &parent, &child]] {
            let error = tree_spans(&levels, "ab cd\n\nef é gh\n\nij kl").unwrap_err();
            assert!(
                matches!(
                    error,
                    ChunkError::Unsplittable {
                        character: 'é',
                        position: 10,
                        size: 5,
                        chunk_size: 3
                    }
                ),
                "{error:?}"
            );
            // The buffers the failed cut held are back and empty for the next text.
            let table = tree_spans(&levels, "ab cd").unwrap();
            let texts: Vec<(i64, &str)> = table
                .records
                .iter()
                .map(|record| {
                    (
                        record.0[0],
                        &"ab cd"[record.0[3] as usize..record.0[4] as usize],
                    )
                })
                .collect();
            let top = i64::try_from(levels.len()).unwrap() - 1;
            let mut expected = vec![(top, "ab cd")];
            if top == 2 {
                expected.push((1, "ab cd"));
            }
            expected.extend([(0, "ab"), (0, "cd")]);
            assert_eq!(texts, expected);
        }
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
