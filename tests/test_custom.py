"""Custom strategies: Chunker subclasses overriding split_text or split_spans."""

from __future__ import annotations

import pytest
from _contract import LevelSpec, check_chunks, check_spans, parent_child_levels
from spanchunk import (
    Chunk,
    Chunker,
    ChunkingError,
    CodeChunker,
    HierarchicalChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
)
from spanchunk.chunkers import hooks
from spanchunk.chunkers.base import Documents

BIG = 10**9  # a custom strategy has no size of its own


class PipeChunker(Chunker):
    """Split on "|" (the separator is dropped; blank pieces are left out)."""

    def split_text(self, text: str) -> list[str]:
        return [piece.strip() for piece in text.split("|") if piece.strip()]


class ThreeCharChunker(Chunker):
    """Fixed windows of three code points, as char spans."""

    def split_spans(self, text: str) -> list[tuple[int, int]]:
        return [(start, min(start + 3, len(text))) for start in range(0, len(text), 3)]


class NotASubstringChunker(Chunker):
    def split_text(self, text: str) -> list[str]:
        return ["zzz"]


class OutOfOrderChunker(Chunker):
    def split_text(self, text: str) -> list[str]:
        return ["b", "a"]


def texts_and_spans(chunks: list) -> list[tuple[str, int, int]]:
    return [(c.text, c.start_char, c.end_char) for c in chunks]


def test_split_text_alone() -> None:
    text = "alpha|beta gamma| |délta 漢字|"
    chunks = PipeChunker().chunk(text)
    assert texts_and_spans(chunks) == [
        ("alpha", 0, 5),
        ("beta gamma", 6, 16),
        ("délta 漢字", 19, 27),
    ]
    assert [(c.start_byte, c.end_byte) for c in chunks] == [(0, 5), (6, 16), (19, 32)]
    assert [c.index for c in chunks] == [0, 1, 2]
    # The strategy drops its "|" separators: its choice, so no coverage check here.
    check_chunks(text, chunks, {0: LevelSpec(BIG, 0)}, "char", coverage=False)
    check_spans(text, PipeChunker().spans(text), {0: LevelSpec(BIG, 0)}, "char", coverage=False)


def test_split_text_finds_repeated_pieces_walking_forward() -> None:
    text = "same|same|same"
    chunks = PipeChunker().chunk(text)
    assert texts_and_spans(chunks) == [("same", 0, 4), ("same", 5, 9), ("same", 10, 14)]
    assert len({c.id for c in chunks}) == 3


def test_split_spans_alone() -> None:
    text = "abcdefgh"
    chunks = ThreeCharChunker().chunk(text)
    assert texts_and_spans(chunks) == [("abc", 0, 3), ("def", 3, 6), ("gh", 6, 8)]
    check_chunks(text, chunks, {0: LevelSpec(3, 0)}, "char")


def test_custom_parent_chunker() -> None:
    # Parents from "|"; children at 5 chars inside each parent, by the default engine.
    text = "aaaa bbbb cccc|dd|eeee ffff"
    chunker = ParentChildChunker(parent_chunker=PipeChunker(), child_size=5, child_overlap=0)
    tree = chunker.chunk_tree(text)
    check_chunks(text, tree, {1: LevelSpec(BIG, 0), 0: LevelSpec(5, 0)}, "char", coverage=False)
    assert texts_and_spans([c for c in tree if c.level == 1]) == [
        ("aaaa bbbb cccc", 0, 14),
        ("dd", 15, 17),
        ("eeee ffff", 18, 27),
    ]
    assert texts_and_spans([c for c in tree if c.level == 0]) == [
        ("aaaa", 0, 4),
        ("bbbb", 5, 9),
        ("cccc", 10, 14),
        ("dd", 15, 17),
        ("eeee", 18, 22),
        ("ffff", 23, 27),
    ]
    children = chunker.chunk(text)
    assert [chunker.parent_of(c).text for c in children] == [
        "aaaa bbbb cccc",
        "aaaa bbbb cccc",
        "aaaa bbbb cccc",
        "dd",
        "eeee ffff",
        "eeee ffff",
    ]


