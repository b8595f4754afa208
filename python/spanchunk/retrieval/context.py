"""``assemble``: the context to send to a model for a set of retrieved leaves, within a budget.

``assemble`` turns scored hits (leaf chunks, best first) into exact, non-overlapping spans whose
total size fits a budget, choosing region by region between the hit itself, a run of
neighbours that joins close hits, and a whole parent or grandparent when enough of it is
already chosen. It reads the hierarchy only through a store's ``get(chunk_id)`` and each
chunk's ``parent_id`` and ``child_ids``: the leaves must be in the store too (add them with
``store.add(children)``), or a hit cannot see its siblings and stays alone.

The rule, hit by hit in rank order (the documentation's Retrieval page, ``docs/retrieval.md``,
says why and gives the numbers):

1. Take the hit's leaf.
2. Bridge: when a chosen leaf of the same top-level chunk lies at most ``gap`` leaves away, take
   the leaves between too, so close hits become one run (the text between two relevant spots
   is usually relevant, and one run reads better than two fragments).
3. Merge up: when the chosen part of an ancestor (parent, then grandparent, ...) is more than
   ``threshold`` of its size, take the whole ancestor (auto-merge's rule, on sizes).
4. If the result does not fit the budget, try again without step 3, then without step 2;
   if the bare leaf does not fit either, skip the hit (a later, smaller one may fit).

The store is read once per chunk reached (``_get_many`` is the batch lookup); sizes are
measured by the Rust core on the span's text only for the top-level chunk a hit changes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from spanchunk.chunk import Chunk
from spanchunk.retrieval.span import Span, scored_hits
from spanchunk.stores import ParentStore
from spanchunk.stores.parents import Missing, check_missing, missing_parents
from spanchunk.units import measurer

__all__ = ["assemble"]


def _get_many(store: ParentStore, chunk_ids: Iterable[str]) -> list[Chunk | None]:
    """The stored chunk for each id, in order (None where unknown): the one batch lookup, one
    query for a ``ParentStore``; a store of one's own with ``get`` only is read id by id."""
    wanted = list(chunk_ids)
    get_many = getattr(store, "get_many", None)
    if get_many is not None:
        found = get_many(wanted)
        return [found.get(chunk_id) for chunk_id in wanted]
    return [store.get(chunk_id) for chunk_id in wanted]


