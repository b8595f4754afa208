//! The chunks of a batch of documents as columns, laid out as Arrow buffers (offsets and
//! values), which `parquet::arrays` wraps without a copy.

use super::{heading_path, hex_id, ChunkFields, Document, Family};
use crate::markdown::Outline;
use crate::table::SpanTable;

/// Columns of every chunk of a batch, one entry per chunk (row) unless said otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// The position of the row's document in the batch.
    pub document: Vec<i64>,
    /// 0: leaves (children); 1 and up: parents.
    pub level: Vec<i64>,
    /// Position among the chunks of its level and parent.
    pub index: Vec<i64>,
    /// Char span, in the document.
    pub start_char: Vec<i64>,
    /// See `start_char`.
    pub end_char: Vec<i64>,
    /// UTF-8 byte span, in the document.
    pub start_byte: Vec<i64>,
    /// See `start_byte`.
    pub end_byte: Vec<i64>,
    /// 16 hex digits per row.
    pub id: Vec<u8>,
    /// 16 hex digits per row, zeros where `has_parent` is false.
    pub parent_id: Vec<u8>,
    /// Whether the row has a parent (false at the top level).
    pub has_parent: Vec<bool>,
    /// Row `r`'s child ids are values `child_offsets[r]..child_offsets[r + 1]` of `child_ids`.
    pub child_offsets: Vec<i64>,
    /// 16 hex digits per child id.
    pub child_ids: Vec<u8>,
    /// Row `r`'s text is `text[text_offsets[r]..text_offsets[r + 1]]`.
    pub text_offsets: Vec<i64>,
    /// The chunks' texts, one after the other.
    pub text: Vec<u8>,
    /// Whether the row has a heading path (its document is Markdown).
    pub has_headings: Vec<bool>,
    /// Row `r`'s headings are entries `heading_offsets[r]..heading_offsets[r + 1]`.
    pub heading_offsets: Vec<i64>,
    /// Entry `e` is `heading_text[heading_text_offsets[e]..heading_text_offsets[e + 1]]`.
    pub heading_text_offsets: Vec<i64>,
    /// The heading texts, one after the other.
    pub heading_text: Vec<u8>,
    /// Whether the row has a symbol path (its document is source code); the symbols are
    /// laid out as the headings are.
    pub has_symbols: Vec<bool>,
    /// Row `r`'s symbols are entries `symbol_offsets[r]..symbol_offsets[r + 1]`.
    pub symbol_offsets: Vec<i64>,
    /// Entry `e` is `symbol_text[symbol_text_offsets[e]..symbol_text_offsets[e + 1]]`.
    pub symbol_text_offsets: Vec<i64>,
    /// The symbol names, one after the other.
    pub symbol_text: Vec<u8>,
    /// Row `r`'s language (source code only, else null) is
    /// `language_text[language_offsets[r]..language_offsets[r + 1]]`.
    pub language_offsets: Vec<i64>,
    /// The languages, one per row that has one.
    pub language_text: Vec<u8>,
    /// Whether the row has a span in its document's source (its document is an HTML page).
    pub has_source_span: Vec<bool>,
    /// The row's UTF-8 byte span in its page's source (0 where it has none).
    pub source_start_byte: Vec<i64>,
    /// See `source_start_byte`.
    pub source_end_byte: Vec<i64>,
    /// Whether the row lies in a table with a header row.
    pub has_table_header: Vec<bool>,
    /// Row `r`'s header row text is `table_header_text[table_header_offsets[r]..
    /// table_header_offsets[r + 1]]`.
    pub table_header_offsets: Vec<i64>,
    /// The header rows' texts, one after the other.
    pub table_header_text: Vec<u8>,
    /// The header row's span: start and end char, start and end byte (0 where none).
    pub table_header_spans: [Vec<i64>; 4],
    /// Whether the row's document has page markers.
    pub has_pages: Vec<bool>,
    /// The first page the row spans (0 where its document has no page markers).
    pub page_first: Vec<i64>,
    /// The last page the row spans.
    pub page_last: Vec<i64>,
}

impl Default for Columns {
    fn default() -> Self {
        Self {
            document: Vec::new(),
            level: Vec::new(),
            index: Vec::new(),
            start_char: Vec::new(),
            end_char: Vec::new(),
            start_byte: Vec::new(),
            end_byte: Vec::new(),
            id: Vec::new(),
            parent_id: Vec::new(),
            has_parent: Vec::new(),
            child_offsets: vec![0],
            child_ids: Vec::new(),
            text_offsets: vec![0],
            text: Vec::new(),
            has_headings: Vec::new(),
            heading_offsets: vec![0],
            heading_text_offsets: vec![0],
            heading_text: Vec::new(),
            has_symbols: Vec::new(),
            symbol_offsets: vec![0],
            symbol_text_offsets: vec![0],
            symbol_text: Vec::new(),
            language_offsets: vec![0],
            language_text: Vec::new(),
            has_source_span: Vec::new(),
            source_start_byte: Vec::new(),
            source_end_byte: Vec::new(),
            has_table_header: Vec::new(),
            table_header_offsets: vec![0],
            table_header_text: Vec::new(),
            table_header_spans: Default::default(),
            has_pages: Vec::new(),
            page_first: Vec::new(),
            page_last: Vec::new(),
        }
    }
}

