"""Settings past what the core can count, and the keep_separator message, name the fix."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from spanchunk import HierarchicalChunker, ParentChildChunker, RecursiveChunker

HUGE = 2**64


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: RecursiveChunker(HUGE), "chunk_size"),
        (lambda: RecursiveChunker(10, overlap=HUGE), "overlap"),
        (lambda: RecursiveChunker(10, min_chunk_size=HUGE), "min_chunk_size"),
        (lambda: ParentChildChunker(HUGE, 10), "parent_size"),
        (lambda: ParentChildChunker(100, HUGE), "child_size"),
        (lambda: ParentChildChunker(100, 10, child_overlap=HUGE), "child_overlap"),
        (lambda: HierarchicalChunker([HUGE, 5]), r"sizes\[0\]"),
        (lambda: HierarchicalChunker([50, 5], overlap=HUGE), "overlap"),
        (lambda: RecursiveChunker(10).chunk_many(["a"], workers=HUGE), "workers"),
    ],
)
def test_a_size_too_large_is_a_value_error_naming_it(make: Callable[[], object], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must be at most 2\*\*63 - 1"):
        make()


def test_the_largest_size_still_works() -> None:
    assert [c.text for c in RecursiveChunker(2**63 - 1).chunk("a b")] == ["a b"]


def test_keep_separator_message_says_nothing_is_dropped() -> None:
    with pytest.raises(ValueError, match="nothing is dropped"):
        RecursiveChunker(10, keep_separator="none")  # type: ignore[arg-type]
    text = "aaa bbb. ccc ddd."
    chunks = RecursiveChunker(10, keep_separator=False, separators=[". "]).chunk_text(text)
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")
