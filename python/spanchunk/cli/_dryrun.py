"""``spanchunk chunk --dry-run``: what a run would read and do, on stdout; nothing written.

Each file the run would look at gets one line: ``add`` (a new document), ``replace`` (a
store's document whose file changed), ``unchanged`` (a store's document whose file did not:
not cut again), ``skip`` (binary, not text, unreadable; with the reason), and, into a store,
``prune`` for the documents ``--prune`` would remove (``gone`` without it). A last line
counts them. Files are read only as far as deciding needs: a store's files whose recorded
state holds are not read, a binary no further than its first 8 KB, text whole (to check
that it is text and, for a store, to hash it). The output is never opened for writing, no
lock is taken and no temporary file is made.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

from spanchunk import _core
from spanchunk.cli._files import MISSING, File, Globs, iter_files
from spanchunk.cli._output import OwnFiles, Target

if TYPE_CHECKING:
    from spanchunk.cli._job import Chunkers
    from spanchunk.cli._store import StoreJob
    from spanchunk.cli._writers import Writer
    from spanchunk.stores.sqlite import SqliteRegistry

__all__ = ["DryRun"]

#: The actions a dry run counts, in the order its last line gives them.
ACTIONS = ("add", "replace", "unchanged", "prune", "gone", "skip")


class DryRun:
    """One dry run: the files a run would look at, and what it would do with each."""

    def __init__(
        self,
        args: argparse.Namespace,
        chunkers: Chunkers,
        target: Target,
        kind: type[Writer],
        globs: Globs,
    ) -> None:
        self.args = args
        self.chunkers = chunkers
        self.target = target
        self.kind = kind
        self.globs = globs
        self.counts: Counter[str] = Counter()
        self.missing: list[str] = []
        self.job: StoreJob | None = None
        self.store: SqliteRegistry | None = None

    def say(self, action: str, path: str, why: str = "") -> None:
        """One line of the listing."""
        self.counts[action] += 1
        print(f"{action:<9} {path}" + (f"  ({why})" if why else ""), file=sys.stdout)

    def run(self, stdin: File | None) -> int:
        """List what the run would do; the exit status it would have (0, or 1 for a missing
        PATH or nothing to chunk; 2 for a store it could not update)."""
        refused = self._open_store()
        if refused is not None:
            print(f"spanchunk: error: {refused}", file=sys.stderr)
            return 2
        named = set(self.args.paths)

        def report_skip(path: str, reason: str, message: str) -> None:
            if reason == MISSING and path in named:
                self.missing.append(path)
            self.say("skip", path, message)

        paths = [path for path in self.args.paths if path != "-"]
        files = list(iter_files(paths, self.globs, report_skip))
        if stdin is not None:
            files.append(stdin)
        own = OwnFiles(self.target)
        listed: set[str] = set()
        for file in files:
            if file in own:
                self.say("skip", file.path, "the run's own output, never an input")
            else:
                listed.add(self._file(file))
        self._gone(paths, listed)
        said = ", ".join(f"{self.counts[a]} {a}" for a in ACTIONS if self.counts[a])
        where = "stdout" if self.target.path == "-" else self.target.given
        print(f"dry run into {where}: {said or 'nothing to do'}; nothing written")
        if self.missing:
            print(f"spanchunk: error: PATH not found: {', '.join(self.missing)}", file=sys.stderr)
            return 1
        done = ("add", "replace", "unchanged", "prune")
        return 0 if any(self.counts[action] for action in done) else 1

    def _open_store(self) -> str | None:
        """Open an existing store read for its documents; why it cannot take the run."""
        from spanchunk.cli._output import OutputError  # noqa: PLC0415
        from spanchunk.cli._store import (  # noqa: PLC0415
            StoreJob,
            check_store_settings,
            fresh_states,
            read_skipped,
            run_fingerprint,
        )
        from spanchunk.cli._writers import SqliteWriter  # noqa: PLC0415
        from spanchunk.stores.sqlite import SqliteRegistry  # noqa: PLC0415

        if self.kind is not SqliteWriter or not self.target.exists:
            return None
        try:
            self.store = SqliteRegistry(self.target.path, create=False)
        except ValueError as error:
            return f"-o {self.target.given}: {error}"
        try:
            check_store_settings(
                self.store, self.target.given, self.chunkers, run_fingerprint(self.chunkers)
            )
        except OutputError as error:
            self.store.close()
            return str(error)
        states = self.store._file_states()
        self.job = StoreJob(
            self.chunkers,
            {document_id: digest for document_id, digest, *_ in states},
            fresh_states(states),
            read_skipped(self.store),
        )
        return None

    def _file(self, file: File) -> str:
        """Say what the run would do with one file; its document id."""
        from spanchunk.cli._job import read_in_python  # noqa: PLC0415
        from spanchunk.cli._store import content_hash, file_document_id  # noqa: PLC0415

        document_id = file_document_id(file)
        job = self.job
        if job is not None:
            if job.unchanged(file, document_id):
                self.say("unchanged", file.path)
                return document_id
            record = job.still_skipped(file, document_id)
            if record is not None:
                self.say("skip", file.path, record.message)
                return document_id
        data = read_in_python(file, self.chunkers.input_encoding)
        if isinstance(data, tuple):
            self.say("skip", file.path, data[1])
            return document_id
        problem = _core.text_problem(data)
        if problem is not None:
            self.say("skip", file.path, problem)
        elif job is None or document_id not in job.stored:
            self.say("add", file.path)
        elif self.chunkers.input_encoding is None and job.stored[document_id] == content_hash(data):
            self.say("unchanged", file.path)
        else:
            self.say("replace", file.path)
        return document_id

    def _gone(self, paths: list[str], listed: set[str]) -> None:
        """Say which of a store's documents the run would prune (or count as gone)."""
        from spanchunk.cli._store import covered_by, gone_documents  # noqa: PLC0415

        if self.store is None or self.job is None:
            return
        covers = covered_by(paths, self.globs)
        for document_id in gone_documents(list(self.job.stored), listed, covers):
            self.say("prune" if self.args.prune else "gone", document_id)
        self.store.close()