/// One string per row, `values[rows[r]]` for row `r`, as Arrow buffers: the offsets (one
/// more than there are rows) and the bytes. What the document id and source columns are
/// made of (Arrow's `take` would give the same from an index array built first; this makes
/// the buffers in one pass).
#[must_use]
pub fn repeated_strings(values: &[&str], rows: &[i64]) -> (Vec<i64>, Vec<u8>) {
    let value_of = |row: i64| {
        usize::try_from(row)
            .ok()
            .and_then(|position| values.get(position))
            .map_or("", |value| *value)
    };
    let total = rows.iter().map(|&row| value_of(row).len()).sum();
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    let mut bytes = Vec::with_capacity(total);
    offsets.push(0);
    for &row in rows {
        bytes.extend_from_slice(value_of(row).as_bytes());
        offsets.push(offset(bytes.len()));
    }
    (offsets, bytes)
}

/// The texts of an Arrow string column (`string` or `large_string`): its UTF-8 `data` cut at
/// its `offsets` (one more than there are texts, as Arrow lays them out; those of a slice
/// need not start at 0). Ray's batch function hands the column's own buffers over, so the
/// texts reach the core with no Python `str` made and encoded back (a third of the batch
/// function's time). Arrow's writers are trusted to write UTF-8, not relied on: the span
/// the offsets cover is checked once (`simdutf8`), and every offset to fall on a character.
///
/// # Errors
/// What is wrong, naming the row: offsets out of order or past the data, a text that is not
/// UTF-8, an offset inside a character.
pub fn arrow_texts<'a>(data: &'a [u8], offsets: &[i64]) -> Result<Vec<&'a str>, String> {
    let span = |start: i64, end: i64| {
        usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .filter(|&(start, end)| start <= end && end <= data.len())
    };
    let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else {
        return Err("no offsets: an Arrow string column has one more than it has rows".into());
    };
    let (start, end) = span(first, last).ok_or_else(|| {
        format!(
            "offsets {first}..{last} are not a span of the column's {} bytes",
            data.len()
        )
    })?;
    let Ok(all) = simdutf8::basic::from_utf8(&data[start..end]) else {
        // The row that is not UTF-8, and where, as the command line words it.
        for (row, pair) in offsets.windows(2).enumerate() {
            if let Some((from, to)) = span(pair[0], pair[1]) {
                crate::text::decode::utf8_text(&data[from..to])
                    .map_err(|message| format!("row {row}: {message}"))?;
            }
        }
        return Err("the offsets are out of order".into());
    };
    offsets
        .windows(2)
        .enumerate()
        .map(|(row, pair)| {
            span(pair[0], pair[1])
                .filter(|&(from, to)| from >= start && to <= end)
                .and_then(|(from, to)| all.get(from - start..to - start))
                .ok_or_else(|| {
                    format!(
                        "row {row}: offsets {}..{} are out of order or cut a character",
                        pair[0], pair[1]
                    )
                })
        })
        .collect()
}

fn offset(length: usize) -> i64 {
    i64::try_from(length).unwrap_or(i64::MAX)
}

