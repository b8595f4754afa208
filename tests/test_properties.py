"""The contract (docs/concepts.md) as hypothesis properties over hostile Unicode text."""

from __future__ import annotations

from typing import Any

from _contract import (
    LevelSpec,
    TextInfo,
    check_chunker,
    check_chunks,
    check_merging,
    hierarchical_levels,
    parent_child_levels,
    recursive_levels,
    spans_to_levels,
)
from _strategies import (
    hierarchical_settings,
    parent_child_settings,
    recursive_settings,
    texts,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk import (
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    RecursiveChunker,
)

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@PROPERTY
@given(text=texts, kwargs=recursive_settings())
def test_recursive_chunker_keeps_the_contract(text: str, kwargs: dict[str, Any]) -> None:
    chunker = RecursiveChunker(**kwargs)
    spec = recursive_levels(kwargs["chunk_size"], kwargs["overlap"])
    check_chunker(chunker, text, spec, kwargs["unit"])
    levels = spans_to_levels(chunker.spans(text))
    if levels:
        check_merging(
            text, levels, spec, kwargs["unit"], trim=kwargs["trim"], merge=kwargs["merge"]
        )


@PROPERTY
@given(text=texts, kwargs=parent_child_settings())
def test_parent_child_chunker_keeps_the_contract(text: str, kwargs: dict[str, Any]) -> None:
    chunker = ParentChildChunker(**kwargs)
    spec = parent_child_levels(kwargs["parent_size"], kwargs["child_size"], kwargs["child_overlap"])
    tree = check_chunker(chunker, text, spec, kwargs["unit"])
    levels = spans_to_levels(chunker.spans(text))
    if levels:
        check_merging(text, levels, spec, kwargs["unit"])
    # chunk() recorded every parent of the children it returned.
    for child in (c for c in tree if c.level == 0):
        parent = chunker.parent_of(child)
        assert parent is not None and parent.id == child.parent_id


def _explicit_level_chunkers(
    data: st.DataObject, parent_overlap: bool
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    unit = data.draw(st.sampled_from(["char", "byte"]), label="unit")
    parent_kwargs = data.draw(recursive_settings(unit=unit), label="parent")
    child_kwargs = data.draw(recursive_settings(unit=unit), label="child")
    low = 1 if unit == "char" else 4
    parent_kwargs["chunk_size"] = max(parent_kwargs["chunk_size"], low + 1)
    child_kwargs["chunk_size"] = min(child_kwargs["chunk_size"], parent_kwargs["chunk_size"] - 1)
    child_kwargs["overlap"] = min(child_kwargs["overlap"], child_kwargs["chunk_size"] - 1)
    child_kwargs["min_chunk_size"] = min(child_kwargs["min_chunk_size"], child_kwargs["chunk_size"])
    if parent_overlap:
        parent_kwargs["overlap"] = data.draw(
            st.integers(1, parent_kwargs["chunk_size"] - 1), label="parent overlap"
        )
    else:
        parent_kwargs["overlap"] = 0
    return unit, parent_kwargs, child_kwargs


@PROPERTY
@given(text=texts, data=st.data())
def test_parent_child_with_explicit_level_chunkers(text: str, data: st.DataObject) -> None:
    """parent_chunker / child_chunker given as configured RecursiveChunkers (any settings)."""
    unit, parent_kwargs, child_kwargs = _explicit_level_chunkers(data, parent_overlap=False)
    chunker = ParentChildChunker(
        parent_chunker=RecursiveChunker(**parent_kwargs),
        child_chunker=RecursiveChunker(**child_kwargs),
        unit=unit,
    )
    spec = {
        1: LevelSpec(parent_kwargs["chunk_size"], 0),
        0: LevelSpec(child_kwargs["chunk_size"], child_kwargs["overlap"]),
    }
    check_chunker(chunker, text, spec, unit)
    levels = spans_to_levels(chunker.spans(text))
    if levels:
        trim = {1: parent_kwargs["trim"], 0: child_kwargs["trim"]}
        merge = {1: parent_kwargs["merge"], 0: child_kwargs["merge"]}
        check_merging(text, levels, spec, unit, trim=trim, merge=merge)


@PROPERTY
@given(text=texts, data=st.data())
def test_parent_chunker_with_overlap_is_refused_up_front_or_works(
    text: str, data: st.DataObject
) -> None:
    """Parents never overlap (ParentChildChunker's documented choice): a parent chunker with
    overlap may be refused, but only up front, as a ValueError naming the overlap; once
    accepted, chunking must work and keep the contract."""
    unit, parent_kwargs, child_kwargs = _explicit_level_chunkers(data, parent_overlap=True)
    try:
        chunker = ParentChildChunker(
            parent_chunker=RecursiveChunker(**parent_kwargs),
            child_chunker=RecursiveChunker(**child_kwargs),
            unit=unit,
        )
    except ValueError as error:
        assert "overlap" in str(error)
        return
    spec = {
        1: LevelSpec(parent_kwargs["chunk_size"], parent_kwargs["overlap"]),
        0: LevelSpec(child_kwargs["chunk_size"], child_kwargs["overlap"]),
    }
    check_chunker(chunker, text, spec, unit)


@PROPERTY
@given(text=texts, kwargs=hierarchical_settings())
def test_three_level_hierarchical_chunker_keeps_the_contract(
    text: str, kwargs: dict[str, Any]
) -> None:
    chunker = HierarchicalChunker(**kwargs)
    spec = hierarchical_levels(kwargs["sizes"], kwargs["overlap"])
    tree = check_chunker(chunker, text, spec, kwargs["unit"])
    assert {c.level for c in tree} <= {0, 1, 2}
    levels = spans_to_levels(chunker.spans(text))
    if levels:
        check_merging(text, levels, spec, kwargs["unit"])


@PROPERTY
@given(text=texts, kwargs=hierarchical_settings(overlap=True))
def test_three_level_hierarchical_chunker_with_overlap_keeps_the_contract(
    text: str, kwargs: dict[str, Any]
) -> None:
    # docs/chunkers.md: HierarchicalChunker(sizes, overlap=0, ...); overlap < every size is valid.
    chunker = HierarchicalChunker(**kwargs)
    spec = hierarchical_levels(kwargs["sizes"], kwargs["overlap"])
    check_chunker(chunker, text, spec, kwargs["unit"])


@PROPERTY
@given(text=texts, kwargs=parent_child_settings())
def test_ids_are_deterministic(text: str, kwargs: dict[str, Any]) -> None:
    first = ParentChildChunker(**kwargs).chunk_tree(text)
    again = ParentChildChunker(**kwargs).chunk_tree(Document(text))
    assert [c.id for c in first] == [c.id for c in again]
    assert [c.parent_id for c in first] == [c.parent_id for c in again]
    assert Document(text).id == Document(text).id
    if first:
        assert first[0].document_id == Document(text).id


@PROPERTY
@given(
    paragraph=texts.filter(str.strip),
    kwargs=recursive_settings(unit="char"),
)
def test_identical_paragraphs_get_different_ids(paragraph: str, kwargs: dict[str, Any]) -> None:
    text = paragraph + "\n\n" + paragraph
    chunker = RecursiveChunker(**kwargs)
    chunks = chunker.chunk(text)
    check_chunks(
        text,
        chunks,
        recursive_levels(kwargs["chunk_size"], kwargs["overlap"]),
        "char",
        info=TextInfo(text),
    )
    assert len({c.id for c in chunks}) == len(chunks)
    # The same paragraph twice through a default chunker: two chunks, same text, two ids.
    default = RecursiveChunker(chunk_size=len(paragraph) + 1).chunk(text)
    by_text: dict[str, set[str]] = {}
    for c in default:
        by_text.setdefault(c.text, set()).add(c.id)
    assert all(len(ids) == sum(c.text == t for c in default) for t, ids in by_text.items())
