"""What a store records of the files it was filled from, for ingestion to keep it in step
with a folder: each document's content hash and file state (a stat cache, as git's index
keeps), the files skipped (binary, not text) with theirs, the run's settings, and a snapshot
of all the states that a re-run reads in one fetch. Its writes note what they change in the
change feed (``changes.py``). ``SqliteRegistry`` inherits these
methods; ``spanchunk.ingest`` is their caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, cast

from spanchunk import _core
from spanchunk.stores.changes import ChangeLog, stored_ids, stored_rows
from spanchunk.stores.protocol import check_fingerprint, fingerprint_conflict
from spanchunk.stores.schema import (
    READ_FILE_STATES,
    REFRESH_FILE_STATE,
    UPSERT_ROW,
    WRITE_FILE_STATES,
)
from spanchunk.stores.sqlite_file import SqliteFile

if TYPE_CHECKING:
    import sqlite3

__all__ = ["DocumentWrite", "FileRecords", "FileState", "SkipRow"]

FileState = tuple[int, int, int, int]
"""What a store records of a file when it is read: size, mtime_ns, ctime_ns, inode."""
SkipRow = tuple[str, str, str, int, int, int, int]
"""A skipped file as a store records it: resolved path, kind, message, and its state."""
DocumentWrite = tuple[str, list[tuple[Any, ...]], "str | None", bool, "FileState | None"]
"""One document of :meth:`FileRecords.replace_documents`: id, rows (``codec.rows_of``'s),
content hash, whether the store holds it now, its file's state."""


class FileRecords(SqliteFile):
    """The file records of a store (see the module's docstring)."""

    def record_fingerprint(self, connection: sqlite3.Connection, offered: str | None) -> None:
        """Inside a write transaction: record ``offered`` as the store's fingerprint, or
        refuse one that differs from the recorded one.

        Raises:
            ValueError: another fingerprint is recorded.
        """
        if offered is None:
            return
        row = connection.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None:
            connection.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (offered,))
        elif row[0] != offered:
            raise fingerprint_conflict(type(self).__name__, row[0], offered)

    def meta(self) -> dict[str, str]:
        """The store's ``meta`` table: its fingerprint and what ingestion recorded."""
        with self._read() as connection:
            return dict(connection.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, items: Mapping[str, str], *, replace: bool = False) -> None:
        """Record ``items`` in the ``meta`` table (``replace``: over the values there; else
        only the keys it lacks). Writes nothing when there is nothing new."""
        if not replace and not set(items) - set(self.meta()):
            return
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self._write() as connection:
            connection.executemany(f"{verb} INTO meta VALUES (?, ?)", list(items.items()))

    def has_chunks(self) -> bool:
        """Whether any chunk is stored."""
        with self._read() as connection:
            return connection.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

    def file_states(
        self,
    ) -> list[tuple[str, str | None, int | None, int | None, int | None, int | None]]:
        """(id, content hash, file size, mtime_ns, ctime_ns, inode) of every document, in one
        query: what ingestion compares a file's state with before reading it."""
        with self._read() as connection:
            return cast(
                "list[tuple[str, str | None, int | None, int | None, int | None, int | None]]",
                connection.execute(
                    "SELECT document_id, content_hash, file_size, file_mtime_ns, "
                    "file_ctime_ns, file_inode FROM documents"
                ).fetchall(),
            )

    def skipped_rows(self) -> list[SkipRow]:
        """The skipped files the store recorded."""
        with self._read() as connection:
            return cast(
                "list[SkipRow]",
                connection.execute(
                    "SELECT path, kind, message, file_size, file_mtime_ns, file_ctime_ns, "
                    "file_inode FROM skipped_files"
                ).fetchall(),
            )

    def recorded_files(self, quiet: Set[str]) -> _core.RecordedFiles:
        """What the store recorded of its files, for the walk to settle them by their state
        (``_core.RecordedFiles``): from the snapshot of the states in one fetch when it has
        one that reads, else from the rows of its two tables. ``quiet``: the kinds of skip a
        re-run counts without saying."""
        with self._read() as connection:
            snapshot = connection.execute(READ_FILE_STATES).fetchone()
        if snapshot is not None:
            try:
                return _core.RecordedFiles.from_snapshot(snapshot[0], snapshot[1], set(quiet))
            except ValueError:  # not this format (another program wrote it): the rows say it
                pass
        return _core.RecordedFiles(self.document_states(), self.skipped_rows(), set(quiet))

    def document_states(
        self,
    ) -> list[tuple[str, int, int | None, int | None, int | None, int | None]]:
        """(id, whether a content hash is recorded, file size, mtime_ns, ctime_ns, inode) of
        every document, in one query: what the walk settles a listed file by (the hashes
        themselves are read only when a file is read: 64 characters a document)."""
        with self._read() as connection:
            return cast(
                "list[tuple[str, int, int | None, int | None, int | None, int | None]]",
                connection.execute(
                    "SELECT document_id, content_hash IS NOT NULL, file_size, file_mtime_ns, "
                    "file_ctime_ns, file_inode FROM documents"
                ).fetchall(),
            )

    def write_file_states(self) -> None:
        """Make the snapshot of the file states again when a change deleted it (or the
        store has none), so the next run reads it in one fetch; a store whose snapshot is
        current is not written.

        Only a cache: a store that cannot be written (read-only, a full disk, another
        writer holding it) stays as it was, and the next run reads the rows."""
        import sqlite3  # noqa: PLC0415

        with self._read() as connection:
            if connection.execute("SELECT 1 FROM file_states").fetchone() is not None:
                return
        try:
            with self._write() as connection:
                connection.execute(WRITE_FILE_STATES)
        except (sqlite3.Error, OSError, TimeoutError):
            pass

    def record_skips(
        self,
        skipped: Iterable[SkipRow],
        *,
        known: Sequence[SkipRow] = (),
        unsettled: Iterable[str] = (),
        replaces: Callable[[str], bool] | None = None,
    ) -> None:
        """Record the skipped files a run read and skipped (``skipped``), and drop the
        records of the files it replaces (among ``unsettled``, those of the records,
        ``known`` when the run started, that its walk did not settle as skipped again
        unread; ``replaces``: the paths the run listed, or covers and did not find). A run
        that found what the store recorded writes nothing (a re-run over an unchanged tree
        stays a read-only run); only records not found again are asked about."""
        current = {record[0]: tuple(record) for record in skipped}
        stale = [
            (path,)
            for path in unsettled
            if path not in current and replaces is not None and replaces(path)
        ]
        recorded = {row[0]: tuple(row) for row in known} if current else {}
        changed = [record for path, record in current.items() if recorded.get(path) != record]
        if not stale and not changed:
            return
        with self._write() as connection:
            connection.executemany("DELETE FROM skipped_files WHERE path = ?", stale)
            connection.executemany(
                "INSERT OR REPLACE INTO skipped_files VALUES (?, ?, ?, ?, ?, ?, ?)", changed
            )

    def replace_documents(
        self,
        documents: Iterable[DocumentWrite],
        deleted: Iterable[str] = (),
        *,
        fingerprint: str | None = None,
        refreshed: Iterable[tuple[int, int, int, int, str]] = (),
    ) -> None:
        """Many documents replaced and others removed in one transaction (ingestion's
        writes). Each document comes as a :data:`DocumentWrite`; its chunk digest is left
        unknown, so a later ``upsert`` rewrites. ``refreshed``: (size, mtime_ns, ctime_ns,
        inode, id) of unchanged documents whose files' state is recorded anew."""
        offered = check_fingerprint(fingerprint)
        log = ChangeLog()
        with self._write() as connection:
            self.record_fingerprint(connection, offered)
            for document_id, rows, content_hash, stored, file_state in documents:
                replace_rows(
                    connection,
                    document_id,
                    rows,
                    None,
                    content_hash,
                    stored=stored,
                    file_state=file_state,
                    log=log,
                )
            connection.executemany(REFRESH_FILE_STATE, refreshed)
            for document_id in deleted:
                log.dropped(stored_ids(connection, document_id))
                connection.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
                connection.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))
            log.record(connection)


