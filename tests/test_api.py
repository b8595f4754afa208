# ruff: noqa: RUF001 - CJK full-width punctuation is the point of these strings
"""The public objects (docs/concepts.md, docs/chunkers.md): Document, Chunk, spans, ids."""

from __future__ import annotations

import hashlib
import json
import pickle
import struct
from typing import Any

import numpy as np
import pytest
import spanchunk
import xxhash
from _contract import SPAN_FIELDS, check_chunker, chunk_record, hierarchical_levels
from spanchunk import (
    Chunk,
    Chunker,
    ChunkingError,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    ParentRegistry,
    RecursiveChunker,
    _core,
)
from spanchunk.chunkers.spans import _tree_array_by_level

TEXT = "Alpha beta. Gamma delta!\n\nEpsilon zeta; eta theta, iota.\r\n漢字。かな、カナ！"


def test_public_names() -> None:
    for name in [
        "Document",
        "Chunk",
        "Chunker",
        "RecursiveChunker",
        "ParentChildChunker",
        "HierarchicalChunker",
        "ParentRegistry",
        "ChunkingError",
    ]:
        assert name in spanchunk.__all__
        assert getattr(spanchunk, name) is not None
    assert issubclass(RecursiveChunker, Chunker)
    assert issubclass(ParentChildChunker, Chunker)
    assert issubclass(HierarchicalChunker, Chunker)
    assert issubclass(ChunkingError, Exception)


def test_document_defaults_and_id() -> None:
    doc = Document(TEXT)
    assert doc.text == TEXT
    assert doc.id == _core.text_id(TEXT)
    assert len(doc.id) == 16 and int(doc.id, 16) >= 0
    assert Document(TEXT + " ").id != doc.id
    given = Document(TEXT, id="my-id", metadata={"k": "v"}, source="s.md")
    assert (given.id, dict(given.metadata), given.source) == ("my-id", {"k": "v"}, "s.md")


def test_chunk_fields_and_metadata() -> None:
    doc = Document(TEXT, id="doc-7", metadata={"title": "T", "year": 2024}, source="a/b.txt")
    tree = ParentChildChunker(parent_size=40, child_size=15, child_overlap=0).chunk_tree(doc)
    assert tree
    for chunk in tree:
        assert isinstance(chunk, Chunk)
        assert chunk.document_id == "doc-7"
        assert chunk.content == chunk.text
        assert chunk.metadata["title"] == "T" and chunk.metadata["year"] == 2024
        assert chunk.metadata["source"] == "a/b.txt"
        assert isinstance(chunk.child_ids, tuple)
    assert dict(doc.metadata) == {"title": "T", "year": 2024}  # the document is untouched


def test_chunk_text_metadata() -> None:
    chunks = RecursiveChunker(chunk_size=20).chunk_text(TEXT, metadata={"lang": "mixed"})
    assert chunks and all(c.metadata["lang"] == "mixed" for c in chunks)
    assert all(c.document_id == _core.text_id(TEXT) for c in chunks)
    assert records_of(chunks) == records_of(
        RecursiveChunker(chunk_size=20).chunk(Document(TEXT, metadata={"lang": "mixed"}))
    )


def records_of(chunks: list[Any]) -> list[tuple]:
    return [chunk_record(c) for c in chunks]


def test_chunk_is_immutable() -> None:
    chunk = RecursiveChunker(chunk_size=20).chunk(TEXT)[0]
    with pytest.raises((AttributeError, TypeError)):
        chunk.text = "changed"  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):
        chunk.start_char = 5  # type: ignore[misc]
    assert chunk.text == TEXT[chunk.start_char : chunk.end_char]
    # Its metadata is a read-only view: no chunk can change its siblings' or the document's.
    doc = Document(TEXT, metadata={"k": "v"})
    chunks = RecursiveChunker(chunk_size=20).chunk(doc)
    with pytest.raises(TypeError):
        chunks[0].metadata["k"] = "changed"  # type: ignore[index]
    assert chunks[1].metadata["k"] == "v" and dict(doc.metadata) == {"k": "v"}


