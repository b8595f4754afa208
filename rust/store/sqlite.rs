//! A new store filled in bulk: the rows of whole batches of documents inserted through
//! `SQLite`'s C interface, with no Python object per row and no interpreter lock held.
//!
//! Speed: `benches/NOTES.md`, under `rust/store/sqlite.rs`.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, Connection, Statement};

use super::StoreColumns;
use crate::error::ChunkError;
use crate::output::Document;
use crate::table::SpanTable;

impl From<rusqlite::Error> for ChunkError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Store(error.to_string())
    }
}

/// One document to insert: what it is, its rows, and what the store records of its source.
#[derive(Debug, Clone, Copy)]
pub struct StoredDocument<'a> {
    /// Its text, id and fingerprint (the `source` is the metadata's, in `rows`).
    pub document: Document<'a>,
    /// Its span table.
    pub table: &'a SpanTable,
    /// The columns of its rows that the table does not hold.
    pub rows: &'a StoreColumns,
    /// The hash of its source's bytes (`documents.content_hash`).
    pub content_hash: &'a str,
    /// The size, mtime, ctime (both in ns) and inode its file had when read; None where
    /// they are not to be trusted for the next run (changed too recently).
    pub file_state: Option<[i64; 4]>,
}

impl<'a> StoredDocument<'a> {
    /// The text of row `row`: its byte span of the document's text.
    ///
    /// # Errors
    /// The span is not one of the text (a table made by hand).
    pub fn chunk_text(&self, row: usize) -> Result<&'a str, ChunkError> {
        let [_, _, _, start_byte, end_byte, ..] = self.table.records[row].0;
        usize::try_from(start_byte)
            .ok()
            .zip(usize::try_from(end_byte).ok())
            .and_then(|(start, end)| self.document.text.get(start..end))
            .ok_or_else(|| {
                ChunkError::InvalidTable(format!(
                    "row {row} of {}: bytes {start_byte}..{end_byte} are not a span of its text",
                    self.document.document_id
                ))
            })
    }
}

/// The values a chunk's row binds: the columns of the module `store`.
const CHUNK_COLUMNS: usize = 13;

/// The statements of a bulk load, their values bound by position.
#[derive(Debug, Clone, Copy)]
pub struct Statements<'a> {
    /// Inserts one chunk: the thirteen columns of the module `store`, in that order (a plain
    /// `INSERT`: see [`BulkWriter::write`] for a document id that comes twice).
    pub insert_chunk: &'a str,
    /// Inserts several chunks at once, the same columns for each (`VALUES (...), (...)`):
    /// how many is its number of parameters over thirteen. Most rows go in through it.
    pub insert_chunks: &'a str,
    /// Inserts (or replaces) one document: its id, content hash, and the four numbers of
    /// its `file_state` (NULL where None).
    pub insert_document: &'a str,
    /// Deletes the chunks of one document, by its id.
    pub delete_chunks: &'a str,
}

/// A connection to a new store being filled.
pub struct BulkWriter {
    connection: Connection,
    insert_chunk: String,
    insert_chunks: String,
    /// How many rows `insert_chunks` inserts.
    rows_per_insert: usize,
    insert_document: String,
    delete_chunks: String,
    /// The ids of the documents written so far.
    written: HashSet<String>,
}

impl std::fmt::Debug for BulkWriter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("BulkWriter").finish_non_exhaustive()
    }
}

impl BulkWriter {
    /// Opens the store at `path` (its schema made already) and runs `setup` (the pragmas of
    /// a bulk load).
    ///
    /// # Errors
    /// `SQLite` cannot open the file or run `setup`, or a statement does not fit the
    /// schema, or the chunk inserts do not take thirteen values a row.
    pub fn open(path: &Path, setup: &str, statements: Statements<'_>) -> Result<Self, ChunkError> {
        let connection = Connection::open(path)?;
        connection.execute_batch(setup)?;
        // Checked now, not at the first batch: a statement that does not fit the schema.
        for sql in [statements.insert_document, statements.delete_chunks] {
            connection.prepare_cached(sql)?;
        }
        let one = connection
            .prepare_cached(statements.insert_chunk)?
            .parameter_count();
        let many = connection
            .prepare_cached(statements.insert_chunks)?
            .parameter_count();
        if one != CHUNK_COLUMNS || many == 0 || many % CHUNK_COLUMNS != 0 {
            return Err(ChunkError::Store(format!(
                "the chunk inserts take {one} and {many} values: they must take {CHUNK_COLUMNS} \
                 a row, for one row and for several"
            )));
        }
        Ok(Self {
            connection,
            insert_chunk: statements.insert_chunk.to_owned(),
            insert_chunks: statements.insert_chunks.to_owned(),
            rows_per_insert: many / CHUNK_COLUMNS,
            insert_document: statements.insert_document.to_owned(),
            delete_chunks: statements.delete_chunks.to_owned(),
            written: HashSet::new(),
        })
    }