impl Columns {
    /// Number of rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.level.len()
    }

    /// Appends the rows of one document, numbered `position` in the batch, in pre-order
    /// (each parent followed by its children): a child's text then lies a few KB after
    /// its parent's, inside the 64 KB a snappy or LZ4 block finds matches in, so it is
    /// encoded as a copy (the Parquet file a third smaller, compression a third faster).
    pub fn push_document(
        &mut self,
        position: usize,
        document: &Document<'_>,
        table: &SpanTable,
        outline: Option<&Outline>,
    ) {
        let family = Family::new(document, table);
        let position = offset(position);
        for row in family.preorder() {
            let [level, index, _, start_byte, end_byte, start_char, end_char] =
                table.records[row].0;
            self.document.push(position);
            self.level.push(level);
            self.index.push(index);
            self.start_char.push(start_char);
            self.end_char.push(end_char);
            self.start_byte.push(start_byte);
            self.end_byte.push(end_byte);
            self.id.extend_from_slice(&hex_id(family.ids[row]));
            if let Some(parent) = family.parents[row] {
                self.parent_id
                    .extend_from_slice(&hex_id(family.ids[parent]));
                self.has_parent.push(true);
            } else {
                self.parent_id.extend_from_slice(&[b'0'; 16]);
                self.has_parent.push(false);
            }
            for &child in family.children_of(row) {
                self.child_ids.extend_from_slice(&hex_id(family.ids[child]));
            }
            self.child_offsets.push(offset(self.child_ids.len() / 16));
            let start = usize::try_from(start_byte).unwrap_or(0);
            let end = usize::try_from(end_byte).unwrap_or(0);
            self.text
                .extend_from_slice(document.text.get(start..end).unwrap_or_default().as_bytes());
            self.text_offsets.push(offset(self.text.len()));
            let code = outline.and_then(|outline| outline.language);
            self.has_headings.push(outline.is_some() && code.is_none());
            self.has_symbols.push(code.is_some());
            if let Some(outline) = outline {
                let (text, offsets) = if code.is_some() {
                    (&mut self.symbol_text, &mut self.symbol_text_offsets)
                } else {
                    (&mut self.heading_text, &mut self.heading_text_offsets)
                };
                for heading in heading_path(outline, start) {
                    text.extend_from_slice(heading.as_bytes());
                    offsets.push(offset(text.len()));
                }
            }
            self.heading_offsets
                .push(offset(self.heading_text_offsets.len() - 1));
            self.symbol_offsets
                .push(offset(self.symbol_text_offsets.len() - 1));
            self.language_text
                .extend_from_slice(code.unwrap_or_default().as_bytes());
            self.language_offsets.push(offset(self.language_text.len()));
            let fields = ChunkFields::of(outline, document.pages, start, end);
            let (page_first, page_last) = fields.pages.unwrap_or_default();
            self.has_pages.push(fields.pages.is_some());
            self.page_first.push(i64::from(page_first));
            self.page_last.push(i64::from(page_last));
            let (source_start, source_end) = fields.source_span.unwrap_or_default();
            self.has_source_span.push(fields.source_span.is_some());
            self.source_start_byte.push(offset(source_start));
            self.source_end_byte.push(offset(source_end));
            let header = fields.table_header.map(|(_, header)| header);
            self.has_table_header.push(header.is_some());
            let (bytes, chars) =
                header.map_or(((0, 0), (0, 0)), |header| (header.bytes, header.chars));
            self.table_header_text.extend_from_slice(
                document
                    .text
                    .get(bytes.0..bytes.1)
                    .unwrap_or_default()
                    .as_bytes(),
            );
            self.table_header_offsets
                .push(offset(self.table_header_text.len()));
            for (column, value) in self
                .table_header_spans
                .iter_mut()
                .zip([chars.0, chars.1, bytes.0, bytes.1])
            {
                column.push(offset(value));
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn repeated_strings_follow_the_rows() {
        let (offsets, bytes) = repeated_strings(&["ab", "", "日"], &[0, 2, 0, 1]);
        assert_eq!(offsets, vec![0, 2, 5, 7, 7]);
        assert_eq!(bytes, "ab日ab".as_bytes());
    }
    #[test]
    fn arrow_texts_are_the_spans_of_the_offsets() {
        let data = "xxab日c".as_bytes();
        assert_eq!(
            arrow_texts(data, &[2, 4, 4, 8]).unwrap(),
            vec!["ab", "", "日c"]
        );
        assert_eq!(arrow_texts(data, &[0]).unwrap(), Vec::<&str>::new());
        assert!(arrow_texts(data, &[]).unwrap_err().contains("one more"));
        assert!(arrow_texts(data, &[2, 9])
            .unwrap_err()
            .contains("not a span"));
        assert!(arrow_texts(data, &[2, 5, 8])
            .unwrap_err()
            .starts_with("row 0: offsets 2..5"));
        assert!(arrow_texts(data, &[4, 2, 8])
            .unwrap_err()
            .contains("out of order"));
        let bad = b"ok\xffno";
        assert_eq!(
            arrow_texts(bad, &[0, 2, 5]).unwrap_err(),
            "row 1: not UTF-8 (byte 0xff at offset 0)"
        );
    }

    use crate::table::SpanRecord;

    /// A parent over bytes 0..7 of a 7-byte text and its two children, 0..3 and 5..7.
    pub(crate) fn parent_and_two_children() -> SpanTable {
        SpanTable {
            records: vec![
                SpanRecord([1, 0, -1, 0, 7, 0, 7]),
                SpanRecord([0, 0, 0, 0, 3, 0, 3]),
                SpanRecord([0, 1, 0, 5, 7, 5, 7]),
            ],
        }
    }

    #[test]
    fn columns_hold_every_row() {
        let text = "# A\n\nxy";
        let table = parent_and_two_children();
        let document = Document {
            text,
            source: "n.md",
            document_id: "d",
            fingerprint: "f",
            pages: None,
        };
        let mut columns = Columns::default();
        columns.push_document(0, &document, &table, None);
        columns.push_document(1, &document, &table, Some(&Outline::parse(text)));
        assert_eq!(columns.rows(), 6);
        assert_eq!(columns.document, vec![0, 0, 0, 1, 1, 1]);
        assert_eq!(columns.text_offsets, vec![0, 7, 10, 12, 19, 22, 24]);
        assert_eq!(&columns.text[7..12], b"# Axy");
        assert_eq!(columns.child_offsets, vec![0, 2, 2, 2, 4, 4, 4]);
        assert_eq!(
            columns.has_parent,
            vec![false, true, true, false, true, true]
        );
        assert_eq!(&columns.child_ids[..16], &columns.id[16..32]);
        assert_eq!(&columns.parent_id[16..32], &columns.id[..16]);
        assert_eq!(columns.heading_offsets, vec![0, 0, 0, 0, 1, 2, 3]);
        assert_eq!(columns.heading_text, b"AAA");
    }
}
