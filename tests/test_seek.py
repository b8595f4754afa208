"""Seeking: the core finds the chunk ends of the common settings without an atom per piece
(rust/engine/seek.rs). It must cut exactly as the atom engine does, on any text."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _strategies import FAMILY, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk import _core

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Separator levels a tree can seek with (all whitespace, or unable to overlap), and some it
#: cannot (the atom engine then cuts alone, and the comparison still holds).
SEPARATORS = [
    None,
    [["\n\n"], ["\n"], [" "]],
    [["<br>", "<hr>"], [". ", "? "], ["\u3000", " "]],
    [["\r\n\r\n", "\n\n"], ["\u2028", "\n"], ["。", "\uff01"], ["\t", " ", "\u00a0"]],
    [["--"], ["-"]],
    [["ab", "ba"], [" "]],
    [[FAMILY], ["\u200d"]],
]


Tree = tuple[list[int], list[list[str]] | None, str, str]


@st.composite
def trees(draw: Any) -> Tree:
    """Level sizes (top first, each smaller than the one above), separators, placement and
    merge rule."""
    sizes = [draw(st.integers(2, 300))]
    for _ in range(draw(st.integers(0, 2))):
        if sizes[-1] > 1:
            sizes.append(draw(st.integers(1, sizes[-1] - 1)))
    return (
        sizes,
        draw(st.sampled_from(SEPARATORS)),
        draw(st.sampled_from(["end", "none"])),
        draw(st.sampled_from(["boundary", "greedy"])),
    )


def _tree(
    sizes: list[int], separators: list[list[str]] | None, keep: str, merge: str
) -> _core.Tree:
    return _core.Tree(
        [
            _core.Splitter(size, separators=separators, keep_separator=keep, merge=merge)
            for size in sizes
        ]
    )


@PROPERTY
@given(text=texts, tree=trees())
def test_seeking_cuts_as_the_atom_engine(text: str, tree: Tree) -> None:
    core = _tree(*tree)
    np.testing.assert_array_equal(core.spans(text), core.spans_by_atoms(text))


@pytest.mark.parametrize("merge", ["boundary", "greedy"])
@pytest.mark.parametrize("sizes", [[2000, 400], [300, 60, 15], [40, 9]])
def test_the_corpus_is_cut_alike(
    corpus: dict[str, list[tuple[str, str]]], sizes: list[int], merge: str
) -> None:
    core = _tree(sizes, None, "end", merge)
    for files in corpus.values():
        for name, text in files:
            assert np.array_equal(core.spans(text), core.spans_by_atoms(text)), name


def test_which_settings_seek() -> None:
    assert _core.Splitter(400).seekable
    assert _core.Splitter(400, keep_separator="none").seekable
    assert _core.Splitter(400, separators=SEPARATORS[2]).seekable
    # Whitespace levels seek even where their separators overlap ("\n\n" in "\n\n\n").
    assert _core.Splitter(400, separators=[["\n\n", "\n\n\n"]]).seekable
    for unseekable in [
        _core.Splitter(400, overlap=10),
        _core.Splitter(400, min_chunk_size=10),
        _core.Splitter(400, keep_separator="start"),
        _core.Splitter(400, trim=False),
        _core.Splitter(400, unit="byte"),
        _core.Splitter(400, structure="markdown"),
        _core.Splitter(400, separators=[["--"]]),  # "-" ends and starts it: overlaps
        _core.Splitter(400, separators=[["ab", "b"]]),  # one holds the other
        _core.Splitter(400, separators=[[". ", " "]]),  # mixed, and " " ends ". "
    ]:
        assert not unseekable.seekable
