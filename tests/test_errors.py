"""Bad input gets a clear exception naming the setting (or the position) and loses nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from _contract import chunk_record
from spanchunk import (
    ChunkingError,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    RecursiveChunker,
)


def all_chunkers() -> list[Any]:
    return [
        RecursiveChunker(chunk_size=20, overlap=0),
        ParentChildChunker(parent_size=40, child_size=10),
        HierarchicalChunker(sizes=[40, 20, 10]),
    ]


@pytest.mark.parametrize("bad", [b"some bytes", bytearray(b"x"), None, 42, 3.5])
@pytest.mark.parametrize("chunker", all_chunkers(), ids=lambda c: type(c).__name__)
def test_non_str_text_is_a_type_error(chunker: Any, bad: Any) -> None:
    with pytest.raises(TypeError, match=r"str"):
        chunker.chunk_text(bad)
    with pytest.raises(TypeError, match=r"str"):
        chunker.spans(bad)
    if bad is not None and not isinstance(bad, (bytes, bytearray)):
        # A Document, a str, or a sequence of either: an int or a float is none of them.
        with pytest.raises(TypeError):
            chunker.chunk(bad)
    with pytest.raises(TypeError):
        chunker.chunk(["a fine text", bad])


@pytest.mark.parametrize("bad", [b"some bytes", None])
@pytest.mark.parametrize("chunker", all_chunkers(), ids=lambda c: type(c).__name__)
def test_bytes_and_none_are_not_documents(chunker: Any, bad: Any) -> None:
    # bytes are a sequence (of ints) and None is nothing: neither may be read as documents.
    with pytest.raises(TypeError):
        chunker.chunk(bad)


@pytest.mark.parametrize("bad", [b"some bytes", None, 42])
def test_document_needs_str(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"str"):
        Document(bad)


def test_spans_many_needs_str() -> None:
    with pytest.raises(TypeError):
        RecursiveChunker(chunk_size=20).spans_many(["fine", b"bytes"])


@pytest.mark.parametrize(
    ("make", "setting"),
    [
        (lambda: RecursiveChunker(chunk_size=0), "chunk_size"),
        (lambda: RecursiveChunker(chunk_size=-5), "chunk_size"),
        (lambda: RecursiveChunker(chunk_size=10, overlap=10), "overlap"),
        (lambda: RecursiveChunker(chunk_size=10, overlap=25), "overlap"),
        (lambda: RecursiveChunker(chunk_size=10, overlap=-1), "overlap"),
        (lambda: RecursiveChunker(chunk_size=10, min_chunk_size=11), "min_chunk_size"),
        (lambda: RecursiveChunker(chunk_size=10, min_chunk_size=-1), "min_chunk_size"),
        (lambda: RecursiveChunker(unit="paragraph"), "unit"),
        (lambda: RecursiveChunker(unit="chars"), "unit"),
        (lambda: RecursiveChunker(unit="char", encoding="cl100k_base"), "encoding"),
        (lambda: RecursiveChunker(unit="byte", encoding="o200k_base"), "encoding"),
        (lambda: RecursiveChunker(chunk_size=3, unit="byte"), "chunk_size"),
        (lambda: RecursiveChunker(keep_separator="middle"), "keep_separator"),
        (lambda: RecursiveChunker(separators=[""]), "separator"),
        (lambda: RecursiveChunker(separators=["\n", ["", " "]]), "separator"),
        (lambda: ParentChildChunker(parent_size=400, child_size=400), "child_size"),
        (lambda: ParentChildChunker(parent_size=100, child_size=200), "child_size"),
        (lambda: ParentChildChunker(parent_size=-1, child_size=10), "parent_size"),
        (lambda: ParentChildChunker(parent_size=0, child_size=10), "parent_size"),
        (lambda: ParentChildChunker(parent_size=100, child_size=-10), "child_size"),
        (lambda: ParentChildChunker(parent_size=100, child_size=0), "child_size"),
        (lambda: ParentChildChunker(100, 20, child_overlap=20), "child_overlap"),
        (lambda: ParentChildChunker(100, 20, child_overlap=-1), "child_overlap"),
        (lambda: ParentChildChunker(100, 20, unit="words"), "unit"),
        (lambda: ParentChildChunker(100, 20, encoding="cl100k_base"), "encoding"),
        (lambda: HierarchicalChunker(sizes=[100, 200]), "sizes"),
        (lambda: HierarchicalChunker(sizes=[100, 100]), "sizes"),
        (lambda: HierarchicalChunker(sizes=[100, -5]), "sizes"),
        (lambda: HierarchicalChunker(sizes=[]), "sizes"),
        (lambda: HierarchicalChunker(sizes=[100, 50], overlap=50), "overlap"),
        (lambda: HierarchicalChunker(sizes=[100, 50], overlap=-1), "overlap"),
        (lambda: HierarchicalChunker(sizes=[100, 50], unit="token-ish"), "unit"),
        (lambda: HierarchicalChunker(sizes=[100, 50], encoding="cl100k_base"), "encoding"),
        # Parents never overlap (their children would repeat): refused up front.
        (
            lambda: ParentChildChunker(parent_chunker=RecursiveChunker(100, overlap=10)),
            "overlap",
        ),
        (
            lambda: HierarchicalChunker(
                sizes=[100, 50], chunkers=[RecursiveChunker(100, overlap=10), None]
            ),
            "overlap",
        ),
    ],
)
def test_impossible_settings_are_value_errors_naming_the_setting(make: Any, setting: str) -> None:
    with pytest.raises(ValueError, match=setting):
        make()


SURROGATE_TEXT = "hello world \ud83d and more"  # a lone surrogate at position 12


@pytest.mark.parametrize("chunker", all_chunkers(), ids=lambda c: type(c).__name__)
def test_lone_surrogate_is_a_value_error_naming_the_position(chunker: Any) -> None:
    for call in (chunker.chunk, chunker.chunk_text, chunker.spans):
        with pytest.raises(ValueError, match=r"\b12\b"):
            call(SURROGATE_TEXT)
    with pytest.raises(ValueError, match=r"\b12\b"):
        chunker.chunk(Document(SURROGATE_TEXT, id="given-id"))


def test_a_failed_document_leaves_the_registry_untouched() -> None:
    chunker = ParentChildChunker(parent_size=40, child_size=10)
    chunker.chunk("a first good document with words")
    before = len(chunker.parents)
    with pytest.raises(ValueError):
        chunker.chunk(SURROGATE_TEXT)
    assert len(chunker.parents) == before


GOOD = ["first good text, with words.", "second good text! more words", "third one here"]


@pytest.mark.parametrize("chunker", all_chunkers(), ids=lambda c: type(c).__name__)
def test_chunk_many_skip_reports_the_bad_document_and_chunks_the_rest(chunker: Any) -> None:
    documents = [GOOD[0], SURROGATE_TEXT, GOOD[1], 42, GOOD[2]]
    with pytest.warns(Warning) as caught:
        result = chunker.chunk_many(documents, errors="skip")
    messages = [str(w.message) for w in caught]
    assert any(re.search(r"\b1\b", m) for m in messages), messages
    assert any(re.search(r"\b3\b", m) for m in messages), messages
    expected = [c for text in GOOD for c in chunker.chunk(text)]
    assert [chunk_record(c) for c in result] == [chunk_record(c) for c in expected]


@pytest.mark.parametrize("chunker", all_chunkers(), ids=lambda c: type(c).__name__)
def test_chunk_many_raise_raises(chunker: Any) -> None:
    with pytest.raises((ValueError, ChunkingError)):
        chunker.chunk_many([GOOD[0], SURROGATE_TEXT, GOOD[1]], errors="raise")
    with pytest.raises((TypeError, ChunkingError)):
        chunker.chunk_many([GOOD[0], 42])  # errors="raise" is the default


def test_chunk_many_rejects_an_unknown_errors_mode() -> None:
    with pytest.raises(ValueError, match="errors"):
        RecursiveChunker(chunk_size=20).chunk_many(GOOD, errors="ignore-silently")
