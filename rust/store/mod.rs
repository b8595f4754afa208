//! The rows of the `SQLite` store (`SqliteRegistry`'s file, the command line's `.sqlite` output):
//! each chunk of a cut document as the thirteen columns of the store's `chunks` table, made
//! from the span table in one pass, and written into a new store by [`sqlite::BulkWriter`]
//! without a Python object per chunk.
//!
//! The columns, in the order the store's statements bind them: `id`, `text`,
//! `document_id`, `idx`, `level`, `start_char`, `end_char`, `start_byte`, `end_byte`,
//! `parent_id` (NULL at the top level), `child_ids` (the ids joined by U+001F, empty for a
//! leaf), `metadata` (plain JSON text, byte for byte what the Python layer's
//! `codec.encode_metadata` writes: `{"source":...}`, and for a Markdown document `"headings"`
//! too, its heading path as an array) and `metadata_tuples` (the paths of the arrays that
//! read back as Python tuples: `[["headings"]]`, or empty).

pub mod feed;
pub mod snapshot;
pub mod sqlite;

use crate::markdown::Outline;
use crate::output::jsonl::{write_fields, write_string};
use crate::output::{heading_path, hex_id, ChunkFields, Document, Family};
use crate::table::SpanTable;

/// What joins the child ids of a row in its `child_ids` column (the store's
/// `_ID_SEPARATOR`): the unit separator, which no hex id holds.
pub const ID_SEPARATOR: char = '\u{1f}';

/// The columns of a document's rows that its span table does not hold: ids, parent ids,
/// child id lists and metadata texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreColumns {
    /// 16 hex digits per row.
    ids: String,
    /// The row of each row's parent; None at the top level.
    parents: Vec<Option<usize>>,
    /// Row `r`'s `child_ids` text is `child_text[child_bounds[r]..child_bounds[r + 1]]`.
    child_text: String,
    child_bounds: Vec<usize>,
    /// The distinct metadata texts of the document (one, or one per heading path, or one
    /// per row of an HTML page or a table).
    metadata: Vec<String>,
    /// The position in `metadata` of each row's text.
    metadata_of: Vec<usize>,
    /// The `metadata_tuples` text of every row: the path's key, or empty without one.
    tuple_paths: &'static str,
}

impl StoreColumns {
    /// The rows of `document` cut as `table` (levels in blocks, top first, as the engine
    /// writes it), with heading paths from `outline` for a Markdown document.
    #[must_use]
    pub fn new(document: &Document<'_>, table: &SpanTable, outline: Option<&Outline>) -> Self {
        let family = Family::new(document, table);
        let rows = table.rows();
        let mut ids = String::with_capacity(16 * rows);
        for &id in &family.ids {
            ids.extend(hex_id(id).iter().copied().map(char::from));
        }
        let mut child_text = String::with_capacity(17 * family.children.len());
        let mut child_bounds = Vec::with_capacity(rows + 1);
        child_bounds.push(0);
        for row in 0..rows {
            for (position, &child) in family.children_of(row).iter().enumerate() {
                if position > 0 {
                    child_text.push(ID_SEPARATOR);
                }
                child_text.push_str(&ids[16 * child..16 * child + 16]);
            }
            child_bounds.push(child_text.len());
        }
        let mut metadata = Vec::new();
        let mut metadata_of = Vec::with_capacity(rows);
        let tuple_paths = match outline {
            None => "",
            Some(outline) if outline.language.is_some() => SYMBOLS_TUPLE,
            Some(_) => HEADINGS_TUPLE,
        };
        // The heading path depends only on how many headings come before a chunk: one text
        // per count seen, most documents having few. Without an outline, one text for all.
        let mut text_of_count: Vec<Option<usize>> =
            vec![None; outline.map_or(0, |outline| outline.headings.len()) + 1];
        let fields_possible = ChunkFields::possible(outline, document.pages);
        for record in &table.records {
            let start = usize::try_from(record.0[3]).unwrap_or(0);
            let count = outline.map_or(0, |outline| outline.headings_before(start));
            let position = *text_of_count[count].get_or_insert_with(|| {
                metadata.push(match outline {
                    None => metadata_text(document.source, None),
                    Some(outline) => path_metadata_text(
                        document.source,
                        Some(&heading_path(outline, start)),
                        outline.language,
                    ),
                });
                metadata.len() - 1
            });
            let end = usize::try_from(record.0[4]).unwrap_or(0);
            let fields = if fields_possible {
                ChunkFields::of(outline, document.pages, start, end)
            } else {
                ChunkFields::default()
            };
            if fields.is_empty() {
                metadata_of.push(position);
                continue;
            }
            // A page's chunk, a table's, or one of a text with page markers: its path, the
            // bytes of the page it came from, its table's header row, its pages.
            let shared = &metadata[position];
            let mut own = shared.as_bytes()[..shared.len() - 1].to_vec();
            write_fields(&mut own, document.text, &fields, ",", ":");
            own.push(b'}');
            metadata.push(String::from_utf8(own).unwrap_or_default());
            metadata_of.push(metadata.len() - 1);
        }
        Self {
            ids,
            parents: family.parents,
            child_text,
            child_bounds,
            metadata,
            metadata_of,
            tuple_paths,
        }
    }

