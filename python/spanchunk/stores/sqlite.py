"""``SqliteRegistry``: chunks kept in an SQLite file, the store's chunk operations (its file,
connection and transactions are ``sqlite_file.py``'s).

Speed: ``benches/NOTES.md``, under ``python/spanchunk/stores/sqlite.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, overload

from spanchunk.chunk import Chunk
from spanchunk.stores.changes import ChangeLog, ChangeRecords, reset_changes, rows_by_id, stored_ids
from spanchunk.stores.codec import chunks_of, rows_of
from spanchunk.stores.parents import Missing, expand_hits, parent_from_content
from spanchunk.stores.protocol import (
    check_fingerprint,
    checked_chunks,
    digest,
    document_chunks,
)
from spanchunk.stores.records import FileRecords, replace_rows
from spanchunk.stores.schema import SELECT, UPSERT_ROW
from spanchunk.stores.sqlite_file import StoreFormatError, file_system_errno

__all__ = ["SqliteRegistry", "StoreFormatError", "file_system_errno"]


#: Bound parameters per ``IN (...)`` query: well below SQLite's limit (32766 since 3.32).
_BATCH = 500


class SqliteRegistry(FileRecords, ChangeRecords):
    """Chunks kept in one SQLite file (WAL mode), so other processes, or this one after a
    restart, can swap hits for their parents.

    It has ``ParentRegistry``'s interface (``add``, ``get``, ``[]``, ``in``, ``len``,
    iteration in insertion order, ``parent_of``, ``expand``, ``clear``, ``delete_document``)
    and the rest of ``ParentStore``: ``upsert`` (replace one document's chunks at once),
    ``get_many``, ``window`` (a run of adjacent chunks, for ``retrieval.neighbours``) and the
    recorded chunker ``fingerprint``; and ``content_hashes`` (what ``upsert`` recorded of each
    document's source, so an ingestion job can skip unchanged sources without chunking
    them). Chunks read back are equal to the ones stored, every field: ids, texts, spans,
    level, index, parent and child ids, and metadata (kept as JSON; tuples such as Markdown
    heading paths come back as tuples).

    By default a chunker sends it the chunks above the leaves (the parents); open it with
    ``children=True`` and the chunkers send the leaves too, so ``retrieval.neighbours`` can
    grow a leaf hit from the store alone.

    Opening a store to query it: ``SqliteRegistry.open(path)`` opens an existing store only,
    and raises ``FileNotFoundError`` naming the path (and a file of a close name in its
    folder) when there is none; ``SqliteRegistry(path)`` creates an empty store at a path
    that holds none, which is what chunking into a new store wants but hides a mistyped
    path at query time (every ``expand`` would then find no parents).

    Concurrency (what is safe):
        - Any number of reader processes and threads at once, while one writer writes: in
          WAL mode readers never wait for the writer, and every read method (``get``,
          ``get_many``, ``window``, iteration, ``expand``, ...) sees one committed state: a
          document being upserted shows its old chunks or its new ones, never a mix. A
          helper that reads several times (``retrieval.auto_merge`` once per round,
          ``retrieval.neighbours`` once per step) can see a write that commits between two
          of its reads.
        - One writer at a time. Every write (``add``, ``upsert``, ``delete_document``,
          ``clear``) is one transaction that takes the write lock when it starts (``BEGIN
          IMMEDIATE``); a second writer, in another process or thread, waits for it up to
          ``timeout`` seconds (SQLite's busy timeout), then gets ``TimeoutError``. Nothing
          of either is half-written: a transaction commits whole or not at all, even when
          its process is killed (SIGKILL) or crashes mid-write.
        - One object may be shared by the threads of a process (calls are serialised by a
          lock). After ``fork`` the child opens its own connection on first use; a pickled
          store reopens its file by path in the process that unpickles it.
        - Durability: ``synchronous=NORMAL``, the usual WAL setting: a committed write
          survives the process being killed; after a power cut or an OS crash the last
          commits may be rolled back (never half applied). Pass ``durable=True`` for
          ``synchronous=FULL`` (each commit waits for the disk).
        - The file must be on a local disk: SQLite's WAL mode needs shared memory, so no
          network file system (NFS, SMB).

    Args:
        path: The store's file; created when missing (its folder must exist), unless
            ``create=False``.
        children: Ask the chunkers to send the leaves too (``keeps_children``).
        timeout: Seconds a write waits for another writer's lock before ``TimeoutError``.
        create: Create the file when it does not exist (False: ``FileNotFoundError``).
        durable: Wait for the disk on every commit (``synchronous=FULL``).

    Raises:
        FileNotFoundError: The file is missing and ``create=False``, or its folder is missing.
        PermissionError: The file cannot be read or written.
        StoreFormatError: (a ``ValueError``) the file is not a spanchunk store, or was
            written by a later spanchunk (a newer schema).

    Example:
        >>> import tempfile, os
        >>> from spanchunk import ParentChildChunker, SqliteRegistry
        >>> path = os.path.join(tempfile.mkdtemp(), "parents.sqlite")
        >>> with SqliteRegistry(path) as store:
        ...     chunker = ParentChildChunker(parent_size=200, child_size=50, registry=store)
        ...     children = chunker.chunk("One sentence here. " * 40)
        >>> with SqliteRegistry.open(path) as store:   # later, in any process
        ...     store.expand(children[:2])[0].id == children[0].parent_id
        True
    """

    # ---------------------------------------------------------------- ParentStore

    @property
    def keeps_children(self) -> bool:
        """Whether chunkers should send the leaves too (``children=True``)."""
        return self._children

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the chunker that filled the store (None: not recorded yet)."""
        with self._lock:
            row = (
                self._conn().execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            )
        return None if row is None else row[0]

    def add(self, chunks: Chunk | Iterable[Chunk], *, fingerprint: str | None = None) -> None:
        """Store one chunk or every chunk of an iterable, in one transaction (an existing id
        is replaced in place).

        Args:
            chunks: A ``Chunk`` or an iterable of them.
            fingerprint: The fingerprint of the chunker that made them
                (``chunker.fingerprint()``): recorded by the first call that passes one;
                a later call with another is refused and stores nothing.

        Raises:
            TypeError: An item is not a ``Chunk``, or its metadata cannot be kept as JSON.
            ValueError: ``fingerprint`` differs from the one recorded.
            TimeoutError: Another writer held the store for more than ``timeout`` seconds.
        """
        items = checked_chunks(chunks, "SqliteRegistry.add")
        offered = check_fingerprint(fingerprint)
        if not items and offered is None:
            return
        rows = rows_of(items)  # encoding errors come before any write
        documents = [(document_id,) for document_id in {row[2]: None for row in rows}]
        log = ChangeLog()
        with self._write() as connection:
            self.record_fingerprint(connection, offered)
            log.replaced(rows_by_id(connection, [row[0] for row in rows]), rows)
            connection.executemany(UPSERT_ROW, rows)
            log.record(connection)
            # Chunks added by id make the document's recorded set unknown: the next upsert of
            # it rewrites (an upsert skips only a set it wrote itself).
            connection.executemany(
                "INSERT INTO documents (document_id) VALUES (?) "
                "ON CONFLICT (document_id) DO UPDATE SET digest = NULL, content_hash = NULL, "
                "file_size = NULL, file_mtime_ns = NULL, file_ctime_ns = NULL, file_inode = NULL",
                documents,
            )

    def upsert(
        self,
        document_id: str,
        chunks: Iterable[Chunk],
        *,
        fingerprint: str | None = None,
        content_hash: str | None = None,
    ) -> bool:
        """Replace every chunk of one document with ``chunks``, atomically.

        A reader sees the document's old chunks or its new ones, never a mix. When the set
        is the one the last ``upsert`` of this document stored (same ids, spans and texts:
        re-chunking an unchanged document) and the ``content_hash`` is the one recorded,
        nothing is written.

        Args:
            document_id: The ``Document.id``; every chunk must belong to it.
            chunks: The document's chunks, every level kept (e.g. ``chunk_tree``'s, or its
                parents only); empty removes the document (with a ``content_hash``, its
                chunks: the document stays known, with no chunks).
            fingerprint: As for ``add``.
            content_hash: A hash of the document's source (its file's bytes, say), kept with
                it and given back by ``content_hashes()``: the next ingestion can tell an
                unchanged source without chunking it (the command line does).

        Returns:
            Whether anything was written.

        Raises:
            TypeError: An item is not a ``Chunk``.
            ValueError: A chunk belongs to another document, or ``fingerprint`` differs
                from the one recorded.
        """
        items = document_chunks(document_id, chunks, "SqliteRegistry.upsert")
        offered = check_fingerprint(fingerprint)
        if content_hash is not None and not isinstance(content_hash, str):
            raise TypeError(
                f"content_hash must be a str or None, not {type(content_hash).__name__}"
            )
        wanted = digest(items)
        with self._lock:
            connection = self._conn()
            row = connection.execute(
                "SELECT digest, content_hash FROM documents WHERE document_id = ?",
                (document_id,),
            ).fetchone()
            recorded = self.fingerprint
        if (
            row is not None
            and row[0] == wanted
            and (content_hash is None or row[1] == content_hash)
            and (offered is None or offered == recorded)
        ):
            return False
        rows = rows_of(items)
        log = ChangeLog()
        with self._write() as connection:
            self.record_fingerprint(connection, offered)
            replace_rows(connection, document_id, rows, wanted, content_hash, log=log)
            log.record(connection)
        return True

    def content_hashes(self) -> dict[str, str | None]:
        """The ``content_hash`` recorded with each document (None where its last write gave
        none), by document id, in one query."""
        with self._lock:
            rows = (
                self._conn().execute("SELECT document_id, content_hash FROM documents").fetchall()
            )
        return dict(rows)

    @overload
    def get(self, chunk_id: str) -> Chunk | None: ...
    @overload
    def get(self, chunk_id: str, default: Chunk) -> Chunk: ...
    @overload
    def get(self, chunk_id: str, default: Any) -> Any: ...

    def get(self, chunk_id: str, default: Any = None) -> Any:
        """The chunk with this id, or ``default`` when it is not stored."""
        if not isinstance(chunk_id, str):
            return default
        with self._lock:
            rows = self._conn().execute(f"{SELECT} WHERE id = ?", (chunk_id,)).fetchall()
        return chunks_of(rows, self._metadata)[0] if rows else default

    def get_many(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The stored chunks among ``chunk_ids``, by id, in one query per 500 ids."""
        wanted = [chunk_id for chunk_id in dict.fromkeys(chunk_ids) if isinstance(chunk_id, str)]
        if not wanted:
            return {}
        rows: list[tuple[Any, ...]] = []
        if len(wanted) <= _BATCH:  # one query: one snapshot without a transaction around it
            marks = ",".join("?" * len(wanted))
            with self._lock:
                rows = self._conn().execute(f"{SELECT} WHERE id IN ({marks})", wanted).fetchall()
            return {chunk.id: chunk for chunk in chunks_of(rows, self._metadata)}
        with self._read() as connection:
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                rows += connection.execute(f"{SELECT} WHERE id IN ({marks})", batch).fetchall()
        return {chunk.id: chunk for chunk in chunks_of(rows, self._metadata)}

    def window(
        self, document_id: str, level: int, first_index: int, last_index: int
    ) -> list[Chunk]:
        """The stored chunks of one document and level with ``first_index <= index <=
        last_index``, in index order (one query)."""
        with self._lock:
            rows = (
                self._conn()
                .execute(
                    f"{SELECT} WHERE document_id = ? AND level = ? AND idx BETWEEN ? AND ? "
                    "ORDER BY idx, rowid",
                    (document_id, level, first_index, last_index),
                )
                .fetchall()
            )
        return chunks_of(rows, self._metadata)

    def __getitem__(self, chunk_id: str) -> Chunk:
        chunk = self.get(chunk_id)
        if chunk is None:
            raise KeyError(f"no chunk with id {chunk_id!r} in the store {self._path}")
        return chunk

    def __contains__(self, item: object) -> bool:
        """Whether an id (a ``str``) or a ``Chunk`` (by its id) is stored."""
        chunk_id = item.id if type(item) is Chunk else item
        if not isinstance(chunk_id, str):
            return False
        with self._lock:
            row = self._conn().execute("SELECT 1 FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
        return row is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn().execute("SELECT count(*) FROM chunks").fetchone()[0])

    def __iter__(self) -> Iterator[Chunk]:
        """Every stored chunk in insertion order (a snapshot: writing while iterating is safe)."""
        with self._lock:
            rows = self._conn().execute(f"{SELECT} ORDER BY rowid").fetchall()
        return iter(chunks_of(rows, self._metadata))

    def document_ids(self) -> list[str]:
        """The ids of the documents with chunks stored, in the order first stored."""
        with self._lock:
            rows = (
                self._conn()
                .execute("SELECT document_id FROM chunks GROUP BY document_id ORDER BY min(rowid)")
                .fetchall()
            )
        return [row[0] for row in rows]

    def document_chunk_ids(self, document_id: str) -> set[str]:
        """The ids of one document's stored chunks, every level."""
        with self._lock:
            rows = (
                self._conn()
                .execute("SELECT id FROM chunks WHERE document_id = ?", (document_id,))
                .fetchall()
            )
        return {row[0] for row in rows}

    def parent_of(self, chunk: Chunk) -> Chunk | None:
        """The parent of ``chunk``: the stored one, else the one the chunk carries in
        ``metadata["parent_content"]``; None at the top level or when unknown."""
        parent_id = chunk.parent_id
        if parent_id is None:
            return None
        found = self.get(parent_id)
        return parent_from_content(chunk) if found is None else found

    def expand(
        self, hits: Iterable[Any], max_parents: int | None = None, *, missing: Missing = "warn"
    ) -> list[Any]:
        """Swap each hit for its parent: de-duplicated by id, first-seen order kept, one query.

        ``spanchunk.retrieval.expand(hits, store)``, the same function; to fill a context
        budget, ``spanchunk.retrieval.assemble`` is the way.

        A hit at the top level is kept as itself. A parent that is not stored comes from the
        hit's ``metadata["parent_content"]`` when it carries one; failing that the hit is
        "missing" (cut with other settings or into another store, or its document was
        deleted) and ``missing`` says what happens: ``"warn"`` keeps it as itself with one
        ``MissingParentWarning`` per call, ``"raise"`` raises ``MissingParentError``,
        ``"keep"`` keeps it silently. ``(chunk, score)`` pairs give ``(parent, score)``
        pairs, with the score of the first hit that reached the parent.

        Raises:
            TypeError: A hit is not a ``Chunk`` (nor a pair with one).
            ValueError: ``max_parents`` is less than 1, or ``missing`` is unknown.
            MissingParentError: (a ``KeyError``) ``missing="raise"`` and a hit's parent is
                not stored.
        """
        return expand_hits(hits, self.get_many, max_parents, "SqliteRegistry.expand", missing)

    def delete_document(self, document_id: str) -> int:
        """Remove every chunk, every level, of one document; returns how many went."""
        log = ChangeLog()
        with self._write() as connection:
            log.dropped(stored_ids(connection, document_id))
            removed = connection.execute(
                "DELETE FROM chunks WHERE document_id = ?", (document_id,)
            ).rowcount
            connection.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))
            log.record(connection)
        return int(removed)

    def clear(self) -> None:
        """Remove every chunk and forget the recorded fingerprint."""
        with self._write() as connection:
            removed = connection.execute("DELETE FROM chunks").rowcount
            if removed:
                reset_changes(connection, removed)
            connection.execute("DELETE FROM documents")
            connection.execute("DELETE FROM meta WHERE key = 'fingerprint'")
