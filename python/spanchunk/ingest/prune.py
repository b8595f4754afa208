"""Which stored documents a run covers, and which of those are gone: what ``prune`` removes.

A run covers a stored document when it lies where the run looked: it is one of the PATHs,
or a file inside a PATH folder (existing or gone) that the run would have picked (not hidden,
chosen by the globs, under no excluded folder). A covered document whose file the run did
not list is gone, unless the run could not look where it lies: a folder that could not be
listed this run (no permission, an I/O error) or a PATH that does not exist (a moved folder,
an unmounted disk) keeps its documents, as an unreadable file keeps its version, and the
report counts them as unreachable. Pruning those too is an explicit choice
(``prune="all"``, the command line's ``--prune=all``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from spanchunk.ingest.files import Globs
from spanchunk.ingest.reading import document_id

__all__ = ["PRUNE_CHOICES", "check_prune", "covered_by", "gone_documents", "under"]

#: What ``prune`` takes: False (nothing), True (documents whose files are gone from where
#: the run looked), "all" (also those under a PATH or folder the run could not reach).
PRUNE_CHOICES = (False, True, "all")


def check_prune(prune: object) -> bool | str:
    """``prune`` checked.

    Raises:
        ValueError: not one of ``PRUNE_CHOICES``, naming them.
    """
    if prune is False or prune is True or prune == "all":
        return prune
    raise ValueError(
        f"prune must be False, True or 'all', got {prune!r}: True removes the documents "
        "whose files are gone, 'all' also those under a PATH or folder that cannot be reached"
    )


def covered_by(paths: Sequence[str], globs: Globs) -> Callable[[str], bool]:
    """Whether a stored document id lies where this run looked: it is a PATH argument, or a
    file inside a PATH folder (existing or gone) that the run would have picked (not hidden,
    and chosen by the globs, which match on the path relative to that PATH)."""
    roots = [document_id(path) for path in paths if path != "-"]
    folders = [root for root in roots if not os.path.isfile(root)]

    def covers(stored: str) -> bool:
        if stored in roots:
            return True
        for folder in folders:
            if stored.startswith(folder.rstrip(os.sep) + os.sep):
                relative = stored[len(folder.rstrip(os.sep)) + 1 :]
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


def under(roots: Iterable[str]) -> Callable[[str], bool]:
    """Whether a document id is one of ``roots`` (resolved paths) or lies inside one."""
    exact = set(roots)
    prefixes = tuple(root.rstrip(os.sep) + os.sep for root in exact)

    def inside(stored: str) -> bool:
        return stored in exact or (bool(prefixes) and stored.startswith(prefixes))

    return inside


def gone_documents(
    stored: Iterable[str],
    listed: set[str],
    covers: Callable[[str], bool],
    unreachable: Callable[[str], bool] | None = None,
) -> tuple[list[str], list[str]]:
    """The stored documents this run covers whose files it did not list: (gone, kept
    because ``unreachable`` says the run could not look where they lie)."""
    gone: list[str] = []
    kept: list[str] = []
    for stored_id in stored:
        if stored_id in listed or not covers(stored_id):
            continue
        if unreachable is not None and unreachable(stored_id):
            kept.append(stored_id)
        else:
            gone.append(stored_id)
    return gone, kept
