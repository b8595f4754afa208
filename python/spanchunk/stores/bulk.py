"""A new store filled in bulk: the core writes its rows (``_core.StoreWriter``, no Python
object per row) into a file that no other connection holds, unsynced and without a journal,
until :meth:`BulkLoad.finish` builds the id index and puts it in WAL mode.

The file is a temporary one that the caller renames into place when the load is done (or
removes when it fails): nothing else reads it meanwhile.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spanchunk import _core
from spanchunk.stores import schema
from spanchunk.stores.records import SkipRow
from spanchunk.stores.sqlite import SqliteRegistry

__all__ = ["BulkLoad"]


class BulkLoad:
    """The bulk load of the new store at ``path`` (see the module's docstring).

    Its schema, ``fingerprint`` and ``meta`` are written by ``SqliteRegistry``, whose
    connection is then closed: two copies of SQLite (Python's and the core's) must never
    hold one file at once, as each would drop the other's POSIX locks.
    """

    def __init__(self, path: str, fingerprint: str, meta: Mapping[str, str]) -> None:
        self.path = path
        with SqliteRegistry(path) as store, store._write() as connection:
            store.record_fingerprint(connection, fingerprint)
            connection.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(meta.items()))
        self._writer: Any = _core.StoreWriter(
            path,
            schema.BULK_LOAD_SETUP,
            schema.BULK_INSERT_CHUNK,
            schema.BULK_INSERT_CHUNKS,
            schema.BULK_INSERT_DOCUMENT,
            schema.BULK_DELETE_CHUNKS,
        )

    def write(self, batches: Sequence[Any]) -> None:
        """Insert the documents of the core's cut batches (``_core.StoreBatch``), one
        transaction per call."""
        self._writer.write(batches)

    def finish(self, skipped: Iterable[SkipRow] = ()) -> int:
        """Build the id index, put the file in WAL mode, record the ``skipped`` files, the
        load as the store's first change and the snapshot of the file states. The file is
        then a complete store; returns its change number."""
        if self._writer is not None:
            # The last connection: SQLite removes the -wal and -shm files as it closes.
            self._writer.finish(schema.BULK_LOAD_FINISH)
            self._writer = None
        # The core's connection is closed: Python's may open the file again.
        with SqliteRegistry(self.path, create=False) as store:
            # The file is not in place yet, and was loaded unsynced: without this, the
            # checkpoint as the connection closes waited for the disk to take the whole
            # new store (0.2 s on a tree's 400 MB), which only a synced run asks for.
            store._conn().execute("PRAGMA synchronous = OFF")
            store.record_skips(skipped)
            number = store.record_load()
            store.write_file_states()
        return number

    def close(self) -> None:
        """Stop the load (the caller removes the file)."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None
