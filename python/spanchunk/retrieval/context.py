"""``assemble``: the context to send to a model for a set of retrieved chunks, within a budget.

``assemble`` turns hits (leaf chunks, best first; parents too, when they were searched as well)
into exact, non-overlapping spans whose total size fits a budget. It reads the hierarchy only
through a store's ``get_many`` and each chunk's ``parent_id`` and ``child_ids``: the leaves
must be in the store too (add them with ``store.add(children)``), or a hit cannot see its
siblings and stays alone.

The rule (the documentation's Retrieval page, ``docs/retrieval.md``, says why and gives the
numbers) is a greedy knapsack over candidate spans, by expected relevance per character:

1. The hit at rank ``r`` (0: the best) weighs ``1 / (r + 1) ** 2``; hits from rank ``depth``
   on are ignored. Ranks, not scores: any retriever's scores, distances or fused ranks do.
2. A leaf's relevance is the sum, over the hits of its top-level chunk, of the hit's weight
   times ``spread`` to the power of their distance in leaves (the hit's own leaves 0, its
   neighbours 1, ...). The best hits' neighbours come before weak hits, and several hits
   close together make the text between and around them (a whole parent) worth sending; a
   weak lone hit lends its neighbours little.
3. The candidates are each hit, each ancestor of a hit (parent, grandparent, ...) and the
   leaves between two chosen runs of one parent. Repeatedly, the candidate with the most
   relevance per character it adds is measured and taken if it fits the budget (else dropped),
   while that is at least the weight of the last hit counted (rank ``depth - 1``).

Runs are measured by the Rust core, each once (memoised), and only when a candidate is about
to be taken; the store is read once per chunk reached (``_get_many`` is the batch lookup).
"""

from __future__ import annotations

import itertools
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


def _weight(rank: int) -> float:
    """What a hit at ``rank`` (0: the best) vouches for."""
    return 1.0 / (rank + 1) ** 2


@dataclass
class _Candidate:
    """Leaves [first, end) of a block, the relevance they would add, and that per char."""

    first: int
    end: int
    worth: float  # relevance added: per new leaf, relevance x chars
    density: float  # worth per char added