    /// Inserts every row of `documents` and their documents' rows, in one transaction.
    ///
    /// Chunks are inserted, not upserted: an upsert seeks the unique id index twice a row,
    /// and took a third more time. They go in `insert_chunks` at a time, the rest of the
    /// batch one by one. A document id that comes a second time (two paths that
    /// normalise to one, through a link) first has its earlier chunks deleted, so the last
    /// file wins, as in an update of an existing store.
    ///
    /// # Errors
    /// `SQLite` fails (a full disk, an I/O error), or a span lies outside its text; the
    /// transaction is rolled back.
    pub fn write<'a>(
        &mut self,
        documents: impl IntoIterator<Item = StoredDocument<'a>>,
    ) -> Result<(), ChunkError> {
        let transaction = self.connection.transaction()?;
        let mut batch_ids = HashSet::new();
        {
            let mut one = transaction.prepare_cached(&self.insert_chunk)?;
            let mut many = transaction.prepare_cached(&self.insert_chunks)?;
            let mut document_row = transaction.prepare_cached(&self.insert_document)?;
            // Rows waiting for a full `insert_chunks`: a document and its row.
            let mut pending: Vec<(StoredDocument<'a>, usize)> =
                Vec::with_capacity(self.rows_per_insert);
            for stored in documents {
                let document = stored.document;
                if self.written.contains(document.document_id)
                    || !batch_ids.insert(document.document_id.to_owned())
                {
                    // The id's earlier rows go in before the delete that removes them.
                    insert_one_by_one(&mut one, &pending)?;
                    pending.clear();
                    transaction
                        .prepare_cached(&self.delete_chunks)?
                        .execute([document.document_id])?;
                }
                for row in 0..stored.table.records.len() {
                    pending.push((stored, row));
                    if pending.len() == self.rows_per_insert {
                        for (position, &(stored, row)) in pending.iter().enumerate() {
                            bind_chunk(&mut many, position * CHUNK_COLUMNS, stored, row)?;
                        }
                        many.raw_execute()?;
                        pending.clear();
                    }
                }
                let [size, mtime_ns, ctime_ns, inode] = match stored.file_state {
                    Some(state) => state.map(Some),
                    None => [None; 4],
                };
                document_row.execute(params![
                    document.document_id,
                    stored.content_hash,
                    size,
                    mtime_ns,
                    ctime_ns,
                    inode
                ])?;
            }
            insert_one_by_one(&mut one, &pending)?;
        }
        transaction.commit()?;
        self.written.extend(batch_ids);
        Ok(())
    }

    /// Runs `sql` (the id index built at the end, the journal mode the store keeps) and
    /// closes the connection.
    ///
    /// # Errors
    /// `SQLite` fails.
    pub fn finish(self, sql: &str) -> Result<(), ChunkError> {
        self.connection.execute_batch(sql)?;
        self.connection.close().map_err(|(_, error)| error)?;
        Ok(())
    }
}

/// Binds row `row` of `stored` to the thirteen parameters of `statement` after the first
/// `before`.
fn bind_chunk(
    statement: &mut Statement<'_>,
    before: usize,
    stored: StoredDocument<'_>,
    row: usize,
) -> Result<(), ChunkError> {
    let [level, index, _, start_byte, end_byte, start_char, end_char] = stored.table.records[row].0;
    statement.raw_bind_parameter(before + 1, stored.rows.id(row))?;
    statement.raw_bind_parameter(before + 2, stored.chunk_text(row)?)?;
    statement.raw_bind_parameter(before + 3, stored.document.document_id)?;
    statement.raw_bind_parameter(before + 4, index)?;
    statement.raw_bind_parameter(before + 5, level)?;
    statement.raw_bind_parameter(before + 6, start_char)?;
    statement.raw_bind_parameter(before + 7, end_char)?;
    statement.raw_bind_parameter(before + 8, start_byte)?;
    statement.raw_bind_parameter(before + 9, end_byte)?;
    statement.raw_bind_parameter(before + 10, stored.rows.parent_id(row))?;
    statement.raw_bind_parameter(before + 11, stored.rows.child_ids(row))?;
    statement.raw_bind_parameter(before + 12, stored.rows.metadata(row))?;
    statement.raw_bind_parameter(before + 13, stored.rows.tuple_paths())?;
    Ok(())
}