def replace_rows(
    connection: sqlite3.Connection,
    document_id: str,
    rows: list[tuple[Any, ...]],
    chunk_digest: str | None,
    content_hash: str | None,
    *,
    stored: bool = True,
    file_state: FileState | None = None,
    log: ChangeLog,
) -> None:
    """Inside a write transaction: one document's rows replace its stored ones (none: the
    document goes), the ids added and removed noted in ``log``. ``stored=False``: the
    caller knows it has none. ``file_state``: the (size, mtime_ns, ctime_ns, inode) of the
    file read, for the next run (None: unknown, the next run reads the file)."""
    log.replaced(stored_rows(connection, document_id) if stored else (), rows)
    if stored:
        connection.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
    if not rows and content_hash is None:
        connection.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))
        return
    # With a content hash, a source with no chunks (an empty file) stays known.
    connection.executemany(UPSERT_ROW, rows)
    connection.execute(
        "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (document_id) DO "
        "UPDATE SET digest = excluded.digest, content_hash = excluded.content_hash, "
        "file_size = excluded.file_size, file_mtime_ns = excluded.file_mtime_ns, "
        "file_ctime_ns = excluded.file_ctime_ns, file_inode = excluded.file_inode",
        (document_id, chunk_digest, content_hash, *(file_state or (None,) * 4)),
    )
