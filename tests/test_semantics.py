# ruff: noqa: RUF001, RUF003 - CJK full-width punctuation is the point of these strings
"""Exact outputs on small inputs, each derived by hand from /work/brief/SEMANTICS.md.

The reasoning is written next to every case: the separator levels (blank lines, line breaks,
sentence ends, clause marks, spaces, then graphemes, then code points), the recursive split
into atoms (a piece that fits is an atom, otherwise it is cut at the first level with a match),
and the greedy left-to-right merge of atoms, sizes measured on the trimmed text.
"""

from __future__ import annotations

from typing import Any

import pytest
from _contract import (
    check_chunker,
    hierarchical_levels,
    parent_child_levels,
    recursive_levels,
)
from spanchunk import HierarchicalChunker, ParentChildChunker, RecursiveChunker

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
MAN, WOMAN, GIRL, BOY, ZWJ = "\U0001f468", "\U0001f469", "\U0001f467", "\U0001f466", "\u200d"
FLAG = "\U0001f3f3\ufe0f\u200d\U0001f308"
E_ACUTE = "e\u0301"


def run(text: str, **kwargs: Any) -> list[str]:
    """Chunk with RecursiveChunker (overlap 0 unless given), check the contract, return texts."""
    kwargs.setdefault("overlap", 0)
    chunker = RecursiveChunker(**kwargs)
    tree = check_chunker(
        chunker,
        text,
        recursive_levels(kwargs["chunk_size"], kwargs["overlap"]),
        kwargs.get("unit", "char"),
    )
    return [c.text for c in tree]


def char_spans(text: str, **kwargs: Any) -> list[tuple[int, int]]:
    kwargs.setdefault("overlap", 0)
    return [(c.start_char, c.end_char) for c in RecursiveChunker(**kwargs).chunk(text)]


# --- the example of the brief ------------------------------------------------------------


def test_brief_example() -> None:
    # 25 chars > 10: cut at the blank line into "aaaa bbbb\n\n" (9 trimmed, an atom) and
    # "cccc dddd eeee" (14, cut at spaces into "cccc ", "dddd ", "eeee"). Greedy merge:
    # "aaaa bbbb" + "cccc" is 15 > 10; "cccc dddd" is 9, + "eeee" 14 > 10.
    text = "aaaa bbbb\n\ncccc dddd eeee"
    assert run(text, chunk_size=10) == ["aaaa bbbb", "cccc dddd", "eeee"]
    assert char_spans(text, chunk_size=10) == [(0, 9), (11, 20), (21, 25)]


def test_text_that_fits_is_one_trimmed_chunk() -> None:
    assert run("  hello world \n", chunk_size=20) == ["hello world"]
    assert char_spans("  hello world \n", chunk_size=20) == [(2, 13)]


@pytest.mark.parametrize("trim", [True, False])
@pytest.mark.parametrize("text", ["", " ", "\n\n", " \t\r\n\u3000\u0085\x1c "])
def test_blank_text_gives_no_chunks(text: str, trim: bool) -> None:
    assert run(text, chunk_size=5, trim=trim) == []
    assert len(RecursiveChunker(chunk_size=5).spans(text)) == 0
    assert ParentChildChunker(parent_size=10, child_size=5).chunk_tree(text) == []


# --- separator preference ----------------------------------------------------------------


def test_blank_line_is_preferred_over_line_break() -> None:
    # Blank lines first: atoms "aaa\n\n" and "bbb\nccc" (7 <= 8); together 12 > 8.
    # (Cutting at line breaks first would have packed "aaa\n\nbbb" (8) and left "ccc".)
    assert run("aaa\n\nbbb\nccc", chunk_size=8) == ["aaa", "bbb\nccc"]


def test_crlf_blank_line_is_preferred_over_crlf_line_break() -> None:
    # "\r\n\r\n" is a blank line: atoms "aaa\r\n\r\n" and "bbb\r\nccc" (8 <= 10), together 15.
    # (Line breaks first would have packed "aaa\r\n\r\nbbb" (10) and left "ccc".)
    assert run("aaa\r\n\r\nbbb\r\nccc", chunk_size=10) == ["aaa", "bbb\r\nccc"]


def test_line_break_is_preferred_over_sentence_end() -> None:
    # No blank line; line break: atoms "Aa. Bb\n" and "Cc. Dd"; together 13 > 10.
    # (Sentences first would have packed "Aa. Bb\nCc." (10) and left "Dd".)
    assert run("Aa. Bb\nCc. Dd", chunk_size=10) == ["Aa. Bb", "Cc. Dd"]


