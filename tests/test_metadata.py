"""Metadata: deep-frozen once per document, so no chunk can change another's (or the caller's)."""

from __future__ import annotations

import json
import pickle

import pytest
from spanchunk import Document, RecursiveChunker
from spanchunk.document import FrozenDict, freeze_metadata, thaw_metadata


def test_nested_metadata_cannot_be_changed_through_a_chunk() -> None:
    authors = ["ada"]
    document = Document("one two. three four.", metadata={"authors": authors, "tags": {"a": 1}})
    chunks = RecursiveChunker(10).chunk(document)
    assert len(chunks) == 3
    with pytest.raises(AttributeError):
        chunks[0].metadata["authors"].append("grace")  # a tuple now
    with pytest.raises(TypeError, match="read-only"):
        chunks[0].metadata["tags"]["b"] = 2
    with pytest.raises(TypeError):
        chunks[0].metadata["authors"] = []  # the top level is a read-only mapping
    authors.append("grace")  # the caller's list is not the document's
    assert document.metadata["authors"] == ("ada",)
    assert [chunk.metadata["authors"] for chunk in chunks] == [("ada",)] * 3
    assert chunks[1].metadata["tags"] == {"a": 1}


def test_frozen_metadata_serialises_and_pickles() -> None:
    document = Document("one two. three four.", metadata={"a": [1, {"b": [2]}], "s": {3}})
    chunk = RecursiveChunker(10).chunk(document)[0]
    assert json.dumps(chunk.to_dict()["metadata"], default=sorted) == (
        '{"a": [1, {"b": [2]}], "s": [3]}'
    )
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    assert pickle.loads(pickle.dumps(document)) == document
    assert thaw_metadata(document.metadata) == {"a": [1, {"b": [2]}], "s": {3}}
    frozen = freeze_metadata({"x": {"y": 1}})
    assert isinstance(frozen["x"], FrozenDict)
    assert pickle.loads(pickle.dumps(frozen["x"])) == {"y": 1}
    assert hash(frozen["x"]) == hash(FrozenDict({"y": 1}))


def test_source_given_twice_must_agree() -> None:
    assert Document("x", metadata={"source": "a.txt"}, source="a.txt").source == "a.txt"
    with pytest.raises(ValueError, match="pass the source once"):
        Document("x", metadata={"source": "a.txt"}, source="b.txt")
    chunk = RecursiveChunker(10).chunk(Document("x", metadata={"source": "a.txt"}))[0]
    assert chunk.metadata["source"] == "a.txt"
