//! The two cascades that cut every level of a tree in one walk: a chunk's children are cut as
//! soon as the chunk is found, while its text is in cache, by the atom engine (`Stage`,
//! `Cascade`) or by seeking (`SeekStage`, `seek_level`). Both write their records through
//! one [`LevelWriter`] per level; which one runs is decided in `tree.rs` (`cut_levels`).
//!
//! Speed: `benches/NOTES.md`, under `rust/engine/cascade.rs`.

use std::cell::RefCell;

use super::atom::Atom;
use super::plan::Splitter;
use super::seek::{SeekPath, Seeker, Unseekable};
use super::split::{Below, Prepared};
use crate::error::ChunkError;
use crate::markdown::Outline;
use crate::sizing::CharIndex;
use crate::table::{LevelWriter, SpanRecord, SpanTable};
use crate::text::lines::LineMask;
use crate::text::span::Span;

/// The buffers of one level's cut, kept per thread and reused by the next document.
#[derive(Debug, Default)]
pub(super) struct LevelBuffers {
    /// The level's records (the lowest level's go into the table instead, see
    /// [`SpanTable::from_levels`]).
    pub(super) records: Vec<SpanRecord>,
    path: SeekPath,
    spans: Vec<Span>,
    atoms: Vec<Atom>,
    ranges: Vec<(usize, usize)>,
}

impl LevelBuffers {
    fn capacity_bytes(&self) -> usize {
        use std::mem::size_of;
        self.ranges.capacity() * size_of::<(usize, usize)>()
            + self.spans.capacity() * size_of::<Span>()
            + self.records.capacity() * size_of::<SpanRecord>()
            + self.path.capacity_bytes()
            + self.atoms.capacity() * size_of::<Atom>()
    }
}

/// The buffers of one document's cut, kept per thread and reused by the next document.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    pub(super) chars: CharIndex,
    pub(super) lines: LineMask,
    /// A level's separator masks while it is cut by seeking.
    pub(super) masks: Vec<u64>,
    pub(super) levels: Vec<LevelBuffers>,
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
    pub(super) fn with<T>(work: impl FnOnce(&mut Self) -> T) -> T {
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

/// Room for the lowest level's records, which become the table: at most about a chunk per
/// `chunk_size` bytes in chars or bytes (a unit is at least a byte); in other units (tokens,
/// about four bytes of English each) a quarter of that, and the records grow past it when
/// needed.
fn lowest_capacity(levels: &[&Splitter], text: &str) -> usize {
    let lowest = levels[levels.len() - 1];
    let bytes_per_unit = if lowest.sizer().is_additive() { 1 } else { 4 };
    text.len() / (bytes_per_unit * lowest.config().chunk_size) + 16
}

/// The writer of each level of `levels` (top first), each into its buffer's records; the
/// lowest level's into new memory that becomes the table.
fn writers(levels: &[&Splitter], text: &str, buffers: &mut [LevelBuffers]) -> Vec<LevelWriter> {
    let last = levels.len() - 1;
    (0..levels.len())
        .map(|depth| {
            let records = if depth == last {
                Vec::with_capacity(lowest_capacity(levels, text))
            } else {
                std::mem::take(&mut buffers[depth].records)
            };
            LevelWriter::new(last - depth, records)
        })
        .collect()
}

/// The table of the levels written (top first) when the cut succeeded; the upper levels'
/// memory goes back to `buffers` either way.
fn table<E>(
    mut writers: Vec<LevelWriter>,
    buffers: &mut [LevelBuffers],
    cut: Result<(), E>,
) -> Result<SpanTable, E> {
    let lowest = writers
        .pop()
        .map(LevelWriter::into_records)
        .unwrap_or_default();
    let table =
        cut.map(|()| SpanTable::from_levels(lowest, writers.iter().map(LevelWriter::records)));
    for (writer, buffer) in writers.into_iter().zip(buffers.iter_mut()) {
        buffer.records = writer.into_records();
    }
    table
}

// ------------------------------------------------------------------------------------ atoms

/// One level of a tree cut by the atom engine: its splitter readied for the text, and the
/// writer of its records.
pub(super) struct Stage<'s> {
    prepared: Prepared<'s>,
    /// Whether it starts from the atoms of the level above (see
    /// `Splitter::shares_pieces_with`): the children of a parent then come from the parent's
    /// paragraphs instead of a new search and measure of the parent's text.
    from_above: bool,
    /// Whether it is the top level (its records have no parent).
    top: bool,
    writer: LevelWriter,
    /// One parent's chunks, before they are written.
    spans: Vec<Span>,
    /// Parents cut so far: the row of the next one in the level above.
    parents: usize,
}