@dataclass
class _Block:
    """The leaves under one top-level chunk, and the leaf range of every chunk above them."""

    top: Chunk
    leaves: list[Chunk]
    ranges: dict[str, tuple[int, int]]  # chunk id -> [first leaf, end leaf)
    chains: list[list[Chunk]]  # per leaf: its ancestors inside the block, nearest first
    chosen: list[bool] = field(default_factory=list)
    best: list[tuple[float, int] | None] = field(default_factory=list)  # per leaf: (score, rank)
    size: int = 0
    sizes: dict[tuple[int, int], int] = field(default_factory=dict)
    hits: list[tuple[int, int, Chunk]] = field(default_factory=list)  # (first, end, hit)

    def __post_init__(self) -> None:
        self.chosen = [False] * len(self.leaves)
        self.best = [None] * len(self.leaves)

    def runs(self, chosen: Sequence[bool]) -> list[tuple[int, int]]:
        """Maximal runs [first, end) of chosen leaves; runs whose text overlaps (leaves cut
        with overlap) are joined, so spans never overlap."""
        runs: list[tuple[int, int]] = []
        first = None
        for position, on in enumerate([*chosen, False]):
            if on and first is None:
                first = position
            elif not on and first is not None:
                if runs and self.text_of(*runs[-1])[1] > self.text_of(first, position)[0]:
                    runs[-1] = (runs[-1][0], position)
                else:
                    runs.append((first, position))
                first = None
        return runs

    def text_of(self, first: int, end: int) -> tuple[int, int]:
        """Char offsets, relative to the top chunk, of leaves [first, end)."""
        start = min(leaf.start_char for leaf in self.leaves[first:end])
        stop = max(leaf.end_char for leaf in self.leaves[first:end])
        return start - self.top.start_char, stop - self.top.start_char

    def note(self, first: int, end: int, score: float, rank: int, hit: Chunk) -> None:
        """Remember the hit on leaves [first, end), and the best hit on each of them."""
        self.hits.append((first, end, hit))
        for position in range(first, end):
            best = self.best[position]
            if best is None or best[0] < score:
                self.best[position] = (score, rank)

    def run_size(self, first: int, end: int, measure: Callable[[str], int]) -> int:
        # Memoised: the rule measures the same runs again and again.
        key = (first, end)
        if key not in self.sizes:
            start, stop = self.text_of(first, end)
            self.sizes[key] = measure(self.top.text[start:stop])
        return self.sizes[key]

    def size_of(self, chosen: Sequence[bool], measure: Callable[[str], int]) -> int:
        return sum(self.run_size(first, end, measure) for first, end in self.runs(chosen))

    def merge_up(
        self, chosen: list[bool], position: int, threshold: float, measure: Callable[[str], int]
    ) -> list[bool]:
        """Take each ancestor of ``position``, nearest first, while its chosen share of size
        is above ``threshold``."""
        merged = chosen.copy()
        for ancestor in self.chains[position]:
            low, high = self.ranges[ancestor.id]
            whole = self.run_size(low, high, measure)
            inside = [on and low <= i < high for i, on in enumerate(merged)]
            if not whole or self.size_of(inside, measure) / whole <= threshold:
                break
            merged[low:high] = [True] * (high - low)
        return merged

    def proposals(
        self,
        first: int,
        end: int,
        *,
        gap: int,
        context: int,
        threshold: float,
        widest: float,
        measure: Callable[[str], int],
    ) -> list[list[bool]]:
        """What taking leaves [first, end) could add, most generous first."""
        bare = self.chosen.copy()
        bare[first:end] = [True] * (end - first)
        bridged = bare.copy()
        on = [i for i, value in enumerate(self.chosen) if value]
        before = [i for i in on if i < first]
        after = [i for i in on if i >= end]
        if before and first - before[-1] - 1 <= gap:
            bridged[before[-1] + 1 : first] = [True] * (first - before[-1] - 1)
        if after and after[0] - end <= gap:
            bridged[end : after[0]] = [True] * (after[0] - end)
        proposals = [self.merge_up(bridged, first, threshold, measure), bridged, bare]
        if context:
            window = bridged.copy()
            low, high = max(0, first - context), min(len(window), end + context)
            window[low:high] = [True] * (high - low)
            proposals[:0] = [self.merge_up(window, first, threshold, measure), window]
        if widest and self.chains[first]:
            low, high = self.ranges[self.chains[first][0].id]
            if self.run_size(low, high, measure) <= widest:
                widened = bridged.copy()
                widened[low:high] = [True] * (high - low)
                proposals[:0] = [self.merge_up(widened, first, threshold, measure), widened]
        return proposals


def _walk(store: ParentStore, top: Chunk, cache: dict[str, Chunk | None]) -> _Block:
    """The leaves under ``top`` in document order (a chunk whose children are not all stored
    counts as a leaf)."""
    leaves: list[Chunk] = []
    ranges: dict[str, tuple[int, int]] = {}
    chains: list[list[Chunk]] = []

    def visit(chunk: Chunk, ancestors: list[Chunk]) -> None:
        first = len(leaves)
        missing = [i for i in chunk.child_ids if i not in cache]
        for chunk_id, child in zip(missing, _get_many(store, missing), strict=True):
            cache[chunk_id] = child
        children = [cache[i] for i in chunk.child_ids]
        if children and all(child is not None for child in children):
            for child in sorted(children, key=lambda c: (c.start_char, c.end_char)):  # type: ignore[union-attr]
                visit(child, [chunk, *ancestors])  # type: ignore[arg-type]
        else:
            leaves.append(chunk)
            chains.append(ancestors)
        ranges[chunk.id] = (first, len(leaves))

    visit(top, [])
    return _Block(top, leaves, ranges, chains)


