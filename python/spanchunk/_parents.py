"""Swapping hits for their parents: the one implementation every store's ``expand`` shares.

Private: ``ParentRegistry.expand``, ``SqliteRegistry.expand`` and ``spanchunk.retrieval.expand``
all come here, so the order, de-duplication and ``parent_content`` fallback rules are written
once. This module imports nothing of spanchunk but ``Chunk``, so the registries and the
retrieval helpers can all import it without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from spanchunk.chunk import Chunk

__all__ = ["PARENT_CONTENT", "check_max_parents", "expand_hits", "parent_from_content"]

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
) -> list[Any]:
    """Hits (chunks or (chunk, score) pairs) swapped for their parents, de-duplicated by id.

    ``lookup`` takes the parent ids and gives back the ones the store knows (one call, so a
    database answers in one query). A parent the store does not know comes from the hit's
    ``parent_content``; failing that the hit is kept as itself. A pair keeps the score of the
    first (best) hit that reached its parent.
    """
    limit = check_max_parents(max_parents)
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
    seen: set[str] = set()
    expanded: list[Any] = []
    for chunk, score in zip(chunks, scores, strict=True):
        parent_id = chunk.parent_id
        if parent_id is None:
            chosen = chunk
        else:
            found = known.get(parent_id)
            if found is None:
                found = parent_from_content(chunk)
            chosen = chunk if found is None else found
        if chosen.id in seen:
            continue
        seen.add(chosen.id)
        expanded.append((chosen, score) if pairs else chosen)
        if limit is not None and len(expanded) >= limit:
            break
    return expanded
