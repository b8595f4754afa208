"""What an ingestion run did, and how it tells its progress as it goes."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

from spanchunk import _core

if TYPE_CHECKING:
    from spanchunk.ingest.jobs import BatchResult

__all__ = ["Progress", "SyncReport"]


class Progress(Protocol):
    """What a run tells as it goes (the command line's progress bar and messages; ``sync``'s
    ``progress=True`` bar): each skipped file, and the files done."""

    def skip(self, path: str, kind: str, message: str) -> None:
        """A file or folder is skipped: its path, the kind of reason, the message."""
        return

    def wants_totals(self) -> bool:
        """Whether the run should list every file before it starts (for a bar's total)."""
        return False

    def start(self, files: int, total_bytes: int) -> None:
        """The run starts on ``files`` files of ``total_bytes`` (when ``wants_totals``)."""
        return

    def advance(self, files: int, text_bytes: int) -> None:
        """``files`` more files are done, holding ``text_bytes`` of text."""
        return

    def close(self) -> None:
        """The run is over (a bar is erased)."""
        return


class SyncReport:
    """What a run did: the documents chunked and what became of them in a store, the files
    skipped and why, the chunks made and their sizes.

    Attributes:
        documents: Text files chunked or found unchanged.
        added, replaced, unchanged: Into a store: new documents, documents whose files
            changed (their chunks replaced), documents whose files did not (not cut again).
        pruned: Documents removed because their files are gone (``prune``).
        gone: Documents whose files are gone, kept because the run did not prune.
        stale: Stored documents whose files were skipped this time (now binary, not text,
            unreadable, changed while read): they keep their last version.
        unreachable: Documents kept because the run could not look where they lie (a
            folder it could not list, a PATH that does not exist), pruned only with
            ``prune="all"``.
        parents, children: Chunks made above the leaves, and leaves (unchanged documents'
            chunks are not counted: they were not cut again).
        bytes_read: Bytes of text of the documents (their files' sizes).
        skipped: The number of files skipped, by kind (``"binary"``, ``"not UTF-8"``,
            ``"unreadable"``, ``"name not UTF-8"``, ...).
        skips: Each file skipped that the run reported one by one: (path, kind, message).
        missing: The PATHs given that do not exist.
        change_number: Into a store: the store's change number when the run ended (what
            ``changes(since=...)`` reads from; see ``SqliteRegistry.changes``).
        seconds: How long the run took.
    """

    def __init__(self, *, store: bool = False) -> None:
        self.store = store
        self.missing: list[str] = []
        self.documents = 0
        self.parents = 0
        self.children = 0
        self.bytes_read = 0
        self.skipped: Counter[str] = Counter()
        self.skips: list[tuple[str, str, str]] = []
        #: The size of every chunk in its level's unit, by level (ordered in the core for
        #: the percentiles).
        self.sizes = _core.ChunkSizes()
        self.added = 0
        self.replaced = 0
        self.unchanged = 0
        #: Bytes of the unchanged documents (settled by their files' state, or read and
        #: hashed): not cut.
        self.unchanged_bytes = 0
        self.pruned = 0
        self.gone = 0
        self.unreachable = 0
        self.stale = 0
        #: Source files (``.py``, ``.rs``, ...) that ``--format auto`` cut as plain text.
        self.source_as_text = 0
        self.change_number: int | None = None
        self.seconds = 0.0

    def add_batch(self, result: BatchResult) -> None:
        """Count what one batch did (its skipped files are counted as they are reported)."""
        self.documents += result.documents
        self.bytes_read += result.bytes_read
        self.added += result.added
        self.replaced += result.replaced
        self.unchanged += result.unchanged
        self.unchanged_bytes += result.unchanged_bytes
        self.stale += result.stale
        self.add_chunks(result.sizes)

    def add_chunks(self, sizes: _core.ChunkSizes) -> None:
        """Count one batch's chunks (the char length of each, by level)."""
        self.children += sizes.count(0)
        self.parents += sum(sizes.count(level) for level in range(1, sizes.levels()))
        self.sizes.merge(sizes)

    def add_skip(self, path: str, kind: str, message: str) -> None:
        """Count a skipped file, and keep it in ``skips``."""
        self.skipped[kind] += 1
        self.skips.append((path, kind, message))

    def as_dict(self) -> dict[str, Any]:
        """The counts as a JSON-safe dict (``skips`` as lists)."""
        return {
            "documents": self.documents,
            "added": self.added,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
            "pruned": self.pruned,
            "gone": self.gone,
            "unreachable": self.unreachable,
            "stale": self.stale,
            "parents": self.parents,
            "children": self.children,
            "bytes_read": self.bytes_read,
            "skipped": dict(self.skipped),
            "skips": [list(skip) for skip in self.skips],
            "missing": list(self.missing),
            "change_number": self.change_number,
            "seconds": self.seconds,
        }

    def __repr__(self) -> str:
        counts = ", ".join(
            f"{name}={value}"
            for name, value in self.as_dict().items()
            if name not in ("skips", "seconds") and value not in (0, {}, [], None)
        )
        return f"SyncReport({counts})"
