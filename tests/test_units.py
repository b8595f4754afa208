# ruff: noqa: RUF001 - CJK full-width punctuation is the point of some of these strings
"""The units of Haystack's split_by: word, sentence, passage and page.

Exact counts and chunks on small inputs, the contract as hypothesis properties in every unit
and mixed units, the corpus through the contract, settings, errors and the command line.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from _contract import (
    SEGMENT_UNITS,
    TextInfo,
    check_chunker,
    hierarchical_levels,
    parent_child_levels,
    recursive_levels,
)
from _strategies import separators, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk import (
    SENTENCES,
    HierarchicalChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
    _core,
)
from spanchunk.cli import main
from spanchunk.ingest import read_document

NEW_UNITS = ["word", "sentence", "passage", "page"]
ALL_UNITS = ["char", "byte", *NEW_UNITS]

PROPERTY = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def measure(unit: str, text: str) -> int:
    return _core.Splitter(4, unit=unit).measure(text)


def texts_of(chunker: Any, text: str) -> list[str]:
    return [chunk.text for chunk in chunker.chunk(text)]


# --------------------------------------------------------------------------------------------
# Counts.

COUNTS = [
    ("word", "", 0),
    ("word", " \n\t\u3000 ", 0),
    ("word", "one", 1),
    ("word", "  one  two\nthree\u00a0four\u3000five ", 5),
    ("word", "Hello, world!", 2),
    ("word", "日本語のテキスト 😀é\u0301", 2),
    ("sentence", "", 0),
    ("sentence", " \n\n \t", 0),
    ("sentence", "One. Two! Three", 3),
    ("sentence", "It was a dark\nand stormy night. The wind howled.", 2),
    ("sentence", "It was a dark\r\nand stormy night.", 1),
    ("sentence", "A heading\n\nA paragraph", 2),
    ("sentence", "A line\n   \nanother", 2),
    ("sentence", "你好。世界！", 2),
    ("sentence", "Mr. Smith went home.", 2),
    ("sentence", "Use e.g. the fork.", 1),
    ("sentence", "The U.S.A is big.", 1),
    ("sentence", "half a sente", 1),
    ("passage", "", 0),
    ("passage", "a\nb", 1),
    ("passage", "a\n\nb\r\n\r\nc\n\n\n\nd", 4),
    ("passage", "\n\n a \n\n \n\n", 1),
    ("passage", "a\n \nb", 1),
    ("page", "one\ftwo\f\f three \f", 3),
    ("page", " \f ", 0),
    ("page", "no form feed\n\nat all", 1),
]


@pytest.mark.parametrize(("unit", "text", "expected"), COUNTS)
def test_counts(unit: str, text: str, expected: int) -> None:
    assert measure(unit, text) == expected
    if unit != "sentence":
        # The contract's own count, written apart from the core's.
        assert SEGMENT_UNITS[unit](text) == expected


@PROPERTY
@given(text=texts)
def test_core_counts_agree_with_the_python_reference(text: str) -> None:
    for unit in ("word", "passage", "page"):
        assert measure(unit, text) == SEGMENT_UNITS[unit](text), unit
    assert (measure("sentence", text) == 0) == (not text.strip(_core.BLANK_CHARS))


# --------------------------------------------------------------------------------------------
# Exact chunks.


def test_word_chunks() -> None:
    text = "one two three four five six seven"
    assert texts_of(RecursiveChunker(3, unit="word"), text) == [
        "one two three",
        "four five six",
        "seven",
    ]
    assert texts_of(RecursiveChunker(4, overlap=2, unit="word"), "a b c d e f g h") == [
        "a b c d",
        "c d e f",
        "e f g h",
    ]
    # A run of non-whitespace is one word, however long: never cut.
    assert texts_of(RecursiveChunker(2, unit="word"), "日本語 のテキスト 😀é\u0301 x") == [
        "日本語 のテキスト",
        "😀é\u0301 x",
    ]


def test_sentence_chunks() -> None:
    text = "It was late. The wind howled. Rain fell. Nobody came."
    assert texts_of(RecursiveChunker(2, unit="sentence"), text) == [
        "It was late. The wind howled.",
        "Rain fell. Nobody came.",
    ]
    assert texts_of(RecursiveChunker(2, overlap=1, unit="sentence"), text) == [
        "It was late. The wind howled.",
        "The wind howled. Rain fell.",
        "Rain fell. Nobody came.",
    ]
    # A hard-wrapped line break is inside a sentence; a blank line ends one.
    wrapped = "It was a dark\nand stormy night. The wind howled!\n\nNobody came."
    assert texts_of(RecursiveChunker(1, unit="sentence"), wrapped) == [
        "It was a dark\nand stormy night.",
        "The wind howled!",
        "Nobody came.",
    ]
    assert texts_of(RecursiveChunker(1, unit="sentence"), "你好。世界！") == ["你好。", "世界！"]


def test_passage_and_page_chunks() -> None:
    assert texts_of(RecursiveChunker(2, unit="passage"), "One.\n\nTwo.\n\nThree.") == [
        "One.\n\nTwo.",
        "Three.",
    ]
    pages = "Page one.\fPage two.\f\fPage three."
    assert texts_of(RecursiveChunker(1, unit="page"), pages) == [
        "Page one.",
        "Page two.",
        "Page three.",
    ]


def test_sentence_parents_of_word_children() -> None:
    chunker = ParentChildChunker(
        parent_chunker=RecursiveChunker(2, unit="sentence"),
        child_chunker=RecursiveChunker(2, unit="word"),
    )
    tree = chunker.chunk_tree("Aa bb. Cc dd. Ee ff. Gg hh.")
    assert [(chunk.level, chunk.text) for chunk in tree] == [
        (1, "Aa bb. Cc dd."),
        (1, "Ee ff. Gg hh."),
        (0, "Aa bb."),
        (0, "Cc dd."),
        (0, "Ee ff."),
        (0, "Gg hh."),
    ]


def test_sentences_separator_works_in_any_unit() -> None:
    text = "Dr. Who? Yes. A second line here."
    chunker = RecursiveChunker(14, separators=[SENTENCES, " "])
    assert texts_of(chunker, text) == ["Dr. Who? Yes.", "A second line", "here."]
    assert chunker.separators == [[SENTENCES], [" "]]
    assert not chunker._splitter.seekable


def test_default_separators_per_unit() -> None:
    default = RecursiveChunker(10).separators
    assert RecursiveChunker(10, unit="word").separators == default
    assert RecursiveChunker(10, unit="passage").separators == default
    sentence = RecursiveChunker(10, unit="sentence").separators
    assert sentence[:3] == [default[0], [SENTENCES], default[1]]
    assert RecursiveChunker(10, unit="page").separators == [["\f"], *default]


# --------------------------------------------------------------------------------------------
# The contract, as properties.


@st.composite
def unit_settings(draw: Any, unit: str | None = None) -> dict[str, Any]:
    """RecursiveChunker settings in a new unit (sizes are small: texts hold few words)."""
    unit = unit or draw(st.sampled_from(NEW_UNITS))
    size = draw(st.one_of(st.integers(1, 4), st.integers(1, 40)))
    level_separators = draw(
        st.one_of(
            separators,
            st.just([["\n\n"], [SENTENCES], [" "]]),
            st.just([[SENTENCES]]),
        )
    )
    return {
        "chunk_size": size,
        "overlap": draw(st.one_of(st.just(0), st.integers(0, size - 1))),
        "min_chunk_size": draw(st.one_of(st.just(0), st.integers(0, size))),
        "separators": level_separators,
        "keep_separator": draw(st.sampled_from(["end", "start", False])),
        "trim": draw(st.booleans()),
        "unit": unit,
    }


@PROPERTY
@given(text=texts, kwargs=unit_settings())
def test_recursive_chunker_keeps_the_contract_in_new_units(
    text: str, kwargs: dict[str, Any]
) -> None:
    chunker = RecursiveChunker(**kwargs)
    check_chunker(
        chunker, text, recursive_levels(kwargs["chunk_size"], kwargs["overlap"]), kwargs["unit"]
    )


@PROPERTY
@given(text=texts, data=st.data())
def test_mixed_units_keep_the_contract(text: str, data: st.DataObject) -> None:
    parent_unit = data.draw(st.sampled_from(ALL_UNITS), label="parent unit")
    child_unit = data.draw(st.sampled_from(ALL_UNITS), label="child unit")
    low = {"byte": 4}.get
    parent_size = data.draw(st.integers(low(parent_unit, 1), 60), label="parent size")
    child_size = data.draw(st.integers(low(child_unit, 1), 30), label="child size")
    overlap = data.draw(st.integers(0, child_size - 1), label="child overlap")
    markdown = data.draw(st.booleans(), label="markdown")
    kind = MarkdownChunker if markdown else RecursiveChunker
    chunker = ParentChildChunker(
        parent_chunker=kind(parent_size, unit=parent_unit),  # type: ignore[arg-type]
        child_chunker=kind(child_size, overlap=overlap, unit=child_unit),  # type: ignore[arg-type]
    )
    spec = parent_child_levels(parent_size, child_size, overlap)
    check_chunker(chunker, text, spec, {1: parent_unit, 0: child_unit})


@PROPERTY
@given(text=texts, unit=st.sampled_from(NEW_UNITS), data=st.data())
def test_hierarchical_chunker_keeps_the_contract_in_new_units(
    text: str, unit: str, data: st.DataObject
) -> None:
    leaf = data.draw(st.integers(1, 6), label="leaf")
    middle = data.draw(st.integers(leaf + 1, leaf * 4 + 4), label="middle")
    top = data.draw(st.integers(middle + 1, middle * 4 + 4), label="top")
    overlap = data.draw(st.integers(0, leaf - 1), label="overlap")
    chunker = HierarchicalChunker([top, middle, leaf], overlap=overlap, unit=unit)  # type: ignore[arg-type]
    check_chunker(chunker, text, hierarchical_levels([top, middle, leaf], overlap), unit)


# --------------------------------------------------------------------------------------------
# The corpus.

CORPUS_CONFIGS = {
    "sentence-10-word-60": (
        lambda: ParentChildChunker(
            parent_chunker=RecursiveChunker(10, unit="sentence"),
            child_chunker=RecursiveChunker(60, unit="word"),
        ),
        parent_child_levels(10, 60),
        {1: "sentence", 0: "word"},
    ),
    "haystack-sentences-10-3": (
        lambda: HierarchicalChunker([10, 3], unit="sentence"),
        hierarchical_levels([10, 3]),
        "sentence",
    ),
    "haystack-words-200-50-overlap-10": (
        lambda: HierarchicalChunker([200, 50], overlap=10, unit="word"),
        hierarchical_levels([200, 50], 10),
        "word",
    ),
    "passages-3-1": (
        lambda: ParentChildChunker(3, 1, unit="passage"),
        parent_child_levels(3, 1),
        "passage",
    ),
    "pages-2-1": (
        lambda: ParentChildChunker(2, 1, unit="page"),
        parent_child_levels(2, 1),
        "page",
    ),
}


@pytest.mark.parametrize("config", list(CORPUS_CONFIGS))
@pytest.mark.parametrize("folder", ["gutenberg", "markdown-en", "markdown-zh"])
def test_corpus_keeps_the_contract_in_new_units(
    corpus: dict[str, list[tuple[str, str]]], folder: str, config: str
) -> None:
    make, spec, unit = CORPUS_CONFIGS[config]
    for name, text in corpus[folder]:
        try:
            tree = check_chunker(make(), text, spec, unit, info=TextInfo(text))
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error
        assert tree or not text.strip(), f"{name}: no chunks"


# --------------------------------------------------------------------------------------------
# Settings, errors, pickling, the command line.


def test_units_are_settings() -> None:
    fingerprints = set()
    for unit in ALL_UNITS:
        chunker = RecursiveChunker(10, unit=unit)  # type: ignore[arg-type]
        assert chunker.unit == unit
        assert chunker.settings()["unit"] == unit
        assert json.loads(json.dumps(chunker.settings())) == chunker.settings()
        fingerprints.add(chunker.fingerprint())
        if unit in NEW_UNITS:
            assert f"unit={unit!r}" in repr(chunker)
            twin = pickle.loads(pickle.dumps(chunker))
            assert twin.fingerprint() == chunker.fingerprint()
            assert [c.id for c in twin.chunk("A b. C d.\n\nE f.")] == [
                c.id for c in chunker.chunk("A b. C d.\n\nE f.")
            ]
    assert len(fingerprints) == len(ALL_UNITS)
    tree = HierarchicalChunker([10, 3], unit="sentence")
    assert tree.settings()["unit"] == "sentence"


def test_unit_errors() -> None:
    with pytest.raises(ValueError, match="'word', 'sentence', 'passage', 'page'"):
        RecursiveChunker(10, unit="words")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="encoding"):
        RecursiveChunker(10, unit="word", encoding="cl100k_base")
    with pytest.raises(ValueError, match="stands alone"):
        RecursiveChunker(10, separators=[[SENTENCES, ". "]])
    with pytest.raises(ValueError, match="overlap"):
        RecursiveChunker(3, overlap=3, unit="sentence")
    with pytest.raises(ValueError, match="child_size"):
        ParentChildChunker(3, 3, unit="passage")
    # A child chunker of its own has its own size, in its own unit.
    ParentChildChunker(10, 60, child_chunker=RecursiveChunker(60, unit="word"), unit="sentence")


def test_cli_sentence_parents_word_children(tmp_path: Path) -> None:
    text = ("It was a dark\nand stormy night. The wind howled! " * 30 + "\n\n") * 5
    source = tmp_path / "story.txt"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["chunk", str(source), "--unit", "sentence", "--parent-size", "10"]
    args += ["--child-unit", "word", "--child-size", "60", "-o", str(out)]
    assert main(args) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {record["level"] for record in records} == {0, 1}
    for record in records:
        assert text[record["start_char"] : record["end_char"]] == record["text"]
        unit = "sentence" if record["level"] else "word"
        assert 1 <= measure(unit, record["text"]) <= (10 if record["level"] else 60)
    reference = ParentChildChunker(
        10, 60, child_chunker=RecursiveChunker(60, overlap=0, unit="word"), unit="sentence"
    )
    # The command line's document id is the file's resolved path (read_document's too).
    expected = reference.chunk_tree(read_document(source))
    assert [record["id"] for record in records] == [c.id for c in expected]


def test_haystack_component_in_haystack_units() -> None:
    pytest.importorskip("haystack")
    from haystack import Document  # noqa: PLC0415
    from spanchunk.integrations.haystack import SpanchunkDocumentSplitter  # noqa: PLC0415

    text = "It was late. The wind howled. Rain fell. Nobody came.\n\n" * 6
    splitter = SpanchunkDocumentSplitter(block_sizes={10, 3}, unit="sentence")
    documents = splitter.run([Document(content=text)])["documents"]
    for document in documents[1:]:
        start, end = document.meta["split_idx_start"], document.meta["split_idx_end"]
        assert text[start:end] == document.content
        assert 1 <= measure("sentence", document.content) <= document.meta["__block_size"]
