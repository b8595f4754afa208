"""The ``.sqlite`` output: parents and children in a ``SqliteRegistry`` file, kept up to date.

A run into a new file builds the store in a temporary file next to it and renames it into
place at the end. A run into an existing store is incremental: each file is one document,
whose id is its path (normalised), recorded with a hash of the file's bytes and the state of
the file when it was read (size, modification and status change times in ns, inode: a stat
cache, as git's index keeps). A file whose state is the one recorded is not read at all; any
other is read and hashed, and one whose hash is the one recorded is not cut (its new state
is recorded); a changed file replaces its document, a new one is added, and with ``--prune``
the documents whose files are gone (among those the run's PATHs and globs cover) are
removed. Every batch of documents is written in one transaction, so a run that is
interrupted or killed leaves each document in its old or its new version.

The stat cache trusts a file's recorded state only when the file had not changed for
``RACY_SECONDS`` before the run that recorded it started (git's "racily clean" entries): a
file rewritten twice within one tick of the file system's clock, with the same size, could
otherwise keep its first state with its second content. A file changed since, even with its
size and modification time put back (``touch -d``, ``rsync -t``), has a new status change
time, so it is read again.

Performance notes (measured by ``benches/cli.py`` and by hand, the corpus 20 times: 99 MB,
4,660 files, 355,000 rows; a shared 2-core machine at load average 2-4, so CPU seconds are
the steadier figure; details in ``benches/NOTES.md``):
- A first run used to spend, one worker: SQLite inserts through Python's ``sqlite3`` 4.4 s,
  building the rows' tuples in Python 2.5 s, cutting 1.1 s, reading 0.5 s, the final index
  and sync 0.5 s (10 CPU s in all; two workers no faster). Now the core cuts each run of
  files and makes its rows (ids, parent and child ids, metadata JSON) in one call with the
  GIL released (``_core.cut_for_store``), and a new store is filled by the core too
  (``_core.StoreWriter``, SQLite bundled in the extension): rows bound from the document's
  UTF-8, no Python object per row, the GIL released while the workers cut the next batches
  (with Python's ``sqlite3`` the writer took the GIL back after every row). What won most
  was loading a new store without the id index and building it at the end (schema 3's
  ``chunks_id`` index, which can be dropped, unlike a ``UNIQUE`` constraint's), and plain
  inserts: 0.7-0.9 s of inserts and 0.7 s of index builds, against 2.0-2.3 s for upserts
  into the unique index (``rust/store/sqlite.rs``). 3.5 CPU s in all, startup included.
  The position index stays during the load (its keys come nearly in order): its cost
  moves from the end of the run, where nothing else runs, to the load, beside the workers;
  and rows go in 8 to a statement (``_store_schema.BULK_ROWS``).
- An existing store is updated through ``SqliteRegistry`` (Python's ``sqlite3``: another
  process may be reading it, and two copies of SQLite in one process must not hold one
  file), from tuples the core makes (``StoreBatch.documents``).
- A re-run on an unchanged folder reads nothing: one query for the stored states, then a
  set lookup per listed file, in the main thread (``StoreJob.unchanged``: handing the
  files to the workers had been a third of the re-run). 0.17 s for 4,660 files, of which
  Python's start and imports are half, the store's states 0.02 s and the listing (the core's,
  ``_core.FileWalk``) 0.03 s, most of it the kernel's ``stat`` calls. Before the stat cache
  every file was read and hashed (SHA-256 with the CPU's SHA instructions; 0.9 s for 100
  MB).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from spanchunk import _core
from spanchunk._settings import fingerprint_of
from spanchunk.cli._files import UNREADABLE, Globs
from spanchunk.cli._job import (
    BINARY,
    BINARY_PROBE,
    CHANGED,
    NOT_CHUNKED,
    NOT_UTF8,
    BatchResult,
    Chunkers,
    Part,
)

if TYPE_CHECKING:
    from spanchunk.cli._files import File

FileState = tuple[int, int, int, int]
"""What the store records of a file when it reads it: size, mtime_ns, ctime_ns, inode."""

#: A file's recorded state is trusted only when the file had not changed (mtime and ctime)
#: for this long before the run started: more than the coarsest file system clock's tick
#: (FAT's 2 s).
RACY_SECONDS = 3


def content_hash(data: bytes) -> str:
    """What the store records of a file's bytes to tell, next time, that it is unchanged:
    SHA-256 in hex (OpenSSL's, with the CPU's SHA instructions: four times BLAKE2b's speed
    here; hashlib releases the GIL while it hashes)."""
    return hashlib.sha256(data).hexdigest()


def document_id_of(path: str) -> str:
    """A file's document id in the store: its path as given, normalised (``./docs/a.md`` and
    ``docs/a.md`` are one document)."""
    return os.path.normpath(path)


def run_fingerprint(chunkers: Chunkers) -> str:
    """The fingerprint a run records in the store: that of its one chunker with ``--format
    text`` or ``markdown`` (the API's chunker with those settings can add to the store), of
    both with ``auto``."""
    if chunkers.format == "text":
        return chunkers.text.fingerprint()
    if chunkers.format == "markdown":
        return chunkers.markdown.fingerprint()
    return fingerprint_of(
        {"text": chunkers.text.fingerprint(), "markdown": chunkers.markdown.fingerprint()}
    )


def read_source(file: File) -> tuple[bytes, os.stat_result] | tuple[None, tuple[str, str, str]]:
    """A file's bytes and its state when they were read, or why it is skipped: unreadable,
    changed while read, or binary (the checks ``_core.write_files`` makes of the files of
    the other outputs, plus the state)."""
    try:
        with open(file.path, "rb") as handle:
            before = os.fstat(handle.fileno())
            data = handle.read()
            after = os.fstat(handle.fileno())
    except OSError as error:
        return None, (file.path, UNREADABLE, error.strerror or str(error))
    if (
        before.st_size != after.st_size
        or before.st_mtime_ns != after.st_mtime_ns
        or len(data) != after.st_size
    ):
        return None, (file.path, CHANGED, "the file changed while it was read; run again")
    if data.find(b"\0", 0, BINARY_PROBE) != -1:
        return None, (file.path, BINARY, "binary (a NUL byte in the first 8 KB)")
    return data, before


class Pending(NamedTuple):
    """A file read, to be cut."""

    file: File
    document_id: str
    data: bytes
    digest: str
    state: FileState | None


class StoreBatch:
    """What the store job makes of a batch: the documents cut (runs of one chunker, in input
    order, kept in the core), and the unchanged documents whose file states are recorded
    anew ((size, mtime_ns, ctime_ns, inode, document id): the order of the UPDATE)."""

    __slots__ = ("cut", "refreshed")

    def __init__(self) -> None:
        self.cut: list[_core.StoreBatch] = []
        self.refreshed: list[tuple[int, int, int, int, str]] = []

    def __bool__(self) -> bool:
        return bool(self.cut or self.refreshed)


class StoreJob:
    """The ``.sqlite`` job on one batch: skip the files whose state is the one recorded,
    read and hash the others, and cut those whose hash is not the one the store holds.

    Workers do all of it; a Python loop per file reads and hashes (both release the GIL),
    and one core call per run of files of one chunker cuts and makes the rows.
    """

    def __init__(
        self,
        chunkers: Chunkers,
        stored: Mapping[str, str | None],
        fresh: frozenset[tuple[str, int, int, int, int]] = frozenset(),
    ) -> None:
        self.chunkers = chunkers
        #: The content hash recorded for each document of the store (empty for a new one).
        self.stored = stored
        #: (document id, size, mtime_ns, ctime_ns, inode) of each document whose file's
        #: state is recorded: a listed file found here is unchanged without being read.
        self.fresh = fresh
        #: A file changed at or after this time (ns since the epoch) has its state left
        #: unrecorded: the next run reads it again.
        self.trusted_before_ns = time.time_ns() - RACY_SECONDS * 10**9

    def unchanged(self, file: File, document_id: str) -> bool:
        """Whether a listed file is unchanged by its state alone: the state the store
        recorded, so its file need not be read."""
        return (document_id, file.size, file.mtime_ns, file.ctime_ns, file.inode) in self.fresh

    def file_state(self, info: os.stat_result) -> FileState | None:
        """What to record of a file read with this state (None: too recent to trust)."""
        if max(info.st_mtime_ns, info.st_ctime_ns) >= self.trusted_before_ns:
            return None
        return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)

    def __call__(self, batch: Sequence[File]) -> BatchResult:
        """Read, compare, cut and prepare the rows of one batch (runs in a worker)."""
        result = BatchResult()
        written = StoreBatch()
        run: list[Pending] = []
        run_markdown = False
        for file in batch:
            document_id = document_id_of(file.path)
            if self.unchanged(file, document_id):  # the run settles these before batching
                result.unchanged += 1
                result.documents += 1
                result.bytes_read += file.size
                continue
            data, info = read_source(file)
            if data is None:
                result.skips.append(info)  # type: ignore[arg-type]
                continue
            assert isinstance(info, os.stat_result)
            digest = content_hash(data)
            state = self.file_state(info)
            if self.stored.get(document_id, "") == digest:
                result.unchanged += 1
                result.documents += 1
                result.bytes_read += len(data)
                if state is not None:
                    written.refreshed.append((*state, document_id))
                continue
            markdown = self.chunkers.is_markdown(file.path)
            if run and markdown != run_markdown:
                self._cut(run, run_markdown, result, written)
            run_markdown = markdown
            run.append(Pending(file, document_id, data, digest, state))
        self._cut(run, run_markdown, result, written)
        result.parts.append(Part(written, [], []))
        return result

    def _cut(
        self, run: list[Pending], markdown: bool, result: BatchResult, written: StoreBatch
    ) -> None:
        """Cut a run of files of one chunker (one core call) and count them; empties ``run``."""
        if not run:
            return
        chunker = self.chunkers.markdown if markdown else self.chunkers.text
        cut, errors, sizes = _core.cut_for_store(
            chunker._levels(),
            [pending.data for pending in run],
            [pending.document_id for pending in run],
            chunker.fingerprint(),
            [pending.digest for pending in run],
            [pending.state for pending in run],
        )
        for pending, error in zip(run, errors, strict=True):
            path = pending.file.path
            if error is None:
                result.documents += 1
                result.bytes_read += len(pending.data)
                if pending.document_id in self.stored:
                    result.replaced += 1
                else:
                    result.added += 1
            elif error.startswith("not UTF-8"):
                result.skips.append((path, NOT_UTF8, error))
            else:
                result.skips.append((path, NOT_CHUNKED, error))
        if len(cut):
            written.cut.append(cut)
        result.sizes.merge(sizes)
        run.clear()


def fresh_states(
    states: Iterable[tuple[str, str | None, int | None, int | None, int | None, int | None]],
) -> frozenset[tuple[str, int, int, int, int]]:
    """The documents whose file state is recorded, as ``StoreJob.fresh`` looks them up."""
    return frozenset(
        (document_id, size, mtime_ns, ctime_ns, inode)
        for document_id, digest, size, mtime_ns, ctime_ns, inode in states
        if digest is not None and size is not None
    )


# --------------------------------------------------------------------------------------------
# Which stored documents a run covers, for --prune.


def covered_by(paths: Sequence[str], globs: Globs) -> Callable[[str], bool]:
    """Whether a stored document id lies where this run looked: it is a PATH argument, or a
    file inside a PATH folder (existing or gone) that the run would have picked (not hidden,
    and chosen by the globs, which match on the path relative to that PATH)."""
    roots = [document_id_of(path) for path in paths]
    folders = [root for root in roots if not os.path.isfile(root)]

    def covers(document_id: str) -> bool:
        if document_id in roots:
            return True
        for folder in folders:
            if folder == os.curdir:
                if os.path.isabs(document_id) or document_id.split(os.sep, 1)[0] == os.pardir:
                    continue
                relative = document_id
            elif document_id.startswith(folder.rstrip(os.sep) + os.sep):
                relative = document_id[len(folder.rstrip(os.sep)) + 1 :]
            else:
                continue
            parts = relative.split(os.sep)
            if any(part.startswith(".") for part in parts):
                continue
            # An excluded folder is not walked: nothing under it is gone.
            if globs.exclude and any(
                globs.excludes("/".join(parts[:depth])) for depth in range(1, len(parts))
            ):
                continue
            if globs.picks("/".join(parts)):
                return True
        return False

    return covers


def gone_documents(
    stored: Iterable[str], listed: set[str], covers: Callable[[str], bool]
) -> list[str]:
    """The stored documents this run covers whose files it did not find."""
    return [
        document_id for document_id in stored if document_id not in listed and covers(document_id)
    ]