def test_lazy_fields_read_like_eager_ones() -> None:
    # Chunkers build chunks whose id, text, parent_id and child_ids are made on first read;
    # they must read, compare, hash, repr and pickle like chunks made by hand with the same
    # fields, whatever is read first, and outlive the caller's reference to the text.
    text = "".join(f"Sentence {n} \N{SNOWMAN}\N{FAMILY}. " for n in range(40))
    tree = ParentChildChunker(parent_size=120, child_size=40).chunk_tree(text)
    twin = ParentChildChunker(parent_size=120, child_size=40).chunk_tree(text)
    del text
    parents = {chunk.id: chunk for chunk in tree if chunk.level == 1}
    for chunk, other in zip(tree, twin, strict=True):
        assert "Chunk(id=" in repr(chunk) and repr(chunk) == repr(other)
        eager = Chunk(**chunk.to_dict())
        assert eager == chunk and chunk == eager and other == chunk
        assert hash(eager) == hash(chunk) == hash(other)
        assert eager.to_dict() == chunk.to_dict()
        assert pickle.loads(pickle.dumps(chunk)) == chunk
        assert chunk.content is chunk.text and chunk.id is chunk.id
        if chunk.level == 0:
            parent = parents[chunk.parent_id]
            assert chunk.id in parent.child_ids
            assert parent.text[chunk.start_char - parent.start_char :].startswith(chunk.text)
    # Same spans, different level or id: not equal, from one document or not.
    child = next(chunk for chunk in tree if chunk.level == 0)
    fake = Chunk(**{**child.to_dict(), "id": "0" * 16})
    assert fake != child and child != fake


def test_chunk_accepts_str_document_and_sequences() -> None:
    chunker = RecursiveChunker(chunk_size=20, overlap=0)
    from_str = chunker.chunk(TEXT)
    assert records_of(chunker.chunk(Document(TEXT))) == records_of(from_str)
    both = chunker.chunk([TEXT, Document("Second document here.", id="second")])
    assert records_of(both[: len(from_str)]) == records_of(from_str)
    assert [c.document_id for c in both[len(from_str) :]] == ["second"] * (
        len(both) - len(from_str)
    )
    assert chunker.chunk([]) == []
    assert records_of(chunker.chunk((TEXT,))) == records_of(from_str)


@pytest.mark.parametrize(
    "chunker",
    [
        RecursiveChunker(chunk_size=20, overlap=0),
        ParentChildChunker(parent_size=40, child_size=15),
        HierarchicalChunker(sizes=[40, 20, 8]),
    ],
    ids=lambda c: type(c).__name__,
)
def test_spans_array_layout(chunker: Any) -> None:
    spans = chunker.spans(TEXT)
    assert isinstance(spans, np.ndarray)
    assert spans.dtype.names == SPAN_FIELDS
    assert all(np.issubdtype(spans.dtype[f], np.integer) for f in SPAN_FIELDS)
    empty = chunker.spans("")
    assert len(empty) == 0 and empty.dtype == spans.dtype
    # A Document, the same chunker after pickling, and the level-by-level path all agree
    # with the core's one-call path.
    assert chunker.spans(Document(TEXT)).tolist() == spans.tolist()
    assert pickle.loads(pickle.dumps(chunker)).spans(TEXT).tolist() == spans.tolist()
    by_level = _tree_array_by_level(chunker._levels(), TEXT)
    assert by_level.tolist() == spans.view(np.int64).reshape(-1, len(SPAN_FIELDS)).tolist()


def test_core_tree_refuses_impossible_levels() -> None:
    with pytest.raises(ValueError, match="at least one level"):
        _core.Tree([])
    overlapping = _core.Splitter(40, overlap=5)
    with pytest.raises(ValueError, match="parent levels must not overlap"):
        _core.Tree([overlapping, _core.Splitter(10)])


