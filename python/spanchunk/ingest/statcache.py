"""The stat cache: what a store recorded of each file decides whether the file is read, and
whether it is cut again.

Each file is one document, whose id is its resolved path (``reading.document_id``),
recorded with a hash of the file's bytes and the state of the file when it was read (size,
modification and status change times in ns, inode: a stat cache, as git's index keeps). A
file whose state is the one recorded is not read at all (the walk settles it in the core,
``_core.RecordedFiles``); any other is read and hashed, and one whose hash is the one
recorded is not cut (its new state is recorded); a changed file replaces its document, a
new one is added. Files skipped as binary or not text are recorded with their state too,
so a re-run skips them again without reading them.

The stat cache trusts a file's recorded state only when the file had not changed for
``RACY_SECONDS`` before the run that recorded it started (git's "racily clean" entries): a
file rewritten twice within one tick of the file system's clock, with the same size, could
otherwise keep its first state with its second content. A file changed since, even with its
size and modification time put back (``touch -d``, ``rsync -t``), has a new status change
time, so it is read again.

Speed: ``benches/NOTES.md``, under ``python/spanchunk/ingest/statcache.py``.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from spanchunk import _core
from spanchunk.chunkers import hooks
from spanchunk.chunkers.settings import DEFAULT_PAGE_PATTERN, fingerprint_of
from spanchunk.chunkers.spans import core_levels
from spanchunk.ingest.files import BINARY, NOT_CHUNKED, NOT_UTF8
from spanchunk.ingest.jobs import BatchResult, Part
from spanchunk.ingest.output import OutputError
from spanchunk.ingest.reading import Skip, content_hash, read_source
from spanchunk.stores.records import FileState

if TYPE_CHECKING:
    from spanchunk.ingest.files import File
    from spanchunk.ingest.formats import FileChunkers
    from spanchunk.stores.sqlite import SqliteRegistry

__all__ = [
    "RACY_SECONDS",
    "CutBatch",
    "SkippedFile",
    "StoreJob",
    "check_store_settings",
    "fresh_states",
    "run_fingerprint",
    "run_meta",
]


#: A file's recorded state is trusted only when the file had not changed (mtime and ctime)
#: for this long before the run started: more than the coarsest file system clock's tick
#: (FAT's 2 s).
RACY_SECONDS = 3


#: The ``meta`` key of the command line's settings that filled the store (JSON).
SETTINGS_KEY = "cli_settings"
#: The ``meta`` key of the page marker patterns that filled the store (JSON).
PAGES_KEY = "page_patterns"


def run_meta(chunkers: FileChunkers) -> dict[str, str]:
    """What a run records in a new store's ``meta`` table: how its documents are keyed, and
    the command line's settings (so that a run with others can name each difference)."""
    import json  # noqa: PLC0415

    return {
        SETTINGS_KEY: json.dumps(chunkers.settings or {}, sort_keys=True),
        PAGES_KEY: json.dumps(_page_patterns(chunkers)),
    }


def check_store_settings(
    store: SqliteRegistry, given: str, chunkers: FileChunkers, fingerprint: str
) -> None:
    """Refuse a run into a store filled with other settings (naming each setting that
    differs, with both values, and the fix).

    Raises:
        OutputError: the store cannot take this run's chunks.
    """
    import json  # noqa: PLC0415

    meta = store.meta()
    recorded = meta.get("fingerprint")
    if recorded is None or recorded == fingerprint:
        return
    fix = f"chunk into a new store (another name, or remove {given} first)"
    theirs = json.loads(meta[SETTINGS_KEY]) if SETTINGS_KEY in meta else None
    ours = chunkers.settings or {}
    if theirs and not ours:
        options = " ".join(
            filter(None, (option_text(name, value) for name, value in sorted(theirs.items())))
        )
        raise OutputError(
            f"{given}: the store was filled by the command line with {options.strip()}, "
            f"which this chunker's settings do not match (fingerprint {recorded}; this "
            f"chunker's {fingerprint}): {fix}"
        )
    if theirs:
        differences = [
            (name, theirs.get(name), ours.get(name))
            for name in sorted(set(theirs) | set(ours))
            if theirs.get(name) != ours.get(name)
        ]
        if differences:
            said = "; ".join(
                f"{option_name(name)}: the store has {option_value(old)}, "
                f"this run {option_value(new)}"
                for name, old, new in differences
            )
            # The store's options, and "without" those it was filled without.
            options = " ".join(
                option_text(name, old) or f"without {option_text(name, new)}"
                for name, old, new in differences
                if option_text(name, old) or option_text(name, new)
            )
            raise OutputError(
                f"-o {given}: the store was filled with other settings ({said}), and a store "
                f"keeps one set: run with the store's ({options}), or {fix}"
            )
    # The same cut, other page markers.
    base = _chunkers_fingerprint(chunkers)
    stored = json.loads(meta[PAGES_KEY]) if PAGES_KEY in meta else None
    if recorded == base or (
        stored is not None and recorded == fingerprint_of({"fingerprint": base, "pages": stored})
    ):
        raise OutputError(
            f"{given}: the store's chunks were cut as this run's, with other page markers (the "
            f"store: {_pages_text(stored or [DEFAULT_PAGE_PATTERN])}; this run: "
            f"{_pages_text(_page_patterns(chunkers))}), and a store keeps the pages of one "
            f"setting: give the chunker the store's pages, or {fix}"
        )
    # The same sizes, one chunker: a store filled with --format text or markdown (or by the
    # API's chunker with these settings).
    ones = [("text", chunkers.text), ("markdown", chunkers.markdown)]
    for name, chunker in [*ones, *([("html", chunkers.html)] if chunkers.html else [])]:
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
    if setting == "pages":
        return "--no-pages" if value is False else f"--pages {shlex.quote(str(value))}"
    return f"{option_name(setting)} {option_value(value)}"