    /// How many rows there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.parents.len()
    }

    /// Whether the document has no rows (an empty or blank text).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    /// Row `row`'s id.
    #[must_use]
    pub fn id(&self, row: usize) -> &str {
        &self.ids[16 * row..16 * row + 16]
    }

    /// Row `row`'s parent id; None at the top level.
    #[must_use]
    pub fn parent_id(&self, row: usize) -> Option<&str> {
        self.parents[row].map(|parent| self.id(parent))
    }

    /// Row `row`'s child ids, joined by [`ID_SEPARATOR`] (empty for a leaf).
    #[must_use]
    pub fn child_ids(&self, row: usize) -> &str {
        &self.child_text[self.child_bounds[row]..self.child_bounds[row + 1]]
    }

    /// Row `row`'s metadata as JSON text.
    #[must_use]
    pub fn metadata(&self, row: usize) -> &str {
        &self.metadata[self.metadata_of[row]]
    }

    /// The `metadata_tuples` text of every row (the same for all rows of a document).
    #[must_use]
    pub fn tuple_paths(&self) -> &'static str {
        self.tuple_paths
    }
}

/// The `metadata_tuples` of a Markdown chunk: its `headings` array is a tuple.
pub const HEADINGS_TUPLE: &str = r#"[["headings"]]"#;
/// The `metadata_tuples` of a source code chunk: its `symbols` array is a tuple.
pub const SYMBOLS_TUPLE: &str = r#"[["symbols"]]"#;

/// A chunk's metadata as the store keeps it: what Python's `json.dumps(..., ensure_ascii=
/// False, separators=(",", ":"))` gives for `{"source": source}`, or with a heading path
/// `{"source": source, "headings": [...]}` (a tuple, as [`HEADINGS_TUPLE`] says).
#[must_use]
pub fn metadata_text(source: &str, headings: Option<&[&str]>) -> String {
    path_metadata_text(source, headings, None)
}

/// [`metadata_text`], with a symbol path and its language for source code (`language`
/// given): `{"source": source, "symbols": [...], "language": language}`.
#[must_use]
pub fn path_metadata_text(source: &str, path: Option<&[&str]>, language: Option<&str>) -> String {
    let mut out = Vec::with_capacity(source.len() + 16);
    out.extend_from_slice(b"{\"source\":");
    write_string(&mut out, source);
    if let Some(path) = path {
        out.extend_from_slice(if language.is_some() {
            b",\"symbols\":["
        } else {
            b",\"headings\":["
        });
        for (position, name) in path.iter().enumerate() {
            if position > 0 {
                out.push(b',');
            }
            write_string(&mut out, name);
        }
        out.push(b']');
    }
    if let Some(language) = language {
        out.extend_from_slice(b",\"language\":");
        write_string(&mut out, language);
    }
    out.push(b'}');
    // Escaping copies UTF-8 through and adds ASCII only.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids;
    use crate::table::SpanRecord;

    fn document<'a>(text: &'a str, source: &'a str) -> Document<'a> {
        Document {
            text,
            source,
            document_id: source,
            fingerprint: "fp",
            pages: None,
        }
    }

    #[test]
    fn rows_link_parents_and_children_by_id() {
        let table = SpanTable {
            records: vec![
                SpanRecord([1, 0, -1, 0, 5, 0, 5]),
                SpanRecord([0, 0, 0, 0, 2, 0, 2]),
                SpanRecord([0, 1, 0, 3, 5, 3, 5]),
            ],
        };
        let rows = StoreColumns::new(&document("ab\ncd", "d.txt"), &table, None);
        assert_eq!(rows.len(), 3);
        let parent = ids::chunk_id("d.txt", "fp", 1, b"ab\ncd", 0);
        let first = ids::chunk_id("d.txt", "fp", 0, b"ab", 0);
        let second = ids::chunk_id("d.txt", "fp", 0, b"cd", 0);
        assert_eq!(rows.id(0), parent);
        assert_eq!(rows.parent_id(0), None);
        assert_eq!(rows.parent_id(2), Some(parent.as_str()));
        assert_eq!(rows.child_ids(0), format!("{first}\u{1f}{second}"));
        assert_eq!(rows.child_ids(1), "");
        assert_eq!(rows.metadata(2), r#"{"source":"d.txt"}"#);
        assert_eq!(rows.tuple_paths(), "");
        assert!(StoreColumns::new(&document("", "e"), &SpanTable::default(), None).is_empty());
    }

    #[test]
    fn metadata_is_what_json_dumps_gives() {
        // Expected values from the store's encode_metadata (json.dumps, compact separators).
        assert_eq!(
            metadata_text("a \"b\"\\c\n日本", None),
            r#"{"source":"a \"b\"\\c\n日本"}"#
        );
        assert_eq!(
            metadata_text("n.md", Some(&[])),
            r#"{"source":"n.md","headings":[]}"#
        );
        assert_eq!(
            metadata_text("n.md", Some(&["A", "B \u{1}"])),
            r#"{"source":"n.md","headings":["A","B \u0001"]}"#
        );
    }

    #[test]
    fn markdown_rows_carry_their_heading_path() {
        let text = "# A\n\nx\n\n## B\n\ny\n";
        let outline = Outline::parse(text);
        let table = SpanTable {
            records: vec![
                SpanRecord([0, 0, -1, 0, 7, 0, 7]),
                SpanRecord([0, 1, -1, 9, 17, 9, 17]),
            ],
        };
        let rows = StoreColumns::new(&document(text, "n.md"), &table, Some(&outline));
        assert_eq!(rows.metadata(0), r#"{"source":"n.md","headings":["A"]}"#);
        assert_eq!(
            rows.metadata(1),
            r#"{"source":"n.md","headings":["A","B"]}"#
        );
        assert_eq!(rows.tuple_paths(), HEADINGS_TUPLE);
    }
}
