//! JSON Lines records of a document's chunks, byte for byte what Python's
//! `json.dumps(record, ensure_ascii=False)` gives for the job's record (keys in the same order,
//! `", "` and `": "` separators, non-ASCII kept, control characters escaped the same way).

use super::{heading_path, hex_id, Document, Family};
use crate::markdown::Outline;
use crate::output::ChunkFields;
use crate::table::SpanTable;

/// What each byte becomes inside a JSON string: 0 (itself), a letter (`\` and that letter)
/// or `u` (`\u00XX`), as `json.dumps` escapes.
const ESCAPES: [u8; 256] = {
    let mut table = [0_u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// The high bit of each byte of `word` that is zero, and no other bit (exact, unlike the
/// classic `has_zero` test, whose borrows can mark a 0x01 byte after a zero one).
const fn zero_bytes(word: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((word & LOW7) + LOW7) | word | LOW7)
}

/// The high bit of each byte of `word` that JSON escapes: `"`, `\\` and the controls below
/// 0x20 (the top three bits clear).
const fn escaped_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    zero_bytes(word ^ (ONES * b'"' as u64))
        | zero_bytes(word ^ (ONES * b'\\' as u64))
        | zero_bytes(word & (ONES * 0xe0))
}

/// Appends `bytes` (UTF-8, or a piece of it cut anywhere: only ASCII bytes are escaped)
/// JSON-escaped, without quotes.
///
/// Eight bytes a step (SWAR, as `text::sentences` walks words): a mask of the bytes to
/// escape, visited bit by bit, so that prose with a line break every 60 bytes costs one
/// step per 8 bytes and one push per break, where the byte loop of a 16-byte block that
/// held one break had cost a table look-up per byte (perf: a third of the writer's time).
fn escape_into(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len());
    let mut run_start = 0;
    let mut escape_at = |out: &mut Vec<u8>, at: usize| {
        let byte = bytes[at];
        out.extend_from_slice(&bytes[run_start..at]);
        run_start = at + 1;
        match ESCAPES[byte as usize] {
            b'u' => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(byte >> 4) as usize]);
                out.push(HEX[(byte & 0xf) as usize]);
            }
            letter => {
                out.push(b'\\');
                out.push(letter);
            }
        }
    };
    let mut words = bytes.chunks_exact(8);
    let mut position = 0;
    for word in &mut words {
        let mut mask = escaped_bytes(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        while mask != 0 {
            escape_at(out, position + (mask.trailing_zeros() / 8) as usize);
            mask &= mask - 1;
        }
        position += 8;
    }
    for (offset, &byte) in words.remainder().iter().enumerate() {
        if ESCAPES[byte as usize] != 0 {
            escape_at(out, position + offset);
        }
    }
    out.extend_from_slice(&bytes[run_start..]);
}

/// Appends `text` as a JSON string, quotes included.
pub fn write_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    escape_into(out, text.as_bytes());
    out.push(b'"');
}

/// A document's text JSON-escaped once, with the escaped offset of every chunk boundary, so
/// that a chunk's escaped text is a copy of one slice: children repeat their parents' text,
/// and escaping it once instead of at every level took markdown-en from 166 to 361 MB/s
/// (no change measured on the large gutenberg books, see `output/mod.rs`).
struct EscapedText {
    escaped: Vec<u8>,
    /// The byte offsets where chunks start or end, sorted, distinct.
    boundaries: Vec<usize>,
    /// The offset in `escaped` of each of `boundaries`.
    escaped_at: Vec<usize>,
}

impl EscapedText {
    fn new(text: &str, table: &SpanTable) -> Self {
        let mut boundaries: Vec<usize> = table
            .records
            .iter()
            .flat_map(|record| [record.0[3], record.0[4]])
            .map(|offset| usize::try_from(offset).unwrap_or(0).min(text.len()))
            .collect();
        boundaries.sort_unstable();
        boundaries.dedup();
        let bytes = text.as_bytes();
        let mut escaped = Vec::with_capacity(bytes.len() + bytes.len() / 32 + 16);
        let mut escaped_at = Vec::with_capacity(boundaries.len());
        let mut previous = 0;
        for &boundary in &boundaries {
            escape_into(&mut escaped, &bytes[previous..boundary]);
            escaped_at.push(escaped.len());
            previous = boundary;
        }
        Self {
            escaped,
            boundaries,
            escaped_at,
        }
    }

