"""Where chunks go: one small writer class per output kind, picked by the output's suffix.

A writer takes each batch as its job prepared it (``_core.write_files``: JSON Lines bytes,
or an encoded Parquet row group; for the SQLite store, rows) and appears under its final name
only on :meth:`Writer.commit`; until then it writes into a temporary file next to it, removed
by :meth:`Writer.discard`. The exception is an existing SQLite store, which a run updates in
place, one transaction per batch.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar

from spanchunk import _core
from spanchunk.arrow import chunk_schema
from spanchunk.cli._output import KINDS_KNOWN, SQLITE_SIDE_FILES, OutputError, Target

__all__ = ["OutputError", "Target", "Writer", "writer_class"]

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    import pyarrow as pa

    from spanchunk.cli._job import BatchJob, Chunkers


class AtomicFile:
    """A file that appears under its name, complete, only when :meth:`commit` is called.

    Output goes to a temporary file in the same folder, renamed over the target at the end,
    so a failed, interrupted or killed run never leaves a half-written file (nor clobbers an
    old one). With ``sync``, the file is flushed to the disk before the rename, so that it
    survives a power loss or a crash of the machine too; without it (the default, as ``cp``
    and ``sort -o`` do), the rename is as atomic but the disk catches up in its own time: on
    the 2-core machine of ``benches/cli.py`` the flush alone capped JSON Lines at 240 MB/s of
    output, a third of the job's speed.
    """

    def __init__(self, target: str, *, sync: bool = False) -> None:
        self.target = target
        self.sync = sync
        descriptor, self.temp_path = temporary_file(target)
        # Unbuffered: the core writes JSON Lines to the descriptor itself.
        self.file: BinaryIO = os.fdopen(descriptor, "wb", buffering=0)

    def commit(self) -> None:
        """Close the temporary file (synced to the disk with ``sync``) and move it over the
        target."""
        if not self.file.closed:
            if self.sync:
                os.fsync(self.file.fileno())
            self.file.close()
        elif self.sync:
            with open(self.temp_path, "rb+") as file:
                os.fsync(file.fileno())
        os.chmod(self.temp_path, _mode_for(self.target))
        os.replace(self.temp_path, self.target)

    def discard(self) -> None:
        """Remove the temporary file; the target is left as it was."""
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temp_path)


def temporary_file(target: str) -> tuple[int, str]:
    """A new, empty file beside ``target`` (``.NAME.XXXXXXXX.tmp``, mode 0600; a killed
    run's is removed by the next run into ``target``, see ``_output``), opened for
    reading and writing: its descriptor and path.

    What ``tempfile.mkstemp`` does (a random name, created exclusively, retried on a clash),
    written here because importing ``tempfile`` (with ``shutil`` and ``random``) cost 5 ms of
    each run's 40 ms startup.
    """
    folder = os.path.dirname(os.path.abspath(target))
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        path = os.path.join(folder, f".{os.path.basename(target)}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")  # pragma: no cover


def _mode_for(target: str) -> int:
    # temporary_file creates the file 0600; give it the mode an ordinary open() would have.
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


class Writer:
    """The base of every output kind: the core format it takes, and the commit protocol."""

    core_format: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]
    # The batches' bytes and files at most (``_job.batches``; None: its defaults).
    batch_bytes: ClassVar[int | None] = None
    batch_files: ClassVar[int | None] = None

    def __init__(self, target: Target, *, sync: bool = False) -> None:
        """Open the output ``target``; with ``sync``, a new file is flushed to the disk
        before it is renamed into place (see :class:`AtomicFile`)."""
        raise NotImplementedError

    @classmethod
    def takes(cls, name: str) -> bool:
        """Whether an output named ``name`` is of this kind (by its suffix)."""
        return name.lower().endswith(cls.suffixes)

    def job(self, chunkers: Chunkers) -> BatchJob:
        """What the workers do with each batch of files for this output."""
        from spanchunk.cli._job import CoreJob  # noqa: PLC0415  (numpy: only when a run starts)

        return CoreJob.of(chunkers, self.core_format)

    def write(self, written: Any, sources: Sequence[str], document_ids: Sequence[str]) -> None:
        """Write one batch: what ``_core.write_documents`` returned for these documents."""
        raise NotImplementedError

    def commit(self) -> None:
        """Finish the output and make it appear under its final name."""
        raise NotImplementedError

    def discard(self) -> None:
        """Drop everything written (the run failed or was interrupted)."""
        raise NotImplementedError


class JsonlWriter(Writer):
    """JSON Lines, one object per chunk, to a file, to stdout (``-``) or to a stream (a
    device or a FIFO, written to as it is).

    The core writes each batch's records (a ``_core.JsonlBatch``) to the file descriptor
    itself, with the GIL released, so the workers keep cutting while the main thread writes;
    a stdout that has no descriptor (one replaced in a test) gets them as ``bytes``.
    """

    core_format = "jsonl"
    suffixes = (".jsonl", ".json", ".ndjson")

    def __init__(self, target: Target, *, sync: bool = False) -> None:
        self._atomic: AtomicFile | None = None
        self._descriptor: int | None = None
        self._owned: BinaryIO | None = None
        if target.path == "-":
            sys.stdout.flush()
            self._sink: BinaryIO = sys.stdout.buffer
            self._sink.flush()
            with contextlib.suppress(AttributeError, OSError, ValueError):
                self._descriptor = self._sink.fileno()
        elif target.stream:
            # A device or a FIFO: written to as it is, never replaced.
            self._owned = self._sink = open(target.path, "wb", buffering=0)  # noqa: SIM115
            self._descriptor = self._sink.fileno()
        else:
            self._atomic = AtomicFile(target.path, sync=sync)
            self._sink = self._atomic.file
            self._descriptor = self._sink.fileno()
        if os.name != "posix":
            self._descriptor = None

    def write(self, written: Any, sources: Sequence[str], document_ids: Sequence[str]) -> None:
        """Append the batch's records."""
        if self._descriptor is not None:
            written.write_to(self._descriptor)
        else:
            self._sink.write(written.to_bytes())

    def commit(self) -> None:
        """Rename the file into place (or flush the stream)."""
        if self._atomic is not None:
            self._atomic.commit()
            return
        self._sink.flush()
        if self._owned is not None:
            self._owned.close()

    def discard(self) -> None:
        """Remove the temporary file (what reached a stream stays there)."""
        if self._atomic is not None:
            self._atomic.discard()
        elif self._owned is not None:
            with contextlib.suppress(OSError):
                self._owned.close()


class GzipJsonlWriter(JsonlWriter):
    """JSON Lines compressed with gzip (``.jsonl.gz``): what ``gzip -d`` or
    ``pandas.read_json(..., lines=True)`` reads back. zlib compresses with the GIL released;
    it is slower than the plain file (about 60 MB/s of records a core at level 6)."""

    suffixes = (".jsonl.gz", ".json.gz", ".ndjson.gz")

    def __init__(self, target: Target, *, sync: bool = False) -> None:
        import gzip  # noqa: PLC0415

        super().__init__(target, sync=sync)
        # No file name nor time in the header: the same chunks give the same bytes.
        self._gzip = gzip.GzipFile(filename="", mode="wb", fileobj=self._sink, mtime=0)
        self._descriptor = None

    def write(self, written: Any, sources: Sequence[str], document_ids: Sequence[str]) -> None:
        """Compress and append the batch's records."""
        self._gzip.write(written.to_bytes())

    def commit(self) -> None:
        """Write gzip's trailer, then rename the file into place (or flush the stream)."""
        self._gzip.close()
        super().commit()

    def discard(self) -> None:
        """Drop the compressor and remove the temporary file."""
        with contextlib.suppress(Exception):
            self._gzip.close()
        super().discard()


# Parquet's compressions (``--compression``), the default first: the names the core's
# ``ParquetFile`` takes.
PARQUET_COMPRESSIONS = ("snappy", "lz4", "none")


class ParquetWriter(Writer):
    """Parquet, one row per chunk, parents and children together; see ``chunk_schema``.

    Each batch is one row group, encoded by the worker that cut it (``_core.write_files``,
    GIL released); this writer appends the groups in input order (``_core.ParquetFile``,
    arrow-rs). pyarrow is not needed to write: it encoded a file's row groups one at a time
    on one thread, which capped two workers at a third of the job's JSON Lines speed.
    """

    core_format = "parquet"
    suffixes = (".parquet", ".pq")
    # A row group per batch: batches of 8 MB of text make groups of about 30,000 rows (and
    # 15-20 MB), what readers skip by statistics and scan fast; 1 MB ones made 4,000-row
    # groups.
    batch_bytes = 8 << 20
    batch_files = 4096

    def __init__(self, target: Target, *, sync: bool = False, compression: str = "snappy") -> None:
        # A stream (a device or a FIFO) is written to as it is: Parquet is written in one
        # pass, the footer last, so it needs no seek.
        self._atomic = None if target.stream else AtomicFile(target.path, sync=sync)
        if self._atomic is not None:
            # The core opens the temporary file by name: its descriptor is not needed.
            self._atomic.file.close()
        path = target.path if self._atomic is None else self._atomic.temp_path
        if path == "-":
            path = "/dev/stdout"
        try:
            self._file = _core.ParquetFile(path, compression)
        except BaseException:
            if self._atomic is not None:
                self._atomic.discard()
            raise

    def job(self, chunkers: Chunkers) -> BatchJob:
        """Cut and encode each batch as a row group of this file."""
        from spanchunk.cli._job import CoreJob  # noqa: PLC0415

        return CoreJob.of(chunkers, self.core_format, self._file.encoder())

    def write(self, written: Any, sources: Sequence[str], document_ids: Sequence[str]) -> None:
        """Append the batch's row group (``_core.ParquetGroup``; an empty one writes
        nothing) to the file."""
        self._file.append(written)

    def commit(self) -> None:
        """Write the footer, then rename the file into place."""
        self._file.close()
        if self._atomic is not None:
            self._atomic.commit()

    def discard(self) -> None:
        """Close and remove the temporary file."""
        self._file.discard()
        if self._atomic is not None:
            self._atomic.discard()


def parquet_schema() -> pa.Schema:
    """The Arrow schema of the Parquet output (documented in the README), as pyarrow reads
    the file back: the core writes it into the file's metadata."""
    return chunk_schema()


class SqliteWriter(Writer):
    """The SQLite store (``SqliteRegistry``), every level: built in a temporary file and
    renamed into place when new, updated in place (one transaction per batch) when it exists.

    A new store is made by ``SqliteRegistry`` (its schema, settings and fingerprint), closed,
    and filled by the core (``_core.StoreWriter``) until :meth:`commit`; it is synced before
    the rename only with ``sync=True`` (``--sync``): the rename is atomic for other processes
    either way, but only a synced file is sure to be whole on disk after a power cut or an OS
    crash. An existing store is updated through ``SqliteRegistry``, with SQLite's own
    durability (WAL).
    """

    core_format = "rows"
    suffixes = (".sqlite", ".sqlite3", ".db")

    def __init__(
        self, target: Target, *, sync: bool = False, quiet: frozenset[str] = frozenset()
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
        #: The kinds of skip a re-run only counts (never says) when it settles them unread.
        self.quiet = quiet
        self.incremental = os.path.exists(self.target)
        self.fingerprint: str | None = None
        self._temp_path: str | None = None
        self._bulk: Any = None  # the core's writer of a new store, once the job starts
        #: The ids of the documents the store held when the run started, or this run wrote.
        self._stored: set[str] = set()
        #: What this run records in the store's meta table (``_store.run_meta``).
        self._meta: dict[str, str] = {}
        #: The skipped files this run found, to record (``_store.SkippedFile``).
        self.skipped: list[Any] = []
        if self.incremental:
            try:
                with self._database_errors():
                    self.store = SqliteRegistry(self.target, create=False)
            except StoreFormatError as error:
                raise OutputError(f"-o {self.given}: {error}") from None
            return
        descriptor, self._temp_path = temporary_file(self.target)
        os.close(descriptor)
        try:
            with self._database_errors():
                self.store = SqliteRegistry(self._temp_path)
        except BaseException:
            self._remove_temp()
            raise

    def job(self, chunkers: Chunkers) -> BatchJob:
        """The store job, once the store's settings are checked against this run's.

        Raises:
            OutputError: the store holds chunks made with other settings, or by an earlier
                spanchunk whose document ids were the paths as given.
        """
        from spanchunk.cli._store import (  # noqa: PLC0415
            StoreJob,
            check_store_settings,
            recorded_files,
            run_fingerprint,
            run_meta,
        )

        fingerprint = run_fingerprint(chunkers)
        with self._database_errors():
            check_store_settings(self.store, self.given, chunkers, fingerprint)
        self.fingerprint = fingerprint
        self._meta = run_meta(chunkers)
        if self._temp_path is not None:
            self._start_bulk_load(fingerprint)
            return StoreJob(chunkers, {})
        # The walk settles the files whose state is the one recorded, in the core; the
        # documents' hashes are read when a file is to be read (``load_hashes``).
        with self._database_errors():
            self.recorded = recorded_files(self.store, self.quiet)
        job = StoreJob(chunkers, {})
        self._job = job
        return job

    def load_hashes(self) -> None:
        """Before the first file of a run into an existing store is read: the content hash
        of each document, for the job to tell an unchanged file from a changed one (a re-run
        that settles every file by its state never reads them)."""
        if self._job is None or self._hashes_loaded:
            return
        with self._database_errors():
            hashes = self.store.content_hashes()
        self._job.stored = hashes
        self._stored = set(hashes)
        self._hashes_loaded = True

    def _start_bulk_load(self, fingerprint: str) -> None:
        """Record the fingerprint, close Python's connection and open the core's."""
        from spanchunk.stores.schema import (  # noqa: PLC0415
            BULK_DELETE_CHUNKS,
            BULK_INSERT_CHUNK,
            BULK_INSERT_CHUNKS,
            BULK_INSERT_DOCUMENT,
            BULK_LOAD_SETUP,
        )

        assert self._temp_path is not None
        try:
            with self._database_errors():
                with self.store._write() as connection:
                    self.store._record_fingerprint(connection, fingerprint)
                    connection.executemany(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)", self._meta.items()
                    )
                # Python's sqlite3 and the core's SQLite must never hold the file at once.
                self.store.close()
                self._bulk = _core.StoreWriter(
                    self._temp_path,
                    BULK_LOAD_SETUP,
                    BULK_INSERT_CHUNK,
                    BULK_INSERT_CHUNKS,
                    BULK_INSERT_DOCUMENT,
                    BULK_DELETE_CHUNKS,
                )
        except BaseException:
            self.discard()
            raise

    #: Whether the run replaces a store's record of a skipped file at this path: it listed
    #: the file, or covers it and did not find it (set by the run before it commits; None:
    #: nothing of the old records is dropped).
    replaces: Any = None
    #: What the store recorded of its files, for the walk to settle them by their state
    #: (``_core.RecordedFiles``; None for a new store).
    recorded: Any = None
    #: The job of a run into an existing store, and whether its hashes are read.
    _job: Any = None
    _hashes_loaded = False

    def write(self, written: Any, sources: Sequence[str], document_ids: Sequence[str]) -> None:
        """Write the batch's documents (a ``_store.StoreBatch``) in one transaction."""
        if not written:
            return
        with self._database_errors():
            if self._bulk is not None:
                self._bulk.write(written.cut)
                return
            self.store._replace_documents(
                self._replaced(written.cut),
                fingerprint=self.fingerprint,
                refreshed=written.refreshed,
            )

    def _replaced(self, batches: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
        """The documents of the core's batches as ``_replace_documents`` takes them, each
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
            with self._database_errors():
                self.store._replace_documents((), document_ids, fingerprint=self.fingerprint)

    @contextlib.contextmanager
    def _database_errors(self) -> Iterator[None]:
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
        """A new store: build its documents' index, put it in WAL mode, sync it (``sync``)
        and rename it into place. An existing one: every batch is committed already; close
        it."""
        with self._database_errors():
            self._commit()

    def _commit(self) -> None:
        from spanchunk.cli._store import record_run, write_file_states  # noqa: PLC0415
        from spanchunk.stores.schema import BULK_LOAD_FINISH  # noqa: PLC0415

        if self._temp_path is None:
            recorded = self.recorded
            unsettled = (
                [recorded.skip_row(index)[0] for index in recorded.unsettled_skips()]
                if recorded is not None
                else ()
            )
            record_run(
                self.store,
                self._meta,
                self.skipped,
                # Read only when the run found skipped files to record.
                known=recorded.skip_rows() if recorded is not None and self.skipped else (),
                unsettled=unsettled,
                replaces=self.replaces,
            )
            write_file_states(self.store)
            self.store.close()
            return
        if self._bulk is not None:
            # The last connection: SQLite removes the -wal and -shm files as it closes.
            self._bulk.finish(BULK_LOAD_FINISH)
            self._bulk = None
        # The core's connection is closed: Python's may open the file again.
        from spanchunk.stores.sqlite import SqliteRegistry  # noqa: PLC0415

        with SqliteRegistry(self._temp_path, create=False) as store:
            # The file is not in place yet, and was loaded unsynced: without this, the
            # checkpoint as the connection closes waited for the disk to take the whole
            # new store (0.2 s on a tree's 400 MB), which only --sync asks for.
            store._conn().execute("PRAGMA synchronous = OFF")
            if self.skipped:
                record_run(store, {}, self.skipped)
            write_file_states(store)
        if self.sync:
            with open(self._temp_path, "rb+") as file:
                os.fsync(file.fileno())
        # A -wal file left beside a missing store (its database deleted while open) would
        # be replayed into this new one: it belongs to no database now.
        if not os.path.exists(self.target):
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.target + suffix)
        os.chmod(self._temp_path, _mode_for(self.target))
        os.replace(self._temp_path, self.target)
        self._temp_path = None

    def discard(self) -> None:
        """A new store: remove the temporary file. An existing one: close it; the batches
        committed so far stay (each document is in its old or its new version)."""
        if self._bulk is not None:
            with contextlib.suppress(Exception):
                self._bulk.close()
            self._bulk = None
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


# Output kinds, by the ends of their names (the longest first: .jsonl.gz before .gz).
WRITERS: tuple[type[Writer], ...] = (GzipJsonlWriter, JsonlWriter, ParquetWriter, SqliteWriter)


def writer_class(target: str | Target) -> type[Writer]:
    """The writer of an output by the end of its name ('-', a device or a FIFO without a
    known one: JSON Lines).

    Raises:
        OutputError: a file name of no known kind, or a compression that is not built in.
    """
    resolved = target if isinstance(target, Target) else None
    given = target.given if isinstance(target, Target) else target
    if given == "-":
        return JsonlWriter
    names = [given] if resolved is None else [given, resolved.path]
    for name in names:
        for writer in WRITERS:
            if writer.takes(name):
                return writer
    if resolved is not None and resolved.stream:
        return JsonlWriter  # /dev/stdout, /dev/null, a FIFO
    lower = given.lower()
    if lower.endswith((".zst", ".zstd", ".bz2", ".xz", ".lz4")):
        raise OutputError(
            f"-o {given}: this compression is not built in; write .jsonl.gz, or compress "
            f"the stream: spanchunk chunk ... -o - | zstd -o {os.path.basename(given)}"
        )
    suffix = os.path.splitext(given)[1] or "no suffix"
    raise OutputError(
        f"-o {given}: unknown output kind ({suffix}); name the file by its kind: "
        f"{KINDS_KNOWN}, or '-' for stdout"
    )
