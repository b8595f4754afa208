"""The ``.sqlite`` output: parents and children in a ``SqliteRegistry`` file, kept up to date.

A run into a new file builds the store in a temporary file next to it and renames it into
place at the end. A run into an existing store is incremental: each file is one document,
whose id is its resolved path (absolute, links resolved: the same whatever the folder the
run starts in, and the id JSON Lines and Parquet give it too), recorded with a hash of the
file's bytes and the state of the file when it was read (size, modification and status
change times in ns, inode: a stat cache, as git's index keeps). A file whose state is the
one recorded is not read at all; any other is read and hashed, and one whose hash is the one
recorded is not cut (its new state is recorded); a changed file replaces its document, a new
one is added, and with ``--prune`` the documents whose files are gone (among those the run's
PATHs and globs cover) are removed. Every batch of documents is written in one transaction,
so a run that is interrupted or killed leaves each document in its old or its new version.
Files skipped as binary or not text are recorded with their state too (``skipped_files``),
so a re-run skips them again without reading them. A run reads the recorded states from the
store's snapshot of them (``file_states``: one fetch, where the rows of a tree of tens of
thousands of files had been the larger half of a re-run), which any change to the states
deletes and the run that made the change writes again.

The stat cache trusts a file's recorded state only when the file had not changed for
``RACY_SECONDS`` before the run that recorded it started (git's "racily clean" entries): a
file rewritten twice within one tick of the file system's clock, with the same size, could
otherwise keep its first state with its second content. A file changed since, even with its
size and modification time put back (``touch -d``, ``rsync -t``), has a new status change
time, so it is read again.

Speed: ``benches/NOTES.md``, under ``python/spanchunk/cli/_store.py``.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from spanchunk import _core
from spanchunk.chunkers import hooks
from spanchunk.chunkers.settings import fingerprint_of
from spanchunk.chunkers.spans import core_levels
from spanchunk.cli._files import UNREADABLE, Globs
from spanchunk.cli._job import (
    BINARY,
    BINARY_MESSAGE,
    BINARY_PROBE,
    CHANGED,
    NOT_CHUNKED,
    NOT_UTF8,
    BatchResult,
    Chunkers,
    Part,
    decode_input,
    is_binary,
)
from spanchunk.stores.schema import READ_FILE_STATES, WRITE_FILE_STATES

if TYPE_CHECKING:
    from spanchunk.cli._files import File
    from spanchunk.stores.sqlite import SqliteRegistry

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
    """A file's document id, in every output: its resolved path (absolute, every link
    resolved, as ``os.path.realpath`` gives it), so ``./docs/a.md``, ``docs/a.md`` and
    ``../x/docs/a.md`` are one document whatever the working directory, and two files with
    the same text are two documents."""
    return os.path.realpath(path)


def file_document_id(file: File) -> str:
    """The document id of a listed file (the walk resolved its path already)."""
    return file.resolved or os.path.realpath(file.path)


#: The ``meta`` key that says a store's documents are keyed by resolved paths (stores of
#: earlier versions keyed them by the paths as given, relative to the run's folder).
DOCUMENT_IDS_KEY = "document_ids"
DOCUMENT_IDS = "resolved paths"
#: The ``meta`` key of the command line's settings that filled the store (JSON).
SETTINGS_KEY = "cli_settings"


def run_meta(chunkers: Chunkers) -> dict[str, str]:
    """What a run records in a new store's ``meta`` table: how its documents are keyed, and
    the command line's settings (so that a run with others can name each difference)."""
    import json  # noqa: PLC0415

    return {
        DOCUMENT_IDS_KEY: DOCUMENT_IDS,
        SETTINGS_KEY: json.dumps(chunkers.settings or {}, sort_keys=True),
    }


def _has_chunks(store: SqliteRegistry) -> bool:
    with store._read() as connection:
        return connection.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None


def _meta(store: SqliteRegistry) -> dict[str, str]:
    with store._read() as connection:
        return dict(connection.execute("SELECT key, value FROM meta").fetchall())


