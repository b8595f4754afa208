//! JSON Lines records of a document's chunks, byte for byte what Python's
//! `json.dumps(record, ensure_ascii=False)` gives for the job's record (keys in the same order,
//! `", "` and `": "` separators, non-ASCII kept, control characters escaped the same way).

use std::io::Write;

use super::{heading_path, hex_id, Document, Family};
use crate::markdown::Outline;
use crate::tree::SpanTable;

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

/// Appends `text` as a JSON string, quotes included.
pub fn write_string(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run_start = 0;
    for (position, &byte) in bytes.iter().enumerate() {
        let escape = ESCAPES[byte as usize];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[run_start..position]);
        run_start = position + 1;
        if escape == b'u' {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(byte >> 4) as usize]);
            out.push(HEX[(byte & 0xf) as usize]);
        } else {
            out.push(b'\\');
            out.push(escape);
        }
    }
    out.extend_from_slice(&bytes[run_start..]);
    out.push(b'"');
}

fn write_id(out: &mut Vec<u8>, id: u64) {
    out.push(b'"');
    out.extend_from_slice(&hex_id(id));
    out.push(b'"');
}

fn write_number(out: &mut Vec<u8>, number: i64) {
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{number}");
}

/// Appends one JSON object and `\n` per row of `table`, in row order: the keys `id`,
/// `document_id`, `source`, `level`, `index`, `parent_id`, `child_ids`, `start_char`,
/// `end_char`, `start_byte`, `end_byte`, `text`, and `headings` (the heading path, outermost
/// first) when the document has a Markdown `outline`.
pub fn write_document(
    out: &mut Vec<u8>,
    document: &Document<'_>,
    table: &SpanTable,
    outline: Option<&Outline>,
) {
    let family = Family::new(document, table);
    // The fields every record of the document shares, escaped once.
    let mut shared = Vec::new();
    shared.extend_from_slice(b", \"document_id\": ");
    write_string(&mut shared, document.document_id);
    shared.extend_from_slice(b", \"source\": ");
    write_string(&mut shared, document.source);
    shared.extend_from_slice(b", \"level\": ");
    out.reserve(table.rows() * 300);
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
        write_string(out, document.text.get(start..end).unwrap_or_default());
        if let Some(outline) = outline {
            out.extend_from_slice(b", \"headings\": [");
            for (position, heading) in heading_path(outline, start).into_iter().enumerate() {
                if position > 0 {
                    out.extend_from_slice(b", ");
                }
                write_string(out, heading);
            }
            out.push(b']');
        }
        out.extend_from_slice(b"}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::SpanRecord;

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
        };
        let mut out = Vec::new();
        write_document(&mut out, &document, &table, None);
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        let parent = crate::ids::chunk_id("doc", "fp", 1, 0, 5);
        let first = crate::ids::chunk_id("doc", "fp", 0, 0, 2);
        let second = crate::ids::chunk_id("doc", "fp", 0, 3, 5);
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
        };
        let mut out = Vec::new();
        write_document(&mut out, &document, &table, Some(&outline));
        let out = String::from_utf8(out).unwrap();
        assert!(out.ends_with(", \"headings\": [\"A\", \"B\"]}\n"), "{out}");
    }
}
