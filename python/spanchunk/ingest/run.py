"""One ingestion run: the walk, the pool, a sink for the batches, the stat cache and prune.

Every run (``sync``, and each of the command line's outputs) is :func:`run_files` over a
:class:`Sink`: the files of the PATHs are listed as the folders are read (in the core), the
run's own output files left out, batches of them cut on the workers and handed to the sink
in input order. Into a store, the files whose recorded state holds are settled by the walk
without being read, and at the end the documents whose files are gone are counted or
pruned (``prune.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from spanchunk.ingest.files import (
    MISSING,
    OWN_OUTPUT,
    UNREADABLE,
    File,
    Globs,
    start_walk,
    walk_files,
)
from spanchunk.ingest.pool import default_workers, run_batches
from spanchunk.ingest.prune import covered_by, gone_documents, under
from spanchunk.ingest.report import Progress, SyncReport
from spanchunk.ingest.store_sink import StoreSink

if TYPE_CHECKING:
    from spanchunk import _core
    from spanchunk.ingest.formats import FileChunkers
    from spanchunk.ingest.jobs import BatchJob, BatchResult
    from spanchunk.ingest.output import OwnFiles

__all__ = ["NothingChunked", "Quiet", "Sink", "run_files"]


class NothingChunked(Exception):
    """No file of the run could be chunked (and nothing was pruned): nothing is written."""


class Sink(Protocol):
    """Where a run's batches go: an output file, or a store."""

    #: The batches' bytes and files at most (``pool.batches``; None: its defaults).
    batch_bytes: int | None
    batch_files: int | None

    def job(self, chunkers: FileChunkers) -> BatchJob:
        """What the workers do with each batch of files for this sink."""
        ...

    def write(self, written: Any, sources: Sequence[str], document_ids: Sequence[str]) -> None:
        """Take one batch's output."""
        ...

    def commit(self) -> None:
        """Finish: the output appears (or the store's last records are written)."""
        ...

    def discard(self) -> None:
        """Drop what is not committed (the run failed or was interrupted)."""
        ...


class Quiet(Progress):
    """A :class:`Progress` that says nothing (the protocol's own methods do nothing)."""


class Options(NamedTuple):
    """How a run picks, reads and reports its files (``run_files``'s keywords)."""

    globs: Globs = Globs()
    workers: int | None = None
    pool: str = "thread"
    own: OwnFiles | None = None
    stdin: File | None = None
    prune: bool | str = False
    count_sources: Callable[[Iterable[str]], int] | None = None
    require_documents: bool = False


def run_files(
    paths: Sequence[str],
    sink: Sink,
    chunkers: FileChunkers,
    report: SyncReport,
    *,
    progress: Progress | None = None,
    **options: Any,
) -> SyncReport:
    """Cut the files of ``paths`` (``-``: the ``stdin`` option's document) into ``sink``,
    counting what happened in ``report``; see the module's docstring and :class:`Options`
    for the keywords. ``sink.commit()`` ends a run that succeeds, ``sink.discard()`` one
    that raises.

    Raises:
        NothingChunked: ``require_documents`` and no file was chunked nor pruned (the sink
            is discarded).
    """
    started = time.perf_counter()
    run = _Run(paths, sink, report, progress or Quiet(), Options(**options))
    # The folders are listed from now on, while the sink reads what it needs (a store's
    # records).
    walk = start_walk(run.walked, run.options.globs)
    try:
        job = sink.job(chunkers)
        run.cut(walk, job)
        run.finish()
    except BaseException:
        run.progress.close()
        sink.discard()
        raise
    report.seconds = time.perf_counter() - started
    return report


