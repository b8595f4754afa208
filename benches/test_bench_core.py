"""pytest-benchmark figures of the Python API on the corpus, so that a regression shows.

Run with ``pytest benches/ --benchmark-only`` (release build installed; add
``--benchmark-autosave`` to keep a run and ``--benchmark-compare`` to compare with the last
one). These never run with the tests: pytest's ``testpaths`` is ``tests/``.

Inputs: one book (the largest file of the corpus's ``gutenberg`` folder) and a batch of
Markdown chapters (every file of ``markdown-en``). The corpus is ``$SPANCHUNK_CORPUS``,
default ``../shared/corpus`` from the repository root; without it every benchmark is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from spanchunk import ParentChildChunker, RecursiveChunker, _core

REPOSITORY = Path(__file__).resolve().parent.parent


def _corpus_root() -> Path:
    configured = os.environ.get("SPANCHUNK_CORPUS")
    path = Path(configured) if configured else Path("..") / "shared" / "corpus"
    return (path if path.is_absolute() else REPOSITORY / path).resolve()


def _texts(folder: str) -> list[tuple[str, str]]:
    """(name, text) of every non-hidden file under the corpus folder, sorted; text decoded
    as UTF-8 with the byte order mark and line ends kept."""
    root = _corpus_root() / folder
    if not root.is_dir():
        pytest.skip(f"corpus folder {root} is absent: set SPANCHUNK_CORPUS")
    return [
        (path.name, path.read_bytes().decode("utf-8"))
        for path in sorted(root.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    ]


@pytest.fixture(scope="module")
def book() -> list[str]:
    """The largest book of the gutenberg folder, as a one-document batch."""
    _, text = max(_texts("gutenberg"), key=lambda item: len(item[1]))
    return [text]


@pytest.fixture(scope="module")
def chapters() -> list[str]:
    return [text for _, text in _texts("markdown-en")]


def _megabytes(texts: list[str]) -> float:
    return sum(len(text.encode("utf-8")) for text in texts) / 1e6


def _run(benchmark: Any, texts: list[str], job: Callable[[], object]) -> None:
    benchmark.extra_info["megabytes"] = round(_megabytes(texts), 3)
    benchmark.extra_info["documents"] = len(texts)
    benchmark(job)
    if benchmark.stats is not None:  # None with --benchmark-disable
        seconds = benchmark.stats.stats.median
        benchmark.extra_info["mb_per_s"] = round(_megabytes(texts) / seconds, 1)


INPUTS = ["book", "chapters"]


@pytest.mark.parametrize("inputs", INPUTS)
def test_spans(benchmark: Any, inputs: str, request: pytest.FixtureRequest) -> None:
    texts = request.getfixturevalue(inputs)
    chunker = ParentChildChunker(2000, 400)
    _run(benchmark, texts, lambda: [chunker.spans(text) for text in texts])


@pytest.mark.parametrize("inputs", INPUTS)
def test_chunk_tree(benchmark: Any, inputs: str, request: pytest.FixtureRequest) -> None:
    texts = request.getfixturevalue(inputs)
    chunker = ParentChildChunker(2000, 400)

    def job() -> list[Any]:
        chunks = chunker.chunk_tree(texts)
        chunker.clear()
        return chunks

    _run(benchmark, texts, job)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("inputs", INPUTS)
def test_chunk_many(
    benchmark: Any, inputs: str, workers: int, request: pytest.FixtureRequest
) -> None:
    texts = request.getfixturevalue(inputs)
    chunker = ParentChildChunker(2000, 400)

    def job() -> list[Any]:
        chunks = chunker.chunk_many(texts, workers=workers)
        chunker.clear()
        return chunks

    _run(benchmark, texts, job)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("inputs", INPUTS)
def test_spans_many(
    benchmark: Any, inputs: str, workers: int, request: pytest.FixtureRequest
) -> None:
    texts = request.getfixturevalue(inputs)
    chunker = ParentChildChunker(2000, 400)
    _run(benchmark, texts, lambda: chunker.spans_many(texts, workers=workers))


def test_recursive_chunk_book(benchmark: Any, book: list[str]) -> None:
    """One level of 400 chars with Chunk objects (RecursiveChunker.chunk)."""
    chunker = RecursiveChunker(chunk_size=400)
    _run(benchmark, book, lambda: chunker.chunk(book[0]))


def test_recursive_spans_book(benchmark: Any, book: list[str]) -> None:
    """One level of 400 chars, integers only (RecursiveChunker.spans)."""
    chunker = RecursiveChunker(chunk_size=400)
    _run(benchmark, book, lambda: chunker.spans(book[0]))


def _tokenizer_file() -> Path:
    path = _corpus_root().parent / "tokenizers" / "all-MiniLM-L6-v2" / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"tokenizer {path} is absent: set SPANCHUNK_CORPUS")
    return path


@pytest.mark.parametrize("tokenizer", ["o200k_base", "all-MiniLM-L6-v2"])
@pytest.mark.parametrize("inputs", INPUTS)
def test_chunk_tree_in_tokens(
    benchmark: Any, inputs: str, tokenizer: str, request: pytest.FixtureRequest
) -> None:
    """Parents of 1024 and children of 256 tokens, each run from cold token counts."""
    texts = request.getfixturevalue(inputs)
    counter = (
        {"encoding": tokenizer} if tokenizer == "o200k_base" else {"tokenizer": _tokenizer_file()}
    )
    chunker = ParentChildChunker(1024, 256, unit="token", **counter)  # type: ignore[arg-type]

    def job() -> list[Any]:
        chunks = chunker.chunk_tree(texts)
        chunker.clear()
        _core.forget_token_counts()
        return chunks

    _run(benchmark, texts, job)
