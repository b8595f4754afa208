//! Output of the command line job: a document's chunks written straight from its span table
//! (JSON Lines bytes, or columns for Parquet), so that no Python object is made per chunk and
//! no pass over the text happens in Python.
//!
//! Speed: the measurements behind these files are in `benches/NOTES.md`.

pub mod columns;
pub mod jsonl;
pub mod parquet;
pub mod sizes;

use std::sync::Mutex;

use crate::ids;
use crate::markdown::Outline;
use crate::table::SpanTable;
use crate::text::pages::Pages;

/// Output buffers written and dropped, kept for the next batches: a new 3.5 MB buffer per
/// batch of JSON Lines was mapped fresh by the allocator and every page of it faulted in and
/// zeroed by the kernel, then unmapped (a tenth of a run's CPU, and more on two threads).
static SPARE_BUFFERS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
/// At most this many spare buffers, each of at most `SPARE_BYTES`.
const SPARE_COUNT: usize = 8;
const SPARE_BYTES: usize = 64 << 20;

/// An empty buffer of at least `capacity` bytes, a spare one when there is one.
#[must_use]
pub fn buffer(capacity: usize) -> Vec<u8> {
    // The smallest spare that holds `capacity`, else the largest: a smaller one grows, and
    // its new pages fault in (on 2 workers, with more buffers in flight, buffers taken last
    // in first out would be half the run's page faults).
    let spare = SPARE_BUFFERS
        .lock()
        .map_or(None, |mut spares| {
            let fits = spares
                .iter()
                .enumerate()
                .filter(|(_, spare)| spare.capacity() >= capacity)
                .min_by_key(|(_, spare)| spare.capacity())
                .map(|(at, _)| at);
            let largest = || {
                spares
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, spare)| spare.capacity())
                    .map(|(at, _)| at)
            };
            fits.or_else(largest).map(|at| spares.swap_remove(at))
        })
        .unwrap_or_default();
    let mut buffer = spare;
    buffer.clear();
    buffer.reserve(capacity);
    buffer
}

/// Keeps `buffer` for [`buffer`] to hand out again (or frees it when enough are kept).
pub fn recycle(mut buffer: Vec<u8>) {
    if buffer.capacity() > SPARE_BYTES {
        return;
    }
    if let Ok(mut spares) = SPARE_BUFFERS.lock() {
        if spares.len() < SPARE_COUNT {
            buffer.clear();
            spares.push(buffer);
        }
    }
}

/// One document to write: its text, where it came from, and what its chunk ids hash.
#[derive(Debug, Clone, Copy)]
pub struct Document<'a> {
    /// The document's text.
    pub text: &'a str,
    /// The path (or other name) it was read from, written as every chunk's `source`.
    pub source: &'a str,
    /// The document id (`ids::text_id` of the text, by default).
    pub document_id: &'a str,
    /// The chunker's fingerprint, hashed into every chunk id.
    pub fingerprint: &'a str,
    /// Its pages, when it has page markers.
    pub pages: Option<&'a Pages>,
}

/// The family of every row of an engine-made span table (levels grouped, top level first):
/// each row's id, its parent's row, and its children's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Family {
    /// The id number of each row (`ids::chunk_id` spells it in hex).
    pub ids: Vec<u64>,
    /// The row of each row's parent; None at the top level.
    pub parents: Vec<Option<usize>>,
    /// Row `r`'s children are `children[bounds[r]..bounds[r + 1]]`, in row order.
    pub children: Vec<usize>,
    /// See `children`; one more entry than there are rows.
    pub bounds: Vec<usize>,
}

impl Family {
    /// The family of `table`'s rows, the ids hashed from `document`'s id and fingerprint.
    #[must_use]
    pub fn new(document: &Document<'_>, table: &SpanTable) -> Self {
        let rows = table.rows();
        let mut parents = Vec::with_capacity(rows);
        // The first row of the current level and of the level above it.
        let (mut level_start, mut above_start) = (0_usize, None::<usize>);
        for (number, record) in table.records.iter().enumerate() {
            let [level, _, parent, ..] = record.0;
            if number > 0 && table.records[number - 1].0[0] != level {
                above_start = Some(level_start);
                level_start = number;
            }
            parents.push(above_start.map(|start| start + usize::try_from(parent).unwrap_or(0)));
        }
        let ids = ids::document_ids(
            document.text,
            document.document_id,
            document.fingerprint,
            table.records.iter().map(|record| {
                let [level, _, _, start_byte, end_byte, ..] = record.0;
                (
                    u32::try_from(level).unwrap_or(u32::MAX),
                    usize::try_from(start_byte).unwrap_or(0),
                    usize::try_from(end_byte).unwrap_or(0),
                )
            }),
        );
        let mut bounds = vec![0_usize; rows + 1];
        for &parent in parents.iter().flatten() {
            bounds[parent + 1] += 1;
        }
        for number in 0..rows {
            bounds[number + 1] += bounds[number];
        }
        // Parents are in row order within a level, so the children of all rows, in row
        // order, are simply every row below the top level.
        let children = (rows - bounds[rows]..rows).collect();
        Self {
            ids,
            parents,
            children,
            bounds,
        }
    }

