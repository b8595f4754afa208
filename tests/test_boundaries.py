"""Chunks end where the text does (merge="boundary"): the coarsest cut within a chunk's size,
pinned on small examples, checked on generated prose and on the corpus with the yardstick of
benches/boundaries.py; and token budgets filled where only graphemes can cut."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spanchunk import MarkdownChunker, ParentChildChunker, RecursiveChunker, _core

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
import boundaries as yardstick

HARRISON = yardstick.HARRISON


def texts_of(chunks: list[Any]) -> list[str]:
    return [chunk.text for chunk in chunks]


def test_the_harrison_example() -> None:
    assert texts_of(RecursiveChunker(28).chunk_text(HARRISON)) == [
        "Hi.\n\nI'm Harrison.",
        "How? Are? You?",
        "Okay then f f f f.",
        "This is a weird text to",
        "write,",
        "but gotta test the",
        "splittingggg some how.\n\nBye!",
        "-H.",
    ]
    assert texts_of(RecursiveChunker(10).chunk_text(HARRISON))[0] == "Hi."
    assert texts_of(RecursiveChunker(28, merge="greedy").chunk_text(HARRISON))[2:4] == [
        "Okay then f f f f.\nThis is a",
        "weird text to write, but",
    ]


def test_merge_is_a_setting() -> None:
    chunker = RecursiveChunker(100, merge="greedy")
    assert chunker.merge == "greedy"
    assert chunker.settings()["merge"] == "greedy"
    assert "merge='greedy'" in repr(chunker)
    assert "merge" not in repr(RecursiveChunker(100))
    assert chunker.fingerprint() != RecursiveChunker(100).fingerprint()
    with pytest.raises(ValueError, match="merge must be 'boundary'"):
        RecursiveChunker(100, merge="packed")  # type: ignore[arg-type]
    # Nested chunkers carry it into the fingerprint of a tree.
    tree = ParentChildChunker(parent_chunker=RecursiveChunker(200, merge="greedy"))
    assert tree.settings()["parent_chunker"]["merge"] == "greedy"


def test_a_heading_stays_with_its_section() -> None:
    text = "# L\n\n- step one:\n\n  ```\n  run --this\n  ```\n- step two\n"
    assert texts_of(MarkdownChunker(22).chunk_text(text))[0] == "# L\n\n- step one:"


def test_token_budgets_are_filled_between_graphemes() -> None:
    measure = _core.Splitter(10**9, unit="token", encoding="cl100k_base").measure
    chunks = RecursiveChunker(512, unit="token", encoding="cl100k_base").chunk_text("x" * 20000)
    assert [measure(chunk.text) for chunk in chunks][:4] == [512] * 4
    assert len(chunks) == 5
    chunker = RecursiveChunker(5, unit="token", encoding="cl100k_base", separators=["."])
    assert texts_of(chunker.chunk_text("This is the final test.")) == [
        "This is the final test",
        ".",
    ]


def test_a_length_function_fills_its_budget_by_bisection() -> None:
    def eights(text: str) -> int:  # a token per 8 chars, as BPE makes of "xxxxxxxx"
        return -(-len(text) // 8)

    chunks = RecursiveChunker(64, unit="token", length_function=eights).chunk_text("x" * 2000)
    assert [len(chunk.text) for chunk in chunks] == [512] * 3 + [2000 - 3 * 512]


def _share_at_coarsest(texts: list[str], size: int, unit: str = "char", overlap: int = 0) -> float:
    setting = yardstick.Setting("test", unit, size, overlap)
    cut = yardstick.spanchunk_cutter(setting, "boundary")
    tally = yardstick.Tally()
    for text in texts:
        yardstick.judge(text, yardstick.Boundaries(text), cut(text), setting, tally)
    return tally.row()["coarsest"]


WORDS = st.sampled_from(["a", "bb", "ccc", "word", "longer", "x" * 12])
MARKS = st.sampled_from([" ", " ", " ", ", ", ". ", "\n", "\n\n", "? ", "; "])


@st.composite
def prose(draw: Any) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 60))):
        parts.append(draw(WORDS))
        parts.append(draw(MARKS))
    return "".join(parts)


@settings(max_examples=200, deadline=None)
@given(text=prose(), size=st.integers(12, 120), overlap=st.sampled_from([0, 0, 5]))
def test_generated_prose_ends_at_the_coarsest_cut(text: str, size: int, overlap: int) -> None:
    assert _share_at_coarsest([text], size, overlap=overlap) == 1.0


@pytest.mark.parametrize(("size", "unit", "overlap"), [(400, "char", 0), (2000, "char", 400)])
def test_the_corpus_ends_at_the_coarsest_cut(
    corpus: dict[str, list[tuple[str, str]]], size: int, unit: str, overlap: int
) -> None:
    texts = [text for files in corpus.values() for _name, text in files]
    assert _share_at_coarsest(texts, size, unit, overlap) == 1.0