    /// The escaped text of the byte span `start..end` (both boundaries of a chunk).
    fn slice(&self, start: usize, end: usize) -> &[u8] {
        let at = |offset: usize| {
            self.boundaries
                .binary_search(&offset)
                .map_or(0, |found| self.escaped_at[found])
        };
        let (from, to) = (at(start), at(end));
        self.escaped.get(from..to).unwrap_or_default()
    }
}

fn write_id(out: &mut Vec<u8>, id: u64) {
    out.push(b'"');
    out.extend_from_slice(&hex_id(id));
    out.push(b'"');
}

fn write_number(out: &mut Vec<u8>, number: i64) {
    // By hand: `write!` went through the formatting machinery, six times per record.
    let mut digits = [0_u8; 20];
    let mut position = digits.len();
    let mut value = number.unsigned_abs();
    loop {
        position -= 1;
        // A digit is below 10, so the cast keeps it.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (value % 10) as u8;
        digits[position] = b'0' + digit;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    if number < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[position..]);
}

/// Appends one JSON object and `\n` per row of `table`, in row order: the keys `id`,
/// `document_id`, `source`, `level`, `index`, `parent_id`, `child_ids`, `start_char`,
/// `end_char`, `start_byte`, `end_byte`, `text`, and `headings` (the heading path, outermost
/// first) when the document has a Markdown `outline`, or `symbols` (the symbol path) and
/// `language` when it has a code one; then its [`ChunkFields`] ([`write_fields`]).
pub fn write_document(
    out: &mut Vec<u8>,
    document: &Document<'_>,
    table: &SpanTable,
    outline: Option<&Outline>,
) {
    let family = Family::new(document, table);
    let escaped = EscapedText::new(document.text, table);
    let fields_possible = ChunkFields::possible(outline, document.pages);
    // The fields every record of the document shares, escaped once.
    let mut shared = Vec::new();
    shared.extend_from_slice(b", \"document_id\": ");
    write_string(&mut shared, document.document_id);
    shared.extend_from_slice(b", \"source\": ");
    write_string(&mut shared, document.source);
    shared.extend_from_slice(b", \"level\": ");
    // The record's size, known up to the numbers: one allocation, where growing the buffer
    // as records came paid for copies and page faults on large documents.
    let text_bytes: usize = table
        .records
        .iter()
        .map(|record| {
            let start = usize::try_from(record.0[3]).unwrap_or(0);
            let end = usize::try_from(record.0[4]).unwrap_or(0);
            escaped.slice(start, end).len()
        })
        .sum();
    let headings = outline.map_or(0, |outline| {
        outline
            .headings
            .iter()
            .map(|heading| heading.text.len() + 4)
            .sum::<usize>()
    });
    out.reserve(
        text_bytes
            + table.rows() * (shared.len() + 240 + headings.min(256))
            + family.children.len() * 20,
    );
    for (row, record) in table.records.iter().enumerate() {
        let [level, index, _, start_byte, end_byte, start_char, end_char] = record.0;
        out.extend_from_slice(b"{\"id\": ");
        write_id(out, family.ids[row]);
        out.extend_from_slice(&shared);
        write_number(out, level);
        out.extend_from_slice(b", \"index\": ");
        write_number(out, index);
        out.extend_from_slice(b", \"parent_id\": ");
        match family.parents[row] {
            Some(parent) => write_id(out, family.ids[parent]),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b", \"child_ids\": [");
        for (position, &child) in family.children_of(row).iter().enumerate() {
            if position > 0 {
                out.extend_from_slice(b", ");
            }
            write_id(out, family.ids[child]);
        }
        out.extend_from_slice(b"], \"start_char\": ");
        write_number(out, start_char);
        out.extend_from_slice(b", \"end_char\": ");
        write_number(out, end_char);
        out.extend_from_slice(b", \"start_byte\": ");
        write_number(out, start_byte);
        out.extend_from_slice(b", \"end_byte\": ");
        write_number(out, end_byte);
        out.extend_from_slice(b", \"text\": ");
        let start = usize::try_from(start_byte).unwrap_or(0);
        let end = usize::try_from(end_byte).unwrap_or(0);
        out.push(b'"');
        out.extend_from_slice(escaped.slice(start, end));
        out.push(b'"');
        if let Some(outline) = outline {
            out.extend_from_slice(if outline.is_code() {
                b", \"symbols\": ["
            } else {
                b", \"headings\": ["
            });
            for (position, heading) in heading_path(outline, start).into_iter().enumerate() {
                if position > 0 {
                    out.extend_from_slice(b", ");
                }
                write_string(out, heading);
            }
            out.push(b']');
            if let Some(language) = outline.language {
                out.extend_from_slice(b", \"language\": ");
                write_string(out, language);
            }
        }
        if fields_possible {
            write_fields(
                out,
                document.text,
                &ChunkFields::of(outline, document.pages, start, end),
                ", ",
                ": ",
            );
        }
        out.extend_from_slice(b"}\n");
    }
}

