"""``spanchunk chunk --dry-run``: what a run would read and do, on stdout; nothing written.

Each file the run would look at gets one line: ``add`` (a new document), ``replace`` (a
store's document whose file changed), ``unchanged`` (a store's document whose file did not:
not cut again), ``skip`` (binary, not text, unreadable; with the reason), and, into a store,
``prune`` for the documents ``--prune`` would remove (``gone`` without it; ``keep`` for
those under a PATH or folder that cannot be read, which only ``--prune=all`` removes). Into a
store, ``add``, ``replace`` and ``prune`` say how many chunk ids each would add and delete
(``+3 -1 chunks``): the files that would be cut are cut in memory.
Paths are shown on one line each (``ingest.files.shown``). A last line
counts them. Files are read only as far as deciding needs: a store's files whose recorded
state holds are not read, a binary no further than its first 8 KB, text whole (to check
that it is text and, for a store, to hash it). The output is never opened for writing, no
lock is taken and no temporary file is made.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import TYPE_CHECKING

from spanchunk import _core
from spanchunk.ingest.files import MISSING, File, iter_files, shown
from spanchunk.ingest.output import OutputError, OwnFiles
from spanchunk.ingest.prune import covered_by, gone_documents, under
from spanchunk.ingest.reading import Skip, content_hash, read_document, read_source

if TYPE_CHECKING:
    from spanchunk.cli import ChunkRun
    from spanchunk.ingest.statcache import StoreJob
    from spanchunk.stores.sqlite import SqliteRegistry

__all__ = ["DryRun"]

#: The actions a dry run counts, in the order its last line gives them.
ACTIONS = ("add", "replace", "unchanged", "prune", "gone", "keep", "skip")


class DryRun:
    """One dry run: the files a run would look at, and what it would do with each."""

    def __init__(self, run: ChunkRun) -> None:
        self.run_settings = run
        self.counts: Counter[str] = Counter()
        #: Into a store: the chunk ids the run would add and delete, every level.
        self.chunks: Counter[str] = Counter()
        self.missing: list[str] = []
        self.unreachable: list[str] = []
        self.job: StoreJob | None = None
        self.store: SqliteRegistry | None = None

    def say(self, action: str, path: str, why: str = "") -> None:
        """One line of the listing (the path on one line: see ``ingest.files.shown``)."""
        self.counts[action] += 1
        print(f"{action:<9} {shown(path)}" + (f"  ({why})" if why else ""), file=sys.stdout)

    def run(self, stdin: File | None) -> int:
        """List what the run would do; the exit status it would have (0, or 1 for a missing
        PATH or nothing to chunk; 2 for a store it could not update)."""
        settings = self.run_settings
        refused = self._open_store()
        if refused is not None:
            print(f"spanchunk: error: {refused}", file=sys.stderr)
            return 2
        named = set(settings.paths)

        def report_skip(path: str, reason: str, message: str) -> None:
            if reason == MISSING and path in named:
                self.missing.append(path)
            if (reason == MISSING and path in named) or reason == "unreadable":
                self.unreachable.append(os.path.realpath(path))
            self.say("skip", path, message)

        paths = [path for path in settings.paths if path != "-"]
        files = list(iter_files(paths, settings.globs, report_skip))
        if stdin is not None:
            files.append(stdin)
        own = OwnFiles(settings.target)
        listed: set[str] = set()
        for file in files:
            if file in own:
                self.say("skip", file.path, "the run's own output, never an input")
            else:
                listed.add(self._file(file))
        self._gone(paths, listed)
        said = ", ".join(f"{self.counts[a]} {a}" for a in ACTIONS if self.counts[a])
        where = "stdout" if settings.target.path == "-" else settings.target.given
        if self.store is not None and (self.chunks["added"] or self.chunks["deleted"]):
            said += f"; chunks +{self.chunks['added']} -{self.chunks['deleted']}"
        print(f"dry run into {where}: {said or 'nothing to do'}; nothing written")
        if self.missing:
            print(f"spanchunk: error: PATH not found: {', '.join(self.missing)}", file=sys.stderr)
            return 1
        done = ("add", "replace", "unchanged", "prune")
        return 0 if any(self.counts[action] for action in done) else 1

    def _open_store(self) -> str | None:
        """Open an existing store read for its documents; why it cannot take the run."""
        from spanchunk.cli._writers import SqliteWriter  # noqa: PLC0415
        from spanchunk.ingest.statcache import (  # noqa: PLC0415
            SkippedFile,
            StoreJob,
            check_store_settings,
            fresh_states,
            run_fingerprint,
        )
        from spanchunk.stores.sqlite import SqliteRegistry  # noqa: PLC0415

        settings = self.run_settings
        if settings.kind is not SqliteWriter or not settings.target.exists:
            return None
        try:
            self.store = SqliteRegistry(settings.target.path, create=False)
        except ValueError as error:
            return f"-o {settings.target.given}: {error}"
        try:
            check_store_settings(
                self.store,
                settings.target.given,
                settings.chunkers,
                run_fingerprint(settings.chunkers),
            )
        except OutputError as error:
            self.store.close()
            return str(error)
        states = self.store.file_states()
        self.job = StoreJob(
            settings.chunkers,
            {document_id: digest for document_id, digest, *_ in states},
            fresh_states(states),
            {row[0]: SkippedFile(*row) for row in self.store.skipped_rows()},
        )
        return None

    def _file(self, file: File) -> str:
        """Say what the run would do with one file; its document id."""
        document_id = file.document_id()
        job = self.job
        if job is not None:
            if job.unchanged(file, document_id):
                self.say("unchanged", file.path)
                return document_id
            record = job.still_skipped(file, document_id)
            if record is not None:
                self.say("skip", file.path, record.message)
                return document_id
        read = read_source(file, self.run_settings.chunkers.input_encoding)
        if isinstance(read, Skip):
            self.say("skip", file.path, read.message)
            return document_id
        data = read[0]
        problem = _core.text_problem(data)
        if problem is not None:
            self.say("skip", file.path, problem)
        elif job is None or document_id not in job.stored:
            self.say("add", file.path, self._chunks(file, document_id))
        elif job.stored[document_id] == content_hash(data):
            self.say("unchanged", file.path)
        else:
            self.say("replace", file.path, self._chunks(file, document_id))
        return document_id

    def _chunks(self, file: File, document_id: str) -> str:
        """Into a store: how many chunk ids (every level) the file's new version adds to its
        document's and how many it deletes (ids follow the text, so a chunk an edit only moved
        is in neither), cutting the file in memory as the run would; else nothing to say."""
        if self.store is None or file.path == "-":
            return ""
        chunkers = self.run_settings.chunkers
        chunker = chunkers.all()[chunkers.chunker_index(file.path)]
        document = read_document(file.path, encoding=chunkers.input_encoding)
        new = {chunk.id for chunk in chunker.chunk_tree(document)}
        old = self.store.document_chunk_ids(document_id)
        added, deleted = len(new - old), len(old - new)
        self.chunks["added"] += added
        self.chunks["deleted"] += deleted
        return f"+{added} -{deleted} chunks"

    def _gone(self, paths: list[str], listed: set[str]) -> None:
        """Say which of a store's documents the run would prune (or count as gone), by
        their paths as the listing gives the others (relative to the working folder when
        inside it)."""
        if self.store is None or self.job is None:
            return
        settings = self.run_settings
        covers = covered_by(paths, settings.globs)
        inside = under(self.unreachable) if self.unreachable and settings.prune != "all" else None
        gone, kept = gone_documents(list(self.job.stored), listed, covers, inside)
        for document_id in gone:
            if settings.prune:
                deleted = len(self.store.document_chunk_ids(document_id))
                self.chunks["deleted"] += deleted
                self.say("prune", _relative(document_id), f"-{deleted} chunks")
            else:
                self.say("gone", _relative(document_id))
        for document_id in kept:
            self.say("keep", _relative(document_id), "under a PATH or folder that cannot be read")
        self.store.close()


def _relative(path: str) -> str:
    """``path`` relative to the working folder when it lies inside it, else as it is."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if relative.startswith(os.pardir) else relative
