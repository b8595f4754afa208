"""``achunk`` keeps the event loop responsive while a large document is chunked.

No timing threshold: a ticker coroutine counts how often the loop ran it while ``achunk`` was
in flight. Were the chunking done on the loop's thread (or without letting the loop run),
the ticker could only start after it ended and would count (almost) nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _contract import chunk_record
from spanchunk import Document, ParentChildChunker, RecursiveChunker


def _large_text(megabytes: int = 30) -> str:
    paragraph = (
        "Small chunks are searched; their parents are read. Ünïcödé text, 漢字かな交じり文。"
        " The quick brown fox jumps over the lazy dog! \U0001f44d\n\n"
    )
    return paragraph * (megabytes * 1_000_000 // len(paragraph.encode()))


async def _ticks_during(work: Any) -> tuple[int, Any]:
    """(times a ticker ran while ``work`` was awaited, its result)."""
    state = {"ticks": 0, "stop": False}

    async def ticker() -> None:
        while not state["stop"]:
            state["ticks"] += 1
            await asyncio.sleep(0.001)

    task = asyncio.create_task(ticker())
    try:
        result = await work
    finally:
        state["stop"] = True
        await task
    return state["ticks"], result


@pytest.fixture(scope="module")
def large_document() -> Document:
    text = _large_text()
    assert len(text.encode()) > 29_000_000
    return Document(text, source="large.txt")


def test_achunk_keeps_the_loop_ticking(large_document: Document) -> None:
    chunker = ParentChildChunker(parent_size=2000, child_size=400)
    ticks, chunks = asyncio.run(_ticks_during(chunker.achunk(large_document)))
    assert ticks > 10, f"the event loop ran the ticker only {ticks} times during achunk"

    expected = ParentChildChunker(parent_size=2000, child_size=400).chunk(large_document)
    assert len(chunks) == len(expected) > 50_000
    assert [chunk_record(c) for c in chunks] == [chunk_record(c) for c in expected]
    # The parents went to the chunker's registry, as with chunk().
    assert all(chunker.parent_of(c) is not None for c in chunks[:: len(chunks) // 100])


def test_achunk_of_many_documents_equals_chunk() -> None:
    documents = [f"Document {number}. " * (50 * number + 1) for number in range(20)]
    chunker = RecursiveChunker(chunk_size=200, overlap=30)

    async def both() -> tuple[list[Any], list[Any]]:
        return await chunker.achunk(documents), await chunker.achunk(documents[3])

    many, one = asyncio.run(both())
    assert [chunk_record(c) for c in many] == [chunk_record(c) for c in chunker.chunk(documents)]
    assert [chunk_record(c) for c in one] == [chunk_record(c) for c in chunker.chunk(documents[3])]


def test_concurrent_achunk_calls_match_chunk() -> None:
    texts = [_large_text(1) + str(number) for number in range(4)]
    chunker = ParentChildChunker(parent_size=1500, child_size=300)

    async def gathered() -> list[list[Any]]:
        return list(await asyncio.gather(*(chunker.achunk(text) for text in texts)))

    results = asyncio.run(gathered())
    reference = ParentChildChunker(parent_size=1500, child_size=300)
    for text, chunks in zip(texts, results, strict=True):
        assert [chunk_record(c) for c in chunks] == [chunk_record(c) for c in reference.chunk(text)]
