"""Chunkers with a store: the fingerprint is recorded and checked, a store that keeps
children gets every level, and ``parent_content`` lets a hit rebuild its parent alone."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from spanchunk import (
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    ParentRegistry,
    SqliteRegistry,
)
from spanchunk.retrieval import expand

TEXT = "Small chunks find, big chunks explain. " * 30


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_store_refuses_chunks_of_other_settings(kind: str, tmp_path: Path) -> None:
    store = ParentRegistry() if kind == "memory" else SqliteRegistry(tmp_path / "p.sqlite")
    with store if kind == "sqlite" else contextlib.nullcontext():
        first = ParentChildChunker(300, 60, registry=store)
        first.chunk(TEXT)
        assert store.fingerprint == first.fingerprint()
        stored = len(store)
        with pytest.raises(ValueError, match=r"fingerprint .*clear\(\)"):
            ParentChildChunker(301, 60, registry=store).chunk(TEXT + "!")
        assert len(store) == stored  # nothing of the refused batch went in
        ParentChildChunker(300, 60, registry=store).chunk_many([TEXT, TEXT + "?"], workers=2)
        assert len(store) > stored


def test_a_store_that_keeps_children_gets_every_level(tmp_path: Path) -> None:
    with SqliteRegistry(tmp_path / "p.sqlite", children=True) as store:
        chunker = HierarchicalChunker([300, 100, 30], registry=store)
        tree = chunker.chunk_tree(Document(TEXT, id="d"))
        assert sorted(store, key=lambda c: (-c.level, c.index)) == sorted(
            tree, key=lambda c: (-c.level, c.index)
        )
        leaves = chunker.chunk(Document(TEXT, id="d"))
        assert all(store.get(leaf.id) == leaf for leaf in leaves)
    with SqliteRegistry(tmp_path / "p.sqlite") as reopened:  # another process, later
        assert len(reopened) == len(tree)


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: ParentChildChunker(300, 60, **kw),
        lambda **kw: HierarchicalChunker([300, 100, 30], **kw),
    ],
)
def test_parent_content_rebuilds_the_parent_from_the_hit(make) -> None:  # noqa: ANN001
    chunker = make(parent_content=True)
    plain = make()
    assert chunker.fingerprint() == plain.fingerprint()  # metadata only: same ids
    assert chunker.settings() == {**plain.settings(), "parent_content": True}
    assert "parent_content=True" in repr(chunker) and "parent_content" not in repr(plain)
    leaves = chunker.chunk(Document(TEXT, metadata={"k": [1]}))
    assert [leaf.id for leaf in leaves] == [leaf.id for leaf in plain.chunk(TEXT)]
    for leaf in leaves:
        content = leaf.metadata["parent_content"]
        assert content["id"] == leaf.parent_id and leaf.metadata["k"] == (1,)
        assert TEXT[content["start_char"] : content["end_char"]] == content["text"]
        with pytest.raises(TypeError):
            content["text"] = "changed"  # read-only, like the rest of the metadata
    rebuilt = expand(leaves[:3], None)
    assert rebuilt == [chunker.parents[leaves[0].parent_id]]
    tree = chunker.chunk_tree(TEXT)
    assert [c for c in tree if c.level == 0] == leaves
    many = chunker.chunk_many([TEXT, TEXT], workers=2)
    assert many[: len(leaves)] == leaves
