"""ParentRegistry: its API, expand semantics, and thread safety under concurrent chunking."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from spanchunk import Chunk, Document, MissingParentWarning, ParentChildChunker, ParentRegistry

TEXT_A = "\n\n".join(f"Alpha paragraph {i}. " + "words in alpha " * 6 for i in range(6))
TEXT_B = "\n\n".join(f"Beta paragraph {i}. " + "words in beta " * 6 for i in range(4))


def _ids(registry: ParentRegistry) -> list[str]:
    # Iteration may yield the parents or their ids; both name the same set.
    return [item if isinstance(item, str) else item.id for item in registry]


def _tree(text: str, document_id: str | None = None) -> tuple[list[Chunk], list[Chunk]]:
    chunker = ParentChildChunker(parent_size=120, child_size=40, child_overlap=0)
    tree = chunker.chunk_tree(Document(text, id=document_id))
    return [c for c in tree if c.level == 1], [c for c in tree if c.level == 0]


@pytest.fixture
def populated() -> tuple[ParentRegistry, list[Chunk], list[Chunk]]:
    parents, children = _tree(TEXT_A, "doc-a")
    assert len(parents) >= 3 and len(children) > len(parents)
    registry = ParentRegistry()
    for parent in parents:
        registry.add(parent)
    return registry, parents, children


def test_add_get_getitem_contains_len_iter(
    populated: tuple[ParentRegistry, list[Chunk], list[Chunk]],
) -> None:
    registry, parents, children = populated
    assert len(registry) == len(parents)
    assert sorted(_ids(registry)) == sorted(p.id for p in parents)
    for parent in parents:
        assert registry.get(parent.id).id == parent.id
        assert registry[parent.id].text == parent.text
        assert parent.id in registry
        assert parent in registry
    assert registry.get("0000000000000000") is None
    with pytest.raises(KeyError):
        registry["0000000000000000"]
    assert "0000000000000000" not in registry
    assert children[0] not in registry  # a child is not a parent
    # Adding the same parent again does not duplicate it.
    registry.add(parents[0])
    assert len(registry) == len(parents)


def test_parent_of(populated: tuple[ParentRegistry, list[Chunk], list[Chunk]]) -> None:
    registry, parents, children = populated
    by_id = {p.id: p for p in parents}
    for child in children:
        parent = registry.parent_of(child)
        assert parent is not None
        assert parent.id == child.parent_id == by_id[child.parent_id].id
        assert parent.start_char <= child.start_char < child.end_char <= parent.end_char
    assert registry.parent_of(parents[0]) is None  # top level: no parent


def test_expand_dedupes_keeps_order_and_orphans(
    populated: tuple[ParentRegistry, list[Chunk], list[Chunk]],
) -> None:
    registry, parents, children = populated
    by_parent: dict[str, list[Chunk]] = {}
    for child in children:
        by_parent.setdefault(child.parent_id, []).append(child)
    p0, p1, p2 = parents[0], parents[1], parents[2]
    c0, c1, c2 = by_parent[p0.id][0], by_parent[p1.id][0], by_parent[p2.id][0]
    c0b = by_parent[p0.id][-1]
    _, orphan_children = _tree(TEXT_B, "doc-b")  # their parents were never registered
    orphan = orphan_children[0]

    assert [c.id for c in registry.expand([c1, c0, c0b, c1])] == [p1.id, p0.id]
    # A hit whose parent the registry does not hold is kept as itself: with a warning by
    # default, silently with missing="keep" (tests/test_api_guards.py has the three modes).
    kept = registry.expand([c2, orphan, c0], missing="keep")
    assert [c.id for c in kept] == [p2.id, orphan.id, p0.id]
    with pytest.warns(MissingParentWarning, match="1 hit has a parent this store does not hold"):
        assert [c.id for c in registry.expand([orphan])] == [orphan.id]
    assert registry.expand([]) == []
    assert [c.id for c in registry.expand([c1, c0, c2], max_parents=2)] == [p1.id, p0.id]
    assert [c.id for c in registry.expand([c1, c1, c0, c2], max_parents=1)] == [p1.id]
    assert [c.id for c in registry.expand([c1, c0, c2], max_parents=None)] == [
        p1.id,
        p0.id,
        p2.id,
    ]
    assert len(registry) == len(parents)  # expand never changes the registry


def test_clear_and_delete_document() -> None:
    registry = ParentRegistry()
    parents_a, _ = _tree(TEXT_A, "doc-a")
    parents_b, children_b = _tree(TEXT_B, "doc-b")
    for parent in parents_a + parents_b:
        registry.add(parent)
    assert len(registry) == len(parents_a) + len(parents_b)
    registry.delete_document("doc-a")
    assert sorted(_ids(registry)) == sorted(p.id for p in parents_b)
    assert all(p.id not in registry for p in parents_a)
    assert registry.parent_of(children_b[0]).id == children_b[0].parent_id
    registry.delete_document("no-such-document")
    assert len(registry) == len(parents_b)
    registry.clear()
    assert len(registry) == 0
    assert list(registry) == []


def test_chunker_uses_the_given_registry_and_fills_it() -> None:
    registry = ParentRegistry()
    chunker = ParentChildChunker(parent_size=120, child_size=40, child_overlap=0, registry=registry)
    assert chunker.parents is registry
    children = chunker.chunk(Document(TEXT_A, id="doc-a"))
    parents, expected_children = _tree(TEXT_A, "doc-a")
    assert [c.id for c in children] == [c.id for c in expected_children]
    assert sorted(_ids(registry)) == sorted(p.id for p in parents)
    assert chunker.parent_of(children[0]).id == children[0].parent_id
    assert [c.id for c in chunker.expand(children)] == [p.id for p in parents]
    assert [c.id for c in chunker.expand(children, max_parents=1)] == [parents[0].id]
    # Chunking the same document again is an upsert: nothing is duplicated.
    chunker.chunk(Document(TEXT_A, id="doc-a"))
    assert len(registry) == len(parents)
    chunker.clear()
    assert len(chunker.parents) == 0


def test_default_registry_is_per_chunker() -> None:
    first = ParentChildChunker(parent_size=120, child_size=40)
    second = ParentChildChunker(parent_size=120, child_size=40)
    first.chunk(TEXT_A)
    assert len(first.parents) > 0
    assert len(second.parents) == 0


def _documents(count: int) -> list[Document]:
    return [
        Document(
            "\n\n".join(
                f"Document {n}, paragraph {p}: " + f"token{n}x{p} " * (5 + (n + p) % 7)
                for p in range(40 + n)
            ),
            id=f"doc-{n}",
        )
        for n in range(count)
    ]


def test_concurrent_chunking_into_one_registry() -> None:
    documents = _documents(8)
    chunker = ParentChildChunker(parent_size=300, child_size=80, child_overlap=10)
    barrier = threading.Barrier(len(documents))
    results: dict[int, list[Chunk]] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            barrier.wait()
            for _ in range(3):  # repeat: re-chunking must not duplicate parents
                results[n] = chunker.chunk(documents[n])
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(documents))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(results) == list(range(len(documents)))

    reference = ParentChildChunker(parent_size=300, child_size=80, child_overlap=10)
    expected_parents: list[Any] = []
    for n, document in enumerate(documents):
        tree = reference.chunk_tree(document)
        expected_parents += [c for c in tree if c.level == 1]
        assert [c.id for c in results[n]] == [c.id for c in tree if c.level == 0]

    registry = chunker.parents
    ids = _ids(registry)
    assert len(ids) == len(set(ids)), "a parent is present more than once"
    assert sorted(ids) == sorted(p.id for p in expected_parents)
    assert len(registry) == len({p.id for p in expected_parents})
    for children in results.values():
        for child in children:
            assert child.parent_id in registry
            assert registry[child.parent_id].id == child.parent_id


def test_concurrent_add_and_read() -> None:
    documents = _documents(8)
    trees = [ParentChildChunker(parent_size=200, child_size=50).chunk_tree(d) for d in documents]
    registry = ParentRegistry()
    barrier = threading.Barrier(len(trees))
    errors: list[BaseException] = []

    def work(tree: list[Chunk]) -> None:
        try:
            barrier.wait()
            for chunk in tree:
                if chunk.level == 1:
                    registry.add(chunk)
                    len(registry)
                    _ids(registry)
            for chunk in tree:
                if chunk.level == 0:
                    assert registry.parent_of(chunk).id == chunk.parent_id
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(tree,)) for tree in trees]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(registry) == sum(1 for tree in trees for c in tree if c.level == 1)
