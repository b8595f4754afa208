"""``expand`` and ``auto_merge``: hits swapped for their parents, or merged into them where
enough of a parent's children were retrieved.

``expand`` is the one entry point of the implementation every store's and chunker's
``expand`` shares (``spanchunk.stores.parents.expand_hits``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, overload

from spanchunk.chunk import Chunk
from spanchunk.stores import ParentStore
from spanchunk.stores.parents import (
    Missing,
    check_missing,
    expand_hits,
    missing_parents,
    not_a_chunk,
    parent_from_content,
)

__all__ = ["auto_merge", "expand"]


def expand(
    hits: Iterable[Any],
    store: ParentStore | None,
    max_parents: int | None = None,
    *,
    missing: Missing = "warn",
) -> list[Any]:
    """Swap each hit for its parent: de-duplicated by id, first-seen order kept.

    The simplest rule ``assemble`` chooses from (a parent, always, whatever its size);
    ``store.expand(hits)`` and ``chunker.expand(hits)`` are this function.

    The parents are looked up in one ``store.get_many`` call (one query for a
    ``SqliteRegistry``). A parent the store does not know (or every parent, with
    ``store=None``) comes from the hit's ``metadata["parent_content"]`` when it carries one
    (see ``attach_parent_content``). A top-level hit is kept as itself. A hit whose parent
    is found neither way is "missing" (cut with other settings or into another store, or its
    document was deleted), and ``missing`` says what happens to it.

    Args:
        hits: ``Chunk`` objects, or ``(chunk, score)`` pairs, best first.
        store: Where the parents are, or None to use only ``parent_content``.
        max_parents: Return at most this many (None: no limit).
        missing: ``"warn"``: keep a missing hit as itself, with one
            ``MissingParentWarning`` per call naming how many; ``"raise"``: raise
            ``MissingParentError``; ``"keep"``: keep it silently.

    Returns:
        Chunks for chunk hits; ``(parent, score)`` pairs for pairs, the score of the first
        (best) hit that reached each parent.

    Raises:
        TypeError: A hit is not a ``Chunk`` nor a ``(Chunk, score)`` pair.
        ValueError: ``max_parents`` is less than 1, or ``missing`` is unknown.
        MissingParentError: (a ``KeyError``) ``missing="raise"`` and a hit is missing.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50)
        >>> children = chunker.chunk("One sentence here. " * 40)
        >>> [p.id for p in expand(children[:3], chunker.parents)] == [children[0].parent_id]
        True
    """
    lookup = None if store is None else store.get_many
    return expand_hits(hits, lookup, max_parents, "expand", missing)


def _threshold(threshold: object) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(
            f"threshold must be a number between 0 and 1, not {type(threshold).__name__}"
        )
    if not 0 < threshold < 1:
        raise ValueError(
            f"threshold must be strictly between 0 and 1, got {threshold!r}: a parent replaces "
            "its children when the share of them retrieved is above it; e.g. threshold=0.5"
        )
    return float(threshold)


def _scored(hits: Iterable[Any], where: str) -> tuple[list[list[Any]], bool]:
    """[chunk, score] rows, de-duplicated by id (the first kept), and whether hits had scores."""
    rows: list[list[Any]] = []
    seen: set[str] = set()
    kinds = set()
    for position, item in enumerate(hits if isinstance(hits, list) else list(hits)):
        if type(item) is Chunk:
            chunk, score, kind = item, 1.0, False
        elif (
            isinstance(item, tuple)
            and len(item) == 2
            and type(item[0]) is Chunk
            and not isinstance(item[1], bool)
            and isinstance(item[1], (int, float))
        ):
            chunk, score, kind = item[0], float(item[1]), True
        else:
            raise not_a_chunk(position, item, where)
        kinds.add(kind)
        if chunk.id not in seen:
            seen.add(chunk.id)
            rows.append([chunk, score])
    if len(kinds) > 1:
        raise TypeError(
            f"{where} takes all Chunk objects or all (Chunk, score) pairs, not a mix: give "
            "every hit a score, or none"
        )
    return rows, kinds == {True}


@overload
def auto_merge(
    hits: Iterable[tuple[Chunk, float]],
    store: ParentStore,
    threshold: float = 0.5,
    *,
    missing: Missing = "warn",
) -> list[tuple[Chunk, float]]: ...
@overload
def auto_merge(
    hits: Iterable[Chunk], store: ParentStore, threshold: float = 0.5, *, missing: Missing = "warn"
) -> list[Chunk]: ...


def auto_merge(
    hits: Iterable[Any], store: ParentStore, threshold: float = 0.5, *, missing: Missing = "warn"
) -> list[Any]:
    """Replace retrieved children by their parent where enough of them were retrieved.

    A parent replaces its retrieved children when (retrieved children) / (all its children)
    is above ``threshold``; its score is the mean of theirs. This repeats, a merged parent
    counting as a retrieved child of its own parent, until nothing merges; then the result
    is sorted by score, best first (ties keep their order). This is the rule of LlamaIndex's
    ``AutoMergingRetriever`` (without its step that fills in a node between two retrieved
    neighbours) and of Haystack's, and it gives the same survivors in the same order as
    LlamaIndex's (tested against both packages). Each round of merging looks its parents up
    in one ``store.get_many`` call.

    A hit (or a merged parent) whose parent is neither stored nor carried in its
    ``parent_content`` cannot merge and stays as it is; ``missing`` says whether that is
    reported, as for ``expand``. Hits repeated (same id) count once, with the first score.

    Args:
        hits: ``(chunk, score)`` pairs, or ``Chunk`` objects (equal scores).
        store: Where the parents are (every level above the hits).
        threshold: Strictly between 0 and 1.
        missing: For a chunk whose parent the store does not hold: ``"warn"`` (one
            ``MissingParentWarning`` per call), ``"raise"`` (``MissingParentError``) or
            ``"keep"`` (silently); it stays unmerged either way.

    Returns:
        ``(chunk, score)`` pairs for pairs, chunks for chunks: the survivors, best first.

    Raises:
        TypeError: A hit is not a ``Chunk`` nor a ``(Chunk, number)`` pair.
        ValueError: ``threshold`` is not strictly between 0 and 1, or ``missing`` is
            unknown.
        MissingParentError: (a ``KeyError``) ``missing="raise"`` and a parent is not stored.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50)
        >>> children = chunker.chunk("One sentence here. " * 40)
        >>> merged = auto_merge([(children[0], 0.9), (children[1], 0.5), (children[2], 0.4)],
        ...                     chunker.parents)
        >>> [(chunk.level, round(score, 2)) for chunk, score in merged]
        [(1, 0.6)]
    """
    limit = _threshold(threshold)
    mode = check_missing(missing)
    rows, scored = _scored(hits, "auto_merge")
    total = len(rows)
    parents: dict[str, Chunk | None] = {}
    absent: dict[str, str] = {}
    while _merge_round(rows, store, limit, parents, absent):
        if mode == "raise" and absent:
            break
    missing_parents(mode, absent, "auto_merge", total=total, kept="left unmerged")
    rows.sort(key=lambda row: row[1], reverse=True)
    if scored:
        return [(row[0], row[1]) for row in rows]
    return [row[0] for row in rows]


def _look_up_parents(
    groups: dict[str, list[list[Any]]], store: ParentStore, parents: dict[str, Chunk | None]
) -> None:
    """Adds to ``parents`` the groups' parents not looked up yet (one ``get_many``), each
    from the store, else from its first child's ``parent_content``, else None."""
    unknown = [parent_id for parent_id in groups if parent_id not in parents]
    if unknown:
        found = store.get_many(unknown)
        for parent_id in unknown:
            parent = found.get(parent_id)
            if parent is None:
                parent = parent_from_content(groups[parent_id][0][0])
            parents[parent_id] = parent


