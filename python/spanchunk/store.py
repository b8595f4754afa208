"""Parent stores: the ``ParentStore`` protocol, and ``SqliteRegistry``, parents in an SQLite file.

Performance notes
-----------------
Measured with ``benches/store.py`` (figures in ``benches/results/store.md``) on the project's
2-core shared container: every parent of the shared corpus, ``ParentChildChunker(2000,
400)``, 2,637 parents, 4.95 MB of UTF-8. What was tried and what won:

- One transaction per call and one ``executemany`` over prepared tuples: sqlite3 then binds
  and steps in C. ``synchronous=NORMAL`` (the WAL default that survives a process crash)
  keeps ``fsync`` out of every commit.
- 16 KiB pages instead of the default 4 KiB: a 2000-char parent (2-8 KB of UTF-8) then fits
  in its page instead of spilling into overflow pages; ``add`` went from about 15 to over
  100 MB/s and reading back from about 30 to 80-120 MB/s (same busy machine). 64 KiB pages
  were slower again.
- Metadata: a document's chunks share one mapping, so it is encoded to JSON once per
  mapping object per call, and decoded once per distinct JSON text; decoded mappings are
  kept between reads (read-only, so chunks read back share one mapping, as the chunker's
  do), which took most of the per-chunk cost off ``expand``.
- ``child_ids`` joined by the unit separator (JSON only for a hand-made id that holds one):
  ``json.loads`` per row was a fifth of reading back, and a list cost ``Chunk`` more than a
  tuple.
- Reading back is now bound by turning UTF-8 into ``str`` (95% of the corpus's parents are
  not ASCII; storing Latin-1 / UTF-16 blobs instead decoded no faster) and by SQLite's own
  page walk; a memory-mapped file did not help. On the busy container the wall clock is
  about twice the CPU time, which ``benches/store.py`` reports alongside.
- Rows keep their ``rowid`` on update (``ON CONFLICT DO UPDATE``, not ``INSERT OR
  REPLACE``), so iteration keeps insertion order the way ``ParentRegistry`` (a dict) does.
- The cyclic garbage collector is not the store's business, but a full collection between
  two timed ``expand`` calls made the next one several times slower on the busy machine; the
  benchmark runs the collector once before each series.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, overload

from spanchunk._parents import Missing, expand_hits, parent_from_content
from spanchunk._store_common import (
    ID_SEPARATOR,
    ParentStore,
    check_fingerprint,
    checked_chunks,
    decode_child_ids,
    decode_metadata,
    digest,
    document_chunks,
    encode_child_ids,
    encode_metadata,
    fingerprint_conflict,
)
from spanchunk._store_schema import (
    APPLICATION_ID,
    DOCUMENT_COLUMNS,
    PAGE_SIZE,
    REFRESH_FILE_STATE,
    SCHEMA,
    SCHEMA_VERSION,
    SELECT,
    SKIPPED_FILES,
    UPSERT_ROW,
)
from spanchunk.chunk import Chunk

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

__all__ = ["ParentStore", "SqliteRegistry"]


#: Distinct metadata mappings kept decoded between reads.
_METADATA_CACHE = 4096
#: Bound parameters per ``IN (...)`` query: well below SQLite's limit (32766 since 3.32).
_BATCH = 500


_STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def _files_in(folder: str) -> list[str]:
    """The names of the plain files in ``folder``, sorted (none when it cannot be listed)."""
    try:
        with os.scandir(folder) as entries:
            return sorted(entry.name for entry in entries if entry.is_file())
    except OSError:
        return []


def _missing_message(path: str) -> str:
    """What ``SqliteRegistry.open`` says of a path with no file: the path, a file of a close
    name in the same folder when there is one, and the fix."""
    import difflib  # noqa: PLC0415  (only on this error)

    folder = os.path.dirname(path) or os.curdir
    if not os.path.isdir(folder):
        hint = f" (the folder {folder} does not exist either)"
    else:
        close = difflib.get_close_matches(os.path.basename(path), _files_in(folder), n=1)
        hint = f" (did you mean {os.path.join(os.path.dirname(path), close[0])}?)" if close else ""
    return (
        f"no spanchunk store at {path}{hint}: SqliteRegistry.open opens an existing store "
        "only; check the path, or make a new store with SqliteRegistry(path) and fill it by "
        "chunking into it (registry=store)"
    )


def _folder_message(path: str) -> str:
    """What ``SqliteRegistry.open`` says of a folder: a store file in it, when there is one."""
    stores = [name for name in _files_in(path) if name.endswith(_STORE_SUFFIXES)]
    example = os.path.join(path, stores[0] if stores else "parents.sqlite")
    found = f" (it holds {', '.join(stores)})" if stores else ""
    return (
        f"{path} is a folder, not a spanchunk store{found}: pass the path of the store's "
        f"file, e.g. SqliteRegistry.open({example!r})"
    )


#: SQLite's words for errors of the file system, and the errno each one is.
_SQLITE_OS_ERRORS = (
    ("database or disk is full", errno.ENOSPC),
    ("No space left on device", errno.ENOSPC),
    ("readonly database", errno.EROFS),
    ("Read-only file system", errno.EROFS),
    ("disk I/O error", errno.EIO),
)


def file_system_errno(message: str) -> int | None:
    """The errno of an SQLite error that is the file system's (a full disk, a read-only
    file system, an I/O error), from its message (Python's ``sqlite3`` or the core's
    writer); None for any other error."""
    return next((code for words, code in _SQLITE_OS_ERRORS if words in message), None)


class StoreFormatError(ValueError):
    """A file that ``SqliteRegistry`` cannot open as a store: not one, or a later schema."""


class SqliteRegistry:
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

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        children: bool = False,
        timeout: float = 30.0,
        create: bool = True,
        durable: bool = False,
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(
                f"SqliteRegistry takes a file path (str or pathlib.Path), not {type(path).__name__}"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(
                f"timeout must be a number of seconds >= 0, got {timeout!r}: e.g. timeout=30"
            )
        # A str, not a Path: pathlib is 8 ms of the command line's startup (``path`` makes one).
        self._path: str = os.fspath(path)
        self._children = bool(children)
        self._timeout = float(timeout)
        self._create = bool(create)
        self._durable = bool(durable)
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        self._metadata: dict[str, MappingProxyType[str, Any]] = {}
        self._pid = 0
        self._closed = False
        self._connect()

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        children: bool = False,
        timeout: float = 30.0,
        durable: bool = False,
    ) -> SqliteRegistry:
        """An existing store, to query (or add to); never creates one.

        The way to open a store at query time: a mistyped path is an error here, where
        ``SqliteRegistry(path)`` would create an empty store there and every ``expand``
        would find no parents.

        Args:
            path: The store's file, made earlier by ``SqliteRegistry(path)`` (or the
                command line's ``--store``).
            children: As for the constructor.
            timeout: As for the constructor.
            durable: As for the constructor.

        Returns:
            The open store.

        Raises:
            FileNotFoundError: No file at ``path``; the message names the path, and a file
                of a close name in its folder when there is one.
            IsADirectoryError: ``path`` is a folder (the message names a store in it, if any).
            PermissionError: The file cannot be read or written.
            StoreFormatError: (a ``ValueError``) the file is not a spanchunk store, or was
                written by a later spanchunk.

        Example:
            >>> import tempfile, os
            >>> from spanchunk import SqliteRegistry
            >>> folder = tempfile.mkdtemp()
            >>> SqliteRegistry(os.path.join(folder, "parents.sqlite")).close()
            >>> try:
            ...     SqliteRegistry.open(os.path.join(folder, "parent.sqlite"))
            ... except FileNotFoundError as error:
            ...     print("did you mean" in str(error))
            True
            >>> os.path.exists(os.path.join(folder, "parent.sqlite"))   # nothing was created
            False
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(
                f"SqliteRegistry.open takes a file path (str or pathlib.Path), not "
                f"{type(path).__name__}"
            )
        where = os.fspath(path)
        if os.path.isdir(where):
            raise IsADirectoryError(_folder_message(where))
        if not os.path.exists(where):
            raise FileNotFoundError(_missing_message(where))
        return cls(where, children=children, timeout=timeout, create=False, durable=durable)

    # ---------------------------------------------------------------- connection and schema

    def _connect(self) -> sqlite3.Connection:
        import sqlite3  # noqa: PLC0415  (imported by the first store opened: 4 ms of startup)

        path = self._path
        if os.path.isdir(path):
            raise IsADirectoryError(
                f"{path} is a folder, not a spanchunk store: pass the path of a file, e.g. "
                f"{os.path.join(path, 'parents.sqlite')}"
            )
        exists = os.path.exists(path)
        if not exists:
            if not self._create:
                raise FileNotFoundError(
                    f"no spanchunk store at {path}: check the path, or pass create=True to make "
                    "a new one"
                )
            folder = os.path.dirname(path) or os.curdir
            if not os.path.isdir(folder):
                raise FileNotFoundError(
                    f"cannot create a spanchunk store at {path}: the folder {folder} does "
                    "not exist; create it first"
                )
        elif not os.access(path, os.R_OK | os.W_OK):
            raise PermissionError(
                f"cannot read and write the spanchunk store {path}: give this user read and "
                "write permission on the file (and its folder, for the -wal and -shm files)"
            )
        try:
            connection = sqlite3.connect(
                path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.OperationalError as error:
            raise PermissionError(f"cannot open the spanchunk store {path}: {error}") from error
        try:
            self._check_format(connection, exists)
            synchronous = "FULL" if self._durable else "NORMAL"
            connection.execute(f"PRAGMA synchronous = {synchronous}")
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        self._pid = os.getpid()
        return connection

    def _check_format(self, connection: sqlite3.Connection, exists: bool) -> None:
        import sqlite3  # noqa: PLC0415  (imported by the first store opened: 4 ms of startup)

        path = self._path
        try:
            application_id = connection.execute("PRAGMA application_id").fetchone()[0]
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            tables = connection.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
            ).fetchone()[0]
        except sqlite3.DatabaseError as error:
            raise StoreFormatError(
                f"{path} is not a spanchunk store (SQLite says: {error}): pass the path of a "
                "store made by SqliteRegistry, or a new path to make one"
            ) from error
        if application_id == 0 and tables == 0:
            # A new (or empty) file: make it a store. The page size before WAL, WAL outside
            # the transaction. 16 KiB pages hold most parents (2000 chars, up to 8 KB of
            # UTF-8) without overflow pages: adding and reading back run 3-5x faster than
            # with the default 4 KiB (benches/store.py).
            connection.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.executescript(f"BEGIN IMMEDIATE;{SCHEMA}COMMIT;")
            return
        if application_id != APPLICATION_ID:
            raise StoreFormatError(
                f"{path} is an SQLite database but not a spanchunk store: pass the path of a "
                "store made by SqliteRegistry, or a new path to make one"
            )
        if version > SCHEMA_VERSION:
            raise StoreFormatError(
                f"{path} was written by a later spanchunk (store schema {version}; this one "
                f"reads schema {SCHEMA_VERSION} and older): upgrade spanchunk "
                "(pip install -U spanchunk) to open it"
            )
        if exists:
            mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
            if mode != "wal":
                connection.execute("PRAGMA journal_mode = WAL")
        if version < SCHEMA_VERSION:
            self._upgrade(connection)

    def _upgrade(self, connection: sqlite3.Connection) -> None:
        """An older schema to this one: the documents' columns it lacks (one transaction)."""
        import sqlite3  # noqa: PLC0415  (imported by the first store opened: 4 ms of startup)

        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise self._busy(error) from error
        try:
            # Checked inside the lock: another process may have upgraded the file meanwhile.
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                present = {row[1] for row in connection.execute("PRAGMA table_info(documents)")}
                for added_in, columns in DOCUMENT_COLUMNS.items():
                    for column in columns:
                        if version < added_in and column.split()[0] not in present:
                            connection.execute(f"ALTER TABLE documents ADD COLUMN {column}")
                connection.execute(SKIPPED_FILES)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def _conn(self) -> sqlite3.Connection:
        """The connection of this process (a forked child opens its own)."""
        if self._closed:
            raise ValueError(
                f"this SqliteRegistry ({self._path}) is closed: open it again with "
                f"SqliteRegistry({str(self._path)!r})"
            )
        connection = self._connection
        if connection is None or self._pid != os.getpid():
            # The parent's connection must not be used (nor closed) in a forked child.
            self._connection = None
            connection = self._connect()
        return connection

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction holding the write lock from its start."""
        import sqlite3  # noqa: PLC0415  (imported by the first store opened: 4 ms of startup)

        with self._lock:
            connection = self._conn()
            try:
                connection.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as error:
                raise self._busy(error) from error
            try:
                yield connection
            except sqlite3.DatabaseError as error:
                self._roll_back(connection)
                raise self._busy(error) from error
            except BaseException:
                self._roll_back(connection)
                raise
            try:
                connection.execute("COMMIT")
            except sqlite3.DatabaseError as error:  # a full disk, an I/O error
                self._roll_back(connection)
                raise self._busy(error) from error

    @staticmethod
    def _roll_back(connection: sqlite3.Connection) -> None:
        """Undo the open transaction, if SQLite has not already: after a full disk or an I/O
        error it may have rolled back itself, and a second ``ROLLBACK`` would raise "no
        transaction is active" in place of the error that matters."""
        import sqlite3  # noqa: PLC0415

        if connection.in_transaction:
            with suppress(sqlite3.Error):
                connection.execute("ROLLBACK")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """Several queries that see one committed state (a read transaction)."""
        with self._lock:
            connection = self._conn()
            connection.execute("BEGIN")
            try:
                yield connection
            finally:
                connection.execute("COMMIT")

    def _busy(self, error: sqlite3.Error) -> Exception:
        """The exception to raise for SQLite's ``error``: a lock held too long is a
        ``TimeoutError``; a full disk, a read-only file system or an I/O error the
        ``OSError`` the system would give, in its plain words."""
        message = str(error)
        code = file_system_errno(message)
        if code is not None:
            return OSError(code, f"{os.strerror(code)} (writing the spanchunk store {self._path})")
        if "locked" in message or "busy" in message:
            return TimeoutError(
                f"another writer held the spanchunk store {self._path} for more than "
                f"{self._timeout:g} s (one writer at a time): retry, or open the store with a "
                "longer timeout=..."
            )
        return error

    # ---------------------------------------------------------------- rows and chunks

    @staticmethod
    def _rows(chunks: list[Chunk]) -> list[tuple[Any, ...]]:
        encoded: dict[int, str] = {}
        rows = []
        for chunk in chunks:
            metadata = chunk.metadata
            key = id(metadata)
            metadata_json = encoded.get(key)
            if metadata_json is None:
                metadata_json = encoded[key] = encode_metadata(metadata)
            rows.append(
                (
                    chunk.id,
                    chunk.text,
                    chunk.document_id,
                    chunk.index,
                    chunk.level,
                    chunk.start_char,
                    chunk.end_char,
                    chunk.start_byte,
                    chunk.end_byte,
                    chunk.parent_id,
                    encode_child_ids(chunk.child_ids),
                    metadata_json,
                )
            )
        return rows

    def _chunks(self, rows: list[tuple[Any, ...]]) -> list[Chunk]:
        # Decoded metadata is kept across calls (it is read-only, so chunks of one document
        # share one mapping, as the chunker's do); bounded, as a store can hold many.
        decoded = self._metadata
        if len(decoded) > _METADATA_CACHE:
            decoded.clear()
        child_ids = decode_child_ids
        chunks: list[Chunk] = []
        separator = ID_SEPARATOR
        append = chunks.append
        # Unpacking each row once (one opcode) costs less than twelve subscripts.
        for (
            chunk_id,
            text,
            document_id,
            index,
            level,
            start_char,
            end_char,
            start_byte,
            end_byte,
            parent_id,
            child_text,
            metadata_json,
        ) in rows:
            metadata = decoded.get(metadata_json)
            if metadata is None:
                metadata = decoded[metadata_json] = decode_metadata(metadata_json)
            if not child_text:
                children: tuple[str, ...] = ()
            elif child_text[0] == "[":
                children = child_ids(child_text)
            else:
                children = tuple(child_text.split(separator))
            append(
                Chunk(
                    chunk_id,
                    text,
                    document_id,
                    index,
                    level,
                    start_char,
                    end_char,
                    start_byte,
                    end_byte,
                    parent_id,
                    children,
                    metadata,
                )
            )
        return chunks

    def _record_fingerprint(self, connection: sqlite3.Connection, offered: str | None) -> None:
        if offered is None:
            return
        row = connection.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None:
            connection.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (offered,))
        elif row[0] != offered:
            raise fingerprint_conflict("SqliteRegistry", row[0], offered)

    # ---------------------------------------------------------------- ParentStore

    @property
    def path(self) -> Path:
        """The store's file."""
        from pathlib import Path  # noqa: PLC0415

        return Path(self._path)

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
        rows = self._rows(items)  # encoding errors come before any write
        documents = [(document_id,) for document_id in {row[2]: None for row in rows}]
        with self._write() as connection:
            self._record_fingerprint(connection, offered)
            connection.executemany(UPSERT_ROW, rows)
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
        rows = self._rows(items)
        with self._write() as connection:
            self._record_fingerprint(connection, offered)
            self._replace(connection, document_id, rows, wanted, content_hash)
        return True

    @staticmethod
    def _replace(
        connection: sqlite3.Connection,
        document_id: str,
        rows: list[tuple[Any, ...]],
        chunk_digest: str | None,
        content_hash: str | None,
        *,
        stored: bool = True,
        file_state: tuple[int, int, int, int] | None = None,
    ) -> None:
        """Inside a write transaction: one document's rows replace its stored ones (none:
        the document goes). ``stored=False``: the caller knows it has none. ``file_state``:
        the (size, mtime_ns, ctime_ns, inode) of the file read, for the command line's next
        run (None: unknown, the next run reads the file)."""
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

    def _replace_documents(
        self,
        documents: Iterable[
            tuple[str, list[tuple[Any, ...]], str | None, bool, tuple[int, int, int, int] | None]
        ],
        deleted: Iterable[str] = (),
        *,
        fingerprint: str | None = None,
        refreshed: Iterable[tuple[int, int, int, int, str]] = (),
    ) -> None:
        """For bulk writers (the command line): many documents replaced and others removed
        in one transaction. Each document comes as (id, its rows as ``_rows`` makes them,
        content hash, whether the store holds it now, its file's state); its chunk digest is
        left unknown, so a later ``upsert`` rewrites. ``refreshed``: (size, mtime_ns,
        ctime_ns, inode, id) of unchanged documents whose files' state is recorded anew."""
        offered = check_fingerprint(fingerprint)
        with self._write() as connection:
            self._record_fingerprint(connection, offered)
            for document_id, rows, content_hash, stored, file_state in documents:
                self._replace(
                    connection,
                    document_id,
                    rows,
                    None,
                    content_hash,
                    stored=stored,
                    file_state=file_state,
                )
            connection.executemany(REFRESH_FILE_STATE, refreshed)
            for document_id in deleted:
                connection.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
                connection.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))

    def _file_states(
        self,
    ) -> list[tuple[str, str | None, int | None, int | None, int | None, int | None]]:
        """(id, content hash, file size, mtime_ns, ctime_ns, inode) of every document, in one
        query: what the command line compares a file's state with before reading it."""
        with self._lock:
            return (
                self._conn()
                .execute(
                    "SELECT document_id, content_hash, file_size, file_mtime_ns, "
                    "file_ctime_ns, file_inode FROM documents"
                )
                .fetchall()
            )

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
        return self._chunks(rows)[0] if rows else default

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
            return {chunk.id: chunk for chunk in self._chunks(rows)}
        with self._read() as connection:
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                rows += connection.execute(f"{SELECT} WHERE id IN ({marks})", batch).fetchall()
        return {chunk.id: chunk for chunk in self._chunks(rows)}

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
        return self._chunks(rows)

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
        return iter(self._chunks(rows))

    def document_ids(self) -> list[str]:
        """The ids of the documents with chunks stored, in the order first stored."""
        with self._lock:
            rows = (
                self._conn()
                .execute("SELECT document_id FROM chunks GROUP BY document_id ORDER BY min(rowid)")
                .fetchall()
            )
        return [row[0] for row in rows]

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
        with self._write() as connection:
            removed = connection.execute(
                "DELETE FROM chunks WHERE document_id = ?", (document_id,)
            ).rowcount
            connection.execute("DELETE FROM documents WHERE document_id = ?", (document_id,))
        return int(removed)

    def clear(self) -> None:
        """Remove every chunk and forget the recorded fingerprint."""
        with self._write() as connection:
            connection.execute("DELETE FROM chunks")
            connection.execute("DELETE FROM documents")
            connection.execute("DELETE FROM meta WHERE key = 'fingerprint'")

    # ---------------------------------------------------------------- lifetime

    def close(self) -> None:
        """Close the connection (calling it again does nothing); the file stays."""
        with self._lock:
            connection = self._connection
            self._connection = None
            self._closed = True
            if connection is not None and self._pid == os.getpid():
                connection.close()

    def __enter__(self) -> SqliteRegistry:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        # A store dropped without close() must not leave a ResourceWarning behind.
        connection = getattr(self, "_connection", None)
        if connection is not None and getattr(self, "_pid", None) == os.getpid():
            connection.close()

    def __getstate__(self) -> dict[str, Any]:
        return {
            "path": str(self._path),
            "children": self._children,
            "timeout": self._timeout,
            "durable": self._durable,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(  # type: ignore[misc]
            state["path"],
            children=state["children"],
            timeout=state["timeout"],
            create=False,
            durable=state["durable"],
        )

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"SqliteRegistry({str(self._path)!r}, {state})"
