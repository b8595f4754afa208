//! Span tables read back: each row checked against its text, and every row's parent and
//! children found, for tables the engine made and for tables made elsewhere (custom levels
//! in Python). A bad row is an error, never a wrong chunk.

use std::ops::Range;

use super::SpanRecord;
use crate::error::ChunkError;
use crate::ids;

/// One row of a span table, checked: offsets non-negative, spans not reversed, char spans
/// inside the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanRow {
    /// 0 for the leaves, 1 for their parents, and so on.
    pub level: u32,
    /// Position within its level.
    pub index: usize,
    /// Row of its parent within the level above (-1 at the top level).
    pub parent: i64,
    /// Byte offset of the first byte.
    pub start_byte: usize,
    /// Byte offset past the last byte.
    pub end_byte: usize,
    /// Char offset of the first char.
    pub start_char: usize,
    /// Char offset past the last char.
    pub end_char: usize,
}

/// Rows of seven integers (the [`super::SPAN_COLUMNS`]) of a table for a text of
/// `text_chars` chars, each checked.
///
/// # Errors
/// [`ChunkError::InvalidTable`] naming the first bad row.
pub fn checked_rows(
    rows: impl Iterator<Item = [i64; 7]>,
    text_chars: usize,
) -> Result<Vec<SpanRow>, ChunkError> {
    rows.enumerate()
        .map(|(number, row)| span_row(number, row, text_chars))
        .collect()
}

/// The rows of a table the engine made for a text of `text_chars` chars (checked all the
/// same).
///
/// # Errors
/// [`ChunkError::InvalidTable`] naming the first bad row.
pub fn records_rows(records: &[SpanRecord], text_chars: usize) -> Result<Vec<SpanRow>, ChunkError> {
    checked_rows(records.iter().map(|record| record.0), text_chars)
}

/// One row, checked; `number` names it in errors.
fn span_row(number: usize, row: [i64; 7], text_chars: usize) -> Result<SpanRow, ChunkError> {
    let bad =
        |reason: &str| ChunkError::InvalidTable(format!("spans row {number} {row:?}: {reason}"));
    let offset =
        |column: usize| usize::try_from(row[column]).map_err(|_| bad("negative offset or index"));
    let parsed = SpanRow {
        level: u32::try_from(row[0]).map_err(|_| bad("level out of range"))?,
        index: offset(1)?,
        parent: row[2],
        start_byte: offset(3)?,
        end_byte: offset(4)?,
        start_char: offset(5)?,
        end_char: offset(6)?,
    };
    if parsed.start_byte > parsed.end_byte || parsed.start_char > parsed.end_char {
        return Err(bad("reversed span"));
    }
    if parsed.end_char > text_chars {
        return Err(bad("char span past the end of the text"));
    }
    Ok(parsed)
}

/// The checked rows of one document's table, with every row's parent and children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedRows {
    /// The rows, in table order.
    pub rows: Vec<SpanRow>,
    /// Each row's parent row (None at the top level).
    parents: Vec<Option<usize>>,
    /// Row `r`'s children are `children[bounds[r]..bounds[r + 1]]`.
    children: Vec<usize>,
    bounds: Vec<usize>,
}

impl LinkedRows {
    /// Links `rows`: they must come grouped by level, top level first, each level one below
    /// the one before, and each `parent` must be a row of the level above.
    ///
    /// # Errors
    /// [`ChunkError::InvalidTable`] naming the first row out of place.
    pub fn new(rows: Vec<SpanRow>) -> Result<Self, ChunkError> {
        let parents = parent_rows(&rows, &level_blocks(&rows)?)?;
        let (children, bounds) = child_rows(&parents);
        Ok(Self {
            rows,
            parents,
            children,
            bounds,
        })
    }

    /// The parent row of row `row`, None at the top level.
    #[must_use]
    pub fn parent(&self, row: usize) -> Option<usize> {
        self.parents[row]
    }

    /// The child rows of row `row`, in order.
    #[must_use]
    pub fn children(&self, row: usize) -> &[usize] {
        &self.children[self.bounds[row]..self.bounds[row + 1]]
    }

    /// The row of the first leaf (level 0), or the row count when there is none.
    #[must_use]
    pub fn first_leaf(&self) -> usize {
        self.rows
            .iter()
            .position(|row| row.level == 0)
            .unwrap_or(self.rows.len())
    }

    /// The id number of every row of the document `document_key` (whose text is `text`) cut
    /// by the chunker whose fingerprint is `fingerprint` (`ids::chunk_id` spells one in hex).
    #[must_use]
    pub fn ids(&self, text: &str, document_key: &str, fingerprint: &str) -> Vec<u64> {
        ids::document_ids(
            text,
            document_key,
            fingerprint,
            self.rows
                .iter()
                .map(|row| (row.level, row.start_byte, row.end_byte)),
        )
    }
}