def option_value(value: object) -> str:
    """A recorded setting's value as the command line takes it (a list of sizes as
    ``1600,400,100``; None as ``none``)."""
    if value is None:
        return "none"
    if value is False:
        return "off"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value)


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


def run_fingerprint(chunkers: FileChunkers) -> str:
    """The fingerprint a run records in the store: that of its one chunker with ``--format
    text``, ``markdown`` or ``code --language`` (the API's chunker with those settings can
    add to the store), of all of them with ``auto`` (and ``code``); with page markers other
    than the defaults (``--pages``, ``--no-pages``), folded with them: pages change no id,
    but a store keeps the pages of one setting."""
    fingerprint = _chunkers_fingerprint(chunkers)
    pages = _page_patterns(chunkers)
    if all(pattern == DEFAULT_PAGE_PATTERN for pattern in pages):
        return fingerprint
    return fingerprint_of({"fingerprint": fingerprint, "pages": pages})


def _pages_text(patterns: Sequence[str | None]) -> str:
    """How a run's page markers read in a message."""
    if all(pattern == DEFAULT_PAGE_PATTERN for pattern in patterns):
        return "the default markers"
    if all(pattern is None for pattern in patterns):
        return "no pages (pages=False, --no-pages)"
    other = next(pattern for pattern in patterns if pattern != DEFAULT_PAGE_PATTERN)
    return f"pages={other!r}"


def _page_patterns(chunkers: FileChunkers) -> list[str | None]:
    """The page marker pattern of each chunker's top level when it is built in (None: no
    pages); a top level cut in Python marks none, whatever its settings."""
    everyone = [chunkers.text, chunkers.markdown, *(chunker for _, chunker in chunkers.code)]
    if chunkers.html is not None:
        everyone.append(chunkers.html)
    patterns: list[str | None] = []
    for chunker in everyone:
        levels = hooks.levels(chunker)
        if levels and isinstance(levels[0], _core.Splitter):
            patterns.append(levels[0].pages)
    return patterns


def _chunkers_fingerprint(chunkers: FileChunkers) -> str:
    if chunkers.format == "text":
        return chunkers.text.fingerprint()
    if chunkers.format == "markdown":
        return chunkers.markdown.fingerprint()
    if chunkers.format == "code" and chunkers.language is not None:
        return chunkers.code[0][1].fingerprint()
    if chunkers.format == "html" and chunkers.html is not None:
        return chunkers.html.fingerprint()
    parts: dict[str, Any] = {
        "text": chunkers.text.fingerprint(),
        "markdown": chunkers.markdown.fingerprint(),
    }
    if chunkers.code:
        parts["code"] = {
            language or "each": chunker.fingerprint() for language, chunker in chunkers.code
        }
    if chunkers.html is not None:
        parts["html"] = chunkers.html.fingerprint()
    if chunkers.format == "code":
        parts["format"] = "code"
    return fingerprint_of(parts)


class Pending(NamedTuple):
    """A file read, to be cut."""

    file: File
    document_id: str
    data: bytes
    digest: str
    state: FileState | None


class CutBatch:
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
        chunkers: FileChunkers,
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
            file.document_id(),
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
        written = CutBatch()
        run: list[Pending] = []
        run_chunker = 0
        for file in batch:
            document_id = file.document_id()
            # The files whose state is the one recorded never come here: the walk settles
            # them in the core (``_core.RecordedFiles``).
            read = read_source(file, self.chunkers.input_encoding)
            if isinstance(read, Skip):
                result.skips.append((read.path, read.kind, read.message))
                result.stale += document_id in self.stored
                if read.kind != NOT_UTF8 or self.chunkers.input_encoding is None:
                    record = self.skip_record(file, read.kind, read.message)
                    if record is not None:
                        result.skipped_files.append(record)
                continue
            data, info = read
            digest = content_hash(data)
            state = None if info is None else self.file_state(info)
            if self.stored.get(document_id, "") == digest:
                result.unchanged += 1
                result.documents += 1
                result.bytes_read += len(data)
                result.unchanged_bytes += len(data)
                if state is not None:
                    written.refreshed.append((*state, document_id))
                continue
            chunker = self.chunkers.chunker_index(file.path)
            if run and chunker != run_chunker:
                self._cut(run, run_chunker, result, written)
            run_chunker = chunker
            run.append(Pending(file, document_id, data, digest, state))
        self._cut(run, run_chunker, result, written)
        result.parts.append(Part(written, [], []))
        return result

    def _cut(
        self, run: list[Pending], position: int, result: BatchResult, written: CutBatch
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
                result.stale += pending.document_id in self.stored
                record = self.skip_record(pending.file, NOT_UTF8, error)
                if record is not None:
                    result.skipped_files.append(record)
            else:
                result.skips.append((path, NOT_CHUNKED, error))
                result.stale += pending.document_id in self.stored
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