def test_sentence_end_is_preferred_over_space() -> None:
    # ". " cuts "Aa bb. " | "Cc dd ee" (8 <= 12); together 15 > 12.
    # (Spaces first would have packed "Aa bb. Cc dd" (12) and left "ee".)
    assert run("Aa bb. Cc dd ee", chunk_size=12) == ["Aa bb.", "Cc dd ee"]


def test_clause_mark_is_preferred_over_space() -> None:
    assert run("aa bb, cc dd ee", chunk_size=12) == ["aa bb,", "cc dd ee"]


def test_cjk_sentences_split_at_full_width_marks() -> None:
    # 10 chars > 5; sentence ends 。 and ？ give "我爱你。" (4), "你好吗？" (4), "很好" (2);
    # 4 + 4 > 5 and 4 + 2 > 5, so three chunks.
    text = "我爱你。你好吗？很好"
    assert run(text, chunk_size=5) == ["我爱你。", "你好吗？", "很好"]
    chunks = RecursiveChunker(chunk_size=5, overlap=0).chunk(text)
    assert [(c.start_byte, c.end_byte) for c in chunks] == [(0, 12), (12, 24), (24, 30)]


def test_cjk_clauses_split_at_full_width_comma() -> None:
    assert run("甲乙，丙丁，戊己", chunk_size=4) == ["甲乙，", "丙丁，", "戊己"]


def test_cjk_in_bytes() -> None:
    # Each CJK char is 3 bytes: "你好。" is 9 bytes, the whole text 18 > 12.
    assert run("你好。世界。", chunk_size=12, unit="byte") == ["你好。", "世界。"]
    assert run("你好。世界。", chunk_size=18, unit="byte") == ["你好。世界。"]


# --- keep_separator and trim -------------------------------------------------------------


@pytest.mark.parametrize(
    ("keep", "trim", "expected", "spans"),
    [
        # end: atoms "Aa. ", "Bb. ", "Cc"; "Aa. Bb." is 7 after trim, + "Cc" is 10.
        ("end", True, ["Aa. Bb.", "Cc"], [(0, 7), (8, 10)]),
        # end, untrimmed: "Aa. Bb. " is 8 > 7, so "Aa. " alone, then "Bb. Cc" (6).
        ("end", False, ["Aa. ", "Bb. Cc"], [(0, 4), (4, 10)]),
        # start: atoms "Aa", ". Bb", ". Cc"; "Aa. Bb" is 6, + ". Cc" is 10.
        ("start", True, ["Aa. Bb", ". Cc"], [(0, 6), (6, 10)]),
        ("start", False, ["Aa. Bb", ". Cc"], [(0, 6), (6, 10)]),
        # False: "." stays with the preceding piece, the space never stands at an edge.
        (False, True, ["Aa. Bb.", "Cc"], [(0, 7), (8, 10)]),
        (False, False, ["Aa. Bb.", "Cc"], [(0, 7), (8, 10)]),
    ],
)
def test_keep_separator_on_sentences(
    keep: Any, trim: bool, expected: list[str], spans: list[tuple[int, int]]
) -> None:
    text = "Aa. Bb. Cc"
    assert run(text, chunk_size=7, keep_separator=keep, trim=trim) == expected
    assert char_spans(text, chunk_size=7, keep_separator=keep, trim=trim) == spans


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        # atoms "aaa ", "bbb ", "ccc": "aaa bbb " is exactly 8.
        ("end", ["aaa bbb ", "ccc"]),
        # atoms "aaa", " bbb", " ccc": "aaa bbb" is 7, + " ccc" is 11.
        ("start", ["aaa bbb", " ccc"]),
        # the space separator is whitespace only: it never stands at a chunk edge.
        (False, ["aaa bbb", "ccc"]),
    ],
)
def test_keep_separator_on_spaces_untrimmed(keep: Any, expected: list[str]) -> None:
    assert run("aaa bbb ccc", chunk_size=8, keep_separator=keep, trim=False) == expected


def test_keep_separator_on_spaces_trimmed_is_the_same_for_all() -> None:
    for keep in ("end", "start", False):
        assert run("aaa bbb ccc", chunk_size=8, keep_separator=keep) == ["aaa bbb", "ccc"]


def test_trim_false_keeps_edge_whitespace() -> None:
    assert run("  hello  ", chunk_size=20, trim=False) == ["  hello  "]
    assert run("  hello  ", chunk_size=20, trim=True) == ["hello"]
    assert char_spans("  hello  ", chunk_size=20) == [(2, 7)]


