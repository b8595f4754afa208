"""``neighbours``: a hit grown with the adjacent chunks of its level, up to a size budget, as
one exact ``Span`` of the document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, overload

from spanchunk.chunk import Chunk
from spanchunk.retrieval.span import Span, scored_hits
from spanchunk.stores import ParentStore
from spanchunk.stores.parents import parent_from_content
from spanchunk.units import measurer

__all__ = ["neighbours"]

Hit = Chunk | tuple[Chunk, float]


@dataclass(frozen=True, slots=True)
class _Window:
    """A window while it grows: adjacent chunks of one document and level, their text, and
    the hits it grew from as (hit, score, rank)."""

    chunks: tuple[Chunk, ...]
    text: str
    hits: tuple[tuple[Chunk, float, int], ...]

    @property
    def first(self) -> Chunk:
        return self.chunks[0]

    def span(self, measure: Callable[[str], int]) -> Span:
        """The run as the ``Span`` ``neighbours`` returns."""
        first = self.chunks[0]
        best = max(self.hits, key=lambda hit: (hit[1], -hit[2]))
        return Span(
            first.document_id,
            first.level,
            first.start_char,
            max(chunk.end_char for chunk in self.chunks),
            first.start_byte,
            max(chunk.end_byte for chunk in self.chunks),
            self.text,
            self.chunks,
            tuple(hit[0] for hit in self.hits),
            best[1],
            best[2],
            measure(self.text),
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


def _grow(
    scored: tuple[Chunk, float, int],
    store: ParentStore,
    budget: int,
    measure: Callable[[str], int],
    gaps: _Gaps,
) -> _Window:
    hit = scored[0]
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
    return _Window(tuple(run), text, (scored,))


@overload
def neighbours(
    hits: Chunk,
    store: ParentStore,
    budget: int,
    *,
    unit: str = "char",
    encoding: str | None = None,
    tokenizer: object = None,
    length_function: Callable[[str], int] | None = None,
    text: str | None = None,
) -> Span: ...
@overload
def neighbours(
    hits: Iterable[Hit],
    store: ParentStore,
    budget: int,
    *,
    unit: str = "char",
    encoding: str | None = None,
    tokenizer: object = None,
    length_function: Callable[[str], int] | None = None,
    text: str | None = None,
) -> list[Span]: ...


def neighbours(
    hits: Any,
    store: ParentStore,
    budget: int,
    *,
    unit: str = "char",
    encoding: str | None = None,
    tokenizer: object = None,
    length_function: Callable[[str], int] | None = None,
    text: str | None = None,
) -> Span | list[Span]:
    """Grow each hit with the adjacent chunks of its document and level, up to ``budget``.

    The "middle ground" between a small hit and its whole parent: chunks ``index + 1``,
    ``index - 1``, ``index + 2``, ... are added, one side then the other, while the span's
    text stays within ``budget`` (in ``unit``); a side stops at the first chunk that would
    pass it, at the document's edge, or at a chunk the store does not hold. The hit itself is
    always kept, even when it alone passes the budget. The span's text is exact, gaps
    between chunks included: a gap's text comes from a stored ancestor that covers it, or
    from ``text`` (the document) when given; a gap nothing covers (between two top-level
    chunks, when ``text`` is not given) ends the span there.

    The spans of several hits that share chunks are merged into one (which may then pass
    the budget); spans come in the order of their first hit. This is one of the simple rules
    ``assemble`` chooses between; ``assemble`` is the way to fill a budget.

    Args:
        hits: One ``Chunk`` (returns one ``Span``) or an iterable of chunks or
            ``(chunk, score)`` pairs, best first (returns a list).
        store: Holds the hits' level (``children=True`` for leaves) and their ancestors.
        budget: The most a span may hold, in ``unit``, >= 0.
        unit: What the budget is counted in, as for the chunkers: ``"char"`` (code
            points), ``"byte"`` (UTF-8), ``"token"`` (cl100k_base unless ``encoding``,
            ``tokenizer`` or ``length_function`` names another count), ``"word"``, ...
        encoding: A tiktoken encoding, for ``unit="token"``.
        tokenizer: A HuggingFace ``tokenizer.json`` path, for ``unit="token"``.
        length_function: A callable str -> int, for ``unit="token"``.
        text: The document's text, for hits of one document whose gaps no stored chunk
            covers.

    Raises:
        TypeError: A hit is not a ``Chunk`` (nor a pair with one), ``budget`` is not an int,
            or ``unit`` is a function (it goes in ``length_function``).
        ValueError: ``budget`` is negative, ``unit`` is unknown, ``text`` is not the hits'
            document, or the store does not hold the hits' level.

    Example:
        >>> from spanchunk import ParentChildChunker, ParentRegistry
        >>> text = "One sentence here. " * 40
        >>> store = ParentRegistry(children=True)
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50, registry=store)
        >>> store.add(chunker.chunk_tree(text))
        >>> hit = chunker.chunk(text)[4]
        >>> span = neighbours(hit, store, budget=120)
        >>> text[span.start_char:span.end_char] == span.text, span.size <= 120
        (True, True)
    """
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise TypeError(f"budget must be an int (a size in the unit), not {type(budget).__name__}")
    if budget < 0:
        raise ValueError(
            f"budget must be at least 0, got {budget}: pass the most the span may hold, in "
            "the unit (e.g. budget=1000 with unit='char')"
        )
    measure = measurer(unit, encoding, tokenizer, length_function, where="neighbours")
    single = type(hits) is Chunk
    items = [hits] if single else list(hits)
    scored = [
        (chunk, score, rank) for rank, (chunk, score) in enumerate(scored_hits(items, "neighbours"))
    ]
    if text is not None:
        for chunk, _, _ in scored:
            if text[chunk.start_char : chunk.end_char] != chunk.text:
                raise ValueError(
                    f"text is not the document of hit {chunk.id!r} (its span holds other "
                    "text): pass the text of the document the hits were cut from, or "
                    "text=None"
                )
    gaps = _Gaps(store, text)
    runs: list[_Window] = []
    for hit in scored:
        runs = _merge_into(runs, _grow(hit, store, budget, measure, gaps), gaps)
    spans = [run.span(measure) for run in runs]
    return spans[0] if single else spans


def _overlapping(one: _Window, other: _Window) -> bool:
    return (
        one.first.document_id == other.first.document_id
        and one.first.level == other.first.level
        and other.chunks[0].index <= one.chunks[-1].index
        and one.chunks[0].index <= other.chunks[-1].index
    )


def _merge_into(runs: list[_Window], new: _Window, gaps: _Gaps) -> list[_Window]:
    """``runs`` with ``new`` merged into every one it shares a chunk with, in the place of
    the first of them (a merged run may reach others: repeated until none is left)."""
    place: int | None = None
    while True:
        kept: list[_Window] = []
        merged = False
        for run in runs:
            if _overlapping(run, new):
                by_index = {chunk.index: chunk for chunk in (*run.chunks, *new.chunks)}
                joined_run = [by_index[index] for index in sorted(by_index)]
                joined = _joined(joined_run, gaps)
                if joined is None:  # pragma: no cover - each gap was covered by one of the two
                    raise AssertionError("a merged span has a gap neither span covered")
                new = _Window(tuple(joined_run), joined, run.hits + new.hits)
                merged = True
                if place is None or len(kept) < place:
                    place = len(kept)
            else:
                kept.append(run)
        runs = kept
        if not merged:
            break
    if place is None:
        return [*runs, new]
    return [*runs[:place], new, *runs[place:]]