/// The row ranges of each level, top level first: rows must come grouped by level, each
/// level one below the one before.
fn level_blocks(rows: &[SpanRow]) -> Result<Vec<Range<usize>>, ChunkError> {
    let mut blocks: Vec<Range<usize>> = Vec::new();
    for (number, row) in rows.iter().enumerate() {
        match blocks.last_mut() {
            Some(block) if rows[block.start].level == row.level => block.end = number + 1,
            Some(block) if rows[block.start].level != row.level + 1 => {
                return Err(ChunkError::InvalidTable(format!(
                    "spans row {number}: level {} follows level {}; rows must be grouped by \
                     level, top level first, each level one below the one before",
                    row.level, rows[block.start].level
                )))
            }
            _ => blocks.push(number..number + 1),
        }
    }
    Ok(blocks)
}

/// The row number of every row's parent (None at the top level): the `parent` column counts
/// rows of the level above, which must have that many.
fn parent_rows(
    rows: &[SpanRow],
    blocks: &[Range<usize>],
) -> Result<Vec<Option<usize>>, ChunkError> {
    let mut parents = vec![None; rows.len()];
    for (above, block) in blocks.iter().zip(blocks.iter().skip(1)) {
        for number in block.clone() {
            let parent = rows[number].parent;
            let offset = usize::try_from(parent)
                .ok()
                .filter(|&offset| offset < above.len())
                .ok_or_else(|| {
                    ChunkError::InvalidTable(format!(
                        "spans row {number}: parent {parent} is not a row of the level above \
                         ({} rows)",
                        above.len()
                    ))
                })?;
            parents[number] = Some(above.start + offset);
        }
    }
    Ok(parents)
}

/// The children of every row, in row order, as one flat list of row numbers: row `r` has
/// `children[bounds[r]..bounds[r + 1]]`.
fn child_rows(parents: &[Option<usize>]) -> (Vec<usize>, Vec<usize>) {
    let mut bounds = vec![0_usize; parents.len() + 1];
    for &parent in parents.iter().flatten() {
        bounds[parent + 1] += 1;
    }
    for number in 0..parents.len() {
        bounds[number + 1] += bounds[number];
    }
    let mut next = bounds.clone();
    let mut children = vec![0_usize; bounds[parents.len()]];
    for (number, parent) in parents.iter().enumerate() {
        if let Some(parent) = *parent {
            children[next[parent]] = number;
            next[parent] += 1;
        }
    }
    (children, bounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(error: ChunkError) -> String {
        match error {
            ChunkError::InvalidTable(message) => message,
            other => panic!("not a table error: {other:?}"),
        }
    }

    #[test]
    fn rows_are_checked() {
        let good = [
            [1, 0, -1, 0, 6, 0, 6],
            [0, 0, 0, 0, 3, 0, 3],
            [0, 1, 0, 3, 6, 3, 6],
        ];
        assert_eq!(checked_rows(good.into_iter(), 6).unwrap().len(), 3);
        for (row, reason) in [
            ([-1, 0, -1, 0, 1, 0, 1], "level out of range"),
            ([0, -2, -1, 0, 1, 0, 1], "negative offset or index"),
            ([0, 0, -1, 2, 1, 0, 1], "reversed span"),
            ([0, 0, -1, 0, 1, 1, 0], "reversed span"),
            ([0, 0, -1, 0, 9, 0, 9], "char span past the end of the text"),
        ] {
            let error = checked_rows([good[0], row].into_iter(), 6).unwrap_err();
            assert_eq!(message(error), format!("spans row 1 {row:?}: {reason}"));
        }
    }

    #[test]
    fn parents_and_children_are_linked() {
        let rows = checked_rows(
            [
                [1, 0, -1, 0, 6, 0, 6],
                [1, 1, -1, 7, 9, 7, 9],
                [0, 0, 0, 0, 3, 0, 3],
                [0, 1, 0, 3, 6, 3, 6],
                [0, 2, 1, 7, 9, 7, 9],
            ]
            .into_iter(),
            9,
        )
        .unwrap();
        let linked = LinkedRows::new(rows).unwrap();
        assert_eq!(
            (0..5).map(|row| linked.parent(row)).collect::<Vec<_>>(),
            [None, None, Some(0), Some(0), Some(1)]
        );
        assert_eq!(linked.children(0), [2, 3]);
        assert_eq!(linked.children(1), [4]);
        assert!(linked.children(4).is_empty());
        assert_eq!(linked.first_leaf(), 2);
        assert_eq!(
            format!("{:016x}", linked.ids("abcdef\nhi", "doc", "fp")[3]),
            ids::chunk_id("doc", "fp", 0, b"def", 0)
        );
    }

    #[test]
    fn rows_out_of_place_are_refused() {
        let linked = |rows: &[[i64; 7]]| {
            LinkedRows::new(checked_rows(rows.iter().copied(), 9).unwrap()).map(|_| ())
        };
        assert!(linked(&[]).is_ok());
        let skipped = linked(&[[2, 0, -1, 0, 6, 0, 6], [0, 0, 0, 0, 3, 0, 3]]).unwrap_err();
        assert!(message(skipped).starts_with("spans row 1: level 0 follows level 2"));
        let orphan = linked(&[[1, 0, -1, 0, 6, 0, 6], [0, 0, 1, 0, 3, 0, 3]]).unwrap_err();
        assert_eq!(
            message(orphan),
            "spans row 1: parent 1 is not a row of the level above (1 rows)"
        );
    }
}