def check_store_settings(
    store: SqliteRegistry, given: str, chunkers: Chunkers, fingerprint: str
) -> None:
    """Refuse a run into a store filled with other settings (naming each setting that
    differs, with both values, and the fix), or by an earlier spanchunk whose document ids
    were the paths as given.

    Raises:
        OutputError: the store cannot take this run's chunks.
    """
    import json  # noqa: PLC0415

    from spanchunk.cli._output import OutputError  # noqa: PLC0415

    meta = _meta(store)
    recorded = meta.get("fingerprint")
    if meta.get(DOCUMENT_IDS_KEY) != DOCUMENT_IDS and _has_chunks(store):
        raise OutputError(
            f"-o {given}: the store was filled by an earlier spanchunk, whose document ids "
            "were file paths as given (relative to the folder it ran in); ids are now "
            "resolved paths, so its documents cannot be matched to files: chunk into a new "
            f"store (another -o name, or remove {given} first)"
        )
    if recorded is None or recorded == fingerprint:
        return
    fix = f"chunk into a new store (another -o name, or remove {given} first)"
    theirs = json.loads(meta[SETTINGS_KEY]) if SETTINGS_KEY in meta else None
    ours = chunkers.settings or {}
    if theirs:
        differences = [
            (name, theirs.get(name), ours.get(name))
            for name in sorted(set(theirs) | set(ours))
            if theirs.get(name) != ours.get(name)
        ]
        if differences:
            said = "; ".join(
                f"{option_name(name)}: the store has {_shown(old)}, this run {_shown(new)}"
                for name, old, new in differences
            )
            options = " ".join(
                option_text(name, old) for name, old, _ in differences if option_text(name, old)
            )
            raise OutputError(
                f"-o {given}: the store was filled with other settings ({said}), and a store "
                f"keeps one set: run with the store's ({options}), or {fix}"
            )
    # The same sizes, one chunker: a store filled with --format text or markdown (or by the
    # API's chunker with these settings).
    for name, chunker in (("text", chunkers.text), ("markdown", chunkers.markdown)):
        if recorded == chunker.fingerprint():
            raise OutputError(
                f"-o {given}: the store was filled with --format {name} and these settings: "
                f"add --format {name} to update it"
            )
    raise OutputError(
        f"-o {given}: the store holds chunks made with other settings (fingerprint "
        f"{recorded}; these settings give {fingerprint}), and a store keeps one: run with the "
        f"settings that filled it, or {fix}"
    )


def option_name(setting: str) -> str:
    """The command line's option for a recorded setting (``child_size``: ``--child-size``)."""
    return "--" + setting.replace("_", "-")


def option_text(setting: str, value: object) -> str:
    """The option that sets ``setting`` to ``value``, as typed."""
    if value is None:
        return ""
    return f"{option_name(setting)} {value}"


def _shown(value: object) -> str:
    return "none" if value is None else str(value)


class SkippedFile(NamedTuple):
    """A file a store run skipped (binary, not text): recorded with its state, so the next
    run into the store does not read it again while that state holds."""

    path: str
    kind: str
    message: str
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int

    def state(self) -> tuple[int, int, int, int]:
        """The state compared with a listed file's."""
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode)


#: The kinds of skipped files a store remembers: those a re-read cannot change while the
#: file's state holds.
REMEMBERED_SKIPS = frozenset({BINARY, NOT_UTF8})


SkipRow = tuple[str, str, str, int, int, int, int]
"""A row of a store's ``skipped_files`` table, the fields of a :class:`SkippedFile`."""


def recorded_states(
    store: SqliteRegistry,
) -> list[tuple[str, int, int | None, int | None, int | None, int | None]]:
    """(id, whether a content hash is recorded, file size, mtime_ns, ctime_ns, inode) of
    every document, in one query: what the walk settles a listed file by (the hashes
    themselves are read only when a file is read: 64 characters a document)."""
    with store._read() as connection:
        return cast(
            "list[tuple[str, int, int | None, int | None, int | None, int | None]]",
            connection.execute(
                "SELECT document_id, content_hash IS NOT NULL, file_size, file_mtime_ns, "
                "file_ctime_ns, file_inode FROM documents"
            ).fetchall(),
        )


def recorded_files(store: SqliteRegistry, quiet: Set[str]) -> _core.RecordedFiles:
    """What the store recorded of its files, for the walk to settle them by their state:
    from the store's snapshot of its file states in one fetch when it has one that reads
    (``file_states``), else from the rows of its two tables."""
    with store._read() as connection:
        snapshot = connection.execute(READ_FILE_STATES).fetchone()
    if snapshot is not None:
        try:
            return _core.RecordedFiles.from_snapshot(snapshot[0], snapshot[1], set(quiet))
        except ValueError:  # not this format (another program wrote it): the rows say it
            pass
    return _core.RecordedFiles(recorded_states(store), read_skipped_rows(store), set(quiet))


def write_file_states(store: SqliteRegistry) -> None:
    """At the end of a run: the store's snapshot of its file states, made again when a
    change deleted it (or the store had none), so the next run reads it in one fetch; a
    run that changed nothing writes nothing."""
    import sqlite3  # noqa: PLC0415

    with store._read() as connection:
        if connection.execute("SELECT 1 FROM file_states").fetchone() is not None:
            return
    try:
        with store._write() as connection:
            connection.execute(WRITE_FILE_STATES)
    except (sqlite3.Error, OSError, TimeoutError):
        # Only a cache: a store the run may not write (read-only, a full disk, another
        # writer holding it) stays as it was, and the next run reads the rows.
        pass


