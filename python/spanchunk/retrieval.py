"""The query side of small-to-big: swap hits for parents, merge them up, or grow them in place.

Every helper works with any ``spanchunk.store.ParentStore`` (``ParentRegistry``,
``SqliteRegistry``, or your own) and takes the hits a vector search returned: ``Chunk``
objects, or ``(chunk, score)`` pairs, best first.

- ``expand``: each hit swapped for its parent, de-duplicated, order kept.
- ``auto_merge``: a parent replaces its retrieved children when enough of them were
  retrieved, repeated up the levels (the rule of Haystack's and LlamaIndex's
  ``AutoMergingRetriever``).
- ``neighbours``: a hit grown with the adjacent chunks of its level up to a size budget,
  as one exact span of the document.
- ``attach_parent_content``: children that carry their parent in their metadata, for vector
  stores that cannot look parents up; ``expand`` falls back to it.

Example:
    >>> from spanchunk import HierarchicalChunker, ParentRegistry
    >>> from spanchunk.retrieval import auto_merge, expand
    >>> store = ParentRegistry()
    >>> chunker = HierarchicalChunker(sizes=[400, 100], registry=store)
    >>> leaves = chunker.chunk("A sentence that repeats itself. " * 40)
    >>> [c.level for c in expand(leaves[:3], store)]
    [1]
    >>> hits = [(leaves[0], 0.9), (leaves[1], 0.6), (leaves[2], 0.3)]  # 3 of 4 children
    >>> [(chunk.level, round(score, 2)) for chunk, score in auto_merge(hits, store)]
    [(1, 0.6)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal, overload

from spanchunk._parents import (
    PARENT_CONTENT,
    Missing,
    check_missing,
    expand_hits,
    missing_parents,
    not_a_chunk,
    parent_from_content,
)
from spanchunk.assemble import Span, assemble
from spanchunk.chunk import Chunk
from spanchunk.document import freeze_metadata
from spanchunk.store import ParentStore

__all__ = [
    "PARENT_CONTENT",
    "Span",
    "Window",
    "assemble",
    "attach_parent_content",
    "auto_merge",
    "expand",
    "neighbours",
    "parent_content",
]

Hit = Chunk | tuple[Chunk, float]
Unit = Literal["char", "byte"] | Callable[[str], int]


def expand(
    hits: Iterable[Any],
    store: ParentStore | None,
    max_parents: int | None = None,
    *,
    missing: Missing = "warn",
) -> list[Any]:
    """Swap each hit for its parent: de-duplicated by id, first-seen order kept.

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


# --------------------------------------------------------------------------------------------
# Neighbours


@dataclass(frozen=True, slots=True)
class Window:
    """A run of adjacent chunks of one document and level, as one exact span.

    ``document.text[window.start_char:window.end_char] == window.text`` and the same for the
    UTF-8 bytes, as for a ``Chunk``.

    Attributes:
        document_id: The document the chunks come from.
        level: Their level.
        start_char: Start offset in code points, in the document.
        end_char: End offset in code points (exclusive).
        start_byte: Start offset in the UTF-8 document.
        end_byte: End offset in the UTF-8 document (exclusive).
        text: The document's text over the span (gaps between chunks included).
        chunks: The chunks covered, in document order.
        hits: The hits this window grew from, in the order given.
    """

    document_id: str
    level: int
    start_char: int
    end_char: int
    start_byte: int
    end_byte: int
    text: str
    chunks: tuple[Chunk, ...]
    hits: tuple[Chunk, ...]

    @property
    def first_index(self) -> int:
        """The ``index`` of the first chunk."""
        return self.chunks[0].index

    @property
    def last_index(self) -> int:
        """The ``index`` of the last chunk."""
        return self.chunks[-1].index


def _measure(unit: object) -> Callable[[str], int]:
    if unit == "char":
        return len
    if unit == "byte":
        return lambda text: len(text.encode("utf-8", "surrogatepass"))
    if callable(unit):
        return unit
    raise ValueError(
        f"unit must be 'char', 'byte' or a function text -> size (e.g. a tokenizer's "
        f"lambda t: len(enc.encode(t))), got {unit!r}"
    )


