"""The SQLite store's file: opening it (and what a wrong path says), its format checked and
upgraded, one connection per process, transactions, and SQLite's errors in the system's words.

``SqliteFile`` is the half of ``SqliteRegistry`` that knows files and connections; the other
half, the chunks (``sqlite.py``), reads and writes through ``_write`` and ``_read``.
"""

from __future__ import annotations

import errno
import os
import threading
from contextlib import contextmanager, suppress
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from spanchunk.stores.schema import APPLICATION_ID, PAGE_SIZE, SCHEMA, SCHEMA_VERSION

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["SqliteFile", "StoreFormatError", "file_system_errno"]

_Store = TypeVar("_Store", bound="SqliteFile")

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


class SqliteFile:
    """An open spanchunk store file: the base of ``SqliteRegistry``, which documents the
    arguments (``path``, ``children``, ``timeout``, ``create``, ``durable``)."""

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
        self._metadata: dict[tuple[str, str], MappingProxyType[str, Any]] = {}
        self._pid = 0
        self._closed = False
        self._connect()

    @classmethod
    def open(
        cls: type[_Store],
        path: str | os.PathLike[str],
        *,
        children: bool = False,
        timeout: float = 30.0,
        durable: bool = False,
    ) -> _Store:
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
        if version != SCHEMA_VERSION:
            raise StoreFormatError(
                f"{path} is a spanchunk store of schema {version}, which this spanchunk does "
                f"not read (it reads schema {SCHEMA_VERSION}): chunk the files again into a new "
                "store, or open it with the spanchunk that wrote it"
            )
        if exists:
            mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
            if mode != "wal":
                connection.execute("PRAGMA journal_mode = WAL")

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

    @property
    def path(self) -> Path:
        """The store's file."""
        from pathlib import Path  # noqa: PLC0415

        return Path(self._path)

    # ---------------------------------------------------------------- lifetime

    def close(self) -> None:
        """Close the connection (calling it again does nothing); the file stays."""
        with self._lock:
            connection = self._connection
            self._connection = None
            self._closed = True
            if connection is not None and self._pid == os.getpid():
                connection.close()

    def __enter__(self: _Store) -> _Store:
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
        return f"{type(self).__name__}({str(self._path)!r}, {state})"
