"""Invisible format chars carry no content: a piece made only of them (and whitespace) is no
chunk, at any level and with any setting, and trimming strips them from chunk edges. The set
(README.md, "The contract"): U+00AD, U+061C, U+180E, U+200B..U+200F, U+202A..U+202E,
U+2060..U+2064, U+2066..U+206F and U+FEFF, besides whitespace as str.isspace sees it.
Variation selectors and tag chars are content (they change the emoji or flag before them)."""

from __future__ import annotations

import pytest
from _contract import INVISIBLE, check_spans, parent_child_levels
from spanchunk import Chunker, HierarchicalChunker, ParentChildChunker, RecursiveChunker, _core
from spanchunk.chunkers.spans import is_blank

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"


def test_the_blank_set_is_the_documented_one() -> None:
    whitespace = {chr(cp) for cp in range(0x110000) if chr(cp).isspace()}
    assert set(_core.BLANK_CHARS) == whitespace | {chr(cp) for cp in INVISIBLE}
    assert is_blank("") and is_blank("\ufeff\u200b\u200d \n\u2060")
    assert not is_blank("\u200da") and not is_blank("\ufe0f") and not is_blank("\U000e007f")


@pytest.mark.parametrize(
    "text", ["\ufeff", "\u200b" * 50, "\u200d", "\u2060\ufeff", " \u200b\n\u200c\t\u00ad "]
)
def test_only_invisible_text_gives_no_chunks(text: str) -> None:
    assert RecursiveChunker(chunk_size=10).chunk_text(text) == []
    assert RecursiveChunker(chunk_size=10, trim=False).chunk_text(text) == []
    assert RecursiveChunker(chunk_size=4, unit="byte").chunk_text(text) == []
    assert len(ParentChildChunker(20, 5).spans(text)) == 0
    assert HierarchicalChunker([20, 10, 5], overlap=0).chunk(text) == []


def test_invisible_pieces_between_paragraphs_are_no_chunks() -> None:
    text = "\ufeffHello world.\n\n\u200b\u200b\n\nNext para.\n\n\u200d\n\nEnd\u200b"
    chunks = RecursiveChunker(chunk_size=12).chunk_text(text)
    assert [chunk.text for chunk in chunks] == ["Hello world.", "Next para.", "End"]
    # Offsets count the byte order mark: the first chunk starts after it.
    assert (chunks[0].start_char, chunks[0].start_byte) == (1, 3)
    with_overlap = RecursiveChunker(chunk_size=12, overlap=4).chunk_text(text)
    assert all(not is_blank(chunk.text) for chunk in with_overlap)


def test_trim_false_keeps_invisible_edges_but_drops_blank_pieces() -> None:
    text = "\u200bab cd\u200b\n\n\u200b\u200b"
    chunks = RecursiveChunker(chunk_size=9, trim=False).chunk_text(text)
    assert [chunk.text for chunk in chunks] == ["\u200bab cd\u200b\n\n"]


def test_joiners_inside_text_stay() -> None:
    text = f"{FAMILY} and\u200dthe heart \u2764\ufe0f"
    [chunk] = RecursiveChunker(chunk_size=100).chunk_text(text)
    assert chunk.text == text


def test_parent_child_spans_skip_invisible_parents_and_children() -> None:
    text = ("Visible words here. " * 5 + "\n\n" + "\u200b" * 30 + "\n\n") * 4
    spans = ParentChildChunker(120, 30).spans(text)
    for row in spans:
        assert not is_blank(text[row["start_char"] : row["end_char"]])
    check_spans(text, spans, parent_child_levels(120, 30), "char")


def test_custom_strategy_blank_pieces_are_skipped() -> None:
    class Bars(Chunker):
        def split_text(self, text: str) -> list[str]:
            return text.split("|")

    chunks = Bars().chunk_text("one|\u200b\u200b|\ufeff|two")
    assert [chunk.text for chunk in chunks] == ["one", "two"]