# --- overlap ----------------------------------------------------------------------------


def test_overlap_starts_at_the_earliest_boundary_that_fits() -> None:
    # Atoms "aa ", "bb ", "cc ", "dd ", "ee ", "ff" (boundaries at 3, 6, 9, 12, 15).
    # Chunk 1 is [0, 8) "aa bb cc". Within its last 3 chars the only boundary is 6, and
    # "cc " + "dd " fits: chunk 2 starts at 6, "cc dd ee" [6, 14). Then boundary 12: "ee ff".
    text = "aa bb cc dd ee ff"
    assert run(text, chunk_size=8, overlap=3) == ["aa bb cc", "cc dd ee", "ee ff"]
    assert char_spans(text, chunk_size=8, overlap=3) == [(0, 8), (6, 14), (12, 17)]


def test_overlap_shrinks_to_zero_when_it_does_not_fit_with_the_next_atom() -> None:
    # Chunk 1 "aaaa bb" [0, 7). Boundary 5 is within the last 4 chars, but "bb " + "cccccc"
    # is 9 > 8; the next boundary is past the chunk, so the overlap is 0.
    assert run("aaaa bb cccccc", chunk_size=8, overlap=4) == ["aaaa bb", "cccccc"]


def test_overlap_never_cuts_inside_a_word() -> None:
    # No separator: graphemes only, and overlap uses literal separator boundaries only.
    assert run("abcdefghij", chunk_size=4, overlap=2) == ["abcd", "efgh", "ij"]


def test_overlap_uses_the_finest_separator_boundary() -> None:
    # Atoms (sentence level) "aa bb. ", "cc dd. ", "ee ff". Chunk 1 "aa bb." [0, 6): the
    # earliest separator boundary after its start within its last 8 chars is the space
    # boundary 3, and "bb. cc dd." (10) fits: chunk 2 is [3, 13). Chunk 3: boundaries 7
    # (sentence) and 10 (space) lie in the window; the earliest, 7, gives "cc dd. ee ff" (12).
    text = "aa bb. cc dd. ee ff"
    expected = ["aa bb.", "bb. cc dd.", "cc dd. ee ff"]
    assert run(text, chunk_size=12, overlap=8) == expected
    assert char_spans(text, chunk_size=12, overlap=8) == [(0, 6), (3, 13), (7, 19)]


def test_overlap_starts_strictly_after_the_previous_start() -> None:
    # "ab" [0, 2): the only boundary in its window is its own start, so no overlap; the
    # same for "cdef" [3, 7). A chunk is never repeated whole.
    assert run("ab cdef gh", chunk_size=6, overlap=5) == ["ab", "cdef", "gh"]


def test_zero_overlap_gives_disjoint_chunks() -> None:
    assert run("aa bb cc dd ee ff", chunk_size=8, overlap=0) == ["aa bb cc", "dd ee ff"]


# --- min_chunk_size ----------------------------------------------------------------------


def test_min_chunk_size_joins_a_small_piece_to_the_following_one() -> None:
    # Pieces "aaaa ", "b ", "cccc". Without min: "aaaa b" (6) then "cccc".
    # With min 3: "b " (1) is joined to "cccc" ("b cccc", 6 fits), so the atoms are
    # "aaaa " and "b cccc", which do not fit together.
    assert run("aaaa b cccc", chunk_size=6) == ["aaaa b", "cccc"]
    assert run("aaaa b cccc", chunk_size=6, min_chunk_size=3) == ["aaaa", "b cccc"]


def test_min_chunk_size_joins_a_small_last_piece_to_the_preceding_one() -> None:
    # Pieces "aa ", "bb ", "c". Without min: "aa bb" (5) then "c".
    # With min 2: "c" is last and small: joined to "bb " ("bb c", 4 fits).
    assert run("aa bb c", chunk_size=5) == ["aa bb", "c"]
    assert run("aa bb c", chunk_size=5, min_chunk_size=2) == ["aa", "bb c"]


def test_min_chunk_size_never_breaks_the_size_rule() -> None:
    # "b" is small, but "b cccccc" (8) would not fit 6: it stays alone.
    assert run("aaaaaa b cccccc", chunk_size=6, min_chunk_size=3) == ["aaaaaa", "b", "cccccc"]


# --- units ------------------------------------------------------------------------------