class _Run:
    """The state of one run: what it listed, what it could not reach, where it reports."""

    def __init__(
        self,
        paths: Sequence[str],
        sink: Sink,
        report: SyncReport,
        progress: Progress,
        options: Options,
    ) -> None:
        self.paths = paths
        self.walked = [path for path in paths if path != "-"]
        self.named = set(paths)
        self.sink = sink
        self.store = sink if isinstance(sink, StoreSink) else None
        self.report = report
        self.progress = progress
        self.options = options
        #: The document ids of the files handed to the job (into a store).
        self.listed: set[str] = set()
        #: PATHs that do not exist and folders that cannot be listed, resolved.
        self.unreachable: list[str] = []

    def skip(self, path: str, kind: str, message: str) -> None:
        """A path the walk skips."""
        if kind == MISSING and path in self.named:
            self.report.missing.append(path)
        if (kind == MISSING and path in self.named) or kind == UNREADABLE:
            # A PATH that does not exist, or a folder that cannot be listed: what the store
            # holds under it is kept (unless prune="all").
            self.unreachable.append(os.path.realpath(path))
        self.report.add_skip(path, kind, message)
        self.progress.skip(path, kind, message)

    def settled(self, path: str, index: int) -> None:
        """A file the store recorded as skipped, whose state holds: skipped again unread."""
        assert self.store is not None and self.store.recorded is not None
        _, kind, message = self.store.recorded.skip_row(index)[:3]
        self.report.add_skip(path, kind, message)
        self.progress.skip(path, kind, message)
        self.progress.advance(1, 0)

    def consume(self, batch: Sequence[File], result: BatchResult) -> None:
        """A batch's result, in input order: to the sink, and counted."""
        for part in result.parts:
            self.sink.write(part.written, part.sources, part.document_ids)
        for path, kind, message in result.skips:
            self.report.add_skip(path, kind, message)
            self.progress.skip(path, kind, message)
        count_sources = self.options.count_sources
        if count_sources is not None:
            self.report.source_as_text += count_sources(
                file.path for file in batch
            ) - count_sources(path for path, _kind, _message in result.skips)
        if self.store is not None:
            self.store.skipped.extend(result.skipped_files)
        self.report.add_batch(result)
        self.progress.advance(len(batch), result.bytes_read)

    def cut(self, walk: _core.FileWalk, job: BatchJob) -> None:
        """Every file the walk finds, cut in batches on the pool."""
        recorded = self.store.recorded if self.store is not None else None
        if recorded is not None:
            walk.settle_with(recorded)
        settled = self.settled if recorded is not None else None
        files = _own_left_out(_walked(walk, self.skip, settled), self.options.own, self.skip)
        if self.options.stdin is not None:
            files = _then(files, self.options.stdin)
        if self.progress.wants_totals():
            every = list(files)
            self.progress.start(len(every), sum(file.size for file in every))
            files = iter(every)
        if self.store is not None:
            files = _listed(files, self.listed, self.store)
        run_batches(
            files,
            job,
            self.options.workers or default_workers(),
            self.options.pool,
            self.consume,
            sizes=(self.sink.batch_bytes, self.sink.batch_files),
        )
        self.progress.close()

    def finish(self) -> None:
        """Count what the walk settled, prune (into a store), and commit the sink."""
        report = self.report
        store = self.store
        if store is not None and store.recorded is not None:
            unchanged, unchanged_bytes = store.recorded.unchanged()
            report.documents += unchanged
            report.unchanged += unchanged
            report.bytes_read += unchanged_bytes
            report.unchanged_bytes += unchanged_bytes
            report.skipped.update(store.recorded.quiet_settled_kinds())
            self.gone(store, store.recorded)
        if self.options.require_documents and not (
            report.documents or report.pruned or report.unreachable
        ):
            raise NothingChunked(_nothing_chunked(report, len(self.paths)))
        self.sink.commit()
        if store is not None:
            report.change_number = store.change_number

    def gone(self, sink: StoreSink, recorded: _core.RecordedFiles) -> None:
        """The store's documents whose files are gone (``listed``: the document ids of the
        files the run handed to the job; the walk knows those it settled): removed with
        ``prune``, else counted. Those under a PATH or folder the run could not reach are
        kept, unless ``prune == "all"``."""
        listed = self.listed
        prune = self.options.prune
        covers = covered_by(self.walked, self.options.globs)
        sink.replaces = lambda path: path in listed or recorded.seen(path) or covers(path)
        inside = under(self.unreachable) if self.unreachable and prune != "all" else None
        gone, kept = gone_documents(recorded.unseen_documents(), listed, covers, inside)
        report = self.report
        report.unreachable = len(kept)
        if prune:
            sink.prune(gone)
            report.pruned = len(gone)
            # A PATH that is gone but whose documents the store held: pruned, not missing.
            pruned = set(gone)
            report.missing = [
                path for path in report.missing if os.path.realpath(path) not in pruned
            ]
        else:
            report.gone = len(gone)


def _walked(
    walk: _core.FileWalk,
    skip: Callable[[str, str, str], None],
    settled: Callable[[str, int], None] | None,
) -> Iterator[File]:
    return walk_files(walk, skip, settled)


def _own_left_out(
    files: Iterator[File], own: OwnFiles | None, skip: Callable[[str, str, str], None]
) -> Iterator[File]:
    """The files less the run's own output files (left out, counted quietly)."""
    if own is None:
        yield from files
        return
    for file in files:
        if file in own:
            skip(file.path, OWN_OUTPUT, "the run's own output, never an input")
        else:
            yield file


def _then(files: Iterator[File], last: File) -> Iterator[File]:
    yield from files
    yield last


def _listed(files: Iterator[File], listed: set[str], sink: StoreSink) -> Iterator[File]:
    """The files, each one's document id put into ``listed``, the store's content hashes
    read before the first. The files whose state is the one the store recorded never come
    here: the walk settles them in the core (``_core.RecordedFiles``)."""
    add = listed.add
    for file in files:
        sink.load_hashes()
        add(file.document_id())
        yield file


def _nothing_chunked(report: SyncReport, paths: int) -> str:
    """Why a run chunked nothing, by reason, with the fix where there is one."""
    skipped = {kind: count for kind, count in report.skipped.items() if kind != OWN_OUTPUT}
    if not skipped:
        if report.missing and len(report.missing) == paths:
            return "no file could be chunked: no PATH given exists"
        return "no files found (hidden files and folders are skipped; check the PATHs and -g globs)"
    reasons = ", ".join(f"{count} {kind}" for kind, count in sorted(skipped.items()))
    advice = ""
    if "not UTF-8" in skipped:
        advice = "; for text in another encoding, add --input-encoding (e.g. latin-1)"
    elif set(skipped) == {"binary"}:
        advice = "; binary files (a NUL byte in the first 8 KB) are never chunked"
    return f"no file could be chunked: {reasons}{advice}"