impl<'s> Stage<'s> {
    /// A stage of `prepared` below the top level, on its own (`tree::level_spans`): every
    /// range it cuts is the next row of a list of parents.
    pub(super) fn alone(prepared: Prepared<'s>) -> Self {
        Self {
            prepared,
            from_above: false,
            top: false,
            writer: LevelWriter::new(0, Vec::new()),
            spans: Vec::new(),
            parents: 0,
        }
    }

    /// Its records.
    pub(super) fn into_records(self) -> Vec<SpanRecord> {
        self.writer.into_records()
    }

    /// Cuts this level's chunks inside `parent`, made of the level above's `atoms`, and tells
    /// `below` of each chunk as it closes.
    pub(super) fn cut(
        &mut self,
        text: &str,
        parent: Span,
        atoms: &[Atom],
        below: Option<&mut dyn Below>,
    ) -> Result<(), ChunkError> {
        let row = (!self.top).then_some(self.parents);
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
        for &span in &self.spans {
            self.writer.write(row, span);
        }
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

/// The tree cut by the atom engine: the top level over the document, each level below inside
/// each chunk of the one above as soon as it closes. `absent` are the separator bytes the
/// text lacks, `outline` its Markdown structure (a Markdown level), `chars` its char index
/// (a level that counts chars).
///
/// # Errors
/// A character larger than a chunk size (token sizers only), or the sizer failed.
pub(super) fn atom_tree(
    levels: &[&Splitter],
    text: &str,
    absent: &[u8],
    outline: Option<&Outline>,
    chars: Option<&CharIndex>,
    buffers: &mut [LevelBuffers],
) -> Result<SpanTable, ChunkError> {
    let mut stages: Vec<Stage> = writers(levels, text, buffers)
        .into_iter()
        .zip(levels.iter().zip(buffers.iter_mut()))
        .enumerate()
        .map(|(depth, (writer, (splitter, buffer)))| {
            let prepared = splitter.prepare_without(absent, outline, chars);
            prepared.swap_buffers(&mut buffer.atoms, &mut buffer.ranges);
            Stage {
                prepared,
                from_above: depth > 0 && splitter.shares_pieces_with(levels[depth - 1]),
                top: depth == 0,
                writer,
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
    // The buffers go back to the scratch, whatever the outcome.
    let mut writers = Vec::with_capacity(stages.len());
    for (stage, buffer) in stages.into_iter().zip(buffers.iter_mut()) {
        stage
            .prepared
            .swap_buffers(&mut buffer.atoms, &mut buffer.ranges);
        buffer.spans = stage.spans;
        writers.push(stage.writer);
    }
    table(writers, buffers, cut)
}

// ---------------------------------------------------------------------------------- seeking

/// One level of a tree cut by seeking.
struct SeekStage<'a> {
    seeker: Seeker<'a>,
    /// It shares the pieces of the level above: one tree of pieces for the document.
    shares: bool,
    writer: LevelWriter,
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
pub(super) fn seek_tree(
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
    let mut stages: Vec<SeekStage> = writers(levels, text, buffers)
        .into_iter()
        .zip(levels.iter().zip(buffers.iter_mut()))
        .enumerate()
        .map(|(depth, (writer, (splitter, buffer)))| {
            let level_masks = &masks[first_mask..first_mask + splitter.literal_levels()];
            first_mask += splitter.literal_levels();
            SeekStage {
                seeker: Seeker::new(splitter, text, chars, lines, level_masks, &mut buffer.path),
                shares: depth > 0 && splitter.shares_pieces_with(levels[depth - 1]),
                writer,
            }
        })
        .collect();
    stages[0].seeker.reset((0, text.len()));
    stages[0].seeker.fetch_ahead_of_walks();
    for stage in &mut stages[1..] {
        if stage.shares {
            stage.seeker.reset((0, text.len()));
        }
    }
    let cut = seek_level(&mut stages, (0, text.len()), None);
    let mut writers = Vec::with_capacity(stages.len());
    for (stage, buffer) in stages.into_iter().zip(buffers.iter_mut()) {
        stage.seeker.finish(&mut buffer.path);
        writers.push(stage.writer);
    }
    table(writers, buffers, cut)
}

/// Cuts the range `range` (the document, or the chunk of row `row` of the level above) with
/// `stages[0]`, and each chunk it finds with the stages below, at once. The records are
/// written as the chunks are found: no spans to convert and gather afterwards.
fn seek_level(
    stages: &mut [SeekStage<'_>],
    range: (usize, usize),
    row: Option<usize>,
) -> Result<(), Unseekable> {
    let Some((stage, below)) = stages.split_first_mut() else {
        return Ok(());
    };
    if row.is_some() && !stage.shares {
        stage.seeker.reset(range);
    }
    let writer = &mut stage.writer;
    stage.seeker.cut(range.0, range.1, &mut |span: Span| {
        let index = writer.write(row, span);
        seek_level(below, (span.start_byte, span.end_byte), Some(index))
    })
}