class _Gaps:
    """The document's text between two chunks, from a stored ancestor that covers it (or the
    document text, when given); None when nothing known covers it."""

    def __init__(self, store: ParentStore, text: str | None) -> None:
        self._store = store
        self._text = text
        self._known: dict[str, Chunk | None] = {}

    def _ancestor(self, chunk: Chunk) -> Chunk | None:
        parent_id = chunk.parent_id
        if parent_id is None:
            return None
        if parent_id not in self._known:
            found = self._store.get_many([parent_id]).get(parent_id)
            self._known[parent_id] = parent_from_content(chunk) if found is None else found
        return self._known[parent_id]

    def between(self, left: Chunk, start_char: int, end_char: int) -> str | None:
        if self._text is not None:
            return self._text[start_char:end_char]
        ancestor = self._ancestor(left)
        while ancestor is not None:
            if ancestor.start_char <= start_char and end_char <= ancestor.end_char:
                offset = ancestor.start_char
                return ancestor.text[start_char - offset : end_char - offset]
            ancestor = self._ancestor(ancestor)
        return None


def _joined(chunks: Sequence[Chunk], gaps: _Gaps) -> str | None:
    """The document text from the first chunk's start to the last one's end, or None."""
    pieces = [chunks[0].text]
    end_char = chunks[0].end_char
    for left, chunk in pairwise(chunks):
        if chunk.start_char > end_char:
            gap = gaps.between(left, end_char, chunk.start_char)
            if gap is None:
                return None
            pieces.append(gap)
            pieces.append(chunk.text)
        elif chunk.end_char > end_char:  # an overlap: only what is new
            pieces.append(chunk.text[end_char - chunk.start_char :])
        end_char = max(end_char, chunk.end_char)
    return "".join(pieces)


def _extended(text: str, run: list[Chunk], chunk: Chunk, side: str, gaps: _Gaps) -> str | None:
    """The window's text with ``chunk`` added on ``side`` (None: a gap nothing covers). Only
    the new part is sliced, so growing a window is linear in what it grows by."""
    start_char = run[0].start_char
    end_char = max(member.end_char for member in run)
    if side == "right":
        if chunk.start_char >= end_char:
            gap = gaps.between(run[-1], end_char, chunk.start_char)
            return None if gap is None else text + gap + chunk.text
        if chunk.end_char > end_char:  # an overlap: only what is new
            return text + chunk.text[end_char - chunk.start_char :]
        return text
    if chunk.end_char <= start_char:
        gap = gaps.between(chunk, chunk.end_char, start_char)
        return None if gap is None else chunk.text + gap + text
    return chunk.text[: max(0, start_char - chunk.start_char)] + text


def _window(chunks: Sequence[Chunk], text: str, hits: tuple[Chunk, ...]) -> Window:
    first = chunks[0]
    return Window(
        first.document_id,
        first.level,
        first.start_char,
        max(chunk.end_char for chunk in chunks),
        first.start_byte,
        max(chunk.end_byte for chunk in chunks),
        text,
        tuple(chunks),
        hits,
    )