def assemble(
    hits: Iterable[Chunk | tuple[Chunk, float]],
    store: ParentStore,
    budget: int,
    unit: str = "token",
    *,
    encoding: str | None = None,
    tokenizer: object = None,
    length_function: Callable[[str], int] | None = None,
    gap: int = 1,
    threshold: float = 0.5,
    widen: float = 1.0,
    context: int = 0,
    order: str = "document",
    missing: Missing = "warn",
) -> list[Span]:
    """The context to send for ``hits`` within ``budget``: exact, non-overlapping spans.

    Args:
        hits: Retrieved chunks, best first: ``Chunk`` objects or ``(Chunk, score)`` pairs
            (without scores, rank stands in for score).
        store: Where the hits' parents, ancestors and sibling leaves are found by ``get``.
        budget: The most the spans may total, in ``unit``.
        unit: What the budget is counted in, as for the chunkers: ``"token"`` (cl100k_base
            unless ``encoding``, ``tokenizer`` or ``length_function`` names another count),
            ``"char"``, ``"byte"``, ``"word"``, ...
        encoding: A tiktoken encoding, for ``unit="token"``.
        tokenizer: A HuggingFace ``tokenizer.json`` path, for ``unit="token"``.
        length_function: A callable str -> int, for ``unit="token"``.
        gap: Join a hit to a chosen leaf at most this many leaves away (0: only adjacent).
        threshold: Take a whole ancestor when more than this share of its size is chosen
            (1 or more: never).
        widen: Take a hit's whole parent when the parent's size is at most this share of
            the budget and it fits (the default, 1: whenever it fits; 0: never).
        context: Take this many leaves either side of a hit too, within its top-level chunk
            (a centred window; 0: none).
        order: ``"document"``: documents by their best hit, spans in reading order within
            each (a model reads adjacent spans as the text they are); ``"score"``: spans by
            their best hit.
        missing: For a hit whose parent (or a higher ancestor) the store does not hold, so
            that it is assembled without the chunks above: ``"warn"`` (one
            ``MissingParentWarning`` per call), ``"raise"`` (``MissingParentError``) or
            ``"keep"`` (silently). Leaves that are not stored are not missing parents: a hit
            whose siblings are not stored stays alone, as said above.

    Returns:
        Spans whose ``size`` sum is at most ``budget``; no two overlap.

    Raises:
        TypeError: A hit is not a Chunk or a (Chunk, score) pair, or ``unit`` is a function
            (it goes in ``length_function``).
        ValueError: A negative budget or gap, an unknown unit, order or ``missing``.
        MissingParentError: (a ``KeyError``) ``missing="raise"`` and a hit's parent is not
            stored.

    Example:
        >>> from spanchunk import HierarchicalChunker, ParentRegistry
        >>> store = ParentRegistry()
        >>> chunker = HierarchicalChunker(sizes=[200, 50], registry=store)
        >>> leaves = chunker.chunk("One sentence here. " * 40)
        >>> store.add(leaves)
        >>> spans = assemble(leaves[2:4], store, budget=100, unit="char")
        >>> [(s.start_char, s.end_char) for s in spans]
        [(76, 151)]
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a non-negative int, got {budget!r}")
    for name, value in (("gap", gap), ("context", context)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    if not isinstance(threshold, (int, float)) or math.isnan(threshold):
        raise ValueError(f"threshold must be a number, got {threshold!r}")
    if order not in ("document", "score"):
        raise ValueError(f"order must be 'document' or 'score', got {order!r}")
    mode = check_missing(missing)
    measure = measurer(unit, encoding, tokenizer, length_function, where="assemble")
    found = _Blocks(store)
    total = 0
    scored = scored_hits(hits, "assemble")
    for rank, (hit, score) in enumerate(scored):
        block = found.block_of(hit)
        if mode == "raise" and found.missing:
            break
        first, end = block.ranges[hit.id]
        block.note(first, end, score, rank, hit)
        if all(block.chosen[first:end]) or total >= budget:
            continue
        bare = block.chosen.copy()
        bare[first:end] = [True] * (end - first)
        if total - block.size + block.size_of(bare, measure) > budget:
            continue  # every other proposal holds this one: none fits
        proposals = block.proposals(
            first,
            end,
            gap=gap,
            context=context,
            threshold=threshold,
            widest=widen * budget,
            measure=measure,
        )
        for proposal in proposals:
            size = block.size_of(proposal, measure)
            if total - block.size + size <= budget:
                total += size - block.size
                block.size = size
                block.chosen = proposal
                break
    missing_parents(
        mode,
        found.missing,
        "assemble",
        total=len(scored),
        content=False,
        relation="an ancestor",
        kept="assembled without the chunks above them",
    )
    return _spans(found.blocks.values(), measure, order)


class _Blocks:
    """The blocks reached from the hits, read from the store once each."""

    def __init__(self, store: ParentStore) -> None:
        self.store = store
        self.cache: dict[str, Chunk | None] = {}
        self.blocks: dict[str, _Block] = {}
        # Hit id -> the id of the first ancestor on its way up that the store does not hold.
        self.missing: dict[str, str] = {}

    def top_of(self, chunk: Chunk) -> Chunk:
        """The highest stored ancestor that lists its child (cycles and strays stop it; an
        ancestor the store does not hold stops it too, and is noted in ``missing``)."""
        node = chunk
        seen = {node.id}
        while node.parent_id is not None:
            if node.parent_id not in self.cache:
                self.cache[node.parent_id] = _get_many(self.store, [node.parent_id])[0]
            parent = self.cache[node.parent_id]
            if parent is None:
                self.missing.setdefault(chunk.id, node.parent_id)
                break
            if parent.id in seen or node.id not in parent.child_ids:
                break
            seen.add(parent.id)
            node = parent
        return node

    def block_of(self, hit: Chunk) -> _Block:
        self.cache.setdefault(hit.id, hit)
        top = self.top_of(hit)
        if top.id not in self.blocks:
            self.blocks[top.id] = _walk(self.store, top, self.cache)
        block = self.blocks[top.id]
        if hit.id not in block.ranges:
            # Not reachable from its top chunk (its siblings are not stored): it stays alone.
            block = self.blocks.setdefault(
                f"hit:{hit.id}", _Block(hit, [hit], {hit.id: (0, 1)}, [[]])
            )
        return block


def _spans(blocks: Iterable[_Block], measure: Callable[[str], int], order: str) -> list[Span]:
    spans: list[Span] = []
    for block in blocks:
        top = block.top
        for first, end in block.runs(block.chosen):
            start, stop = block.text_of(first, end)
            text = top.text[start:stop]
            exact = [
                chunk_id
                for chunk_id, (low, high) in block.ranges.items()
                if (low, high) == (first, end)
            ]
            nodes = [top, *{a.id: a for chain in block.chains[first:end] for a in chain}.values()]
            whole = next((n for n in nodes if n.id in exact), None)
            bests = [b for b in block.best[first:end] if b is not None]
            score, rank = max(bests, key=lambda b: (b[0], -b[1])) if bests else (0.0, -1)
            start_byte = top.start_byte + len(top.text[:start].encode("utf-8", "surrogatepass"))
            one = whole if whole is not None and end - first > 1 else None
            hits = {hit.id: hit for low, high, hit in block.hits if low < end and first < high}
            spans.append(
                Span(
                    document_id=top.document_id,
                    level=0 if one is None else one.level,
                    start_char=top.start_char + start,
                    end_char=top.start_char + stop,
                    start_byte=start_byte,
                    end_byte=start_byte + len(text.encode("utf-8", "surrogatepass")),
                    text=text,
                    chunks=tuple(block.leaves[first:end]) if one is None else (one,),
                    hits=tuple(hits.values()),
                    score=score,
                    rank=rank,
                    size=measure(text),
                )
            )
    if order == "score":
        spans.sort(key=lambda span: span.rank)
    else:
        first_rank: dict[str, int] = {}
        for span in spans:
            first_rank[span.document_id] = min(
                first_rank.get(span.document_id, span.rank), span.rank
            )
        spans.sort(
            key=lambda span: (first_rank[span.document_id], span.document_id, span.start_char)
        )
    return spans
