"""Swapping hits for their parents: the one implementation every store's ``expand`` shares.

Private: ``ParentRegistry.expand``, ``SqliteRegistry.expand`` and ``spanchunk.retrieval.expand``
all come here, so the order, de-duplication and ``parent_content`` fallback rules are written
once. This module imports nothing of spanchunk but ``Chunk`` and the errors, so the registries
and the retrieval helpers can all import it without an import circle.

A hit whose parent the store does not hold (and that carries no ``parent_content``) is
"missing": ``missing="warn"`` (the default) keeps it as itself and emits one
``MissingParentWarning`` per call, ``"raise"`` raises ``MissingParentError`` (a
``KeyError``), ``"keep"`` keeps it silently. ``auto_merge`` and ``assemble`` follow the
same rule through ``missing_parents``.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Literal

from spanchunk.chunk import Chunk
from spanchunk.errors import MissingParentError, MissingParentWarning

__all__ = [
    "PARENT_CONTENT",
    "Missing",
    "check_max_parents",
    "check_missing",
    "expand_hits",
    "missing_parents",
    "parent_from_content",
]

Missing = Literal["warn", "raise", "keep"]
"""What ``expand`` does with a hit whose parent the store does not hold."""

# Warnings name the caller's line, the first frame outside this package.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

PARENT_CONTENT = "parent_content"
"""The metadata key under which a child carries its parent (see retrieval.attach_parent_content)."""

#: The fields of a parent kept under ``metadata["parent_content"]``.
PARENT_FIELDS = (
    "id",
    "text",
    "index",
    "level",
    "start_char",
    "end_char",
    "start_byte",
    "end_byte",
    "parent_id",
    "child_ids",
)


def check_max_parents(max_parents: object) -> int | None:
    """``max_parents`` validated: None or a positive int."""
    if max_parents is None:
        return None
    if isinstance(max_parents, bool) or not isinstance(max_parents, int):
        raise TypeError(f"max_parents must be an int or None, not {type(max_parents).__name__}")
    if max_parents < 1:
        raise ValueError(
            f"max_parents must be at least 1, got {max_parents}: "
            "pass a positive limit or None for no limit"
        )
    return max_parents


def check_missing(missing: object) -> Missing:
    """``missing`` validated: "warn", "raise" or "keep"."""
    if missing in ("warn", "raise", "keep"):
        return missing
    raise ValueError(
        f"missing must be 'warn' (keep a hit whose parent the store does not hold, with a "
        f"MissingParentWarning), 'raise' (MissingParentError) or 'keep' (keep it silently), "
        f"got {missing!r}"
    )


def _warn_outside(message: str) -> None:
    """A ``MissingParentWarning`` attributed to the first frame outside spanchunk (the
    caller's ``expand``, however many of the package's functions lie in between)."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, MissingParentWarning, stacklevel=level)


def missing_parents(
    missing: Missing,
    absent: Mapping[str, str],
    where: str,
    *,
    total: int,
    store: bool = True,
    content: bool = True,
    relation: str = "a parent",
    kept: str = "kept as themselves",
) -> None:
    """Warns or raises, as ``missing`` says, for hits whose parent the store does not hold.

    Args:
        missing: The caller's ``missing`` setting (checked).
        absent: Hit id -> its parent id, for every hit whose parent is missing.
        where: The function to name (``"ParentRegistry.expand"``).
        total: How many hits were given.
        store: False when no store was given (``expand(hits, None)``).
        content: Whether the caller falls back to ``metadata["parent_content"]`` (then a hit
            is missing only without it, and the message says so).
        relation: What is missing, for the message (``"a parent"``, ``"an ancestor"``).
        kept: What became of those hits, for the warning.

    Raises:
        MissingParentError: ``missing="raise"`` and ``absent`` is not empty.
    """
    if not absent or missing == "keep":
        return
    count = len(absent)
    example = next(iter(absent.values()))
    if count == 1:
        hits = "1 hit has" if total == 1 else f"1 of {total} hits has"
    else:
        hits = f"{count} of {total} hits have"
    if store:
        carried = " and no metadata['parent_content']" if content else ""
        problem = (
            f"{where}: {hits} {relation} this store does not hold{carried} (e.g. parent id "
            f"{example!r}): the hits were cut with other settings or another store, or the "
            "document was deleted"
        )
        fix = (
            "use the store the hits' chunker filled (the registry= it was given), or chunk "
            "the documents again into this store and re-index them"
        )
    else:
        problem = (
            f"{where}: {hits} {relation} (e.g. parent id {example!r}) but no "
            "metadata['parent_content'], and no store was given to look the parent up"
        )
        fix = (
            "pass the store the hits' chunker filled, or cut the documents with "
            "parent_content=True so that each hit carries its parent"
        )
    if missing == "raise":
        raise MissingParentError(
            f"{problem}. Fix: {fix}; or pass missing='keep' to keep such hits as they are",
            example,
            count,
        )
    _warn_outside(
        f"{problem}. Such hits are {kept}. Fix: {fix}; or pass missing='keep' to keep them "
        "without this warning (missing='raise' to refuse them)"
    )