def _grow(
    hit: Chunk, store: ParentStore, budget: int, measure: Callable[[str], int], gaps: _Gaps
) -> Window:
    document_id, level, index = hit.document_id, hit.level, hit.index
    stored = store.window(document_id, level, index, index)
    if not stored:
        raise ValueError(
            f"the store holds no level-{level} chunk at index {index} of document "
            f"{document_id!r}, so it cannot find the hit's neighbours: keep that level in "
            "the store (open it with children=True before chunking, or add the chunks), or "
            "pass hits of a level it keeps"
        )
    # Fetch ahead in batches sized from the hit, so a budget of a few chunks is one query
    # a side.
    reach = max(2, budget // max(1, measure(hit.text)) + 1)
    run = [hit]
    text = hit.text
    fetched: dict[int, Chunk] = {}
    low = high = index
    blocked = {"right": False, "left": False}
    while not (blocked["right"] and blocked["left"]):
        for side in ("right", "left"):
            if blocked[side]:
                continue
            wanted = run[-1].index + 1 if side == "right" else run[0].index - 1
            if wanted < 0:
                blocked[side] = True
                continue
            if wanted not in fetched and (wanted > high or wanted < low):
                first, last = (
                    (high + 1, high + reach) if side == "right" else (max(0, low - reach), low - 1)
                )
                for chunk in store.window(document_id, level, first, last):
                    fetched.setdefault(chunk.index, chunk)
                high, low = max(high, last), min(low, first)
                reach *= 2
            candidate = fetched.get(wanted)
            if candidate is None:
                blocked[side] = True
                continue
            grown = _extended(text, run, candidate, side, gaps)
            if grown is None or measure(grown) > budget:
                blocked[side] = True
                continue
            text = grown
            if side == "right":
                run.append(candidate)
            else:
                run.insert(0, candidate)
    return _window(run, text, (hit,))


@overload
def neighbours(
    hits: Chunk, store: ParentStore, budget: int, *, unit: Unit = "char", text: str | None = None
) -> Window: ...
@overload
def neighbours(
    hits: Iterable[Hit],
    store: ParentStore,
    budget: int,
    *,
    unit: Unit = "char",
    text: str | None = None,
) -> list[Window]: ...


def neighbours(
    hits: Any,
    store: ParentStore,
    budget: int,
    *,
    unit: Unit = "char",
    text: str | None = None,
) -> Window | list[Window]:
    """Grow each hit with the adjacent chunks of its document and level, up to ``budget``.

    The "middle ground" between a small hit and its whole parent: chunks ``index + 1``,
    ``index - 1``, ``index + 2``, ... are added, one side then the other, while the window's
    text stays within ``budget`` (in ``unit``); a side stops at the first chunk that would
    pass it, at the document's edge, or at a chunk the store does not hold. The hit itself is
    always kept, even when it alone passes the budget. The window's text is exact, gaps
    between chunks included: a gap's text comes from a stored ancestor that covers it, or
    from ``text`` (the document) when given; a gap nothing covers (between two top-level
    chunks, when ``text`` is not given) ends the window there.

    Windows of several hits that share chunks are merged into one (which may then pass the
    budget); windows come in the order of their first hit.

    Args:
        hits: One ``Chunk`` (returns one ``Window``) or an iterable of chunks or
            ``(chunk, score)`` pairs (returns a list).
        store: Holds the hits' level (``children=True`` for leaves) and their ancestors.
        budget: The most a window may hold, in ``unit``, >= 0.
        unit: ``"char"`` (code points), ``"byte"`` (UTF-8) or a function text -> size (a
            token count: use the chunker's tokenizer).
        text: The document's text, for hits of one document whose gaps no stored chunk
            covers.

    Raises:
        TypeError: A hit is not a ``Chunk`` (nor a pair with one), or ``budget`` is not an int.
        ValueError: ``budget`` is negative, ``unit`` is unknown, ``text`` is not the hits'
            document, or the store does not hold the hits' level.

    Example:
        >>> from spanchunk import ParentChildChunker, ParentRegistry
        >>> text = "One sentence here. " * 40
        >>> store = ParentRegistry(children=True)
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50, registry=store)
        >>> store.add(chunker.chunk_tree(text))
        >>> hit = chunker.chunk(text)[4]
        >>> window = neighbours(hit, store, budget=120)
        >>> text[window.start_char:window.end_char] == window.text, len(window.text) <= 120
        (True, True)
    """
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise TypeError(f"budget must be an int (a size in the unit), not {type(budget).__name__}")
    if budget < 0:
        raise ValueError(
            f"budget must be at least 0, got {budget}: pass the most the window may hold, in "
            "the unit (e.g. budget=1000 with unit='char')"
        )
    measure = _measure(unit)
    single = type(hits) is Chunk
    items = [hits] if single else list(hits)
    chunks: list[Chunk] = []
    for position, item in enumerate(items):
        if type(item) is Chunk:
            chunks.append(item)
        elif isinstance(item, tuple) and len(item) == 2 and type(item[0]) is Chunk:
            chunks.append(item[0])
        else:
            raise not_a_chunk(position, item, "neighbours")
    if text is not None:
        for chunk in chunks:
            if text[chunk.start_char : chunk.end_char] != chunk.text:
                raise ValueError(
                    f"text is not the document of hit {chunk.id!r} (its span holds other "
                    "text): pass the text of the document the hits were cut from, or "
                    "text=None"
                )
    gaps = _Gaps(store, text)
    windows: list[Window] = []
    for chunk in chunks:
        window = _grow(chunk, store, budget, measure, gaps)
        windows = _merge_into(windows, window, gaps)
    return windows[0] if single else windows


def _overlapping(one: Window, other: Window) -> bool:
    return (
        one.document_id == other.document_id
        and one.level == other.level
        and other.first_index <= one.last_index
        and one.first_index <= other.last_index
    )


def _merge_into(windows: list[Window], new: Window, gaps: _Gaps) -> list[Window]:
    """``windows`` with ``new`` merged into every one it shares a chunk with, in the place of
    the first of them (a merged window may reach others: repeated until none is left)."""
    place: int | None = None
    while True:
        kept: list[Window] = []
        merged = False
        for window in windows:
            if _overlapping(window, new):
                by_index = {chunk.index: chunk for chunk in (*window.chunks, *new.chunks)}
                run = [by_index[index] for index in sorted(by_index)]
                joined = _joined(run, gaps)
                if joined is None:  # pragma: no cover - each gap was covered by one of the two
                    raise AssertionError("a merged window has a gap neither window covered")
                new = _window(run, joined, window.hits + new.hits)
                merged = True
                if place is None or len(kept) < place:
                    place = len(kept)
            else:
                kept.append(window)
        windows = kept
        if not merged:
            break
    if place is None:
        return [*windows, new]
    return [*windows[:place], new, *windows[place:]]


# --------------------------------------------------------------------------------------------
# parent_content: children that carry their parent


def parent_content(parent: Chunk) -> dict[str, Any]:
    """What a child carries of its parent under ``metadata["parent_content"]``: the parent's
    id, text, index, level, spans, parent id and child ids (JSON-safe)."""
    return {
        "id": parent.id,
        "text": parent.text,
        "index": parent.index,
        "level": parent.level,
        "start_char": parent.start_char,
        "end_char": parent.end_char,
        "start_byte": parent.start_byte,
        "end_byte": parent.end_byte,
        "parent_id": parent.parent_id,
        "child_ids": list(parent.child_ids),
    }


def attach_parent_content(
    children: Iterable[Chunk], parents: ParentStore | Mapping[str, Chunk] | Iterable[Chunk]
) -> list[Chunk]:
    """Copies of ``children`` that carry their parent in ``metadata["parent_content"]``.

    For vector stores that keep a payload per vector but cannot look parents up: store the
    children's metadata with them, and ``expand`` (with any store, or ``store=None``) gives
    back the parent from the hit alone, equal (``==``) to the real one. A child whose parent
    is not among ``parents`` is returned as it is. Siblings share one metadata mapping.

    Args:
        children: The chunks to copy (usually the leaves).
        parents: A ``ParentStore``, a mapping from id to chunk, or the parent chunks.

    Returns:
        The children, in order, with ``parent_content`` added to their metadata.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50)
        >>> children = attach_parent_content(chunker.chunk("Words. " * 80), chunker.parents)
        >>> expand(children[:1], None)[0] == chunker.parents[children[0].parent_id]
        True
    """
    items = list(children)
    for position, item in enumerate(items):
        if type(item) is not Chunk:
            raise not_a_chunk(position, item, "attach_parent_content")
    wanted = list({chunk.parent_id: None for chunk in items if chunk.parent_id is not None})
    if hasattr(parents, "get_many"):
        known: Mapping[str, Chunk] = parents.get_many(wanted)
    elif isinstance(parents, Mapping):
        known = parents
    else:
        known = {chunk.id: chunk for chunk in parents}
    shared: dict[tuple[str, int], Mapping[str, Any]] = {}
    result = []
    for child in items:
        parent = known.get(child.parent_id) if child.parent_id is not None else None
        if parent is None:
            result.append(child)
            continue
        key = (parent.id, id(child.metadata))
        metadata = shared.get(key)
        if metadata is None:
            # Read-only all the way down, as a Document's metadata is (siblings share it).
            metadata = shared[key] = freeze_metadata(
                {**child.metadata, PARENT_CONTENT: parent_content(parent)}
            )
        result.append(
            Chunk(
                child.id,
                child.text,
                child.document_id,
                child.index,
                child.level,
                child.start_char,
                child.end_char,
                child.start_byte,
                child.end_byte,
                child.parent_id,
                child.child_ids,
                metadata,
            )
        )
    return result
