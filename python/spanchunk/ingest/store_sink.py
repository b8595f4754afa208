"""A run into a store: a new store built in a temporary file beside its name and renamed into
place at the end (a bulk load, ``stores.bulk``); an existing one updated in place, one
transaction per batch, so a run that is interrupted or killed leaves each document in its
old or its new version.

Speed: ``benches/NOTES.md``, under ``python/spanchunk/ingest/store_sink.py``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from spanchunk.ingest.output import (
    SQLITE_SIDE_FILES,
    OutputError,
    Target,
    mode_for,
    temporary_file,
)
from spanchunk.ingest.statcache import (
    StoreJob,
    check_store_settings,
    run_fingerprint,
    run_meta,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from spanchunk import _core
    from spanchunk.ingest.formats import FileChunkers
    from spanchunk.ingest.jobs import BatchJob
    from spanchunk.ingest.statcache import SkippedFile
    from spanchunk.stores.bulk import BulkLoad
    from spanchunk.stores.sqlite import SqliteRegistry

__all__ = ["StoreSink"]


class StoreSink:
    """The store at ``target`` (every level of every document), as a run's sink.

    ``opened``: a store the caller opened (``sync`` given a ``SqliteRegistry``), updated in
    place and left open. ``sync``: a new store is flushed to the disk before its rename (the
    rename is atomic for other processes either way, but only a synced file is sure to be
    whole on disk after a power cut or an OS crash). ``quiet``: the kinds of skip a re-run
    only counts (never says) when it settles them unread.
    """

    batch_bytes: int | None = None
    batch_files: int | None = None

    def __init__(
        self,
        target: Target,
        *,
        sync: bool = False,
        quiet: frozenset[str] = frozenset(),
        opened: SqliteRegistry | None = None,
    ) -> None:
        from spanchunk.stores.sqlite import SqliteRegistry, StoreFormatError  # noqa: PLC0415

        if target.stream:
            raise OutputError(
                f"-o {target.given}: a store must be a regular file (SQLite writes its -wal "
                "and -shm files beside it): name a .sqlite file"
            )
        self.given = target.given
        self.target = target.path
        self.sync = sync
        self.quiet = quiet
        self._owned = opened is None
        self.fingerprint: str | None = None
        self._temp_path: str | None = None
        self._bulk: BulkLoad | None = None
        #: The ids of the documents the store held when the run started, or this run wrote.
        self._stored: set[str] = set()
        self._meta: dict[str, str] = {}
        #: The skipped files this run found, to record.
        self.skipped: list[SkippedFile] = []
        #: Whether the run replaces a store's record of a skipped file at this path: it
        #: listed the file, or covers it and did not find it (set by the run before it
        #: commits; None: nothing of the old records is dropped).
        self.replaces: Callable[[str], bool] | None = None
        #: What the store recorded of its files, for the walk to settle them by their state
        #: (None for a new store).
        self.recorded: _core.RecordedFiles | None = None
        #: The store's change number when the run ended (set by ``commit``).
        self.change_number: int | None = None
        self._job: StoreJob | None = None
        self._hashes_loaded = False
        if opened is not None:
            self.store = opened
            return
        if os.path.exists(self.target):
            try:
                with self.database_errors():
                    self.store = SqliteRegistry(self.target, create=False)
            except StoreFormatError as error:
                raise OutputError(f"-o {self.given}: {error}") from None
            return
        descriptor, self._temp_path = temporary_file(self.target)
        os.close(descriptor)

    @property
    def incremental(self) -> bool:
        """Whether the run updates a store that existed (else it builds a new one)."""
        return self._temp_path is None

    def job(self, chunkers: FileChunkers) -> BatchJob:
        """The store job, once the store's settings are checked against this run's.

        Raises:
            OutputError: the store holds chunks made with other settings.
        """
        fingerprint = run_fingerprint(chunkers)
        self.fingerprint = fingerprint
        self._meta = run_meta(chunkers)
        if self._temp_path is not None:
            from spanchunk.stores.bulk import BulkLoad  # noqa: PLC0415

            try:
                with self.database_errors():
                    self._bulk = BulkLoad(self._temp_path, fingerprint, self._meta)
            except BaseException:
                self.discard()
                raise
            return StoreJob(chunkers, {})
        with self.database_errors():
            check_store_settings(self.store, self.given, chunkers, fingerprint)
            # The walk settles the files whose state is the one recorded, in the core; the
            # documents' hashes are read when a file is to be read (``load_hashes``).
            self.recorded = self.store.recorded_files(self.quiet)
        self._job = StoreJob(chunkers, {})
        return self._job

    def load_hashes(self) -> None:
        """Before the first file of a run into an existing store is read: the content hash
        of each document, for the job to tell an unchanged file from a changed one (a re-run
        that settles every file by its state never reads them)."""
        if self._job is None or self._hashes_loaded:
            return
        with self.database_errors():
            hashes = self.store.content_hashes()
        self._job.stored = hashes
        self._stored = set(hashes)
        self._hashes_loaded = True

    def write(self, written: Any, sources: Sequence[str], document_ids: Sequence[str]) -> None:
        """Write the batch's documents (a ``statcache.CutBatch``) in one transaction."""
        if not written:
            return
        with self.database_errors():
            if self._bulk is not None:
                self._bulk.write(written.cut)
                return
            self.store.replace_documents(
                self._replaced(written.cut),
                fingerprint=self.fingerprint,
                refreshed=written.refreshed,
            )

    def _replaced(self, batches: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """The documents of the core's batches as ``replace_documents`` takes them, each
        marked stored when the store held it or this run wrote it already (two paths that
        normalise to one id: the last file's chunks replace the first's)."""
        stored = self._stored
        for batch in batches:
            for document_id, rows, content_hash, file_state in batch.documents():
                yield document_id, rows, content_hash, document_id in stored, file_state
                stored.add(document_id)

    def prune(self, document_ids: Sequence[str]) -> None:
        """Remove these documents (files that are gone) in one transaction."""
        if document_ids:
            with self.database_errors():
                self.store.replace_documents((), document_ids, fingerprint=self.fingerprint)

    @contextlib.contextmanager
    def database_errors(self) -> Iterator[None]:
        """SQLite's errors (a full disk, an I/O error) as the OSError of an output that
        cannot be written: the run stops with a message, not a traceback."""
        import sqlite3  # noqa: PLC0415

        try:
            yield
        except sqlite3.DatabaseError as error:
            raise _store_os_error(self.given, error) from error
        except OSError as error:
            if error.errno is not None:  # the file system's own: its message as it is
                raise
            raise _store_os_error(self.given, error) from error  # the core's writer (SQLite)

    def commit(self) -> None:
        """A new store: finish the load, sync it (``sync``) and rename it into place. An
        existing one: every batch is committed already; record the skipped files and the
        settings, and close it (unless the caller opened it)."""
        with self.database_errors():
            self._commit()

    def _commit(self) -> None:
        if self._temp_path is None:
            recorded = self.recorded
            unsettled = (
                [recorded.skip_row(index)[0] for index in recorded.unsettled_skips()]
                if recorded is not None
                else ()
            )
            self.store.record_skips(
                self.skipped,
                # Read only when the run found skipped files to record.
                known=recorded.skip_rows() if recorded is not None and self.skipped else (),
                unsettled=unsettled,
                replaces=self.replaces,
            )
            self.store.set_meta(self._meta)
            self.store.write_file_states()
            self.change_number = self.store.change_number()
            if self._owned:
                self.store.close()
            return
        if self._bulk is not None:
            self.change_number = self._bulk.finish(self.skipped)
            self._bulk = None
        if self.sync:
            with open(self._temp_path, "rb+") as file:
                os.fsync(file.fileno())
        # A -wal file left beside a missing store (its database deleted while open) would
        # be replayed into this new one: it belongs to no database now.
        if not os.path.exists(self.target):
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.target + suffix)
        os.chmod(self._temp_path, mode_for(self.target))
        os.replace(self._temp_path, self.target)
        self._temp_path = None

    def discard(self) -> None:
        """A new store: remove the temporary file. An existing one: close it (unless the
        caller opened it); the batches committed so far stay (each document is in its old
        or its new version)."""
        if self._bulk is not None:
            self._bulk.close()
            self._bulk = None
        if self._owned and self._temp_path is None:
            with contextlib.suppress(Exception):
                self.store.close()
        self._remove_temp()

    def _remove_temp(self) -> None:
        if self._temp_path is not None:
            for suffix in ("", *SQLITE_SIDE_FILES):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._temp_path + suffix)
            self._temp_path = None


def _store_os_error(given: str, error: Exception) -> OSError:
    """SQLite's error writing the store ``given``, in the system's plain words where it is
    the file system's (a full disk, a read-only file system, an I/O error)."""
    from spanchunk.stores.sqlite import file_system_errno  # noqa: PLC0415

    message = str(error)
    code = file_system_errno(message)
    if code is not None:
        return OSError(code, f"{os.strerror(code)} (writing {given})")
    return OSError(f"{given}: {message}")
