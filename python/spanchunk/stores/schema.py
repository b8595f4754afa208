"""The SQLite store's file format: its schema, and the statements that read and write it.

``SqliteRegistry`` (``spanchunk.stores.sqlite``) opens and writes files of this format; the command
line's bulk load of a new store (``_core.StoreWriter``) runs the ``BULK_*`` statements.
"""

from __future__ import annotations

#: The store's format. A file of any other schema is refused, naming both (the format has
#: had one version: no upgrade code).
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of a spanchunk store: "spch" as a big-endian int.
APPLICATION_ID = int.from_bytes(b"spch", "big")

#: The index ``window``, ``delete_document`` and ``upsert`` look documents up by (a bulk
#: load into a new file keeps it: see ``BULK_LOAD_SETUP``).
POSITION_INDEX = "CREATE INDEX IF NOT EXISTS chunks_position ON chunks (document_id, level, idx)"
#: Chunk ids are unique: this index, not a ``UNIQUE`` column constraint (whose index SQLite
#: makes itself and cannot drop): the same index and the same conflicts, but a bulk load
#: can build it once at the end, from the sorted ids, instead of inserting ids in random
#: order (a third of a new store's time).
ID_INDEX = "CREATE UNIQUE INDEX IF NOT EXISTS chunks_id ON chunks (id)"
#: Files the command line skipped, by resolved path: why (the summary's kind and the
#: message) and their state when they were looked at, as ``documents`` records it.
SKIPPED_FILES = """CREATE TABLE IF NOT EXISTS skipped_files (
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    file_size INTEGER NOT NULL,
    file_mtime_ns INTEGER NOT NULL,
    file_ctime_ns INTEGER NOT NULL,
    file_inode INTEGER NOT NULL
)"""
#: The snapshot of the file states ``documents`` and ``skipped_files`` record: one row, the
#: two tables' states each as one value (the format ``rust/store/snapshot.rs`` reads), which
#: a re-run into the store reads in one fetch instead of a row a file (the rows of a tree of
#: 80,000 files through ``sqlite3`` are the larger half of its re-run). It is a cache:
#: the triggers below delete it on any change to the states (whoever writes: the command
#: line, ``SqliteRegistry``, another program), and a run that finds none reads the rows and
#: writes it again (``WRITE_FILE_STATES``), so a stale snapshot is never read.
FILE_STATES = """CREATE TABLE IF NOT EXISTS file_states (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    documents BLOB NOT NULL,
    skipped BLOB NOT NULL
)"""
_STATE_COLUMNS = "file_size, file_mtime_ns, file_ctime_ns, file_inode"
#: The triggers that keep the snapshot true: it is deleted by any insert, delete or update
#: of a state (the bulk load of a new store drops them, and makes them again at its end).
FILE_STATE_TRIGGER_STATEMENTS = tuple(
    f"CREATE TRIGGER IF NOT EXISTS file_states_{table}_{event} AFTER "
    f"{event.upper()}{columns} ON {table} BEGIN DELETE FROM file_states; END"
    for table, update_columns in (
        ("documents", f"document_id, content_hash, {_STATE_COLUMNS}"),
        ("skipped_files", f"path, kind, message, {_STATE_COLUMNS}"),
    )
    for event, columns in (("insert", ""), ("update", f" OF {update_columns}"), ("delete", ""))
)
FILE_STATE_TRIGGERS = "".join(f"{statement};" for statement in FILE_STATE_TRIGGER_STATEMENTS)
DROP_FILE_STATE_TRIGGERS = "".join(
    f"DROP TRIGGER IF EXISTS file_states_{table}_{event};"
    for table in ("documents", "skipped_files")
    for event in ("insert", "update", "delete")
)


#: Makes the snapshot from the tables, in SQLite alone (no row becomes a Python object): one
#: ``printf`` a row (a ``||`` a field was 1.5-2x slower over a tree's 80,000 rows), texts as
#: ``LENGTH:BYTES``, integers in decimal (empty for NULL), then ``;``. A document's row: its
#: id, whether its content hash is recorded (``0`` or ``1``), its state; a skipped file's:
#: its path, kind and message, its state. (A text holding a NUL byte, which no path does,
#: comes out shorter than its length: the snapshot then does not read, and is not used.)
WRITE_FILE_STATES = """INSERT OR REPLACE INTO file_states (id, documents, skipped) SELECT 1,
(SELECT CAST(ifnull(group_concat(printf('%d:%s%d,%s,%s,%s,%s;',
    length(CAST(document_id AS BLOB)), document_id, content_hash IS NOT NULL,
    file_size, file_mtime_ns, file_ctime_ns, file_inode), ''), '') AS BLOB) FROM documents),
(SELECT CAST(ifnull(group_concat(printf('%d:%s%d:%s%d:%s,%s,%s,%s,%s;',
    length(CAST(path AS BLOB)), path, length(CAST(kind AS BLOB)), kind,
    length(CAST(message AS BLOB)), message,
    file_size, file_mtime_ns, file_ctime_ns, file_inode), ''), '') AS BLOB) FROM skipped_files)"""
