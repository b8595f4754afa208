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
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, ClassVar

from spanchunk import _core
from spanchunk.arrow import chunk_table_schema
from spanchunk.ingest.output import KINDS_KNOWN, OutputError, Target, mode_for, temporary_file

__all__ = ["OutputError", "Target", "Writer", "writer_class"]

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pyarrow as pa

    from spanchunk.ingest.formats import FileChunkers
    from spanchunk.ingest.jobs import BatchJob


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
        os.chmod(self.temp_path, mode_for(self.target))
        os.replace(self.temp_path, self.target)

    def discard(self) -> None:
        """Remove the temporary file; the target is left as it was."""
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temp_path)


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

    def job(self, chunkers: FileChunkers) -> BatchJob:
        """What the workers do with each batch of files for this output."""
        from spanchunk.ingest.jobs import CoreJob  # noqa: PLC0415  (numpy: only when a run starts)

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
    """Parquet, one row per chunk, parents and children together; see ``chunk_table_schema``.

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

    def job(self, chunkers: FileChunkers) -> BatchJob:
        """Cut and encode each batch as a row group of this file."""
        from spanchunk.ingest.jobs import CoreJob  # noqa: PLC0415

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
    return chunk_table_schema()


class SqliteWriter(Writer):
    """The SQLite store (``SqliteRegistry``), every level: the run's sink is
    ``ingest.store_sink.StoreSink`` (built in a temporary file and renamed into place when
    new, updated in place, one transaction per batch, when it exists); this class names the
    kind by its suffixes."""

    core_format = "rows"
    suffixes = (".sqlite", ".sqlite3", ".db")


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