def read_skipped_rows(store: SqliteRegistry) -> list[SkipRow]:
    """The rows of the skipped files a store recorded."""
    with store._read() as connection:
        return cast(
            "list[SkipRow]",
            connection.execute(
                "SELECT path, kind, message, file_size, file_mtime_ns, file_ctime_ns, "
                "file_inode FROM skipped_files"
            ).fetchall(),
        )


def read_skipped(store: SqliteRegistry) -> dict[str, SkippedFile]:
    """The skipped files a store recorded, by resolved path."""
    return {row[0]: SkippedFile(*row) for row in read_skipped_rows(store)}


def record_run(
    store: SqliteRegistry,
    meta: Mapping[str, str],
    skipped: Iterable[SkippedFile],
    *,
    known: Sequence[SkipRow] = (),
    unsettled: Iterable[str] = (),
    replaces: Callable[[str], bool] | None = None,
) -> None:
    """At the end of a run: record the skipped files it read and skipped (``skipped``),
    drop the store's records of the files it replaces (among ``unsettled``, those of the
    store's records, ``known`` when the run started, that the walk did not settle as
    skipped again unread; ``replaces``: the paths the run listed, or covers and did not
    find), and record ``meta`` where the store has none of it yet. A run that found what the
    store recorded writes nothing (a re-run over an unchanged tree stays a read-only run);
    only records not found again are asked about (``replaces`` costs a few microseconds a
    path)."""
    current = {record.path: record for record in skipped}
    stale = [
        (path,)
        for path in unsettled
        if path not in current and replaces is not None and replaces(path)
    ]
    recorded = {row[0]: SkippedFile(*row) for row in known} if current else {}
    changed = [record for path, record in current.items() if recorded.get(path) != record]
    missing_meta = set(meta) - set(_meta(store)) if meta else set()
    if not stale and not changed and not missing_meta:
        return
    with store._write() as connection:
        connection.executemany("DELETE FROM skipped_files WHERE path = ?", stale)
        connection.executemany(
            "INSERT OR REPLACE INTO skipped_files VALUES (?, ?, ?, ?, ?, ?, ?)", changed
        )
        connection.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", list(meta.items()))


def run_fingerprint(chunkers: Chunkers) -> str:
    """The fingerprint a run records in the store: that of its one chunker with ``--format
    text``, ``markdown`` or ``code --language`` (the API's chunker with those settings can
    add to the store), of all of them with ``auto`` (and ``code``)."""
    if chunkers.format == "text":
        return chunkers.text.fingerprint()
    if chunkers.format == "markdown":
        return chunkers.markdown.fingerprint()
    if chunkers.format == "code" and chunkers.language is not None:
        return chunkers.code[0][1].fingerprint()
    parts: dict[str, Any] = {
        "text": chunkers.text.fingerprint(),
        "markdown": chunkers.markdown.fingerprint(),
    }
    if chunkers.code:
        parts["code"] = {language: chunker.fingerprint() for language, chunker in chunkers.code}
    if chunkers.format == "code":
        parts["format"] = "code"
    return fingerprint_of(parts)