def test_custom_child_chunker() -> None:
    # One parent (the text fits 2000); children from "|", with document offsets.
    text = "ab|cd ef|gh"
    chunker = ParentChildChunker(child_chunker=PipeChunker())
    tree = chunker.chunk_tree(text)
    check_chunks(text, tree, {1: LevelSpec(2000, 0), 0: LevelSpec(BIG, 0)}, "char", coverage=False)
    assert texts_and_spans(tree) == [
        ("ab|cd ef|gh", 0, 11),
        ("ab", 0, 2),
        ("cd ef", 3, 8),
        ("gh", 9, 11),
    ]


def test_custom_child_chunker_offsets_are_relative_to_the_document() -> None:
    # Two parents; the span chunker's windows restart at each parent's start.
    text = "abcdefgh\n\nijklmnop"
    chunker = ParentChildChunker(
        parent_chunker=RecursiveChunker(chunk_size=10, overlap=0),
        child_chunker=ThreeCharChunker(),
    )
    tree = chunker.chunk_tree(text)
    check_chunks(text, tree, parent_child_levels(10, 3, 0), "char")
    assert texts_and_spans([c for c in tree if c.level == 0]) == [
        ("abc", 0, 3),
        ("def", 3, 6),
        ("gh", 6, 8),
        ("ijk", 10, 13),
        ("lmn", 13, 16),
        ("op", 16, 18),
    ]


def test_custom_span_chunker_as_parent() -> None:
    text = "abcdefgh"
    chunker = ParentChildChunker(parent_chunker=ThreeCharChunker(), child_size=2)
    tree = chunker.chunk_tree(text)
    check_chunks(text, tree, parent_child_levels(3, 2, 0), "char")
    assert texts_and_spans([c for c in tree if c.level == 0]) == [
        ("ab", 0, 2),
        ("c", 2, 3),
        ("de", 3, 5),
        ("f", 5, 6),
        ("gh", 6, 8),
    ]


def test_piece_not_in_the_text_is_a_chunking_error() -> None:
    with pytest.raises(ChunkingError):
        NotASubstringChunker().chunk("abc")
    with pytest.raises(ChunkingError):
        OutOfOrderChunker().chunk("ab")
    with pytest.raises(ChunkingError):
        ParentChildChunker(child_chunker=NotASubstringChunker()).chunk("abc def")
    with pytest.raises(ChunkingError):
        ParentChildChunker(parent_chunker=NotASubstringChunker(), child_size=5).chunk("abc")


def test_custom_chunker_has_the_common_api() -> None:
    chunker = PipeChunker()
    assert [c.text for c in chunker.chunk_text("x|y")] == ["x", "y"]
    assert [c.text for c in chunker.chunk(["x|y", "z"])] == ["x", "y", "z"]
    assert [c.text for c in chunker.chunk_many(["x|y", "z"], workers=2)] == ["x", "y", "z"]
    many = chunker.spans_many(["x|y", "z"])
    assert [len(s) for s in many] == [2, 1]
    assert isinstance(chunker.settings(), dict)
    assert len(chunker.fingerprint()) == 16


class NothingChunker(Chunker):
    """A strategy that finds nothing to cut."""

    def split_spans(self, text: str) -> list[tuple[int, int]]:
        return []


def test_custom_child_that_returns_nothing_gives_the_parent_one_child() -> None:
    text = "one two three four. five six seven eight."
    chunker = ParentChildChunker(
        parent_chunker=RecursiveChunker(20), child_chunker=NothingChunker()
    )
    tree = chunker.chunk_tree(text)
    parents = [c for c in tree if c.level == 1]
    children = [c for c in tree if c.level == 0]
    assert len(parents) == len(children) > 1
    for parent, child in zip(parents, children, strict=True):
        assert (child.start_char, child.end_char, child.text) == (
            parent.start_char,
            parent.end_char,
            parent.text,
        )
        assert child.parent_id == parent.id
        assert parent.child_ids == (child.id,)