@dataclass
class _Block:
    """The leaves under one top-level chunk, and the leaf range of every chunk above them."""

    top: Chunk
    leaves: list[Chunk]
    ranges: dict[str, tuple[int, int]]  # chunk id -> [first leaf, end leaf)
    chains: list[list[Chunk]]  # per leaf: its ancestors inside the block, nearest first
    chosen: list[bool] = field(default_factory=list)
    best: list[tuple[float, int] | None] = field(default_factory=list)  # per leaf: (score, rank)
    weights: list[float] = field(default_factory=list)  # per hit noted
    relevance: list[float] = field(default_factory=list)  # per leaf, once every hit is noted
    size: int = 0
    sizes: dict[tuple[int, int], int] = field(default_factory=dict)
    hits: list[tuple[int, int, Chunk]] = field(default_factory=list)  # (first, end, hit)
    candidates: list[_Candidate] = field(default_factory=list)

    starts: list[int] = field(default_factory=list)  # per leaf, relative to the top chunk
    ends: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.chosen = [False] * len(self.leaves)
        self.best = [None] * len(self.leaves)
        self.starts = [leaf.start_char - self.top.start_char for leaf in self.leaves]
        self.ends = [leaf.end_char - self.top.start_char for leaf in self.leaves]

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
        return min(self.starts[first:end]), max(self.ends[first:end])

    def note(self, first: int, end: int, score: float, rank: int, hit: Chunk) -> None:
        """Remember the hit on leaves [first, end), its weight, and the best hit on each of
        them."""
        self.hits.append((first, end, hit))
        self.weights.append(_weight(rank))
        for position in range(first, end):
            best = self.best[position]
            if best is None or best[0] < score:
                self.best[position] = (score, rank)

    def _holds(self, ancestor: Chunk, first: int, end: int) -> bool:
        low, high = self.ranges[ancestor.id]
        return low <= first and end <= high

    def settle(self, spread: float) -> None:
        """Each leaf's relevance: the sum of the block's hits' weights, each times ``spread``
        to the power of the leaf's distance from the hit, in leaves."""
        self.relevance = [0.0] * len(self.leaves)
        for (first, end, _), weight in zip(self.hits, self.weights, strict=True):
            for position in range(len(self.leaves)):
                if first <= position < end:
                    self.relevance[position] += weight
                    continue
                steps = first - position if position < first else position - end + 1
                self.relevance[position] += weight * spread**steps

    def run_size(self, first: int, end: int, measure: Callable[[str], int]) -> int:
        # Memoised: a run is measured once, however often it is proposed.
        key = (first, end)
        if key not in self.sizes:
            start, stop = self.text_of(first, end)
            self.sizes[key] = measure(self.top.text[start:stop])
        return self.sizes[key]

    def size_of(self, chosen: Sequence[bool], measure: Callable[[str], int]) -> int:
        return sum(self.run_size(first, end, measure) for first, end in self.runs(chosen))

    def ranges_to_try(self) -> set[tuple[int, int]]:
        """Each hit, each ancestor of a hit, and the gap between two chosen runs of one
        parent."""
        found: set[tuple[int, int]] = set()
        for first, end, _ in self.hits:
            found.add((first, end))
            for ancestor in self.chains[first]:
                if self._holds(ancestor, first, end):
                    found.add(self.ranges[ancestor.id])
        runs = self.runs(self.chosen)
        for (_, left_end), (right_first, _) in itertools.pairwise(runs):
            left, right = self.chains[left_end - 1], self.chains[right_first]
            if left and right and left[0].id == right[0].id:
                found.add((left_end, right_first))
        return found

    def evaluate(self) -> None:
        """The candidates that would add something, with their relevance per character (a
        size in the budget's unit is measured only for the candidate about to be taken)."""
        self.candidates = []
        for first, end in sorted(self.ranges_to_try()):
            new = [position for position in range(first, end) if not self.chosen[position]]
            chars = [self.ends[position] - self.starts[position] for position in new]
            worth = sum(
                self.relevance[position] * size for position, size in zip(new, chars, strict=True)
            )
            if worth > 0.0:
                self.candidates.append(_Candidate(first, end, worth, worth / max(1, sum(chars))))

    def added_by(self, candidate: _Candidate, measure: Callable[[str], int]) -> int:
        """The size ``candidate`` adds to the block's chosen runs, measured."""
        proposal = self.chosen.copy()
        proposal[candidate.first : candidate.end] = [True] * (candidate.end - candidate.first)
        return self.size_of(proposal, measure) - self.size

    def take(self, candidate: _Candidate, added: int) -> None:
        self.chosen[candidate.first : candidate.end] = [True] * (candidate.end - candidate.first)
        self.size += added


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
    spread: float = 0.3,
    depth: int = 30,
    order: str = "document",
    missing: Missing = "warn",
) -> list[Span]:
    """The context to send for ``hits`` within ``budget``: exact, non-overlapping spans.

    Args:
        hits: Retrieved chunks, best first: ``Chunk`` objects or ``(Chunk, score)`` pairs.
            Leaves, usually; a parent (searched by its own vector) counts as a hit on each
            of its leaves. Only the order matters to the rule; scores are kept in the
            spans.
        store: Where the hits' parents, ancestors and sibling leaves are found by ``get``.
        budget: The most the spans may total, in ``unit``.
        unit: What the budget is counted in, as for the chunkers: ``"token"`` (cl100k_base
            unless ``encoding``, ``tokenizer`` or ``length_function`` names another count),
            ``"char"``, ``"byte"``, ``"word"``, ...
        encoding: A tiktoken encoding, for ``unit="token"``.
        tokenizer: A HuggingFace ``tokenizer.json`` path, for ``unit="token"``.
        length_function: A callable str -> int, for ``unit="token"``.
        spread: How much of a hit's weight its neighbours get, per leaf away, from 0 to
            1. 0: only the hits are sent, never the
            text around them; near 1: whole parents and grandparents around every hit.
        depth: How many hits count (the rest are ignored), and so where sending stops:
            nothing worth less per character than the hit at rank ``depth - 1`` is sent,
            even when the budget has room.
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
        ValueError: A negative budget, a ``spread`` outside 0-1, a ``depth`` below 1, an
            unknown unit, order or ``missing``.
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
    if (
        isinstance(spread, bool)
        or not isinstance(spread, (int, float))
        or math.isnan(spread)
        or not 0 <= spread <= 1
    ):
        raise ValueError(
            f"spread must be a number from 0 to 1, got {spread!r}: the share of a hit's "
            "weight each step away keeps (0: the hits only; more than 1 would make far text "
            "worth more than near text)"
        )
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be an int of at least 1, got {depth!r}")
    if order not in ("document", "score"):
        raise ValueError(f"order must be 'document' or 'score', got {order!r}")
    mode = check_missing(missing)
    measure = measurer(unit, encoding, tokenizer, length_function, where="assemble")
    found = _Blocks(store)
    scored = scored_hits(hits, "assemble")
    seen: set[str] = set()
    for rank, (hit, score) in enumerate(scored[:depth]):
        if hit.id in seen:  # a hit given twice counts once, at its first rank
            continue
        seen.add(hit.id)
        block = found.block_of(hit)
        if mode == "raise" and found.missing:
            break
        first, end = block.ranges[hit.id]
        block.note(first, end, score, rank, hit)
    missing_parents(
        mode,
        found.missing,
        "assemble",
        total=min(len(scored), depth),
        content=False,
        relation="an ancestor",
        kept="assembled without the chunks above them",
    )
    _fill_budget(list(found.blocks.values()), budget, float(spread), _weight(depth - 1), measure)
    return _spans(found.blocks.values(), measure, order)


def _fill_budget(
    blocks: list[_Block], budget: int, spread: float, floor: float, measure: Callable[[str], int]
) -> None:
    """The greedy knapsack: the candidate worth most per char that fits, again and again,
    while it is worth at least ``floor`` per char."""
    for block in blocks:
        block.settle(spread)
        block.evaluate()
    total = 0
    while True:
        worthy = [
            (candidate.density, candidate.worth, -position, candidate, block)
            for position, block in enumerate(blocks)
            for candidate in block.candidates
            if candidate.density >= floor
        ]
        if not worthy:
            return
        *_, candidate, block = max(worthy, key=lambda item: item[:3])
        added = block.added_by(candidate, measure)
        if total + added > budget:
            block.candidates.remove(candidate)  # it cannot fit now, nor later
            continue
        block.take(candidate, added)
        total += added
        block.evaluate()


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
