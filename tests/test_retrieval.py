"""spanchunk.retrieval: expand, auto_merge (against Haystack and LlamaIndex), neighbours, and
children that carry their parent.

The differential tests need the reference packages of the test extra: haystack-ai and
llama-index-core.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _contract import chunk_record
from _strategies import hierarchical_settings, texts
from haystack import Document as HaystackDocument
from haystack.components.retrievers.auto_merging_retriever import (
    AutoMergingRetriever as HaystackAutoMergingRetriever,
)
from haystack.document_stores.in_memory import InMemoryDocumentStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core import StorageContext
from llama_index.core.retrievers import AutoMergingRetriever, BaseRetriever
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode
from llama_index.core.storage.docstore import SimpleDocumentStore
from spanchunk import (
    Chunk,
    Document,
    HierarchicalChunker,
    MissingParentWarning,
    ParentChildChunker,
    ParentRegistry,
    SqliteRegistry,
)
from spanchunk.retrieval import (
    PARENT_CONTENT,
    Span,
    attach_parent_content,
    auto_merge,
    expand,
    neighbours,
)

TEXT = "\n\n".join(
    f"Paragraph {p}. " + " ".join(f"Sentence {p}.{s} says a few words." for s in range(8))
    for p in range(12)
)


@pytest.fixture(params=["memory", "sqlite"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def open_store(kind: str, directory: Path, children: bool = True) -> Any:
    if kind == "memory":
        return ParentRegistry(children=children)
    return SqliteRegistry(directory / "store.sqlite", children=children)


@pytest.fixture
def filled(kind: str, tmp_path: Path) -> Iterator[tuple[Any, list[Chunk]]]:
    store = open_store(kind, tmp_path)
    chunker = HierarchicalChunker(sizes=[600, 200, 60])
    tree = chunker.chunk_tree(Document(TEXT, id="doc"))
    store.add(tree)
    yield store, tree
    if kind == "sqlite":
        store.close()


# ------------------------------------------------------------------------------ expand


def test_expand_chunks_and_pairs(filled: tuple[Any, list[Chunk]]) -> None:
    store, tree = filled
    leaves = [c for c in tree if c.level == 0]
    by_id = {c.id: c for c in tree}
    hits = [leaves[5], leaves[0], leaves[1], leaves[9]]
    assert [c.id for c in expand(hits, store)] == list(dict.fromkeys(h.parent_id for h in hits))
    assert expand(hits, store, max_parents=1) == [by_id[leaves[5].parent_id]]
    pairs = expand([(leaves[1], 0.9), (leaves[0], 0.8)], store)
    assert pairs == [(by_id[leaves[0].parent_id], 0.9)]
    top = [c for c in tree if c.parent_id is None]
    assert expand(top, store) == top
    assert expand([], store) == []


def test_expand_bad_input(filled: tuple[Any, list[Chunk]]) -> None:
    store, tree = filled
    with pytest.raises(TypeError, match=r"hit 1 is str .*Chunk\(\*\*payload\)"):
        expand([tree[0], "a hit"], store)
    with pytest.raises(TypeError, match="not a mix"):
        expand([tree[0], (tree[1], 0.3)], store)
    with pytest.raises(ValueError, match="at least 1"):
        expand(tree, store, max_parents=0)
    with pytest.raises(TypeError, match="max_parents"):
        expand(tree, store, max_parents=1.5)  # type: ignore[arg-type]


def test_one_query_per_expand_of_many_hits(tmp_path: Path) -> None:
    with SqliteRegistry(tmp_path / "s.sqlite") as store:
        chunker = ParentChildChunker(parent_size=300, child_size=60, registry=store)
        leaves = chunker.chunk(TEXT)
        statements: list[str] = []
        store._conn().set_trace_callback(statements.append)
        expanded = expand(leaves[:100], store)
        store._conn().set_trace_callback(None)
        selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
        assert len(selects) == 1, statements
        assert [c.id for c in expanded] == list(dict.fromkeys(c.parent_id for c in leaves[:100]))


# ------------------------------------------------------------------------------ parent_content


def test_children_carry_their_parent(tmp_path: Path) -> None:
    chunker = HierarchicalChunker(sizes=[600, 200, 60])
    leaves = chunker.chunk(Document(TEXT, id="doc", metadata={"lang": "en"}))
    carrying = attach_parent_content(leaves, chunker.parents)
    assert [chunk_record(c)[:11] for c in carrying] == [chunk_record(c)[:11] for c in leaves]
    assert carrying == leaves
    for child in carrying:
        parent = chunker.parents[child.parent_id]
        carried = child.metadata[PARENT_CONTENT]
        assert carried["text"] == parent.text and carried["start_char"] == parent.start_char
        assert child.metadata["lang"] == "en"
    siblings = [c for c in carrying if c.parent_id == carrying[0].parent_id]
    assert len(siblings) > 1 and all(c.metadata is siblings[0].metadata for c in siblings)
    # No store at all, or a store that does not know the parent: the hit's copy is used.
    parents = expand(carrying, None)
    assert [chunk_record(p)[:11] for p in parents] == [
        chunk_record(chunker.parents[i])[:11] for i in dict.fromkeys(c.parent_id for c in leaves)
    ]
    assert expand(carrying[:1], ParentRegistry()) == [chunker.parents[leaves[0].parent_id]]
    # Nothing carried and not stored: kept as itself, with a warning unless missing="keep".
    assert expand(leaves[:1], ParentRegistry(), missing="keep") == leaves[:1]
    with pytest.warns(MissingParentWarning, match="does not hold and no metadata"):
        assert expand(leaves[:1], ParentRegistry()) == leaves[:1]
    assert ParentRegistry().parent_of(carrying[0]) == chunker.parents[leaves[0].parent_id]
    # A SQLite store keeps children with their parent_content (nested metadata).
    with SqliteRegistry(tmp_path / "c.sqlite", children=True) as store:
        store.add(carrying)
        assert [chunk_record(c) for c in store] == [chunk_record(c) for c in carrying]
    # The other argument forms: a mapping and an iterable of parents.
    by_id = {c.id: c for c in chunker.parents}
    assert attach_parent_content(leaves, by_id) == attach_parent_content(
        leaves, list(by_id.values())
    )
    assert attach_parent_content(leaves, {}) == leaves
    with pytest.raises(TypeError, match="hit 0 is int"):
        attach_parent_content([1], by_id)  # type: ignore[list-item]


# ------------------------------------------------------------------------------ auto_merge


def test_auto_merge_rule(filled: tuple[Any, list[Chunk]]) -> None:
    store, tree = filled
    by_id = {c.id: c for c in tree}
    leaves = [c for c in tree if c.level == 0]
    middle = by_id[leaves[0].parent_id]
    siblings = [c for c in leaves if c.parent_id == middle.id]
    assert len(siblings) >= 3
    hits = [(c, 1.0 - 0.1 * n) for n, c in enumerate(siblings)]
    merged = auto_merge(hits, store, threshold=0.5)
    assert merged[0][0].level >= 1
    mean = sum(score for _, score in hits) / len(hits)
    assert (middle, mean) in merged or merged[0][0].id == middle.parent_id
    # Below the threshold nothing merges; chunks without scores come back as chunks.
    assert auto_merge(siblings[:1], store) == siblings[:1]
    # Repeated hits count once.
    assert auto_merge([*siblings[:1], siblings[0]], store) == siblings[:1]
    assert auto_merge([], store) == []


@pytest.mark.parametrize("threshold", [0, 1, 1.5, -0.1, float("nan")])
def test_auto_merge_refuses_a_threshold_outside_0_1(
    filled: tuple[Any, list[Chunk]], threshold: float
) -> None:
    store, tree = filled
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        auto_merge(tree[-3:], store, threshold=threshold)


def test_auto_merge_bad_hits(filled: tuple[Any, list[Chunk]]) -> None:
    store, tree = filled
    with pytest.raises(TypeError, match="threshold"):
        auto_merge(tree, store, threshold="0.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hit 0 is dict"):
        auto_merge([{"id": "x"}], store)
    with pytest.raises(TypeError, match="hit 1 is tuple"):
        auto_merge([(tree[0], 0.5), (tree[1], "high")], store)
    with pytest.raises(TypeError, match="not a mix"):
        auto_merge([(tree[0], 0.5), tree[1]], store)


def random_case(seed: int) -> tuple[list[Chunk], list[tuple[Chunk, float]], float]:
    """A three-level tree, some of its leaves with scores, and a threshold."""
    rng = random.Random(seed)
    leaf = rng.randint(20, 60)
    middle = leaf * rng.randint(2, 5) + rng.randint(0, leaf)
    top = middle * rng.randint(2, 4) + rng.randint(0, middle)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
    text = " ".join(
        rng.choice(words)
        + ("." if rng.random() < 0.15 else "")
        + ("\n\n" if rng.random() < 0.03 else "")
        for _ in range(rng.randint(100, 700))
    )
    tree = HierarchicalChunker(sizes=[top, middle, leaf]).chunk_tree(Document(text, id=f"d{seed}"))
    leaves = [c for c in tree if c.level == 0]
    chosen = rng.sample(leaves, rng.randint(1, min(len(leaves), 100)))
    # Every fifth case has equal scores: the order of ties must match too.
    hits = [(c, 0.5 if seed % 5 == 0 else rng.random()) for c in chosen]
    threshold = rng.choice([0.2, 1 / 3, 0.5, 0.6, 2 / 3, 0.8])
    return tree, hits, threshold


def llama_index_merge(
    tree: list[Chunk], hits: list[tuple[Chunk, float]], threshold: float
) -> list[tuple[str, float]]:

    nodes = {}
    for chunk in tree:
        relationships: dict[NodeRelationship, Any] = {}
        if chunk.parent_id is not None:
            relationships[NodeRelationship.PARENT] = RelatedNodeInfo(node_id=chunk.parent_id)
        if chunk.child_ids:
            relationships[NodeRelationship.CHILD] = [
                RelatedNodeInfo(node_id=child_id) for child_id in chunk.child_ids
            ]
        # No PREV/NEXT relationships: LlamaIndex's fill-in step (a node between two hits)
        # is not part of the merging rule, and stays idle without them.
        nodes[chunk.id] = TextNode(id_=chunk.id, text=chunk.text, relationships=relationships)
    docstore = SimpleDocumentStore()
    docstore.add_documents(list(nodes.values()))
    retrieved = [NodeWithScore(node=nodes[chunk.id], score=score) for chunk, score in hits]

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list[NodeWithScore]:
            return list(retrieved)

    retriever = AutoMergingRetriever(
        Fixed(), StorageContext.from_defaults(docstore=docstore), simple_ratio_thresh=threshold
    )
    return [(n.node.node_id, n.score) for n in retriever.retrieve("query")]


def haystack_merge(
    tree: list[Chunk], hits: list[tuple[Chunk, float]], threshold: float
) -> list[str]:

    def document(chunk: Chunk, score: float | None = None) -> HaystackDocument:
        return HaystackDocument(
            id=chunk.id,
            content=chunk.text,
            score=score,
            meta={
                "__parent_id": chunk.parent_id,
                "__children_ids": list(chunk.child_ids),
                "__level": chunk.level,
                "__block_size": len(chunk.text),
            },
        )

    store = InMemoryDocumentStore()
    store.write_documents([document(c) for c in tree if c.level > 0])
    retriever = HaystackAutoMergingRetriever(store, threshold=threshold)
    result = retriever.run([document(chunk, score) for chunk, score in hits])
    return [d.id for d in result["documents"]]


@pytest.mark.parametrize("seed", range(40))
def test_auto_merge_matches_llama_index_and_haystack(seed: int, tmp_path: Path) -> None:
    tree, hits, threshold = random_case(seed)
    registry = ParentRegistry(c for c in tree if c.level > 0)
    ours = [(c.id, s) for c, s in auto_merge(hits, registry, threshold=threshold)]
    assert ours == llama_index_merge(tree, hits, threshold)  # same survivors, same order
    # Haystack neither scores merged parents nor sorts: the same survivors, and ours are
    # its survivors sorted by score.
    from_haystack = haystack_merge(tree, hits, threshold)
    assert sorted(from_haystack) == sorted(chunk_id for chunk_id, _ in ours)
    assert len(set(from_haystack)) == len(from_haystack)
    if seed % 8 == 0:  # the same answer from the SQLite store
        with SqliteRegistry(tmp_path / "s.sqlite") as store:
            store.add([c for c in tree if c.level > 0])
            assert [(c.id, s) for c, s in auto_merge(hits, store, threshold=threshold)] == ours


def test_auto_merge_cases_really_merge() -> None:
    # The differential cases above are worth something only if many of them merge, some
    # up two levels.
    merged_levels = []
    for seed in range(40):
        tree, hits, threshold = random_case(seed)
        registry = ParentRegistry(c for c in tree if c.level > 0)
        merged_levels.append(max(c.level for c, _ in auto_merge(hits, registry, threshold)))
    assert merged_levels.count(2) >= 5 and merged_levels.count(1) >= 5


# ------------------------------------------------------------------------------ neighbours


def test_neighbours_grow_a_hit_up_to_the_budget(filled: tuple[Any, list[Chunk]]) -> None:
    store, tree = filled
    leaves = [c for c in tree if c.level == 0]
    hit = leaves[6]
    window = neighbours(hit, store, budget=200)
    assert isinstance(window, Span)
    assert TEXT[window.start_char : window.end_char] == window.text
    assert len(window.text) <= 200 and hit in window.chunks and len(window.chunks) >= 3
    assert window.hits == (hit,) and window.level == 0 and window.document_id == "doc"
    assert neighbours(hit, store, budget=0).chunks == (hit,)  # the hit is always kept
    assert neighbours(hit, store, budget=10**6, text=TEXT).chunks == tuple(leaves)
    # Several hits: overlapping windows merge, order of first hit kept.
    windows = neighbours([leaves[6], leaves[7], (leaves[30], 0.2)], store, budget=200)
    assert len(windows) == 2 and windows[0].hits == (leaves[6], leaves[7])
    assert windows[1].hits == (leaves[30],)
    in_bytes = neighbours(hit, store, budget=150, unit="byte")
    assert len(in_bytes.text.encode()) <= 150
    words = neighbours(hit, store, budget=30, unit="word")
    assert len(words.text.split()) <= 30 and words.size == len(words.text.split())
    counted = neighbours(
        hit, store, budget=30, unit="token", length_function=lambda t: len(t.split())
    )
    assert counted.chunks == words.chunks
    tokens = neighbours(hit, store, budget=40, unit="token")  # cl100k_base, as assemble counts
    assert 0 < tokens.size <= 40 and tokens.rank == 0 and tokens.score == 0.0
    scored = neighbours([(leaves[30], 0.2), (leaves[31], 0.7)], store, budget=200)
    assert len(scored) == 1 and (scored[0].score, scored[0].rank) == (0.7, 1)
    assert scored[0].chunk_ids == tuple(chunk.id for chunk in scored[0].chunks)


def test_neighbours_bad_input(filled: tuple[Any, list[Chunk]], tmp_path: Path) -> None:
    store, tree = filled
    leaf = tree[-1]
    with pytest.raises(ValueError, match="at least 0"):
        neighbours(leaf, store, budget=-1)
    with pytest.raises(TypeError, match="budget must be an int"):
        neighbours(leaf, store, budget=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown unit 'furlong'"):
        neighbours(leaf, store, budget=10, unit="furlong")
    with pytest.raises(TypeError, match=r"not a function.*unit='token', length_function="):
        neighbours(leaf, store, budget=10, unit=len)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hit 0 is str"):
        neighbours(["text"], store, budget=10)
    with pytest.raises(ValueError, match="text is not the document"):
        neighbours(leaf, store, budget=10, text="another document entirely" * 100)
    parents_only = ParentRegistry(c for c in tree if c.level > 0)
    with pytest.raises(ValueError, match="children=True"):
        neighbours(leaf, parents_only, budget=100)


@st.composite
def hostile_cases(draw: Any) -> tuple[str, dict[str, Any], int, list[int]]:
    text = draw(texts)
    kwargs = draw(hierarchical_settings(overlap=draw(st.booleans())))
    budget = draw(st.integers(0, 400))
    picks = draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=4))
    return text, kwargs, budget, picks


def check_windows(
    text: str, tree: list[Chunk], store: Any, *, budget: int, unit: str, picks: list[int]
) -> None:
    measure = len if unit == "char" else (lambda t: len(t.encode()))
    encoded = text.encode()
    by_level: dict[int, list[Chunk]] = {}
    for chunk in tree:
        by_level.setdefault(chunk.level, []).append(chunk)
    hits = []
    for pick in picks:
        level = sorted(by_level)[pick % len(by_level)]
        hits.append(by_level[level][pick % len(by_level[level])])
    for given_text in (None, text):
        for hit in hits:
            window = neighbours(hit, store, budget, unit=unit, text=given_text)
            assert text[window.start_char : window.end_char] == window.text
            assert encoded[window.start_byte : window.end_byte] == window.text.encode()
            assert hit in window.chunks
            indices = [c.index for c in window.chunks]
            assert indices == list(range(indices[0], indices[-1] + 1))
            assert window.chunks == (hit,) or measure(window.text) <= budget
            if given_text is not None:  # every gap known: the window cannot grow further
                level = by_level[hit.level]
                siblings = [c for c in level if c.document_id == hit.document_id]
                for index in (indices[0] - 1, indices[-1] + 1):
                    if 0 <= index < len(siblings):
                        start = min(window.start_char, siblings[index].start_char)
                        end = max(window.end_char, siblings[index].end_char)
                        assert measure(text[start:end]) > budget
        windows = neighbours(hits, store, budget, unit=unit, text=given_text)
        seen: set[str] = set()
        for window in windows:
            assert text[window.start_char : window.end_char] == window.text
            ids = {c.id for c in window.chunks}
            assert not ids & seen  # no chunk in two windows
            seen |= ids
        assert {h.id for w in windows for h in w.hits} == {h.id for h in hits}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_cases())
def test_neighbours_spans_exact_on_hostile_text(
    case: tuple[str, dict[str, Any], int, list[int]],
) -> None:
    text, kwargs, budget, picks = case
    tree = HierarchicalChunker(**kwargs).chunk_tree(text)
    if not tree:
        return
    store = ParentRegistry(tree, children=True)
    check_windows(text, tree, store, budget=budget, unit=kwargs["unit"], picks=picks)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_cases())
def test_neighbours_from_sqlite_on_hostile_text(
    case: tuple[str, dict[str, Any], int, list[int]],
) -> None:
    text, kwargs, budget, picks = case
    tree = HierarchicalChunker(**kwargs).chunk_tree(text)
    if not tree:
        return
    with (
        tempfile.TemporaryDirectory() as directory,
        SqliteRegistry(Path(directory) / "s.sqlite", children=True) as store,
    ):
        store.add(tree)
        assert [chunk_record(c) for c in store] == [chunk_record(c) for c in tree]
        check_windows(text, tree, store, budget=budget, unit=kwargs["unit"], picks=picks)