def test_byte_unit_counts_utf8_bytes() -> None:
    # "héllo wörld" is 11 chars but 13 bytes.
    assert run("héllo wörld", chunk_size=11) == ["héllo wörld"]
    assert run("héllo wörld", chunk_size=11, unit="byte") == ["héllo", "wörld"]
    chunks = RecursiveChunker(chunk_size=11, overlap=0, unit="byte").chunk("héllo wörld")
    assert [(c.start_char, c.end_char) for c in chunks] == [(0, 5), (6, 11)]
    assert [(c.start_byte, c.end_byte) for c in chunks] == [(0, 6), (7, 13)]


def test_byte_offsets_after_a_bom_and_emoji() -> None:
    text = "\ufeffA\U0001f44d b"  # BOM 3 bytes, A 1, thumbs up 4, space 1, b 1
    chunks = RecursiveChunker(chunk_size=3, overlap=0).chunk(text)
    # The BOM is blank (invisible): trimmed off the first chunk, counted in the offsets.
    assert [c.text for c in chunks] == ["A\U0001f44d", "b"]
    assert [(c.start_byte, c.end_byte) for c in chunks] == [(3, 8), (9, 10)]


# --- words and graphemes larger than the size ----------------------------------------------


def test_word_longer_than_chunk_size_is_cut_between_graphemes() -> None:
    assert run("abcdefghij", chunk_size=4) == ["abcd", "efgh", "ij"]
    # "xy " is an atom; "abcdefghij" does not fit and is packed into grapheme runs.
    assert run("xy abcdefghij", chunk_size=4) == ["xy", "abcd", "efgh", "ij"]
    # "abcdefgh " is cut into runs "abcde", "fgh "; "fgh yo" (6) does not fit 5.
    assert run("hi abcdefgh yo", chunk_size=5) == ["hi", "abcde", "fgh", "yo"]


def test_combining_marks_stay_with_their_base() -> None:
    text = E_ACUTE * 3  # three graphemes of two code points
    assert run(text, chunk_size=4) == [E_ACUTE * 2, E_ACUTE]
    assert run(text, chunk_size=3) == [E_ACUTE, E_ACUTE, E_ACUTE]
    assert run(text, chunk_size=4, unit="byte") == [E_ACUTE, E_ACUTE, E_ACUTE]  # 3 bytes each
    assert run(text, chunk_size=6, unit="byte") == [E_ACUTE * 2, E_ACUTE]


def test_a_grapheme_that_fits_is_never_cut() -> None:
    # Graphemes a, b, FAMILY (7 code points), c, d: runs "ab", FAMILY, "cd".
    assert run("ab" + FAMILY + "cd", chunk_size=7) == ["ab", FAMILY, "cd"]


def test_one_grapheme_longer_than_chunk_size_is_cut_between_code_points() -> None:
    # FAMILY: man ZWJ woman ZWJ girl ZWJ boy: 7 code points, 4 + 3 + 4 + 3 + 4 + 3 + 4 bytes.
    # A ZWJ left at a chunk edge by such a cut joins nothing there: it is blank and trimmed.
    assert run(FAMILY, chunk_size=3) == [MAN + ZWJ + WOMAN, GIRL + ZWJ + BOY]
    assert run(FAMILY, chunk_size=8, unit="byte") == [MAN, WOMAN, GIRL, BOY]
    assert run(FAMILY, chunk_size=4, unit="byte") == [MAN, WOMAN, GIRL, BOY]
    # The rainbow flag: white flag, VS16 (content: it makes the flag an emoji), ZWJ, rainbow.
    assert run(FLAG, chunk_size=2) == [FLAG[:2], FLAG[3:]]


def test_a_code_point_is_never_cut_in_bytes() -> None:
    # 4-byte code points with a 5-byte budget: one per chunk, never a partial sequence.
    text = "\U0001f600" * 3
    chunks = RecursiveChunker(chunk_size=5, overlap=0, unit="byte").chunk(text)
    assert [(c.start_byte, c.end_byte) for c in chunks] == [(0, 4), (4, 8), (8, 12)]


# --- separators= --------------------------------------------------------------------------


def test_custom_separators_replace_the_defaults() -> None:
    # Levels: "|", then graphemes, then code points (no space level).
    # "aa bb|" is 6 > 5: cut into grapheme runs "aa bb", "|"; then "|" + "cc" fits.
    assert run("aa bb|cc", chunk_size=5, separators=["|"]) == ["aa bb", "|cc"]
    # "ab|", "cd|" and "ef gh" (fits, never cut at its space).
    assert run("ab|cd|ef gh", chunk_size=5, separators=["|"]) == ["ab|", "cd|", "ef gh"]


