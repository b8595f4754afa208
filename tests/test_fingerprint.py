"""The fingerprint (and with it every chunk id) comes from the cut, not from the class.

Chunkers that build the same levels share their chunk ids, whatever class holds their
settings and whatever their ``name``; a setting that changes a level changes the fingerprint;
a level cut in Python is its qualified class name and its own settings.
"""

from __future__ import annotations

import inspect
import itertools
import json
import pickle
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _contract import chunk_record
from spanchunk import (
    Chunk,
    Chunker,
    CodeChunker,
    Document,
    HierarchicalChunker,
    HtmlChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
    _core,
)

Corpus = dict[str, list[tuple[str, str]]]


def _documents(corpus: Corpus) -> Iterator[Document]:
    for folder in sorted(corpus):
        for name, text in corpus[folder]:
            yield Document(text, source=name)


def _every_level(chunker: Chunker, document: Document) -> list[Chunk]:
    tree = getattr(chunker, "chunk_tree", chunker.chunk)
    return tree(document)


def assert_same_chunks(first: Chunker, second: Chunker, corpus: Corpus) -> None:
    """Same fingerprint, and the same chunks of every level (ids included) over the corpus."""
    assert first.fingerprint() == second.fingerprint()
    count = 0
    for document in _documents(corpus):
        ours = _every_level(first, document)
        theirs = _every_level(second, document)
        assert [chunk_record(chunk) for chunk in ours] == [chunk_record(c) for c in theirs], (
            document.source
        )
        count += len(ours)
    assert count > 1000  # the whole corpus went through


# --------------------------------------------------------------------------------------------
# One cut, one fingerprint, whatever the class.


def test_parent_child_and_its_hierarchical_twin_share_ids(corpus: Corpus) -> None:
    assert_same_chunks(ParentChildChunker(2000, 400), HierarchicalChunker([2000, 400]), corpus)


def test_markdown_parents_and_their_hierarchical_twin_share_ids(corpus: Corpus) -> None:
    # Markdown parents get Markdown children by default, so the twin names both levels.
    parent_child = ParentChildChunker(parent_chunker="markdown")
    assert_same_chunks(
        parent_child,
        HierarchicalChunker(sizes=[2000, 400], chunkers=["markdown", "markdown"]),
        corpus,
    )
    # Plain children under Markdown parents are another cut.
    plain_children = HierarchicalChunker(sizes=[2000, 400], chunkers=["markdown", None])
    assert plain_children.fingerprint() != parent_child.fingerprint()


def test_one_level_tree_is_its_recursive_chunker(corpus: Corpus) -> None:
    assert_same_chunks(RecursiveChunker(400), HierarchicalChunker([400]), corpus)


def test_levels_given_as_the_defaults_are_the_defaults(corpus: Corpus) -> None:
    default = ParentChildChunker()
    assert_same_chunks(default, ParentChildChunker(child_chunker=RecursiveChunker(400)), corpus)
    explicit = [
        ParentChildChunker(parent_chunker=RecursiveChunker(2000)),
        ParentChildChunker(
            parent_chunker=RecursiveChunker(2000), child_chunker=RecursiveChunker(400)
        ),
        ParentChildChunker(parent_chunker="text", child_chunker="text"),
        HierarchicalChunker(
            chunkers=[RecursiveChunker(2000), RecursiveChunker(400)], sizes=[2000, 400]
        ),
        HierarchicalChunker([2000, 400], chunkers=[None, "text"]),
    ]
    assert {chunker.fingerprint() for chunker in explicit} == {default.fingerprint()}
    markdown = ParentChildChunker(
        parent_chunker=MarkdownChunker(2000), child_chunker=MarkdownChunker(400)
    )
    assert markdown.fingerprint() == ParentChildChunker(parent_chunker="markdown").fingerprint()


def test_defaults_given_by_hand_are_the_defaults() -> None:
    # The Splitter resolves them: equal Splitters, equal fingerprints.
    default = RecursiveChunker(300)
    for unit in ("char", "sentence", "page"):
        resolved = RecursiveChunker(300, unit=unit, separators=_core.default_separators(unit))
        assert resolved.fingerprint() == RecursiveChunker(300, unit=unit).fingerprint()
    assert RecursiveChunker(300, overlap=0).fingerprint() == default.fingerprint()
    assert RecursiveChunker(300, separators=["\n", " "]).fingerprint() == (
        RecursiveChunker(300, separators=[["\n"], [" "]]).fingerprint()
    )


def test_names_never_change_ids(corpus: Corpus) -> None:
    assert_same_chunks(RecursiveChunker(400, name="a"), RecursiveChunker(400), corpus)
    named = ParentChildChunker(
        parent_chunker=RecursiveChunker(2000, name="parents"),
        child_chunker=RecursiveChunker(400, name="children"),
    )
    assert named.fingerprint() == ParentChildChunker().fingerprint()
    tree = HierarchicalChunker([2000, 400], chunkers=[RecursiveChunker(2000, name="top"), None])
    assert tree.fingerprint() == HierarchicalChunker([2000, 400]).fingerprint()