/// A chunk's [`ChunkFields`] as JSON members after others (`source_start_byte` and
/// `source_end_byte`; `table_header`, an object; `page_first` and `page_last`), with `comma` and `colon` as separators
/// (`", "` and `": "` as `json.dumps` writes by default; `","` and `":"` compact).
pub fn write_fields(out: &mut Vec<u8>, text: &str, fields: &ChunkFields, comma: &str, colon: &str) {
    let member = |out: &mut Vec<u8>, first: bool, key: &str| {
        if !first {
            out.extend_from_slice(comma.as_bytes());
        }
        write_string(out, key);
        out.extend_from_slice(colon.as_bytes());
    };
    let number = |out: &mut Vec<u8>, value: usize| {
        write_number(out, i64::try_from(value).unwrap_or(i64::MAX));
    };
    if let Some((start, end)) = fields.source_span {
        member(out, false, "source_start_byte");
        number(out, start);
        member(out, false, "source_end_byte");
        number(out, end);
    }
    if let Some((_, header)) = fields.table_header {
        member(out, false, "table_header");
        out.push(b'{');
        member(out, true, "text");
        write_string(
            out,
            text.get(header.bytes.0..header.bytes.1).unwrap_or_default(),
        );
        member(out, false, "start_char");
        number(out, header.chars.0);
        member(out, false, "end_char");
        number(out, header.chars.1);
        member(out, false, "start_byte");
        number(out, header.bytes.0);
        member(out, false, "end_byte");
        number(out, header.bytes.1);
        out.push(b'}');
    }
    if let Some((first, last)) = fields.pages {
        member(out, false, "page_first");
        number(out, first as usize);
        member(out, false, "page_last");
        number(out, last as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::SpanRecord;

    fn escaped(text: &str) -> String {
        let mut out = Vec::new();
        write_string(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_escape_as_json_dumps_does() {
        // Expected values from json.dumps(text, ensure_ascii=False).
        assert_eq!(escaped(""), r#""""#);
        assert_eq!(escaped("plain"), r#""plain""#);
        assert_eq!(escaped("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(escaped("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(escaped("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\"");
        assert_eq!(escaped("é 日本 🦀"), "\"é 日本 🦀\"");
    }

    #[test]
    fn every_byte_at_every_lane_escapes_as_one_at_a_time() {
        fn one_by_one(bytes: &[u8]) -> Vec<u8> {
            let mut out = Vec::new();
            for &byte in bytes {
                match ESCAPES[byte as usize] {
                    0 => out.push(byte),
                    b'u' => out.extend_from_slice(format!("\\u{byte:04x}").as_bytes()),
                    letter => out.extend_from_slice(&[b'\\', letter]),
                }
            }
            out
        }
        for byte in 0..=255_u8 {
            for lane in 0..19 {
                let mut bytes = vec![b'a'; 19];
                bytes[lane] = byte;
                bytes[(lane + 7) % 19] = 0x80 | (byte >> 1); // a neighbour with the high bit
                let mut out = Vec::new();
                escape_into(&mut out, &bytes);
                assert_eq!(out, one_by_one(&bytes), "byte {byte:#x} at {lane}");
            }
        }
    }

    #[test]
    fn numbers_and_long_strings_are_written_as_json_dumps_does() {
        for number in [0, 7, 10, 99, 1_234_567, -3, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            write_number(&mut out, number);
            assert_eq!(String::from_utf8(out).unwrap(), number.to_string());
        }
        // Blocks of 16 bytes, clean and not, and escapes on their edges.
        let text = "0123456789abcdef\"123456789abcde\\x\n".repeat(3);
        let expected = text
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        assert_eq!(escaped(&text), format!("\"{expected}\""));
    }

    fn to_i64(offset: usize) -> i64 {
        i64::try_from(offset).expect("a test offset fits an i64")
    }

    #[test]
    fn escaped_slices_match_escaping_each_span() {
        let text = "a\"b\nc\td\\e 日本 \u{1}f";
        let spans = [(0, text.len()), (0, 3), (3, 8), (8, text.len()), (2, 2)];
        let table = SpanTable {
            records: spans
                .iter()
                .map(|&(start, end)| SpanRecord([0, 0, -1, to_i64(start), to_i64(end), 0, 0]))
                .collect(),
        };
        let escaped_text = EscapedText::new(text, &table);
        for (start, end) in spans {
            let slice = escaped_text.slice(start, end);
            let own = escaped(&text[start..end]);
            assert_eq!(slice, &own.as_bytes()[1..own.len() - 1], "{start}..{end}");
        }
    }

    #[test]
    fn records_have_the_keys_in_order() {
        let text = "ab\ncd";
        let table = SpanTable {
            records: vec![
                SpanRecord([1, 0, -1, 0, 5, 0, 5]),
                SpanRecord([0, 0, 0, 0, 2, 0, 2]),
                SpanRecord([0, 1, 0, 3, 5, 3, 5]),
            ],
        };
        let document = Document {
            text,
            source: "dir/a\"b.txt",
            document_id: "doc",
            fingerprint: "fp",
            pages: None,
        };
        let mut out = Vec::new();
        write_document(&mut out, &document, &table, None);
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        let parent = crate::ids::chunk_id("doc", "fp", 1, b"ab\ncd", 0);
        let first = crate::ids::chunk_id("doc", "fp", 0, b"ab", 0);
        let second = crate::ids::chunk_id("doc", "fp", 0, b"cd", 0);
        assert_eq!(
            lines[0],
            format!(
                "{{\"id\": \"{parent}\", \"document_id\": \"doc\", \"source\": \"dir/a\\\"b.txt\", \
                 \"level\": 1, \"index\": 0, \"parent_id\": null, \"child_ids\": [\"{first}\", \
                 \"{second}\"], \"start_char\": 0, \"end_char\": 5, \"start_byte\": 0, \
                 \"end_byte\": 5, \"text\": \"ab\\ncd\"}}"
            )
        );
        assert!(lines[2].contains(&format!("\"parent_id\": \"{parent}\", \"child_ids\": []")));
        assert!(lines[2].ends_with("\"text\": \"cd\"}"));
    }

    #[test]
    fn markdown_records_carry_their_heading_path() {
        let text = "# A\n\nx\n\n## B\n\ny\n";
        let outline = Outline::parse(text);
        let table = SpanTable {
            records: vec![SpanRecord([0, 0, -1, 9, 17, 9, 17])],
        };
        let document = Document {
            text,
            source: "n.md",
            document_id: "d",
            fingerprint: "f",
            pages: None,
        };
        let mut out = Vec::new();
        write_document(&mut out, &document, &table, Some(&outline));
        let out = String::from_utf8(out).unwrap();
        assert!(out.ends_with(", \"headings\": [\"A\", \"B\"]}\n"), "{out}");
    }
}
