"""The token-level retrieval metrics of Smith & Troynikov, *Evaluating Chunking Strategies for
Retrieval* (Chroma, 2024), on character ranges.

For one question with reference excerpts ``E`` (character ranges in the question's corpus) and
retrieved ranges ``R`` (from any corpus: a retrieved range in another corpus is all noise):

- recall = |E & R| / |E|
- precision = |E & R| / |R|
- IoU = |E & R| / |E | R|
- precision_Ω = precision when every chunk of the corpus that overlaps a reference is
  retrieved: |E & C| / |C | E| where ``C`` is those chunks (the report's code adds the
  reference characters no chunk covers to the denominator, so it is the IoU of that ideal
  retrieval; with chunks that cover the text, the two agree).

All four are computed per question and then averaged over the questions, as the report does.

Two more figures say how a context reads, for flat and assembled contexts alike
(``reading``): the number of separate spans (retrieved ranges joined where they overlap or
only whitespace lies between them), and the share of span ends that fall on a sentence or
paragraph end (the text before the end closes with ``.``, ``!``, ``?`` or ``…``, perhaps
followed by a closing quote or bracket; or only whitespace with a line break, or nothing,
follows it).
Sets are sets of characters: overlapping retrieved chunks (chunk overlap, or a parent and its
child) count once. The report's code sums the retrieved lengths instead (overlap counted
twice) in precision and IoU; ``summed=True`` gives that variant, to compare with its table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Range = tuple[int, int]


def union_ranges(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, disjoint ranges covering the same characters (touching ranges merge)."""
    merged: list[Range] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def total_length(ranges: Iterable[Range]) -> int:
    """Characters covered by ``ranges``, each character once."""
    return sum(end - start for start, end in union_ranges(ranges))


def intersection_length(first: Iterable[Range], second: Iterable[Range]) -> int:
    """Characters in both sets of ranges."""
    a, b = union_ranges(first), union_ranges(second)
    i = j = 0
    shared = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if end > start:
            shared += end - start
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return shared


@dataclass(frozen=True)
class Scores:
    """One question's scores (fractions in [0, 1])."""

    recall: float
    precision: float
    iou: float


def score_question(
    retrieved: Sequence[tuple[str, int, int]],
    references: Sequence[Range],
    corpus_id: str,
    *,
    summed: bool = False,
) -> Scores:
    """Recall, precision and IoU of one question.

    Args:
        retrieved: ``(corpus_id, start_char, end_char)`` of every retrieved chunk or span.
        references: The question's excerpts, as character ranges in ``corpus_id``.
        corpus_id: The corpus the question is about.
        summed: Count retrieved characters with multiplicity (the report's code) instead of
            as a set.

    Returns:
        The three scores; 0 where a denominator is 0.
    """
    reference_set = union_ranges(references)
    here = [(start, end) for corpus, start, end in retrieved if corpus == corpus_id]
    shared = intersection_length(reference_set, here)
    if summed:
        retrieved_size = sum(end - start for _, start, end in retrieved)
    else:
        corpora = {corpus for corpus, _, _ in retrieved}
        retrieved_size = sum(
            total_length((start, end) for corpus, start, end in retrieved if corpus == name)
            for name in corpora
        )
    reference_size = total_length(reference_set)
    union = retrieved_size + reference_size - shared
    return Scores(
        recall=shared / reference_size if reference_size else 0.0,
        precision=shared / retrieved_size if retrieved_size else 0.0,
        iou=shared / union if union else 0.0,
    )


def precision_omega(chunks: Sequence[Range], references: Sequence[Range]) -> float:
    """precision_Ω of one question: every chunk of its corpus that overlaps a reference is
    retrieved.

    Args:
        chunks: The character ranges of every chunk of the question's corpus.
        references: The question's excerpts in that corpus.
    """
    reference_set = union_ranges(references)
    touching = [
        (start, end)
        for start, end in chunks
        if any(start < ref_end and ref_start < end for ref_start, ref_end in reference_set)
    ]
    shared = intersection_length(reference_set, touching)
    denominator = total_length([*touching, *reference_set])
    return shared / denominator if denominator else 0.0


_CLOSERS = "\"')]}\u00bb\u201d\u2019*_"
_STOPS = ".!?\u2026"


def joined_spans(text: str, ranges: Iterable[Range]) -> list[Range]:
    """``ranges`` as the separate spans a reader sees: joined where they overlap, touch or
    only whitespace lies between them."""
    spans: list[Range] = []
    for start, end in union_ranges(ranges):
        if spans and not text[spans[-1][1] : start].strip():
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def ends_cleanly(text: str, end: int) -> bool:
    """Whether a span of ``text`` ending at ``end`` ends on a sentence or paragraph end."""
    after = text[end:]
    rest = after.lstrip()
    if not rest or "\n" in after[: len(after) - len(rest)]:
        return True
    before = text[:end].rstrip().rstrip(_CLOSERS)
    return bool(before) and before[-1] in _STOPS


def reading(
    texts: dict[str, str], contexts: Sequence[Sequence[tuple[str, int, int]]]
) -> tuple[float, float]:
    """For contexts of ``(corpus_id, start_char, end_char)`` pieces: the mean number of
    separate spans per context, and the share of all their ends that end cleanly."""
    counts: list[float] = []
    clean = total = 0
    for pieces in contexts:
        spans = 0
        for corpus in sorted({corpus for corpus, _, _ in pieces}):
            text = texts[corpus]
            joined = joined_spans(text, [(a, b) for c, a, b in pieces if c == corpus])
            spans += len(joined)
            clean += sum(ends_cleanly(text, end) for _, end in joined)
            total += len(joined)
        counts.append(float(spans))
    return mean(counts), (clean / total if total else 0.0)


def mean(values: Iterable[float]) -> float:
    """The arithmetic mean (0 for no values)."""
    items = list(values)
    return sum(items) / len(items) if items else 0.0