def test_parent_content_never_changes_ids() -> None:
    assert (
        ParentChildChunker(parent_content=True).fingerprint()
        == HierarchicalChunker([2000, 400], parent_content=True).fingerprint()
        == ParentChildChunker().fingerprint()
    )


def test_a_subclass_that_cuts_as_the_built_in_shares_its_ids() -> None:
    class Labelled(RecursiveChunker):
        """Adds a method, cuts as RecursiveChunker does."""

        def label(self) -> str:
            return "labelled"

    assert Labelled(400).fingerprint() == RecursiveChunker(400).fingerprint()
    assert Labelled(400).settings()["type"] != "RecursiveChunker"  # settings still say it


def test_settings_still_name_the_class() -> None:
    assert ParentChildChunker().settings()["type"] == "ParentChildChunker"
    assert HierarchicalChunker([2000, 400]).settings()["type"] == "HierarchicalChunker"


def test_the_fingerprint_is_computed_once() -> None:
    chunker = ParentChildChunker()
    assert chunker.fingerprint() is chunker.fingerprint()
    again = pickle.loads(pickle.dumps(chunker))
    assert again.fingerprint() == chunker.fingerprint()


# --------------------------------------------------------------------------------------------
# What decides the cut decides the fingerprint: a grid of settings.


def _effective(  # noqa: PLR0917 - one argument per setting of the grid
    kind: type[RecursiveChunker],
    chunk_size: int,
    overlap: int | None,
    min_chunk_size: int,
    separators: list[Any] | None,
    keep_separator: Any,
    trim: bool,
    merge: str,
    unit: tuple[str, str | None],
) -> tuple[Any, ...]:
    """The settings of one level as the core takes them, worked out here by hand (not by the
    package): the fingerprint must be a function of this and of nothing else."""
    unit_name, encoding = unit
    if separators is None:
        levels = _core.default_separators(unit_name)
    else:
        levels = [[item] if isinstance(item, str) else list(item) for item in separators]
    return (
        chunk_size,
        overlap or 0,
        min_chunk_size,
        json.dumps(levels),
        "none" if keep_separator is False else keep_separator,
        trim,
        "markdown" if kind is MarkdownChunker else None,
        merge,
        unit_name,
        encoding,
    )


GRID: dict[str, list[Any]] = {
    "kind": [RecursiveChunker, MarkdownChunker],
    "chunk_size": [100, 101],
    "overlap": [None, 0, 10],
    "min_chunk_size": [0, 5],
    "separators": [None, _core.default_separators("char"), ["\n"], [["\n"]], ["\n", " "]],
    "keep_separator": ["end", "start", False],
    "trim": [True, False],
    "merge": ["boundary", "greedy"],
    "unit": [
        ("char", None),
        ("byte", None),
        ("word", None),
        ("sentence", None),
        ("token", "o200k_base"),
        ("token", "cl100k_base"),
    ],
    "name": [None, "named"],
}


def _grid() -> Iterator[tuple[tuple[Any, ...], Chunker]]:
    keys = list(GRID)
    for values in itertools.product(*GRID.values()):
        given = dict(zip(keys, values, strict=True))
        kind, name = given.pop("kind"), given.pop("name")
        unit, encoding = given.pop("unit")
        chunker = kind(**given, unit=unit, encoding=encoding, name=name)
        yield _effective(kind, **given, unit=(unit, encoding)), chunker


def test_fingerprints_follow_the_effective_settings_exactly() -> None:
    by_settings: dict[tuple[Any, ...], set[str]] = {}
    for effective, chunker in _grid():
        by_settings.setdefault(effective, set()).add(chunker.fingerprint())
    # Equal settings (given differently, or under another name): one fingerprint each.
    assert all(len(prints) == 1 for prints in by_settings.values())
    # Different settings: different fingerprints.
    assert len({print_ for prints in by_settings.values() for print_ in prints}) == len(by_settings)
    assert len(by_settings) > 2000


TREES: dict[str, list[Any]] = {
    "sizes": [(300, 100), (300, 101), (301, 100)],
    "overlap": [0, 7],
    "unit": ["char", "byte", "word"],
    "markdown": [False, True],
}


def test_tree_fingerprints_follow_the_settings_of_every_level() -> None:
    prints: dict[tuple[Any, ...], str] = {}
    for sizes, overlap, unit, markdown in itertools.product(*TREES.values()):
        parent_child = ParentChildChunker(
            *sizes,
            child_overlap=overlap,
            unit=unit,
            parent_chunker="markdown" if markdown else None,
        )
        kind = MarkdownChunker if markdown else RecursiveChunker
        levels = [kind(sizes[0], unit=unit), kind(sizes[1], overlap=overlap, unit=unit)]
        tree = HierarchicalChunker(list(sizes), unit=unit, chunkers=levels)
        assert parent_child.fingerprint() == tree.fingerprint()
        prints[sizes, overlap, unit, markdown] = tree.fingerprint()
    assert len(set(prints.values())) == len(prints)
    # A tree is not its top level, nor the same levels under another one.
    assert HierarchicalChunker([300, 100]).fingerprint() != RecursiveChunker(300).fingerprint()
    three = HierarchicalChunker([600, 300, 100])
    assert three.fingerprint() != HierarchicalChunker([300, 100]).fingerprint()


