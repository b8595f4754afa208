//! The span table: every chunk of a document as one record of seven integers, the top level
//! first, then each level below, each in document order. Both engines write it through one
//! [`LevelWriter`] per level; the bindings hand it to numpy as it is, and read tables made
//! elsewhere back through [`rows`], which checks them and links parents to children.

pub mod rows;

use crate::text::span::Span;

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

    /// The table of levels written top first: the lowest level's records (the most numerous,
    /// written straight into the memory the table keeps), with the levels above put before
    /// them. (Gathered from scratch buffers into a new table, a large text's records were
    /// written twice, and held twice: on 20 MB of "a " the scratch then outgrew what a thread
    /// keeps, and was allocated and faulted in anew at every call.)
    pub(crate) fn from_levels<'r>(
        mut lowest: Vec<SpanRecord>,
        upper: impl Iterator<Item = &'r [SpanRecord]>,
    ) -> Self {
        let upper: Vec<SpanRecord> = upper.flat_map(|level| level.iter().copied()).collect();
        lowest.splice(0..0, upper);
        Self { records: lowest }
    }
}

/// Writes the records of one level as its chunks are found: the one place a record is made,
/// whichever engine found the chunk.
#[derive(Debug, Default)]
pub(crate) struct LevelWriter {
    /// The level's number in the table (the top level is the highest, the leaves 0).
    number: i64,
    records: Vec<SpanRecord>,
}

impl LevelWriter {
    /// A writer of level `number` into `records` (emptied first, its memory kept).
    pub(crate) fn new(number: usize, mut records: Vec<SpanRecord>) -> Self {
        records.clear();
        Self {
            number: as_i64(number),
            records,
        }
    }

    /// Writes `span`, a chunk of the parent at row `parent` of the level above (`None`: the
    /// top level), and returns its row in this level.
    #[inline]
    pub(crate) fn write(&mut self, parent: Option<usize>, span: Span) -> usize {
        let index = self.records.len();
        self.records.push(SpanRecord([
            self.number,
            as_i64(index),
            parent.map_or(-1, as_i64),
            as_i64(span.start_byte),
            as_i64(span.end_byte),
            as_i64(span.start_char),
            as_i64(span.end_char),
        ]));
        index
    }

    /// The records written.
    pub(crate) fn records(&self) -> &[SpanRecord] {
        &self.records
    }

    /// Hands the records (and their memory) back.
    pub(crate) fn into_records(self) -> Vec<SpanRecord> {
        self.records
    }
}

/// An offset, index or count as a table column. Offsets into a str fit an i64 (a str is at
/// most `isize::MAX` bytes), and so do counts of its chunks.
#[inline]
#[allow(clippy::cast_possible_wrap)]
pub(crate) fn as_i64(value: usize) -> i64 {
    value as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: usize, end: usize) -> Span {
        Span {
            start_byte: start,
            end_byte: end,
            start_char: start,
            end_char: end,
        }
    }

    #[test]
    fn levels_go_top_first() {
        let mut top = LevelWriter::new(1, vec![SpanRecord::default(); 3]);
        let mut leaves = LevelWriter::new(0, Vec::new());
        assert_eq!(top.write(None, span(0, 4)), 0);
        assert_eq!(leaves.write(Some(0), span(0, 2)), 0);
        assert_eq!(leaves.write(Some(0), span(2, 4)), 1);
        let table = SpanTable::from_levels(leaves.into_records(), [top.records()].into_iter());
        let rows: Vec<[i64; 7]> = table.records.iter().map(|record| record.0).collect();
        assert_eq!(
            rows,
            [
                [1, 0, -1, 0, 4, 0, 4],
                [0, 0, 0, 0, 2, 0, 2],
                [0, 1, 0, 2, 4, 2, 4]
            ]
        );
    }
}