def test_custom_separator_level_with_alternatives() -> None:
    assert run("ab|cd#ef", chunk_size=3, separators=[["|", "#"]]) == ["ab|", "cd#", "ef"]


def test_custom_separator_alternatives_as_a_tuple() -> None:
    assert run("ab|cd#ef", chunk_size=3, separators=[("|", "#")]) == ["ab|", "cd#", "ef"]
    assert run("ab|cd#ef", chunk_size=3, separators=("#", "|")) == ["ab|", "cd#", "ef"]


def test_custom_separators_coarsest_first() -> None:
    # Level "#" first: "a|b#" (4) and "c|d" (3) are atoms; together 7 > 5.
    assert run("a|b#c|d", chunk_size=5, separators=["#", "|"]) == ["a|b#", "c|d"]
    # Level "|" first: atoms "a|", "b#c|", "d"; "a|" + "b#c|" is 6 > 5, so "a|" alone,
    # then "b#c|" + "d" is 5.
    assert run("a|b#c|d", chunk_size=5, separators=["|", "#"]) == ["a|", "b#c|d"]


# --- levels -------------------------------------------------------------------------------


def test_parent_child_exact_tree() -> None:
    # Parents at 20: "aaaa bbbb" and "cccc dddd eeee" (25 > 20 together).
    # Children at 10: the first parent fits (one child, same span); the second is cut.
    text = "aaaa bbbb\n\ncccc dddd eeee"
    chunker = ParentChildChunker(parent_size=20, child_size=10, child_overlap=0)
    tree = check_chunker(chunker, text, parent_child_levels(20, 10, 0), "char")
    parents = [c for c in tree if c.level == 1]
    children = [c for c in tree if c.level == 0]
    assert [(p.start_char, p.end_char) for p in parents] == [(0, 9), (11, 25)]
    assert [(c.start_char, c.end_char) for c in children] == [(0, 9), (11, 20), (21, 25)]
    assert [c.parent_id for c in children] == [parents[0].id, parents[1].id, parents[1].id]
    assert parents[0].child_ids == (children[0].id,)
    assert parents[1].child_ids == (children[1].id, children[2].id)
    assert [c.index for c in children] == [0, 1, 2]
    spans = chunker.spans(text)
    assert spans["parent"].tolist() == [-1, -1, 0, 1, 1]
    assert spans["level"].tolist() == [1, 1, 0, 0, 0]


def test_child_overlap_never_crosses_a_parent() -> None:
    # Parents at 20: "aa bb cc dd ee ff" (17) and "gg hh" after the blank line.
    # Children at 8, overlap 3, inside the first parent as in the overlap test above; the
    # second parent's only child does not reach back into the first.
    text = "aa bb cc dd ee ff\n\ngg hh"
    chunker = ParentChildChunker(parent_size=20, child_size=8, child_overlap=3)
    tree = check_chunker(chunker, text, parent_child_levels(20, 8, 3), "char")
    assert [c.text for c in tree if c.level == 1] == ["aa bb cc dd ee ff", "gg hh"]
    assert [c.text for c in tree if c.level == 0] == ["aa bb cc", "cc dd ee", "ee ff", "gg hh"]


def test_hierarchical_exact_tree() -> None:
    text = "aaaa bbbb\n\ncccc dddd eeee"
    chunker = HierarchicalChunker(sizes=[20, 10, 5], overlap=0)
    tree = check_chunker(chunker, text, hierarchical_levels([20, 10, 5]), "char")
    by_level = {
        level: [(c.start_char, c.end_char) for c in tree if c.level == level] for level in (2, 1, 0)
    }
    assert by_level[2] == [(0, 9), (11, 25)]
    assert by_level[1] == [(0, 9), (11, 20), (21, 25)]
    assert by_level[0] == [(0, 4), (5, 9), (11, 15), (16, 20), (21, 25)]
    assert [c.level for c in tree] == [2, 2, 1, 1, 1, 0, 0, 0, 0, 0]


def test_parent_shorter_than_child_size_gets_one_child_with_its_span() -> None:
    chunker = ParentChildChunker(parent_size=50, child_size=30, child_overlap=0)
    tree = chunker.chunk_tree("  short text  ")
    assert [(c.level, c.start_char, c.end_char) for c in tree] == [(1, 2, 12), (0, 2, 12)]