    /// The children rows of `row`.
    #[must_use]
    pub fn children_of(&self, row: usize) -> &[usize] {
        &self.children[self.bounds[row]..self.bounds[row + 1]]
    }

    /// Every row in pre-order: each top-level row, then its subtree, each parent followed
    /// by its children in reading order.
    #[must_use]
    pub fn preorder(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.parents.len());
        let mut pending: Vec<usize> = Vec::new();
        for root in (0..self.parents.len()).filter(|&row| self.parents[row].is_none()) {
            pending.push(root);
            while let Some(row) = pending.pop() {
                order.push(row);
                pending.extend(self.children_of(row).iter().rev());
            }
        }
        // Every row has a parent above it or none: each is reached once.
        debug_assert_eq!(order.len(), self.parents.len());
        order
    }
}

/// A table's header row, as a chunk of the table carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderRow {
    /// Its byte range in the document's text.
    pub bytes: (usize, usize),
    /// Its char range.
    pub chars: (usize, usize),
}

/// What a chunk carries beyond its heading path, from its document's outline: the byte span
/// of the page it came from (an HTML page's chunk), and the header row of the table it
/// overlaps (with the table's row in the outline).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkFields {
    /// `(source_start_byte, source_end_byte)`.
    pub source_span: Option<(usize, usize)>,
    /// The table's row in `outline.tables`, and its header row.
    pub table_header: Option<(usize, HeaderRow)>,
    /// `(page_first, page_last)`: the pages the chunk spans.
    pub pages: Option<(u32, u32)>,
}

impl ChunkFields {
    /// The fields of the chunk at bytes `start..end` of a document with `outline` (if it
    /// has one) and `pages` (if it has page markers).
    #[must_use]
    pub fn of(outline: Option<&Outline>, pages: Option<&Pages>, start: usize, end: usize) -> Self {
        let source_span = outline
            .and_then(|outline| outline.source_map.as_ref())
            .map(|map| map.source_span(start, end));
        let table_header = outline
            .and_then(|outline| outline.table_at(start, end))
            .and_then(|(row, table)| {
                Some((
                    row,
                    HeaderRow {
                        bytes: table.header?,
                        chars: table.header_chars?,
                    },
                ))
            });
        Self {
            source_span,
            table_header,
            pages: pages.map(|pages| pages.span(start, end)),
        }
    }

    /// Whether a document with `outline` and `pages` may give its chunks any field (when
    /// not, no chunk of it has one).
    #[must_use]
    pub fn possible(outline: Option<&Outline>, pages: Option<&Pages>) -> bool {
        pages.is_some()
            || outline
                .is_some_and(|outline| outline.source_map.is_some() || !outline.tables.is_empty())
    }

    /// Whether the chunk carries none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.source_span.is_none() && self.table_header.is_none() && self.pages.is_none()
    }
}

/// The heading path (outermost first) of a chunk starting at `start_byte`: for source code,
/// its symbol path.
#[must_use]
pub fn heading_path(outline: &Outline, start_byte: usize) -> Vec<&str> {
    outline
        .path(outline.headings_before(start_byte))
        .into_iter()
        .map(|row| outline.headings[row].text.as_str())
        .collect()
}

/// 16 lowercase hex digits of an id number, as `ids::chunk_id` spells it.
#[must_use]
pub fn hex_id(id: u64) -> [u8; 16] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buffer = [0_u8; 16];
    for (position, digit) in buffer.iter_mut().enumerate() {
        *digit = DIGITS[((id >> (60 - 4 * position)) & 0xf) as usize];
    }
    buffer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::SpanRecord;

    #[test]
    fn family_links_parents_and_children() {
        let table = SpanTable {
            records: vec![
                SpanRecord([1, 0, -1, 0, 10, 0, 10]),
                SpanRecord([1, 1, -1, 10, 20, 10, 20]),
                SpanRecord([0, 0, 0, 0, 5, 0, 5]),
                SpanRecord([0, 1, 0, 5, 10, 5, 10]),
                SpanRecord([0, 0, 1, 10, 20, 10, 20]),
            ],
        };
        let document = Document {
            text: "abcdefghijklmnopqrst",
            source: "s",
            document_id: "d",
            fingerprint: "f",
            pages: None,
        };
        let family = Family::new(&document, &table);
        assert_eq!(family.parents, vec![None, None, Some(0), Some(0), Some(1)]);
        assert_eq!(family.children_of(0), &[2, 3]);
        assert_eq!(family.children_of(1), &[4]);
        assert!(family.children_of(2).is_empty());
        assert_eq!(family.preorder(), vec![0, 2, 3, 1, 4]);
        let hex = hex_id(family.ids[3]);
        assert_eq!(
            std::str::from_utf8(&hex).unwrap(),
            ids::chunk_id("d", "f", 0, b"fghij", 0)
        );
    }
}