@pytest.mark.parametrize(
    "chunker",
    [
        RecursiveChunker(chunk_size=20, overlap=3),
        ParentChildChunker(parent_size=40, child_size=15, child_overlap=4, unit="byte"),
        HierarchicalChunker(sizes=[40, 20, 8]),
    ],
    ids=lambda c: type(c).__name__,
)
def test_ids_follow_the_documented_hash(chunker: Any) -> None:
    doc = Document(TEXT, id="doc-x")
    tree = chunker.chunk_tree(doc) if hasattr(chunker, "chunk_tree") else chunker.chunk(doc)
    spans = chunker.spans(TEXT)
    table = np.column_stack([spans[f].astype(np.int64) for f in SPAN_FIELDS])
    expected = _core.chunk_ids(TEXT, "doc-x", chunker.fingerprint(), np.ascontiguousarray(table))
    assert [c.id for c in tree] == list(expected)
    # The documented scheme, computed here with the xxhash package: xxh3-64 over the document
    # id and fingerprint (each after its length), the level, the xxh3-64 of the chunk's text
    # and how many chunks of that level and text come before it, integers little-endian.
    fingerprint = chunker.fingerprint().encode()
    seen: dict[tuple[int, str], int] = {}
    for chunk in tree:
        occurrence = seen.get((chunk.level, chunk.text), 0)
        seen[chunk.level, chunk.text] = occurrence + 1
        fields = (
            struct.pack("<Q", len(b"doc-x"))
            + b"doc-x"
            + struct.pack("<Q", len(fingerprint))
            + fingerprint
            + struct.pack(
                "<IQQ", chunk.level, xxhash.xxh3_64_intdigest(chunk.text.encode()), occurrence
            )
        )
        assert chunk.id == f"{xxhash.xxh3_64_intdigest(fields):016x}"
    # The fingerprint hashes what each level's core Splitter cuts by, top first.
    cuts = [
        {
            "chunk_size": level.chunk_size,
            "overlap": level.overlap,
            "min_chunk_size": level.min_chunk_size,
            "separators": level.separators,
            "keep_separator": level.keep_separator,
            "trim": level.trim,
            "structure": level.structure,
            "merge": level.merge,
            "unit": level.unit,
            "encoding": None,
            "tokenizer": None,
            "length_function": None,
        }
        for level in chunker._levels()
    ]
    payload = json.dumps({"levels": cuts}, sort_keys=True, separators=(",", ":"))
    assert chunker.fingerprint() == hashlib.sha256(payload.encode()).hexdigest()[:16]


def test_ids_change_with_settings_and_document() -> None:
    a = RecursiveChunker(chunk_size=20, overlap=0).chunk(Document(TEXT, id="d"))
    b = RecursiveChunker(chunk_size=20, overlap=0, trim=False).chunk(Document(TEXT, id="d"))
    c = RecursiveChunker(chunk_size=20, overlap=0).chunk(Document(TEXT, id="e"))
    assert not {x.id for x in a} & {x.id for x in b}
    assert not {x.id for x in a} & {x.id for x in c}


def test_identical_paragraphs_get_different_ids() -> None:
    paragraph = "The same paragraph, word for word."
    chunks = RecursiveChunker(chunk_size=40).chunk(paragraph + "\n\n" + paragraph)
    assert [c.text for c in chunks] == [paragraph, paragraph]
    assert chunks[0].id != chunks[1].id
    assert (chunks[0].start_char, chunks[1].start_char) == (0, len(paragraph) + 2)


def test_parent_child_api() -> None:
    chunker = ParentChildChunker(parent_size=40, child_size=15, child_overlap=0)
    children = chunker.chunk(TEXT)
    assert children and all(c.level == 0 and c.parent_id for c in children)
    assert isinstance(chunker.parents, ParentRegistry)
    parents = chunker.expand(children)
    assert [p.id for p in parents] == [c.id for c in chunker.chunk_tree(TEXT) if c.level == 1]
    assert all(chunker.parent_of(c).id == c.parent_id for c in children)
    chunker.clear()
    assert len(chunker.parents) == 0


def test_hierarchical_two_levels_is_parent_child() -> None:
    hierarchical = HierarchicalChunker(sizes=[40, 15], overlap=0)
    parent_child = ParentChildChunker(parent_size=40, child_size=15, child_overlap=0)
    assert hierarchical.spans(TEXT).tolist() == parent_child.spans(TEXT).tolist()


def test_hierarchical_with_explicit_chunkers() -> None:
    chunker = HierarchicalChunker(
        chunkers=[
            RecursiveChunker(chunk_size=40, overlap=0),
            RecursiveChunker(chunk_size=20, overlap=0, keep_separator="start"),
            RecursiveChunker(chunk_size=8, overlap=0, unit="char"),
        ]
    )
    tree = chunker.chunk_tree(TEXT)
    assert {c.level for c in tree} == {0, 1, 2}
    for level, size in ((2, 40), (1, 20), (0, 8)):
        assert all(len(c.text) <= size for c in tree if c.level == level)


@pytest.mark.parametrize("unit", ["char", "byte"])
def test_hierarchical_overlap_is_a_valid_setting(unit: str) -> None:
    # docs/chunkers.md: HierarchicalChunker(sizes, overlap=0, ...); only overlap >= a size
    # is impossible. An accepted overlap must chunk, and keep the contract at every level.
    text = TEXT * 4
    chunker = HierarchicalChunker(sizes=[60, 30, 12], overlap=4, unit=unit)
    tree = check_chunker(chunker, text, hierarchical_levels([60, 30, 12], 4), unit)
    assert {c.level for c in tree} == {0, 1, 2}
