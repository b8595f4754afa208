//! The upserts of a store's change feed written as JSON Lines straight from the store's file
//! (`spanchunk changes`): one record a chunk, with the hash of its text, and no Python object
//! per row. The Python layer decides which chunks (the whole state, or the ids a feed touched,
//! `stores/changes.py`) and writes the deletes; its connection to the file is closed while
//! this one reads it (two copies of `SQLite` in one process must not hold one file at once).

use std::io::Write;
use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use xxhash_rust::xxh3::xxh3_64;

use crate::error::ChunkError;
use crate::output::hex_id;
use crate::output::jsonl::write_string;

/// The columns of an upsert, in the order a record gives them.
const COLUMNS: &str = "SELECT id, text, document_id, level, idx, start_char, end_char, \
    start_byte, end_byte, parent_id, metadata FROM chunks";
/// Ids per `IN (...)` query.
const BATCH: usize = 500;

/// Which chunks a feed's upserts hold.
#[derive(Debug, Clone, Copy)]
pub struct Upserts<'a> {
    /// The chunks among these ids (sorted), or every chunk in the store's order.
    pub ids: Option<&'a [String]>,
    /// Only these levels, or all.
    pub levels: Option<&'a [i64]>,
}

/// Writes the upserts of the store at `path` to `out`, one JSON object a line: `op`
/// (`"upsert"`), `id`, `text`, `document_id`, `level`, `index`, `start_char`, `end_char`,
/// `start_byte`, `end_byte`, `parent_id`, `metadata` (the stored JSON, as an object) and
/// `text_hash` (16 hex digits of xxh3-64 of the text, as `ids::text_id`). Returns how many.
///
/// # Errors
/// The store cannot be opened or read, or `out` cannot be written.
pub fn write_upserts(
    path: &Path,
    upserts: Upserts<'_>,
    out: &mut impl Write,
) -> Result<usize, ChunkError> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let levels = upserts.levels.unwrap_or_default();
    let level_marks = vec!["?"; levels.len()].join(", ");
    let mut record = Vec::with_capacity(4096);
    let mut count = 0;
    // One read transaction: every batch sees the same state.
    connection.execute_batch("BEGIN")?;
    let mut run = |sql: &str, parameters: Vec<rusqlite::types::Value>| -> Result<(), ChunkError> {
        let mut statement = connection.prepare(sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(parameters))?;
        while let Some(row) = rows.next()? {
            record.clear();
            write_record(&mut record, row)?;
            out.write_all(&record)
                .map_err(|error| ChunkError::Store(format!("cannot write the feed: {error}")))?;
            count += 1;
        }
        Ok(())
    };
    let level_values = || levels.iter().map(|&level| level.into());
    match upserts.ids {
        None => {
            let filter = if levels.is_empty() && upserts.levels.is_none() {
                String::new()
            } else {
                format!(" WHERE level IN ({level_marks})")
            };
            run(
                &format!("{COLUMNS}{filter} ORDER BY rowid"),
                level_values().collect(),
            )?;
        }
        Some(ids) => {
            let filter = if upserts.levels.is_none() {
                String::new()
            } else {
                format!(" AND level IN ({level_marks})")
            };
            for batch in ids.chunks(BATCH) {
                let marks = vec!["?"; batch.len()].join(", ");
                let parameters = batch
                    .iter()
                    .map(|id| id.clone().into())
                    .chain(level_values())
                    .collect();
                run(
                    &format!(
                        "{COLUMNS} WHERE id IN ({marks}){filter} ORDER BY document_id, level, idx"
                    ),
                    parameters,
                )?;
            }
        }
    }
    connection.execute_batch("COMMIT")?;
    Ok(count)
}

/// Column `column` of `row` as text.
fn text_at<'r>(row: &'r rusqlite::Row<'_>, column: usize) -> Result<&'r str, ChunkError> {
    row.get_ref(column)?
        .as_str()
        .map_err(|error| ChunkError::Store(format!("column {column} of a chunk: {error}")))
}

