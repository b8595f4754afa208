"""Batch and async entry points give exactly what the one-by-one calls give."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from _contract import chunk_record
from _strategies import texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk import Document, HierarchicalChunker, ParentChildChunker, RecursiveChunker


def make_chunkers() -> dict[str, Any]:
    return {
        "recursive": RecursiveChunker(chunk_size=30, overlap=5),
        "recursive-bytes": RecursiveChunker(chunk_size=30, overlap=0, unit="byte"),
        "parent-child": ParentChildChunker(parent_size=60, child_size=15, child_overlap=3),
        "hierarchical": HierarchicalChunker(sizes=[80, 30, 10]),
    }


def records(chunks: list[Any]) -> list[tuple]:
    return [chunk_record(c) for c in chunks]


def one_by_one(chunker: Any, documents: list[Any]) -> list[Any]:
    return [c for document in documents for c in chunker.chunk(document)]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    documents=st.lists(texts, max_size=8),
    name=st.sampled_from(list(make_chunkers())),
    workers=st.sampled_from([None, 1, 2, 3]),
)
def test_chunk_many_equals_chunk_one_by_one(
    documents: list[str], name: str, workers: int | None
) -> None:
    chunker = make_chunkers()[name]
    expected = records(one_by_one(chunker, documents))
    assert records(chunker.chunk(documents)) == expected
    assert records(chunker.chunk_many(documents, workers=workers)) == expected


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    documents=st.lists(texts, max_size=8),
    name=st.sampled_from(list(make_chunkers())),
    workers=st.sampled_from([None, 1, 2]),
)
def test_spans_many_equals_spans(documents: list[str], name: str, workers: int | None) -> None:
    chunker = make_chunkers()[name]
    many = chunker.spans_many(documents, workers=workers)
    assert len(many) == len(documents)
    for text, spans in zip(documents, many, strict=True):
        one = chunker.spans(text)
        assert isinstance(spans, np.ndarray)
        assert spans.dtype == one.dtype
        assert spans.tolist() == one.tolist()


@pytest.mark.parametrize("name", list(make_chunkers()))
def test_chunk_many_with_documents_and_metadata(name: str) -> None:
    chunker = make_chunkers()[name]
    documents = [
        Document("First document. It has two sentences.", id="one", metadata={"n": 1}),
        Document("Second, shorter.", id="two", source="b.txt"),
        "A plain string document; its id is the hash of its text.",
    ]
    expected = records(one_by_one(chunker, documents))
    assert expected
    assert records(chunker.chunk_many(documents)) == expected
    assert records(chunker.chunk_many(documents, workers=2)) == expected
    assert records(chunker.chunk_many(tuple(documents), workers=1)) == expected


def test_chunk_many_fills_the_registry_like_chunk() -> None:
    documents = [f"Document {n}. " + "word " * (20 + n) for n in range(12)]
    one = ParentChildChunker(parent_size=60, child_size=15)
    many = ParentChildChunker(parent_size=60, child_size=15)
    one_by_one(one, documents)
    children = many.chunk_many(documents, workers=2)
    assert len(many.parents) == len(one.parents) > 0
    for child in children:
        assert many.parent_of(child).id == child.parent_id


def test_spans_many_on_a_corpus_folder(corpus: dict[str, list[tuple[str, str]]]) -> None:
    documents = [text for _, text in corpus["markdown-zh"]]
    chunker = ParentChildChunker(parent_size=2000, child_size=400, child_overlap=0)
    many = chunker.spans_many(documents, workers=2)
    assert len(many) == len(documents)
    for text, spans in zip(documents, many, strict=True):
        assert spans.tolist() == chunker.spans(text).tolist()


def test_chunk_many_on_a_corpus_folder(corpus: dict[str, list[tuple[str, str]]]) -> None:
    documents = [Document(text, source=name) for name, text in corpus["markdown-en"]]
    chunker = HierarchicalChunker(sizes=[2048, 512, 128])
    assert records(chunker.chunk_many(documents, workers=2)) == records(
        one_by_one(chunker, documents)
    )


@pytest.mark.parametrize("name", list(make_chunkers()))
def test_achunk_equals_chunk(name: str) -> None:
    chunker = make_chunkers()[name]
    text = "An async call. It runs off the event loop; the result is the same!\n\n" * 5

    async def main() -> tuple[list[Any], list[Any]]:
        single = await chunker.achunk(text)
        several = await chunker.achunk([text, Document(text[::-1], id="rev")])
        return single, several

    single, several = asyncio.run(main())
    assert records(single) == records(chunker.chunk(text))
    assert records(several) == records(chunker.chunk([text, Document(text[::-1], id="rev")]))


def test_achunk_runs_concurrently_with_other_tasks() -> None:
    chunker = ParentChildChunker(parent_size=2000, child_size=400)
    documents = [f"Document {n}. " + "some words here. " * 500 for n in range(6)]

    async def main() -> list[list[Any]]:
        return await asyncio.gather(*(chunker.achunk(d) for d in documents))

    results = asyncio.run(main())
    for document, result in zip(documents, results, strict=True):
        assert records(result) == records(chunker.chunk(document))


# ---------------------------------------------------------------- workers=1, 2 and None agree

WORKER_CHOICES = (1, 2, None)


def _mixed_batch() -> list[str]:
    """Short and long texts, blank ones and ones with no separator, so that threads get
    uneven work and finish out of order."""
    return [
        "",
        "   \n\n  ",
        "x" * 9000,
        "Sentence one. Sentence two! " * 700,
        "漢字かな交じり文。" * 800,
        "\r\n".join(f"line {n}, \U0001f44d e\u0301" for n in range(900)),
        "short",
        *(f"Document {n}. " + "some words here. " * (40 * n) for n in range(12)),
    ]


@pytest.mark.parametrize("name", list(make_chunkers()))
def test_spans_many_same_for_any_worker_count(name: str) -> None:
    chunker = make_chunkers()[name]
    texts = _mixed_batch()
    results = {workers: chunker.spans_many(texts, workers=workers) for workers in WORKER_CHOICES}
    reference = [spans.tolist() for spans in results[1]]
    assert len(reference) == len(texts)
    for workers in WORKER_CHOICES[1:]:
        assert [spans.tolist() for spans in results[workers]] == reference, workers
        assert all(spans.dtype == results[1][0].dtype for spans in results[workers])


@pytest.mark.parametrize("name", list(make_chunkers()))
def test_chunk_many_same_for_any_worker_count(name: str) -> None:
    texts = _mixed_batch()
    outputs = {}
    for workers in WORKER_CHOICES:
        chunker = make_chunkers()[name]
        chunks = chunker.chunk_many(texts, workers=workers)
        parents = sorted(records(getattr(chunker, "parents", [])))
        outputs[workers] = (records(chunks), parents)
    assert outputs[1][0]
    assert outputs[2] == outputs[1]
    assert outputs[None] == outputs[1]


def test_many_same_for_any_worker_count_on_the_corpus(
    corpus: dict[str, list[tuple[str, str]]],
) -> None:
    texts = [text for files in corpus.values() for _, text in files]
    chunker = ParentChildChunker(parent_size=2000, child_size=400)
    spans = {workers: chunker.spans_many(texts, workers=workers) for workers in WORKER_CHOICES}
    reference = [array.tolist() for array in spans[1]]
    for workers in WORKER_CHOICES[1:]:
        assert [array.tolist() for array in spans[workers]] == reference, workers

    documents = [Document(text, source=name) for name, text in corpus["markdown-en"]]
    chunks = {}
    for workers in WORKER_CHOICES:
        chunker.clear()
        chunks[workers] = records(chunker.chunk_many(documents, workers=workers))
    assert chunks[1] and chunks[2] == chunks[1] and chunks[None] == chunks[1]