def _merge_round(
    rows: list[list[Any]],
    store: ParentStore,
    limit: float,
    parents: dict[str, Chunk | None],
    absent: dict[str, str],
) -> bool:
    """One round of merging, in place: every parent with enough of its children among the
    rows replaces them (appended, in the order first reached). Whether anything merged.
    ``absent`` gets chunk id -> parent id for each row whose parent is not found."""
    groups: dict[str, list[list[Any]]] = {}
    for row in rows:
        parent_id = row[0].parent_id
        if parent_id is not None:
            groups.setdefault(parent_id, []).append(row)
    _look_up_parents(groups, store, parents)
    merged_away: set[str] = set()
    added: list[list[Any]] = []
    for parent_id, members in groups.items():
        parent = parents[parent_id]
        if parent is None:
            for member in members:
                absent.setdefault(member[0].id, parent_id)
            continue
        total = len(parent.child_ids) or 1
        if len(members) / total > limit:
            merged_away.update(member[0].id for member in members)
            added.append([parent, sum(member[1] for member in members) / len(members)])
    if not merged_away:
        return False
    rows[:] = [row for row in rows if row[0].id not in merged_away]
    present = {row[0].id: row for row in rows}
    for row in added:
        existing = present.get(row[0].id)
        if existing is None:
            rows.append(row)
            present[row[0].id] = row
        else:  # the parent was itself a hit: once, with the better score
            existing[1] = max(existing[1], row[1])
    return True