/// One row's record, its line end included.
fn write_record(out: &mut Vec<u8>, row: &rusqlite::Row<'_>) -> Result<(), ChunkError> {
    let text = text_at(row, 1)?;
    out.extend_from_slice(b"{\"op\":\"upsert\",\"id\":");
    write_string(out, text_at(row, 0)?);
    out.extend_from_slice(b",\"text\":");
    write_string(out, text);
    out.extend_from_slice(b",\"document_id\":");
    write_string(out, text_at(row, 2)?);
    for (key, column) in [
        (&b",\"level\":"[..], 3),
        (b",\"index\":", 4),
        (b",\"start_char\":", 5),
        (b",\"end_char\":", 6),
        (b",\"start_byte\":", 7),
        (b",\"end_byte\":", 8),
    ] {
        out.extend_from_slice(key);
        let value: i64 = row.get(column)?;
        let _ = write!(out, "{value}");
    }
    out.extend_from_slice(b",\"parent_id\":");
    match row.get_ref(9)? {
        ValueRef::Null => out.extend_from_slice(b"null"),
        _ => write_string(out, text_at(row, 9)?),
    }
    out.extend_from_slice(b",\"metadata\":");
    out.extend_from_slice(text_at(row, 10)?.as_bytes());
    out.extend_from_slice(b",\"text_hash\":\"");
    out.extend_from_slice(&hex_id(xxh3_64(text.as_bytes())));
    out.extend_from_slice(b"\"}\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("spanchunk-feed-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let connection = Connection::open(&path).unwrap();
        connection
            .execute_batch(
                "CREATE TABLE chunks (id TEXT, text TEXT, document_id TEXT, idx INTEGER, \
                 level INTEGER, start_char INTEGER, end_char INTEGER, start_byte INTEGER, \
                 end_byte INTEGER, parent_id TEXT, child_ids TEXT, metadata TEXT, \
                 metadata_tuples TEXT);
                 INSERT INTO chunks VALUES ('p', 'ab \"c\"', 'd', 0, 1, 0, 6, 0, 6, NULL, 'a', \
                 '{\"source\":\"d\"}', '');
                 INSERT INTO chunks VALUES ('a', 'ab', 'd', 0, 0, 0, 2, 0, 2, 'p', '', \
                 '{\"source\":\"d\",\"headings\":[\"日本\"]}', '[[\"headings\"]]');",
            )
            .unwrap();
        path
    }

    #[test]
    fn upserts_are_json_lines_with_their_text_hash() {
        let path = store("all");
        let mut out = Vec::new();
        let all = Upserts {
            ids: None,
            levels: None,
        };
        assert_eq!(write_upserts(&path, all, &mut out).unwrap(), 2);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "{{\"op\":\"upsert\",\"id\":\"p\",\"text\":\"ab \\\"c\\\"\",\"document_id\":\"d\",\
                 \"level\":1,\"index\":0,\"start_char\":0,\"end_char\":6,\"start_byte\":0,\
                 \"end_byte\":6,\"parent_id\":null,\"metadata\":{{\"source\":\"d\"}},\
                 \"text_hash\":\"{}\"}}",
                crate::ids::text_id("ab \"c\"")
            )
        );
        assert!(lines[1].contains("\"parent_id\":\"p\""), "{}", lines[1]);
        assert!(lines[1].contains("[\"日本\"]"), "{}", lines[1]);
        let mut leaves = Vec::new();
        let ids = ["a".to_owned(), "gone".to_owned()];
        let some = Upserts {
            ids: Some(&ids),
            levels: Some(&[0]),
        };
        assert_eq!(write_upserts(&path, some, &mut leaves).unwrap(), 1);
        let none = Upserts {
            ids: None,
            levels: Some(&[]),
        };
        assert_eq!(write_upserts(&path, none, &mut Vec::new()).unwrap(), 0);
        std::fs::remove_file(&path).unwrap();
        assert!(write_upserts(&path, all, &mut Vec::new()).is_err());
    }
}
