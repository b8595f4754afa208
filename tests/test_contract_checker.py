"""The contract checker itself: it accepts a correct tree and catches every broken rule.

Without this, a checker that silently checks nothing would let every other test pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from _contract import (
    SPAN_FIELDS,
    LevelSpec,
    check_chunks,
    check_spans,
    parent_child_levels,
)

TEXT = "aaaa bbbb\n\ncccc dddd eeee"
PARENTS = [(0, 9), (11, 25)]
CHILDREN = [(0, 9, 0), (11, 20, 1), (21, 25, 1)]
SPEC = parent_child_levels(20, 10, 0)


def make_tree(
    text: str = TEXT,
    parents: list[tuple[int, int]] = PARENTS,
    children: list[tuple[int, int, int]] = CHILDREN,
) -> list[Any]:
    encoded_offsets = [len(text[:i].encode()) for i in range(len(text) + 1)]
    parent_ids = [f"{n:016x}" for n in range(len(parents))]
    child_ids = [f"{n + 100:016x}" for n in range(len(children))]

    def chunk(level: int, index: int, start: int, end: int, **fields: Any) -> Any:
        return SimpleNamespace(
            id=fields.pop("id"),
            text=text[start:end],
            content=text[start:end],
            document_id="doc",
            index=index,
            level=level,
            start_char=start,
            end_char=end,
            start_byte=encoded_offsets[start],
            end_byte=encoded_offsets[end],
            metadata={},
            **fields,
        )

    tree = [
        chunk(
            1,
            i,
            s,
            e,
            id=parent_ids[i],
            parent_id=None,
            child_ids=tuple(child_ids[j] for j, c in enumerate(children) if c[2] == i),
        )
        for i, (s, e) in enumerate(parents)
    ]
    tree += [
        chunk(0, j, s, e, id=child_ids[j], parent_id=parent_ids[p], child_ids=())
        for j, (s, e, p) in enumerate(children)
    ]
    return tree


def spans_of(tree: list[Any]) -> np.ndarray:
    rows = []
    parent_rows = {c.id: c.index for c in tree}
    for c in tree:
        parent = -1 if c.parent_id is None else parent_rows[c.parent_id]
        rows.append((c.level, c.index, parent, c.start_byte, c.end_byte, c.start_char, c.end_char))
    return np.array(rows, dtype=[(f, np.int64) for f in SPAN_FIELDS])


def test_a_correct_tree_passes() -> None:
    tree = make_tree()
    check_chunks(TEXT, tree, SPEC, "char")
    check_spans(TEXT, spans_of(tree), SPEC, "char")
    check_chunks(TEXT, tree, parent_child_levels(20, 10, 0), "byte")


def _set(row: int, **changes: Any) -> Callable[[list[Any]], None]:
    def mutate(tree: list[Any]) -> None:
        for key, value in changes.items():
            setattr(tree[row], key, value)

    return mutate


BROKEN_CHUNKS: dict[str, tuple[Callable[[list[Any]], None], str]] = {
    "text differs": (_set(2, text="cccc dddX"), "text differs"),
    "content differs": (_set(2, content="other"), "content"),
    "byte span wrong": (_set(3, start_byte=22), "bytes differ|start_byte"),
    "top has a parent": (_set(0, parent_id="0000000000000001"), "parent_id"),
    "parent does not resolve": (_set(3, parent_id="ffffffffffffffff"), "parent_id"),
    "child_ids wrong": (_set(1, child_ids=("0000000000000064",)), "child"),
    "leaf with child_ids": (_set(2, child_ids=("0000000000000000",)), "leaves"),
    "bad id": (_set(2, id="not-hex"), "bad chunk id"),
    "index wrong": (_set(3, index=5), "index"),
    "two document ids": (_set(3, document_id="other"), "document"),
}


@pytest.mark.parametrize("case", list(BROKEN_CHUNKS))
def test_broken_chunk_fields_are_caught(case: str) -> None:
    mutate, message = BROKEN_CHUNKS[case]
    tree = make_tree()
    mutate(tree)
    with pytest.raises(AssertionError, match=message):
        check_chunks(TEXT, tree, SPEC, "char")


BROKEN_SPANS: dict[str, tuple[dict[str, Any], str]] = {
    "too big": ({"children": [(0, 9, 0), (11, 25, 1)]}, "size"),
    "dropped text": ({"children": [(0, 9, 0), (11, 20, 1)]}, "in no chunk"),
    "whitespace only": (
        {
            "children": [(0, 9, 0), (9, 11, 0), (11, 20, 1), (21, 25, 1)],
            "parents": [(0, 11), (11, 25)],
        },
        "whitespace-only",
    ),
    "out of order": ({"children": [(0, 9, 0), (21, 25, 1), (11, 20, 1)]}, "increasing"),
    "overlap with overlap 0": ({"children": [(0, 9, 0), (11, 20, 1), (16, 25, 1)]}, "chunks"),
    "outside the parent": ({"children": [(0, 10, 0), (11, 20, 1), (21, 25, 1)]}, "outside"),
    "childless parent": (
        {"parents": [(0, 9), (11, 25)], "children": [(0, 9, 0)]},
        "no child|in no",
    ),
    "empty chunk": ({"children": [(0, 9, 0), (11, 11, 1), (11, 20, 1), (21, 25, 1)]}, "empty"),
}


@pytest.mark.parametrize("case", list(BROKEN_SPANS))
def test_broken_spans_are_caught(case: str) -> None:
    kwargs, message = BROKEN_SPANS[case]
    tree = make_tree(**kwargs)
    with pytest.raises(AssertionError, match=message):
        check_chunks(TEXT, tree, SPEC, "char")
    with pytest.raises(AssertionError, match=message):
        check_spans(TEXT, spans_of(tree), SPEC, "char")


def test_overlap_is_bounded() -> None:
    tree = make_tree(children=[(0, 9, 0), (11, 20, 1), (16, 25, 1)])
    spec = {1: SPEC[1], 0: dataclasses.replace(SPEC[0], overlap=4)}
    check_chunks(TEXT, tree, spec, "char")  # 4 chars shared: allowed
    spec = {1: SPEC[1], 0: LevelSpec(10, 3)}
    with pytest.raises(AssertionError, match="overlap by 4"):
        check_chunks(TEXT, tree, spec, "char")


def test_byte_sizes_count_utf8() -> None:
    text = "ééééé ab"  # 5 two-byte chars
    tree = make_tree(text, parents=[(0, 8)], children=[(0, 5, 0), (6, 8, 0)])
    check_chunks(text, tree, parent_child_levels(20, 10, 0), "byte")
    with pytest.raises(AssertionError, match="size 10 bytes > 9"):
        check_chunks(text, tree, parent_child_levels(20, 9, 0), "byte")


def test_blank_is_str_isspace_and_the_invisible_chars() -> None:
    # \x1c and \u0085 are whitespace for Python; the BOM and ZWSP are invisible: all blank,
    # so a chunk may leave them out. A variation selector is content.
    text = "a\x1c\u0085b\ufeff\u200b"
    tree = make_tree(text, parents=[(0, 6)], children=[(0, 1, 0), (3, 4, 0)])
    check_chunks(text, tree, parent_child_levels(20, 10, 0), "char")
    text = "a\x1c\u0085b\ufe0f"
    tree = make_tree(text, parents=[(0, 5)], children=[(0, 1, 0), (3, 4, 0)])
    with pytest.raises(AssertionError, match="in no chunk"):
        check_chunks(text, tree, parent_child_levels(20, 10, 0), "char")
    tree = make_tree(text, parents=[(0, 5)], children=[(0, 1, 0), (4, 5, 0)])
    with pytest.raises(AssertionError, match="in no chunk"):
        check_chunks(text, tree, parent_child_levels(20, 10, 0), "char")