READ_FILE_STATES = "SELECT documents, skipped FROM file_states"
#: The change feed: one row for every write that changed the chunks (numbered in order, a
#: number never used twice), with how many chunk ids it added and removed.
CHANGES = """CREATE TABLE IF NOT EXISTS changes (
    number INTEGER PRIMARY KEY AUTOINCREMENT,
    written_at REAL NOT NULL,
    added INTEGER NOT NULL,
    removed INTEGER NOT NULL
)"""
#: The chunk ids each change added or removed (a chunk whose text, document and level stayed,
#: whose offsets at most moved, is in none), with their level; deleted up to a compaction.
CHANGE_CHUNKS = """CREATE TABLE IF NOT EXISTS change_chunks (
    number INTEGER NOT NULL,
    id TEXT NOT NULL,
    level INTEGER NOT NULL,
    PRIMARY KEY (number, id)
) WITHOUT ROWID"""
#: Named readers of the feed and the change number each has applied.
CONSUMERS = """CREATE TABLE IF NOT EXISTS consumers (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL
)"""
COLUMNS = (
    "id, text, document_id, idx, level, start_char, end_char, start_byte, end_byte, "
    "parent_id, child_ids, metadata, metadata_tuples"
)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    document_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    level INTEGER NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    parent_id TEXT,
    child_ids TEXT NOT NULL,
    metadata TEXT NOT NULL,
    metadata_tuples TEXT NOT NULL
);
{ID_INDEX};
{POSITION_INDEX};
CREATE TABLE IF NOT EXISTS documents (
    document_id TEXT PRIMARY KEY,
    digest TEXT,
    content_hash TEXT,
    file_size INTEGER,
    file_mtime_ns INTEGER,
    file_ctime_ns INTEGER,
    file_inode INTEGER
);
{SKIPPED_FILES};
{FILE_STATES};
{CHANGES};
{CHANGE_CHUNKS};
{CONSUMERS};
{FILE_STATE_TRIGGERS}
PRAGMA application_id = {APPLICATION_ID};
PRAGMA user_version = {SCHEMA_VERSION};
"""
UPSERT_ROW = (
    f"INSERT INTO chunks ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET text = excluded.text, document_id = excluded.document_id, "
    "idx = excluded.idx, level = excluded.level, start_char = excluded.start_char, "
    "end_char = excluded.end_char, start_byte = excluded.start_byte, "
    "end_byte = excluded.end_byte, parent_id = excluded.parent_id, "
    "child_ids = excluded.child_ids, metadata = excluded.metadata, "
    "metadata_tuples = excluded.metadata_tuples"
)
#: A document's row as the command line writes it: id, content hash, and the state of its
#: file (None where it is not to be trusted next time); the digest is left unknown.
UPSERT_DOCUMENT = (
    "INSERT INTO documents (document_id, content_hash, file_size, file_mtime_ns, "
    "file_ctime_ns, file_inode) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (document_id) DO UPDATE "
    "SET digest = NULL, content_hash = excluded.content_hash, file_size = excluded.file_size, "
    "file_mtime_ns = excluded.file_mtime_ns, file_ctime_ns = excluded.file_ctime_ns, "
    "file_inode = excluded.file_inode"
)
REFRESH_FILE_STATE = (
    "UPDATE documents SET file_size = ?, file_mtime_ns = ?, file_ctime_ns = ?, file_inode = ? "
    "WHERE document_id = ?"
)
#: A new store filled in bulk (``_core.StoreWriter``, by the command line): a temporary file
#: until it is renamed into place, so no journal and no syncs (a failed run removes it). The
#: id index is dropped here and built once at the end, from the sorted ids: ids come in
#: random order, and inserting them into the index made the load three times slower. The
#: position index stays: documents come in the walk's (sorted) order, so its keys are
#: nearly appended, and keeping it moves its cost (about 0.12 s of the 99 MB folder of
#: ``benches/cli.py``, the same either way) from the end of the run, where nothing else
#: runs, into the load, while the workers cut (2 workers: 0.69 -> 0.65 s); it also serves
#: the delete of a document id that comes twice.
#: The snapshot's triggers are dropped too (each insert would delete an empty snapshot)
#: and made again at the end.
BULK_LOAD_SETUP = (
    "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; DROP INDEX chunks_id;"
    + DROP_FILE_STATE_TRIGGERS
)
#: The id index is sorted on up to ``SORT_THREADS`` helper threads (SQLite's ``PRAGMA
#: threads``; its default is none): the builds took 0.65-0.77 s instead of 0.86-0.92 on
#: the 2-core machine of ``benches/cli.py``, whose workers are idle by then. A larger cache
#: for the sorts was slower (0.9-1.1 s with 64 MiB).
SORT_THREADS = 2
BULK_LOAD_FINISH = (
    f"PRAGMA threads = {SORT_THREADS}; {ID_INDEX}; {FILE_STATE_TRIGGERS} PRAGMA journal_mode = WAL;"
)
#: Chunks inserted, not upserted (the core deletes a document's chunks first when its id
#: comes twice; ids of distinct documents differ).
_ROW_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
BULK_INSERT_CHUNK = f"INSERT INTO chunks ({COLUMNS}) VALUES {_ROW_VALUES}"
#: Rows are inserted ``BULK_ROWS`` to a statement: SQLite runs the statement's program
#: (opening the table's and the position index's cursors, ...) once per statement, not per
#: row (the 99 MB folder on 2 workers: 0.65 s with one row a statement, 0.59 s with 8, 0.61
#: with 32; ``rust/store/sqlite.rs``). The rows that do not fill a statement at the end of
#: a batch, or before a document id that comes twice is deleted, go in one by one.
BULK_ROWS = 8
BULK_INSERT_CHUNKS = f"INSERT INTO chunks ({COLUMNS}) VALUES " + ", ".join(
    [_ROW_VALUES] * BULK_ROWS
)
BULK_INSERT_DOCUMENT = UPSERT_DOCUMENT
BULK_DELETE_CHUNKS = "DELETE FROM chunks WHERE document_id = ?"
SELECT = f"SELECT {COLUMNS} FROM chunks"
PAGE_SIZE = 16384