/// Inserts `rows` with the one-row statement `one`.
fn insert_one_by_one(
    one: &mut Statement<'_>,
    rows: &[(StoredDocument<'_>, usize)],
) -> Result<(), ChunkError> {
    for &(stored, row) in rows {
        bind_chunk(one, 0, stored, row)?;
        one.raw_execute()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::SpanRecord;

    const SCHEMA: &str = "CREATE TABLE chunks (id TEXT NOT NULL UNIQUE, text TEXT NOT NULL, \
        document_id TEXT NOT NULL, idx INTEGER NOT NULL, level INTEGER NOT NULL, \
        start_char INTEGER NOT NULL, end_char INTEGER NOT NULL, start_byte INTEGER NOT NULL, \
        end_byte INTEGER NOT NULL, parent_id TEXT, child_ids TEXT NOT NULL, \
        metadata TEXT NOT NULL, metadata_tuples TEXT NOT NULL); \
        CREATE TABLE documents (document_id TEXT PRIMARY KEY, \
        digest TEXT, content_hash TEXT, file_size INTEGER, file_mtime_ns INTEGER, \
        file_ctime_ns INTEGER, file_inode INTEGER);";
    const STATEMENTS: Statements<'static> = Statements {
        insert_chunk: "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        // Two rows a statement: the tests' documents go in through both statements.
        insert_chunks: "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), \
            (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        insert_document: "INSERT OR REPLACE INTO documents (document_id, content_hash, \
            file_size, file_mtime_ns, file_ctime_ns, file_inode) VALUES (?, ?, ?, ?, ?, ?)",
        delete_chunks: "DELETE FROM chunks WHERE document_id = ?",
    };

    fn temp_store(name: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("spanchunk-{name}-{}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&path);
        Connection::open(&path)
            .unwrap()
            .execute_batch(SCHEMA)
            .unwrap();
        path
    }

    #[test]
    fn rows_go_in_as_the_columns_say() {
        let path = temp_store("bulk");
        let text = "é1\ncd";
        let table = SpanTable {
            records: vec![
                SpanRecord([1, 0, -1, 0, 6, 0, 5]),
                SpanRecord([0, 0, 0, 0, 3, 0, 2]),
                SpanRecord([0, 1, 0, 4, 6, 3, 5]),
            ],
        };
        let document = Document {
            text,
            source: "d.txt",
            document_id: "d.txt",
            fingerprint: "fp",
            pages: None,
        };
        let rows = StoreColumns::new(&document, &table, None);
        let mut writer = BulkWriter::open(&path, "PRAGMA journal_mode = OFF", STATEMENTS).unwrap();
        let stored = StoredDocument {
            document,
            table: &table,
            rows: &rows,
            content_hash: "hash",
            file_state: Some([6, 1, 2, 3]),
        };
        writer.write([stored]).unwrap();
        // A span that is not one of the text: refused, nothing of the batch written.
        let bad = SpanTable {
            records: vec![SpanRecord([0, 0, -1, 0, 1, 0, 1])],
        };
        let other = Document {
            document_id: "other",
            ..document
        };
        let bad_rows = StoreColumns::new(&other, &bad, None);
        let error = writer
            .write([StoredDocument {
                document: other,
                table: &bad,
                rows: &bad_rows,
                content_hash: "h",
                file_state: None,
            }])
            .unwrap_err();
        assert!(error.to_string().contains("not a span"), "{error}");
        writer
            .finish("CREATE INDEX position ON chunks (document_id)")
            .unwrap();

        let connection = Connection::open(&path).unwrap();
        let texts: Vec<(String, String, i64, Option<String>, String)> = connection
            .prepare("SELECT id, text, level, parent_id, child_ids FROM chunks ORDER BY rowid")
            .unwrap()
            .query_map([], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(texts.len(), 3);
        assert_eq!(texts[0].1, text);
        assert_eq!(texts[1].1, "é1");
        assert_eq!(texts[2].1, "cd");
        assert_eq!(texts[1].3.as_deref(), Some(texts[0].0.as_str()));
        assert_eq!(texts[0].4, format!("{}\u{1f}{}", texts[1].0, texts[2].0));
        let documents: Vec<(String, Option<String>, String, i64, i64)> = connection
            .prepare(
                "SELECT document_id, digest, content_hash, file_size, file_inode FROM documents",
            )
            .unwrap()
            .query_map([], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            documents,
            [("d.txt".to_owned(), None, "hash".to_owned(), 6, 3)]
        );
        drop(connection);
        std::fs::remove_file(&path).unwrap();
    }

    fn chunk_texts(path: &Path) -> Vec<String> {
        let connection = Connection::open(path).unwrap();
        let mut statement = connection
            .prepare("SELECT text FROM chunks ORDER BY rowid")
            .unwrap();
        let texts = statement
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        texts
    }

    #[test]
    fn a_document_written_again_keeps_its_last_rows() {
        let path = temp_store("twice");
        let mut writer = BulkWriter::open(&path, "", STATEMENTS).unwrap();
        let texts = ["first text", "second", "third one"];
        let tables: Vec<SpanTable> = texts
            .iter()
            .map(|text| {
                let end = i64::try_from(text.len()).unwrap();
                SpanTable {
                    records: vec![SpanRecord([0, 0, -1, 0, end, 0, end])],
                }
            })
            .collect();
        let documents: Vec<Document<'_>> = texts
            .iter()
            .map(|text| Document {
                text,
                source: "same",
                document_id: "same",
                fingerprint: "fp",
                pages: None,
            })
            .collect();
        let rows: Vec<StoreColumns> = documents
            .iter()
            .zip(&tables)
            .map(|(document, table)| StoreColumns::new(document, table, None))
            .collect();
        let stored = |position: usize| StoredDocument {
            document: documents[position],
            table: &tables[position],
            rows: &rows[position],
            content_hash: texts[position],
            file_state: None,
        };
        // Again in a later batch, and twice in one batch.
        writer.write([stored(0)]).unwrap();
        writer.write([stored(1)]).unwrap();
        assert_eq!(chunk_texts(&path), ["second"]);
        writer.write([stored(0), stored(2)]).unwrap();
        writer.finish("").unwrap();
        assert_eq!(chunk_texts(&path), ["third one"]);
        let connection = Connection::open(&path).unwrap();
        let hash: String = connection
            .query_row("SELECT content_hash FROM documents", [], |row| row.get(0))
            .unwrap();
        assert_eq!(hash, "third one");
        drop(connection);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn sqlite_errors_are_store_errors() {
        let path = temp_store("full");
        // A store that may not grow: SQLite's own "database or disk is full".
        let mut writer = BulkWriter::open(&path, "PRAGMA max_page_count = 3", STATEMENTS).unwrap();
        let text = "word ".repeat(20_000);
        let table = SpanTable {
            records: vec![SpanRecord([0, 0, -1, 0, 100_000, 0, 100_000])],
        };
        let document = Document {
            text: &text,
            source: "big",
            document_id: "big",
            fingerprint: "fp",
            pages: None,
        };
        let rows = StoreColumns::new(&document, &table, None);
        let error = writer
            .write([StoredDocument {
                document,
                table: &table,
                rows: &rows,
                content_hash: "h",
                file_state: None,
            }])
            .unwrap_err();
        assert!(matches!(error, ChunkError::Store(_)));
        assert!(error.to_string().contains("full"), "{error}");
        let nowhere = Statements {
            insert_chunk: "INSERT INTO nowhere VALUES (1)",
            ..STATEMENTS
        };
        assert!(BulkWriter::open(&path, "", nowhere).is_err());
        let uneven = Statements {
            insert_chunks: "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), \
                (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
            ..STATEMENTS
        };
        let error = BulkWriter::open(&path, "", uneven).unwrap_err();
        assert!(error.to_string().contains("13 a row"), "{error}");
        std::fs::remove_file(&path).unwrap();
    }
}