def not_a_chunk(position: int, item: object, where: str) -> TypeError:
    """The error for a hit that is neither a ``Chunk`` nor a ``(Chunk, score)`` pair."""
    return TypeError(
        f"{where} takes Chunk objects or (Chunk, score) pairs; hit {position} is "
        f"{type(item).__name__} ({item!r:.60}): pass the chunks the chunker made (a vector "
        "store's payload can be turned back into one with Chunk(**payload))"
    )


def parent_from_content(chunk: Chunk) -> Chunk | None:
    """The parent a child carries in ``metadata["parent_content"]``, or None.

    The parent's metadata is the child's without ``parent_content`` (the document's).
    """
    metadata = chunk.metadata
    carried = metadata.get(PARENT_CONTENT)
    if not isinstance(carried, Mapping):
        return None
    try:
        return Chunk(
            carried["id"],
            carried["text"],
            chunk.document_id,
            carried["index"],
            carried["level"],
            carried["start_char"],
            carried["end_char"],
            carried["start_byte"],
            carried["end_byte"],
            carried.get("parent_id"),
            tuple(carried.get("child_ids", ())),
            MappingProxyType({k: v for k, v in metadata.items() if k != PARENT_CONTENT}),
        )
    except (KeyError, TypeError, ValueError):
        return None


def expand_hits(
    hits: Iterable[Any],
    lookup: Callable[[list[str]], Mapping[str, Chunk]] | None,
    max_parents: int | None,
    where: str,
    missing: Missing = "warn",
) -> list[Any]:
    """Hits (chunks or (chunk, score) pairs) swapped for their parents, de-duplicated by id.

    ``lookup`` takes the parent ids and gives back the ones the store knows (one call, so a
    database answers in one query); None: no store, ``parent_content`` only. A parent the
    store does not know comes from the hit's ``parent_content``; failing that the hit is
    missing and kept as itself, as ``missing`` says (a warning, an error, or silently). A
    pair keeps the score of the first (best) hit that reached its parent.
    """
    limit = check_max_parents(max_parents)
    mode = check_missing(missing)
    items = hits if isinstance(hits, list) else list(hits)
    chunks: list[Chunk] = []
    scores: list[Any] = []
    pairs = False
    for position, item in enumerate(items):
        if type(item) is Chunk:
            chunks.append(item)
            scores.append(None)
        elif isinstance(item, tuple) and len(item) == 2 and type(item[0]) is Chunk:
            pairs = True
            chunks.append(item[0])
            scores.append(item[1])
        else:
            raise not_a_chunk(position, item, where)
    if pairs and None in scores:
        raise TypeError(
            f"{where} takes all Chunk objects or all (Chunk, score) pairs, not a mix: "
            "give every hit a score, or none"
        )
    wanted = list({chunk.parent_id: None for chunk in chunks if chunk.parent_id is not None})
    known = lookup(wanted) if (wanted and lookup is not None) else {}
    # Every hit's replacement first, so a missing parent is reported (or refused) whatever
    # max_parents cuts off.
    chosen_chunks: list[Chunk] = []
    absent: dict[str, str] = {}
    for chunk in chunks:
        parent_id = chunk.parent_id
        if parent_id is None:
            chosen_chunks.append(chunk)
            continue
        found = known.get(parent_id)
        if found is None:
            found = parent_from_content(chunk)
            if found is None:
                absent[chunk.id] = parent_id
                found = chunk
        chosen_chunks.append(found)
    missing_parents(mode, absent, where, total=len(chunks), store=lookup is not None)
    seen: set[str] = set()
    expanded: list[Any] = []
    for chosen, score in zip(chosen_chunks, scores, strict=True):
        if chosen.id in seen:
            continue
        seen.add(chosen.id)
        expanded.append((chosen, score) if pairs else chosen)
        if limit is not None and len(expanded) >= limit:
            break
    return expanded