def read_source(
    file: File, encoding: str | None = None
) -> tuple[bytes, os.stat_result | None] | tuple[None, tuple[str, str, str]]:
    """A file's bytes and its state when they were read, or why it is skipped: unreadable,
    changed while read, or binary (the checks ``_core.write_files`` makes of the files of
    the other outputs, plus the state). A binary file is read no further than its first
    ``BINARY_PROBE`` bytes (``is_binary``, with the run's ``--input-encoding``). Stdin's
    document has its bytes already, and no state."""
    if file.data is not None:
        if is_binary(file.data, encoding):
            return None, (file.path, BINARY, BINARY_MESSAGE)
        return file.data, None
    try:
        with open(file.path, "rb") as handle:
            before = os.fstat(handle.fileno())
            head = handle.read(BINARY_PROBE)
            if is_binary(head, encoding):
                return None, (file.path, BINARY, BINARY_MESSAGE)
            rest = handle.read()
            after = os.fstat(handle.fileno())
    except OSError as error:
        return None, (file.path, UNREADABLE, error.strerror or str(error))
    data = head + rest if rest else head
    if (
        before.st_size != after.st_size
        or before.st_mtime_ns != after.st_mtime_ns
        or len(data) != after.st_size
    ):
        return None, (file.path, CHANGED, "the file changed while it was read; run again")
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
    """The ``.sqlite`` job on one batch: read and hash the files the walk did not settle by
    their recorded state, and cut those whose hash is not the one the store holds (the dry
    run asks :meth:`unchanged` and :meth:`still_skipped` itself).

    Workers do all of it; a Python loop per file reads and hashes (both release the GIL),
    and one core call per run of files of one chunker cuts and makes the rows.
    """

    def __init__(
        self,
        chunkers: Chunkers,
        stored: Mapping[str, str | None],
        fresh: frozenset[tuple[str, int, int, int, int]] = frozenset(),
        skipped: Mapping[str, SkippedFile] | None = None,
    ) -> None:
        self.chunkers = chunkers
        #: The files the store recorded as skipped, by resolved path.
        self.skipped = skipped or {}
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

    def still_skipped(self, file: File, document_id: str) -> SkippedFile | None:
        """The store's record of a listed file it skipped, when the file's state is the
        one recorded (it need not be read to be skipped again)."""
        record = self.skipped.get(document_id)
        if record is not None and record.state() == (
            file.size,
            file.mtime_ns,
            file.ctime_ns,
            file.inode,
        ):
            return record
        return None

    def skip_record(self, file: File, kind: str, message: str) -> SkippedFile | None:
        """What to record of a file skipped for ``kind`` (None: a kind that a re-read may
        change, or a state too recent to trust)."""
        if kind not in REMEMBERED_SKIPS or file.data is not None:
            return None
        if max(file.mtime_ns, file.ctime_ns) >= self.trusted_before_ns:
            return None
        return SkippedFile(
            file_document_id(file),
            kind,
            message,
            file.size,
            file.mtime_ns,
            file.ctime_ns,
            file.inode,
        )

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
        run_chunker = 0
        for file in batch:
            document_id = file_document_id(file)
            # The files whose state is the one recorded never come here: the walk settles
            # them in the core (``_core.RecordedFiles``).
            data, info = read_source(file, self.chunkers.input_encoding)
            if data is None:
                path, kind, message = cast("tuple[str, str, str]", info)
                result.skips.append((path, kind, message))
                record = self.skip_record(file, kind, message)
                if record is not None:
                    result.skipped_files.append(record)
                continue
            assert info is None or isinstance(info, os.stat_result)
            if self.chunkers.input_encoding is not None:
                decoded = decode_input(data, self.chunkers.input_encoding)
                if isinstance(decoded, str):
                    result.skips.append((file.path, NOT_UTF8, decoded))
                    continue
                data_to_cut = decoded
            else:
                data_to_cut = data
            digest = content_hash(data)
            state = None if info is None else self.file_state(info)
            if self.stored.get(document_id, "") == digest:
                result.unchanged += 1
                result.documents += 1
                result.bytes_read += len(data)
                if state is not None:
                    written.refreshed.append((*state, document_id))
                continue
            chunker = self.chunkers.chunker_index(file.path)
            if run and chunker != run_chunker:
                self._cut(run, run_chunker, result, written)
            run_chunker = chunker
            run.append(Pending(file, document_id, data_to_cut, digest, state))
        self._cut(run, run_chunker, result, written)
        result.parts.append(Part(written, [], []))
        return result

    def _cut(
        self, run: list[Pending], position: int, result: BatchResult, written: StoreBatch
    ) -> None:
        """Cut a run of files of one chunker (``Chunkers.all()[position]``, one core call)
        and count them; empties ``run``."""
        if not run:
            return
        chunker = self.chunkers.all()[position]
        cut, errors, sizes = _core.cut_for_store(
            core_levels(hooks.levels(chunker)),
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
            elif error.startswith("not "):  # not UTF-8, UTF-16LE, ...
                result.skips.append((path, NOT_UTF8, error))
                record = self.skip_record(pending.file, NOT_UTF8, error)
                if record is not None:
                    result.skipped_files.append(record)
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
        if digest is not None
        and size is not None
        and mtime_ns is not None
        and ctime_ns is not None
        and inode is not None
    )


# --------------------------------------------------------------------------------------------
# Which stored documents a run covers, for --prune.


def covered_by(paths: Sequence[str], globs: Globs) -> Callable[[str], bool]:
    """Whether a stored document id lies where this run looked: it is a PATH argument, or a
    file inside a PATH folder (existing or gone) that the run would have picked (not hidden,
    and chosen by the globs, which match on the path relative to that PATH)."""
    roots = [document_id_of(path) for path in paths if path != "-"]
    folders = [root for root in roots if not os.path.isfile(root)]

    def covers(document_id: str) -> bool:
        if document_id in roots:
            return True
        for folder in folders:
            if document_id.startswith(folder.rstrip(os.sep) + os.sep):
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