# ------------------------------------------------------------ hooks: what an override changes


class SplitLinesMixin:
    """A strategy hook from a class outside the chunkers: still an override."""

    def split_text(self, text: str) -> list[str]:
        return text.splitlines()


class MixedLines(SplitLinesMixin, RecursiveChunker):
    pass


class CountingTree(ParentChildChunker):
    """Overrides ``chunk`` only: ``chunk_tree`` and the cut stay the built-in's."""

    calls = 0

    def chunk(self, documents: Documents) -> list[Chunk]:
        type(self).calls += 1
        return super().chunk(documents)


class OwnTree(ParentChildChunker):
    """Overrides ``chunk_tree``, the hook ``HierarchicalChunker`` adds."""

    def chunk_tree(self, documents: Documents) -> list[Chunk]:
        return super().chunk_tree(documents)


def test_the_hooks_a_class_overrides_are_recorded_when_it_is_made() -> None:
    built_in = [Chunker, RecursiveChunker, MarkdownChunker, CodeChunker]
    built_in += [HierarchicalChunker, ParentChildChunker]  # chunk_tree is their own hook
    for kind in built_in:
        assert kind.overridden_hooks == frozenset(), kind
    assert PipeChunker.overridden_hooks == {"split_text"}
    assert ThreeCharChunker.overridden_hooks == {"split_spans"}
    assert type("MorePipes", (PipeChunker,), {}).overridden_hooks == {"split_text"}
    assert MixedLines.overridden_hooks == {"split_text"}
    assert CountingTree.overridden_hooks == {"chunk"}
    assert OwnTree.overridden_hooks == {"chunk_tree"}

    # Assigned after the class is made: not an override (the class's record is fixed).
    late = type("Late", (RecursiveChunker,), {})
    late.split_text = SplitLinesMixin.split_text  # type: ignore[method-assign]
    assert late.overridden_hooks == frozenset()
    assert hooks.levels(late(10)) != [late]


def test_a_class_adding_a_hook_defines_it() -> None:
    with pytest.raises(TypeError, match=r"names hooks it does not define: \['cut'\]"):
        type("NoCut", (Chunker,), {}, hooks=("cut",))


def test_overriding_a_strategy_hook_makes_a_strategy_cut_in_python() -> None:
    chunker = MixedLines(10)
    assert hooks.levels(chunker) == [chunker]
    text = "first line\nsecond, longer line"
    assert [c.text for c in chunker.chunk(text)] == ["first line", "second, longer line"]
    assert not hooks.cuts_in_core(chunker, "chunk")


def test_an_override_keeps_the_fast_path_of_what_it_did_not_override() -> None:
    text = "One sentence here. Another one there.\n\nA paragraph. " * 20
    counting, own = CountingTree(200, 50), OwnTree(200, 50)
    assert hooks.overrides(counting, "chunk") and not hooks.overrides(counting, "chunk_tree")
    assert not hooks.cuts_in_core(counting, "chunk") and hooks.cuts_in_core(counting, "chunk_tree")
    assert hooks.cuts_in_core(own, "chunk") and not hooks.cuts_in_core(own, "chunk_tree")
    # Only a hook of the class: a one-level chunker has no chunk_tree.
    assert not hooks.cuts_in_core(RecursiveChunker(50), "chunk_tree")
    plain = ParentChildChunker(200, 50)
    spans = [(c.level, c.start_char, c.end_char) for c in plain.chunk_tree(text)]
    for chunker in (counting, own):
        assert [(c.level, c.start_char, c.end_char) for c in chunker.chunk_tree(text)] == spans
    before = CountingTree.calls
    assert len(counting.chunk(text)) == len(plain.chunk(text))
    assert CountingTree.calls == before + 1
