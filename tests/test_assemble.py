"""assemble: exact, non-overlapping spans within the budget, on a ParentRegistry."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from _strategies import hierarchical_settings, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk import Chunk, HierarchicalChunker, ParentRegistry
from spanchunk._core import BLANK_CHARS
from spanchunk.retrieval import Span, assemble

PROPERTY = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SENTENCES = "One sentence here. " * 40


def tree(text: str, **kwargs: Any) -> tuple[list[Chunk], ParentRegistry]:
    store = ParentRegistry()
    leaves = HierarchicalChunker(registry=store, **kwargs).chunk(text)
    store.add(leaves)
    return leaves, store


def size_of(text: str, unit: str) -> int:
    return len(text.encode()) if unit == "byte" else len(text)


def check(spans: list[Span], text: str, budget: int, unit: str) -> None:
    encoded = text.encode("utf-8", "surrogatepass")
    for span in spans:
        assert span.text == text[span.start_char : span.end_char]
        assert (
            span.text.encode("utf-8", "surrogatepass") == encoded[span.start_byte : span.end_byte]
        )
        assert span.size == size_of(span.text, unit)
        assert span.text
    assert sum(span.size for span in spans) <= budget
    ordered = sorted(spans, key=lambda s: s.start_char)
    for before, after in itertools.pairwise(ordered):
        assert before.end_char <= after.start_char


def test_adjacent_hits_become_one_run() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    spans = assemble(leaves[2:4], store, budget=100, unit="char")
    assert [(s.start_char, s.end_char) for s in spans] == [(76, 151)]
    assert spans[0].chunk_ids == (leaves[2].id, leaves[3].id)
    check(spans, SENTENCES, 100, "char")


def test_hits_close_together_widen_to_their_parent() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    parent = store[leaves[1].parent_id]
    # Hits 1 and 3 of the first parent's five leaves (ranks 0 and 1) and a weaker lone hit,
    # leaf 12 (rank 2): the leaves around and between the two close hits are worth more
    # than anything around the lone one, so their parent is sent whole and leaf 12 alone.
    spans = assemble([leaves[1], leaves[3], leaves[12]], store, budget=230, unit="char")
    assert [(s.start_char, s.end_char) for s in spans] == [
        (parent.start_char, parent.end_char),
        (leaves[12].start_char, leaves[12].end_char),
    ]
    assert spans[0].chunk_ids == (parent.id,) and spans[0].level == 1
    assert spans[1].chunk_ids == (leaves[12].id,) and spans[1].level == 0
    # Too small a budget for the parent: the two hits and the leaf that bridges them.
    (bridged,) = assemble([leaves[1], leaves[3]], store, budget=120, unit="char")
    assert (bridged.start_char, bridged.end_char) == (leaves[1].start_char, leaves[3].end_char)
    assert bridged.chunk_ids == tuple(leaf.id for leaf in leaves[1:4])


def test_a_lone_hit_stays_a_leaf_without_spread_or_depth() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    hits = [leaves[1], leaves[3], leaves[12]]
    bare = [(leaf.start_char, leaf.end_char) for leaf in hits]
    # spread=0: the hits lend their neighbours nothing, so only the hits are sent.
    spans = assemble(hits, store, budget=1000, unit="char", spread=0.0)
    assert sorted((s.start_char, s.end_char) for s in spans) == sorted(bare)
    # depth=1: only the best hit counts, and nothing worth less than it is sent.
    (alone,) = assemble(hits, store, budget=1000, unit="char", depth=1)
    assert (alone.start_char, alone.end_char) == bare[0]


def test_the_best_hit_lends_its_neighbours_more_than_weak_hits_are_worth() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    parent = store[leaves[12].parent_id]
    # Leaf 12 is now the best hit: its neighbours (0.3 of its weight) outweigh the third hit
    # (1/9), so its parent is sent, then the second hit; the third no longer fits.
    spans = assemble([leaves[12], leaves[1], leaves[3]], store, budget=230, unit="char")
    assert [(s.start_char, s.end_char) for s in spans] == [
        (leaves[1].start_char, leaves[1].end_char),
        (parent.start_char, parent.end_char),
    ]


def test_a_hit_given_twice_counts_once() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    once = assemble([leaves[1], leaves[12]], store, budget=120, unit="char")
    twice = assemble([leaves[1], leaves[1], leaves[12]], store, budget=120, unit="char")
    assert [(s.start_char, s.end_char) for s in twice] == [(s.start_char, s.end_char) for s in once]


def test_a_parent_hit_counts_for_its_leaves() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    parent = store[leaves[5].parent_id]
    # A parent searched by its own vector, and a leaf elsewhere.
    spans = assemble([parent, leaves[0]], store, budget=260, unit="char")
    assert [(s.start_char, s.end_char) for s in spans] == [
        (leaves[0].start_char, leaves[0].end_char),
        (parent.start_char, parent.end_char),
    ]
    assert spans[1].hits == (parent,)


def test_budget_skips_what_does_not_fit() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    assert assemble(leaves[:3], store, budget=0, unit="char") == []
    spans = assemble(leaves[:3], store, budget=40, unit="char")
    assert [(s.start_char, s.end_char) for s in spans] == [(0, 37)]


def test_scores_and_order() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    hits = [(leaves[9], 0.9), (leaves[0], 0.8)]
    by_document = assemble(hits, store, budget=1000, unit="char", spread=0.0)
    assert [s.start_char for s in by_document] == [leaves[0].start_char, leaves[9].start_char]
    by_score = assemble(hits, store, budget=1000, unit="char", spread=0.0, order="score")
    assert [s.score for s in by_score] == [0.9, 0.8]
    assert [s.rank for s in by_score] == [0, 1]


def test_tokens_by_default() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    spans = assemble(leaves[:1], store, budget=1000, spread=0.0)
    assert spans[0].size == 8  # "One sentence here." twice: 4 cl100k tokens each


def test_units_are_the_chunkers() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    in_words = assemble(leaves[:1], store, budget=1000, unit="word", spread=0.0)
    assert in_words[0].size == len(in_words[0].text.split())
    counted = assemble(
        leaves[:1], store, 1000, "token", length_function=lambda t: len(t.split()), spread=0.0
    )
    assert counted[0].size == in_words[0].size
    o200k = assemble(leaves[:1], store, budget=1000, encoding="o200k_base", spread=0.0)
    assert o200k[0].size == 8
    with pytest.raises(TypeError, match=r"not a function.*length_function="):
        assemble(leaves, store, 10, len)  # type: ignore[arg-type]


def test_spans_name_their_chunks_and_hits() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    hits = [(leaves[3], 0.5), (leaves[1], 0.9)]
    (span,) = assemble(hits, store, budget=1000, unit="char")
    parent = store[leaves[1].parent_id]
    assert span.chunks == (parent,) and span.chunk_ids == (parent.id,) and span.level == 1
    assert span.hits == (leaves[3], leaves[1]) and (span.score, span.rank) == (0.9, 1)


def test_leaves_not_in_the_store_stay_alone() -> None:
    store = ParentRegistry()
    leaves = HierarchicalChunker(sizes=[200, 50], registry=store).chunk(SENTENCES)
    spans = assemble(leaves[1:4], store, budget=1000, unit="char")
    assert [(s.start_char, s.end_char) for s in spans] == [
        (leaf.start_char, leaf.end_char) for leaf in leaves[1:4]
    ]


def test_bad_arguments() -> None:
    leaves, store = tree(SENTENCES, sizes=[200, 50])
    with pytest.raises(ValueError, match="budget"):
        assemble(leaves, store, budget=-1)
    for spread in (-0.5, 1.5, float("nan")):
        with pytest.raises(ValueError, match="spread"):
            assemble(leaves, store, budget=10, spread=spread)
    with pytest.raises(ValueError, match="depth"):
        assemble(leaves, store, budget=10, depth=0)
    with pytest.raises(ValueError, match="order"):
        assemble(leaves, store, budget=10, order="random")
    with pytest.raises(ValueError, match="unit"):
        assemble(leaves, store, budget=10, unit="furlong")
    with pytest.raises(TypeError, match="hit 0"):
        assemble(["not a chunk"], store, budget=10)  # type: ignore[list-item]


@PROPERTY
@given(
    text=texts,
    kwargs=st.one_of(hierarchical_settings(), hierarchical_settings(overlap=True)),
    data=st.data(),
)
def test_spans_are_exact_disjoint_and_within_budget(
    text: str, kwargs: dict[str, Any], data: st.DataObject
) -> None:
    leaves, store = tree(text, **kwargs)
    if not leaves:
        return
    hits = data.draw(st.lists(st.sampled_from(leaves), max_size=12), label="hits")
    budget = data.draw(st.integers(0, 3 * max(1, size_of(text, kwargs["unit"]))), label="budget")
    options = data.draw(
        st.fixed_dictionaries(
            {
                "spread": st.sampled_from([0.0, 0.3, 0.7, 1.0]),
                "depth": st.integers(1, 40),
                "order": st.sampled_from(["document", "score"]),
            }
        ),
        label="options",
    )
    spans = assemble(hits, store, budget, unit=kwargs["unit"], **options)
    check(spans, text, budget, kwargs["unit"])
    # With room for the whole text, every hit that counts is sent; without spread, nothing
    # else is.
    if size_of(text, kwargs["unit"]) <= budget:
        for hit in hits[: options["depth"]]:
            assert any(s.start_char <= hit.start_char and hit.end_char <= s.end_char for s in spans)
        if options["spread"] == 0.0:
            covered = {i for hit in hits for i in range(hit.start_char, hit.end_char)}
            for span in spans:  # the hits, and the blank chars between adjacent ones
                for i in range(span.start_char, span.end_char):
                    assert i in covered or text[i] in BLANK_CHARS
