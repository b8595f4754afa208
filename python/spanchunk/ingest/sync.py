"""``sync``: keep a store in step with files and folders, from any Python program."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from spanchunk.ingest.files import Globs
from spanchunk.ingest.formats import FileChunkers
from spanchunk.ingest.output import OwnFiles, RunLock, remove_stale_temporaries, resolve_target
from spanchunk.ingest.prune import check_prune
from spanchunk.ingest.report import Progress, SyncReport
from spanchunk.ingest.run import run_files
from spanchunk.ingest.store_sink import StoreSink

if TYPE_CHECKING:
    from spanchunk.chunkers import HierarchicalChunker
    from spanchunk.stores.sqlite import SqliteRegistry

__all__ = ["sync"]


def sync(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    store: str | os.PathLike[str] | SqliteRegistry,
    chunker: HierarchicalChunker | FileChunkers,
    *,
    prune: bool | str = False,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    workers: int | None = None,
    progress: bool | Progress = False,
    lock_timeout: float | None = None,
    durable: bool = False,
) -> SyncReport:
    """Bring a store in step with files and folders: what ``spanchunk chunk PATH... -o
    STORE.sqlite`` does, from Python, with the same documents, ids and chunks.

    Folders are walked recursively in sorted order (hidden files and folders skipped, folder
    links not followed, globs as ripgrep's ``-g``). Each text file is one document whose id
    is its resolved path (``document_id``). A file whose state (size, times, inode) is the
    one the store recorded is not read; one whose bytes are unchanged is not cut again; a
    changed file replaces its document's chunks, a new one is added. Binary files, files
    that are not UTF-8 text and names that are not UTF-8 are skipped and reported, never an
    error. A new store is built in a temporary file and appears whole at the end; an
    existing one is updated one batch per transaction, so an interrupted run leaves each
    document in its old or its new version. Two runs into one store (two ``sync`` calls,
    or ``sync`` and the command line) take turns: the second waits for the first's lock.

    Args:
        paths: A file or folder, or several.
        store: The store's file (created when missing) or an open ``SqliteRegistry``
            (updated in place and left open).
        chunker: A ``ParentChildChunker`` or ``HierarchicalChunker`` that cuts every file,
            or a ``FileChunkers`` that picks one by each file's name (Markdown, code).
        prune: ``True`` removes the documents whose files are gone from where the run
            looked (the PATHs, as the globs pick); ``"all"`` also those under a PATH that
            does not exist or a folder that cannot be listed, which ``True`` keeps (a moved
            folder, an unmounted disk, a permission lost) and the report counts as
            ``unreachable``.
        include: Globs of the files to chunk (default: every file).
        exclude: Globs of files and folders to leave out.
        workers: Threads that read and cut (None: one per CPU).
        progress: ``True`` draws a progress bar on stderr (tqdm); an object with the
            methods of ``Progress`` is told each skipped file and each batch done.
        lock_timeout: Seconds to wait for another run holding the store (None: as long
            as it takes).
        durable: Flush a new store to the disk before it appears under its name.

    Returns:
        What the run did: documents added, replaced, unchanged and pruned, files skipped
        with their reasons, chunks and sizes (a ``SyncReport``).

    Raises:
        TypeError: ``chunker`` is not a hierarchical chunker.
        ValueError: ``prune`` is not one of its values, the store was filled with other
            settings (the message names each one), or the file is not a store.
        FileNotFoundError: No path given exists and the store does not exist yet (nothing
            is created). A missing path beside others is listed in the report's
            ``missing``.
        TimeoutError: Another run held the store longer than ``lock_timeout``.
        OSError: The store cannot be written (a full disk, no permission).

    Example:
        >>> import pathlib, tempfile
        >>> from spanchunk import ParentChildChunker, SqliteRegistry
        >>> from spanchunk.ingest import sync
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.txt").write_text("One sentence here. " * 200, encoding="utf-8")
        >>> store = folder.parent / (folder.name + ".sqlite")
        >>> report = sync(folder, store, ParentChildChunker(1000, 200))
        >>> report.added, sync(folder, store, ParentChildChunker(1000, 200)).unchanged
        (1, 1)
        >>> with SqliteRegistry.open(store) as opened:
        ...     len(opened) == report.parents + report.children
        True
    """
    from spanchunk.chunkers import HierarchicalChunker  # noqa: PLC0415
    from spanchunk.stores.sqlite import SqliteRegistry  # noqa: PLC0415

    if isinstance(paths, (str, os.PathLike)):
        listed = [os.fspath(paths)]
    else:
        listed = [os.fspath(path) for path in paths]
    if not listed:
        raise ValueError("sync needs at least one file or folder in paths")
    if isinstance(chunker, HierarchicalChunker):
        chunkers = FileChunkers.of(chunker)
    elif isinstance(chunker, FileChunkers):
        chunkers = chunker
    else:
        raise TypeError(
            f"sync cuts with a ParentChildChunker or HierarchicalChunker (every level is "
            f"stored), not {type(chunker).__name__}: e.g. ParentChildChunker(2000, 400)"
        )
    checked = check_prune(prune)
    if isinstance(store, SqliteRegistry):
        opened: SqliteRegistry | None = store
        path = os.fspath(store.path)
    else:
        opened, path = None, os.fspath(store)
    if not any(os.path.lexists(given) for given in listed) and not os.path.exists(path):
        # A mistyped PATH would otherwise make an empty store that every query finds empty.
        raise FileNotFoundError(
            f"no file or folder at {', '.join(listed)}: check the paths (nothing was written)"
        )
    target = resolve_target(path)
    lock = RunLock(target, None, lock_timeout)
    try:
        remove_stale_temporaries(target)
        sink = StoreSink(target, sync=durable, opened=opened)
        bar: Progress | None = _bar() if progress is True else (progress or None)
        return run_files(
            listed,
            sink,
            chunkers,
            SyncReport(store=True),
            globs=Globs(tuple(include), tuple(exclude)),
            workers=workers,
            progress=bar,
            own=OwnFiles(target),
            prune=checked,
        )
    finally:
        lock.release()


def _bar() -> Progress:
    """A tqdm progress bar on stderr, shown whatever stderr is."""
    import sys  # noqa: PLC0415

    from tqdm import tqdm  # noqa: PLC0415

    class Bar:
        def __init__(self) -> None:
            self.bar: Any = None

        def skip(self, path: str, kind: str, message: str) -> None:
            return

        def wants_totals(self) -> bool:
            return True

        def start(self, files: int, total_bytes: int) -> None:
            self.bar = tqdm(total=files, unit=" files", file=sys.stderr, desc="spanchunk")

        def advance(self, files: int, text_bytes: int) -> None:
            if self.bar is not None:
                self.bar.update(files)

        def close(self) -> None:
            if self.bar is not None:
                self.bar.close()
                self.bar = None

    return Bar()