def test_a_tree_used_as_a_level_cuts_at_its_leaves() -> None:
    inner = ParentChildChunker(300, 100)
    outer = HierarchicalChunker([1000], chunkers=[inner])
    assert outer.fingerprint() not in {
        inner.fingerprint(),
        HierarchicalChunker([1000]).fingerprint(),
        RecursiveChunker(100).fingerprint(),
    }
    other = HierarchicalChunker([1000], chunkers=[ParentChildChunker(300, 99)])
    assert other.fingerprint() != outer.fingerprint()


def test_every_argument_of_the_core_splitter_is_in_the_cut() -> None:
    # A new argument of the core's Splitter must reach the fingerprint too.
    arguments = set(inspect.signature(_core.Splitter).parameters)
    arguments = {"tokenizer" if name == "tokenizer_json" else name for name in arguments}
    # The language is in the cut of a code level only, the part of a page in an HTML level's:
    # every other level's cut (and so its chunk ids) reads as it did before there was one.
    # Page markers change metadata alone, never a cut: they are in no cut.
    arguments -= {"pages"}
    assert set(CodeChunker(100)._cuts()[0]) == arguments - {"html_content"}
    assert set(HtmlChunker(100)._cuts()[0]) == arguments - {"language"}
    assert set(RecursiveChunker(100)._cuts()[0]) == arguments - {"language", "html_content"}


def test_length_functions_are_named_in_the_cut() -> None:
    def words(text: str) -> int:
        return len(text.split())

    def spaces(text: str) -> int:
        return text.count(" ")

    counted = RecursiveChunker(10, unit="token", length_function=words)
    assert counted.fingerprint() != RecursiveChunker(10, unit="word").fingerprint()
    other = RecursiveChunker(10, unit="token", length_function=spaces)
    assert counted.fingerprint() != other.fingerprint()


# --------------------------------------------------------------------------------------------
# Levels cut in Python: their class and their own settings.


class SameSpans(RecursiveChunker):
    """Cuts in Python, returning exactly the built-in's spans: still its own strategy."""

    def split_spans(self, text: str) -> list[tuple[int, int]]:
        return RecursiveChunker(self.chunk_size).split_spans(text)


class Pipes(Chunker):
    """Cuts at ``separator``; its setting is in its settings, so in its fingerprint."""

    def __init__(self, separator: str = "|") -> None:
        self.separator = separator

    def split_text(self, text: str) -> list[str]:
        return text.split(self.separator)

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "separator": self.separator}


class OtherPipes(Pipes):
    """The same settings, another class."""


def test_a_custom_split_spans_is_not_the_built_in() -> None:
    text = "One sentence here. Another one there.\n\nA paragraph. " * 20
    custom, built_in = SameSpans(60), RecursiveChunker(60)
    assert [c.text for c in custom.chunk(text)] == [c.text for c in built_in.chunk(text)]
    assert custom.fingerprint() != built_in.fingerprint()
    assert not {c.id for c in custom.chunk(text)} & {c.id for c in built_in.chunk(text)}
    # Its own settings still count, its name still does not.
    assert SameSpans(61).fingerprint() != custom.fingerprint()
    assert SameSpans(60, name="x").fingerprint() == custom.fingerprint()


def test_a_custom_level_changes_only_with_its_own_settings() -> None:
    def tree(top: Chunker | None, leaves: Chunker | None) -> HierarchicalChunker:
        return HierarchicalChunker([1000, 100], chunkers=[top, leaves])

    default = tree(None, None).fingerprint()
    prints: list[Callable[[], str]] = [
        lambda: tree(Pipes(), None).fingerprint(),
        lambda: tree(Pipes(";"), None).fingerprint(),
        lambda: tree(OtherPipes(), None).fingerprint(),
        lambda: tree(None, Pipes()).fingerprint(),
        lambda: tree(SameSpans(100), None).fingerprint(),
    ]
    values = [make() for make in prints]
    assert len({default, *values}) == len(values) + 1
    assert Pipes().fingerprint() != OtherPipes().fingerprint()
    assert Pipes().fingerprint() == Pipes().fingerprint() != Pipes(";").fingerprint()
    # The same custom level under two classes of tree: one cut.
    assert (
        ParentChildChunker(1000, 100, parent_chunker=Pipes()).fingerprint()
        == tree(Pipes(), None).fingerprint()
    )


@pytest.mark.parametrize("chunker", [Pipes(), ParentChildChunker(parent_chunker=Pipes())])
def test_a_custom_level_ids_follow_its_fingerprint(chunker: Chunker) -> None:
    text = "a|b c d e|f"
    chunks = _every_level(chunker, Document(text, id="doc"))
    again = _every_level(pickle.loads(pickle.dumps(chunker)), Document(text, id="doc"))
    assert [c.id for c in chunks] == [c.id for c in again]
