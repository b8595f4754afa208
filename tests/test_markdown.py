"""Markdown-aware chunking: MarkdownChunker, Markdown parents, heading paths, the CLI.

Exact outputs are pinned on small documents (worked out by hand); heading paths are checked
against an independent CommonMark parser (markdown-it-py) on the small documents and on the
whole Markdown corpus; the contract runs over the corpus with Markdown parents.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _contract import (
    TextInfo,
    check_chunker,
    hierarchical_levels,
    parent_child_levels,
    recursive_levels,
)
from _strategies import parent_child_settings, recursive_settings, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from spanchunk import (
    Chunk,
    HierarchicalChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
)
from spanchunk.cli import main

MARKDOWN_FOLDERS = ["markdown-en", "markdown-zh"]
UNITS = ["char", "byte"]

NESTED = (
    "# Book\n\nPreface.\n\n## One\n\nFirst chapter.\n\n### Detail\n\nFine print.\n\n"
    "## Two\n\nSecond chapter.\n"
)
FENCE = "# Real\n\n```sh\n# not a heading\necho hi\n```\n\nAfter the fence.\n"
SETEXT = "Title\n=====\n\nIntro text.\n\nPart\n----\n\nPart text.\n"
FRONT_MATTER = "---\ntitle: Notes\ntags: [a]\n---\n\n# Notes\n\nBody.\n"
BIG_SECTION = (
    "# Big\n\nThe first paragraph is long enough.\n\n- item one\n- item two\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n"
)
EMPTY_SECTION = "# Doc\n\n## Empty\n\n## Full\n\nSome text.\n"
INLINE = "## The `Result` Type\n\nText.\n\n## A *very* [linked](https://x.y) title\n\nMore.\n"

SMALL_DOCUMENTS = [NESTED, FENCE, SETEXT, BIG_SECTION, EMPTY_SECTION, INLINE]


def pieces(text: str, size: int, **settings: Any) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (chunk.text, chunk.metadata["headings"])
        for chunk in MarkdownChunker(size, **settings).chunk(text)
    ]


# ------------------------------------------------------------------------------ exact outputs


def test_nested_headings_whole_document_fits() -> None:
    assert pieces(NESTED, 200) == [(NESTED.strip(), ("Book",))]


def test_nested_headings_sibling_sections_merge_with_their_subsections() -> None:
    assert pieces(NESTED, 50) == [
        ("# Book\n\nPreface.", ("Book",)),
        ("## One\n\nFirst chapter.\n\n### Detail\n\nFine print.", ("Book", "One")),
        ("## Two\n\nSecond chapter.", ("Book", "Two")),
    ]


def test_nested_headings_cut_at_every_level() -> None:
    assert pieces(NESTED, 30) == [
        ("# Book\n\nPreface.", ("Book",)),
        ("## One\n\nFirst chapter.", ("Book", "One")),
        ("### Detail\n\nFine print.", ("Book", "One", "Detail")),
        ("## Two\n\nSecond chapter.", ("Book", "Two")),
    ]


def test_tiny_size_keeps_heading_paths() -> None:
    assert pieces(NESTED, 12) == [
        ("# Book", ("Book",)),
        ("Preface.", ("Book",)),
        ("## One", ("Book", "One")),
        ("First", ("Book", "One")),
        ("chapter.", ("Book", "One")),
        ("### Detail", ("Book", "One", "Detail")),
        ("Fine print.", ("Book", "One", "Detail")),
        ("## Two", ("Book", "Two")),
        ("Second", ("Book", "Two")),
        ("chapter.", ("Book", "Two")),
    ]


def test_hash_in_a_code_fence_is_not_a_heading() -> None:
    fence = "```sh\n# not a heading\necho hi\n```"
    # "# Real\n\n" + the fence is 41 chars: the fence is a block of its own, never cut.
    assert pieces(FENCE, 40) == [
        ("# Real", ("Real",)),
        (fence, ("Real",)),
        ("After the fence.", ("Real",)),
    ]
    assert pieces(FENCE, 41) == [
        ("# Real\n\n" + fence, ("Real",)),
        ("After the fence.", ("Real",)),
    ]


def test_a_fence_larger_than_the_size_is_cut_at_lines() -> None:
    assert pieces(FENCE, 20) == [
        ("# Real\n\n```sh", ("Real",)),
        ("# not a heading", ("Real",)),
        ("echo hi\n```", ("Real",)),
        ("After the fence.", ("Real",)),
    ]


def test_setext_headings() -> None:
    assert pieces(SETEXT, 100) == [(SETEXT.strip(), ("Title",))]
    assert pieces(SETEXT, 25) == [
        ("Title\n=====\n\nIntro text.", ("Title",)),
        ("Part\n----\n\nPart text.", ("Title", "Part")),
    ]


def test_front_matter_is_a_block_not_a_heading() -> None:
    # Read as CommonMark alone, "tags: [a]\n---" would be a setext heading.
    assert pieces(FRONT_MATTER, 100) == [(FRONT_MATTER.strip(), ())]
    assert pieces(FRONT_MATTER, 30) == [
        ("---\ntitle: Notes\ntags: [a]\n---", ()),
        ("# Notes\n\nBody.", ("Notes",)),
    ]


def test_section_larger_than_the_size_is_cut_at_blocks() -> None:
    assert pieces(BIG_SECTION, 40) == [
        ("# Big", ("Big",)),
        ("The first paragraph is long enough.", ("Big",)),
        ("- item one\n- item two", ("Big",)),
        ("| a | b |\n|---|---|\n| 1 | 2 |", ("Big",)),
    ]
    # A table larger than the size is cut between rows, never inside one.
    assert pieces(BIG_SECTION, 20)[-2:] == [
        ("| a | b |\n|---|---|", ("Big",)),
        ("| 1 | 2 |", ("Big",)),
    ]


def test_empty_section() -> None:
    assert pieces(EMPTY_SECTION, 100) == [(EMPTY_SECTION.strip(), ("Doc",))]
    assert pieces(EMPTY_SECTION, 20) == [
        ("# Doc\n\n## Empty", ("Doc",)),
        ("## Full\n\nSome text.", ("Doc", "Full")),
    ]


def test_heading_text_is_plain() -> None:
    assert list(dict.fromkeys(headings for _, headings in pieces(INLINE, 30))) == [
        ("The Result Type",),
        ("A very linked title",),
    ]


def test_a_chunk_never_runs_from_a_section_tail_into_the_next_section() -> None:
    text = "## A\n\naaaa aaaa aaaa.\n\nbbbb bbbb bbbb.\n\n## B\n\ncc.\n"
    # Greedy merging would give "bbbb bbbb bbbb.\n\n## B\n\ncc." (26 chars) after "## A ...".
    assert pieces(text, 30) == [
        ("## A\n\naaaa aaaa aaaa.", ("A",)),
        ("bbbb bbbb bbbb.", ("A",)),
        ("## B\n\ncc.", ("B",)),
    ]


def test_a_chunk_never_holds_only_the_start_of_a_section() -> None:
    text = "# T\n\nIntro.\n\n## S\n\n" + "word " * 10 + "\n"
    # "# T\n\nIntro.\n\n## S" fits 20 chars, but "## S" opens a section that does not.
    assert pieces(text, 20)[:2] == [
        ("# T\n\nIntro.", ("T",)),
        ("## S\n\nword word word", ("T", "S")),
    ]


def test_a_subsection_does_not_merge_into_a_higher_sibling() -> None:
    text = "## A\n\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\n### A1\n\na1.\n\n## B\n\nb.\n"
    # "### A1 ..." and "## B ..." would fit together, but B is not under A.
    assert pieces(text, 30)[-2:] == [("### A1\n\na1.", ("A", "A1")), ("## B\n\nb.", ("B",))]


def test_code_in_a_list_item_stays_whole() -> None:
    text = "# L\n\n- step one:\n\n  ```\n  run --this\n  ```\n- step two\n"
    # The item (38 chars) does not fit: its code block (22 chars) is a piece of its own.
    assert pieces(text, 22) == [
        ("# L\n\n- step one:", ("L",)),
        ("```\n  run --this\n  ```", ("L",)),
        ("- step two", ("L",)),
    ]


def test_spans_are_exact_and_text_is_not_rewritten() -> None:
    text = "\ufeff# Été 😀\r\n\r\nCafé.\r\n\r\n## Ünïcode\r\n\r\n" + "né " * 40
    for unit in UNITS:
        check_chunker(MarkdownChunker(30, unit=unit), text, recursive_levels(30), unit)
    chunks = MarkdownChunker(30).chunk(text)
    # The byte order mark is blank: trimmed off, counted in the offsets.
    assert chunks[0].text.startswith("# Été") and chunks[0].start_char == 1
    assert chunks[-1].metadata["headings"] == ("Été 😀", "Ünïcode")


# ------------------------------------------------------------------------------ parent-child


def test_parent_child_with_markdown_parents() -> None:
    chunker = ParentChildChunker(50, 20, parent_chunker="markdown")
    tree = chunker.chunk_tree(NESTED)
    parents = [chunk for chunk in tree if chunk.level == 1]
    assert [parent.text for parent in parents] == [
        "# Book\n\nPreface.",
        "## One\n\nFirst chapter.\n\n### Detail\n\nFine print.",
        "## Two\n\nSecond chapter.",
    ]
    children = chunker.chunk(NESTED)
    assert [(child.text, child.metadata["headings"]) for child in children] == [
        ("# Book\n\nPreface.", ("Book",)),
        ("## One", ("Book", "One")),
        ("First chapter.", ("Book", "One")),
        ("### Detail", ("Book", "One", "Detail")),
        ("Fine print.", ("Book", "One", "Detail")),
        ("## Two", ("Book", "Two")),
        ("Second chapter.", ("Book", "Two")),
    ]
    assert chunker.parent_of(children[3]) == parents[1]
    assert isinstance(chunker.parent_chunker, MarkdownChunker)
    assert isinstance(chunker.child_chunker, MarkdownChunker)  # by default under Markdown
    plain_children = ParentChildChunker(
        50, 20, parent_chunker="markdown", child_chunker=RecursiveChunker(20)
    )
    assert type(plain_children.child_chunker) is RecursiveChunker
    assert chunker.settings()["parent_chunker"]["type"] == "MarkdownChunker"


def test_markdown_levels_in_a_hierarchy_and_alone_agree_on_spans() -> None:
    chunker = HierarchicalChunker([60, 30, 12], chunkers=["markdown", "markdown", None])
    tree = check_chunker(chunker, NESTED, hierarchical_levels([60, 30, 12]), "char")
    assert {chunk.metadata["headings"] for chunk in tree} >= {("Book", "One", "Detail")}
    top = [chunk.text for chunk in tree if chunk.level == 2]
    assert top == [text for text, _ in pieces(NESTED, 60)]


def test_metadata_keeps_the_document_metadata_and_is_shared_per_path() -> None:
    chunks = MarkdownChunker(12).chunk_text(NESTED, metadata={"lang": "en"})
    assert all(chunk.metadata["lang"] == "en" for chunk in chunks)
    assert chunks[2].metadata is chunks[3].metadata  # both under "One"
    assert chunks[0].metadata["headings"] == ("Book",)
    plain = RecursiveChunker(12).chunk(NESTED)
    assert "headings" not in plain[0].metadata


def test_markdown_chunker_settings_ids_and_pickle() -> None:
    chunker = MarkdownChunker(100)
    assert chunker.settings()["type"] == "MarkdownChunker"
    assert chunker.fingerprint() != RecursiveChunker(100).fingerprint()
    clone = pickle.loads(pickle.dumps(chunker))
    assert [c.id for c in clone.chunk(NESTED)] == [c.id for c in chunker.chunk(NESTED)]
    chunk = chunker.chunk(NESTED)[0]
    assert pickle.loads(pickle.dumps(chunk)).metadata == chunk.metadata
    assert repr(chunker) == "MarkdownChunker(chunk_size=100)"


def test_chunk_many_spans_and_custom_levels_agree() -> None:
    chunker = ParentChildChunker(60, 20, parent_chunker="markdown")
    documents = [NESTED, FENCE, SETEXT, FRONT_MATTER]
    one_by_one = [chunk for text in documents for chunk in chunker.chunk(text)]
    many = chunker.chunk_many(documents, workers=2)
    assert [(c.id, c.metadata) for c in many] == [(c.id, c.metadata) for c in one_by_one]

    class Lines(RecursiveChunker):
        def split_text(self, text: str) -> list[str]:
            return text.splitlines()

    mixed = ParentChildChunker(60, 20, parent_chunker="markdown", child_chunker=Lines(20))
    children = mixed.chunk(NESTED)
    assert children[-1].text == "Second chapter."
    assert children[-1].metadata["headings"] == ("Book", "Two")


def test_bad_level_strings_are_refused() -> None:
    with pytest.raises(TypeError, match="'markdown'"):
        ParentChildChunker(100, 20, parent_chunker="xml")  # type: ignore[arg-type]


# ------------------------------------------------------------ headings, independently computed


_REFERENCE = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def reference_headings(text: str) -> list[tuple[int, int, str]]:
    """(char offset of the heading's line, level, plain text) of every top-level heading,
    by markdown-it-py: a second CommonMark parser, not the one spanchunk uses."""
    line_starts = [0] + [offset + 1 for offset, char in enumerate(text) if char == "\n"]
    # Like spanchunk, read a leading byte order mark as no text (line numbers are unchanged).
    tokens = _REFERENCE.parse(text.removeprefix("\ufeff"))
    headings = []
    for position, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        words = []
        for child in tokens[position + 1].children or []:
            if child.type in ("text", "code_inline"):
                words.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                words.append(" ")
            elif child.type == "image":
                words.append(child.content)
        headings.append((line_starts[token.map[0]], int(token.tag[1]), "".join(words).strip()))
    return headings


def reference_path(headings: list[tuple[int, int, str]], start_char: int) -> tuple[str, ...]:
    stack: list[tuple[int, str]] = []
    for line_start, level, words in headings:
        if line_start > start_char:
            break
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, words))
    return tuple(words for _, words in stack)


def check_heading_paths(text: str, chunks: list[Chunk], name: str = "") -> None:
    headings = reference_headings(text)
    for chunk in chunks:
        expected = reference_path(headings, chunk.start_char)
        assert chunk.metadata["headings"] == expected, (
            f"{name} chunk at char {chunk.start_char} ({chunk.text[:40]!r}): "
            f"{chunk.metadata['headings']} != {expected}"
        )


@pytest.mark.parametrize("size", [12, 30, 60, 500])
@pytest.mark.parametrize("text", SMALL_DOCUMENTS)
def test_heading_paths_match_an_independent_parser(text: str, size: int) -> None:
    chunker = HierarchicalChunker([size * 2, size], chunkers=["markdown", "markdown"])
    check_heading_paths(text, chunker.chunk_tree(text))


@pytest.mark.parametrize("folder", MARKDOWN_FOLDERS)
def test_heading_paths_on_the_corpus_match_an_independent_parser(
    corpus: dict[str, list[tuple[str, str]]], folder: str
) -> None:
    chunker = ParentChildChunker(2000, 400, parent_chunker="markdown")
    headings_seen = chunks_seen = 0
    for name, text in corpus[folder]:
        tree = chunker.chunk_tree(text)
        check_heading_paths(text, tree, name)
        headings_seen += sum(1 for chunk in tree if chunk.metadata["headings"])
        chunks_seen += len(tree)
    # Nearly every chunk is under a heading: the paths compared are real ones, not empty.
    assert headings_seen > max(200, 0.95 * chunks_seen)


# ----------------------------------------------------------------------------- the contract

CONFIGS: dict[str, tuple[Callable[[str], Any], Callable[[], dict]]] = {
    "markdown-parents-2000-400": (
        lambda unit: ParentChildChunker(2000, 400, parent_chunker="markdown", unit=unit),
        lambda: parent_child_levels(2000, 400, 0),
    ),
    "markdown-parents-2000-400-overlap-100": (
        lambda unit: ParentChildChunker(
            2000, 400, child_overlap=100, parent_chunker="markdown", unit=unit
        ),
        lambda: parent_child_levels(2000, 400, 100),
    ),
    "markdown-hierarchy-2048-512-128": (
        lambda unit: HierarchicalChunker(
            [2048, 512, 128], unit=unit, chunkers=["markdown", "markdown", None]
        ),
        lambda: hierarchical_levels([2048, 512, 128], 0),
    ),
    "markdown-alone-300-overlap-50": (
        lambda unit: MarkdownChunker(300, overlap=50, unit=unit),
        lambda: recursive_levels(300, 50),
    ),
    "markdown-parents-tiny-40-10": (
        lambda unit: ParentChildChunker(40, 10, parent_chunker="markdown", unit=unit),
        lambda: parent_child_levels(40, 10, 0),
    ),
}


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("folder", MARKDOWN_FOLDERS)
def test_markdown_corpus_keeps_the_contract(
    corpus: dict[str, list[tuple[str, str]]], folder: str, config: str, unit: str
) -> None:
    make, spec = CONFIGS[config]
    for name, text in corpus[folder]:
        try:
            tree = check_chunker(make(unit), text, spec(), unit, info=TextInfo(text))
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error
        assert tree, f"{name}: no chunks"
        assert all("headings" in chunk.metadata for chunk in tree)


def test_markdown_parents_are_sections_on_the_corpus(
    corpus: dict[str, list[tuple[str, str]]],
) -> None:
    # A parent that holds a heading below its first line holds that heading's whole section:
    # it ends where the section ends (at the next heading of the same or a higher level).
    chunker = MarkdownChunker(2000)
    for name, text in corpus["markdown-en"]:
        headings = reference_headings(text)
        starts = [start for start, _, _ in headings]
        for chunk in chunker.chunk(text):
            inside = [
                (start, level)
                for start, level, _ in headings
                if chunk.start_char < start < chunk.end_char
            ]
            for start, level in inside:
                following = [s for s, lv, _ in headings if s > start and lv <= level]
                section_end = following[0] if following else len(text)
                assert text[chunk.end_char : section_end].strip() == "" or (
                    section_end <= chunk.end_char
                ), f"{name}: chunk at {chunk.start_char} ends inside the section at {start}"
            assert chunk.start_char in starts or not inside or chunk.start_char == 0, name


# ------------------------------------------------------------------------------------- CLI


def test_cli_reads_markdown_files_as_markdown(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(NESTED, encoding="utf-8")
    (tmp_path / "notes.txt").write_text(NESTED, encoding="utf-8")
    for fmt, expected_md, expected_txt in [
        ("auto", True, False),
        ("markdown", True, True),
        ("text", False, False),
    ]:
        out = tmp_path / f"{fmt}.jsonl"
        assert main(["chunk", str(tmp_path / "notes.md"), str(tmp_path / "notes.txt"),
                     "--parent-size", "50", "--child-size", "20", "--format", fmt,
                     "-o", str(out)]) == 0  # fmt: skip
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        by_file = {
            suffix: [r for r in records if r["source"].endswith(suffix)]
            for suffix in (".md", ".txt")
        }
        assert all(("headings" in r) is expected_md for r in by_file[".md"]), fmt
        assert all(("headings" in r) is expected_txt for r in by_file[".txt"]), fmt
        if expected_md:
            assert by_file[".md"][0]["headings"] == ["Book"]
            parents = [r["text"] for r in by_file[".md"] if r["level"] == 1]
            assert parents[1] == "## One\n\nFirst chapter.\n\n### Detail\n\nFine print."


# ------------------------------------------------------------------------------- properties

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Markdown building blocks, each ending a line.
MARKDOWN_FRAGMENTS = [
    "# Top\n",
    "## Sub `code` *em*\n",
    "### Deep\n",
    "#### Four\n##### Five\n###### Six\n",
    "Setext one\n===\n",
    "Setext two\n---\n",
    "\n",
    "\n\n",
    "A paragraph with words. And a second sentence, with a clause.\n",
    "```\n# fenced, not a heading\n\n\ncode\n```\n",
    "~~~python\nx = 1\n~~~\n",
    "    indented code\n",
    "- item\n- item two\n  - nested\n",
    "1. first\n2. second\n",
    "> quoted\n> # quoted heading\n",
    # Closed by a blank line: which lines continue a table is where GFM readers differ.
    "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n",
    "***\n",
    "<div>\nhtml block\n</div>\n",
    "[^1]: a footnote\n",
    "漢字の段落。句読点、そして。\n",
    "Crlf line\r\n\r\n",
    "#not-a-heading\n",
    "  ## indented heading\n",
]
_markdown_piece = st.sampled_from(MARKDOWN_FRAGMENTS)
#: Markdown documents, clean (for comparing parsers: no footnotes, which markdown-it-py's
#: commonmark preset does not read) and mixed with hostile text.
clean_markdown = st.lists(
    st.sampled_from([piece for piece in MARKDOWN_FRAGMENTS if not piece.startswith("[^")]),
    max_size=30,
).map("".join)
hostile_markdown = st.one_of(
    st.lists(st.one_of(_markdown_piece, _markdown_piece, texts), max_size=30).map("".join),
    st.builds(lambda body: "---\ntitle: x\n---\n" + body, clean_markdown),
)


@PROPERTY
@given(text=hostile_markdown, kwargs=recursive_settings())
def test_markdown_chunker_keeps_the_contract(text: str, kwargs: dict[str, Any]) -> None:
    chunker = MarkdownChunker(**kwargs)
    spec = recursive_levels(kwargs["chunk_size"], kwargs["overlap"])
    check_chunker(chunker, text, spec, kwargs["unit"])


@PROPERTY
@given(text=hostile_markdown, kwargs=parent_child_settings())
def test_markdown_parents_keep_the_contract(text: str, kwargs: dict[str, Any]) -> None:
    chunker = ParentChildChunker(**kwargs, parent_chunker="markdown")
    spec = parent_child_levels(kwargs["parent_size"], kwargs["child_size"], kwargs["child_overlap"])
    tree = check_chunker(chunker, text, spec, kwargs["unit"])
    assert all("headings" in chunk.metadata for chunk in tree)


@PROPERTY
@given(text=clean_markdown, size=st.integers(1, 200))
def test_heading_paths_match_an_independent_parser_on_generated_documents(
    text: str, size: int
) -> None:
    check_heading_paths(text, MarkdownChunker(size).chunk(text))


# ------------------------------------------------------------------------------- leads


def test_a_heading_starts_the_chunk_of_its_sub_sections() -> None:
    text = "# 0.22.0\n\n### Added\n\n- one item\n- two items\n- three items\n"
    # "### Added" and its list (48 chars) fit alone, not after "# 0.22.0": the list is cut
    # between its items, so that its first one joins both headings.
    assert pieces(text, 40) == [
        ("# 0.22.0\n\n### Added\n\n- one item", ("0.22.0",)),
        ("- two items\n- three items", ("0.22.0", "Added")),
    ]


def test_a_heading_takes_the_first_lines_of_a_paragraph_that_fits_alone() -> None:
    text = "## FAQ\n\nSmall chunks are searched;\ntheir parents are read.\n"
    assert pieces(text, 40) == [
        ("## FAQ\n\nSmall chunks are searched;", ("FAQ",)),
        ("their parents are read.", ("FAQ",)),
    ]


def test_where_the_size_does_not_allow_a_heading_stays_alone() -> None:
    # One line: a pull never cuts inside a line.
    text = "## FAQ\n\nSmall chunks are searched, parents read.\n"
    assert pieces(text, 40) == [
        ("## FAQ", ("FAQ",)),
        ("Small chunks are searched, parents read.", ("FAQ",)),
    ]
    # A code block that fits is never cut, not even for its heading.
    fence = "## Run\n\n```\nmake build\nmake test\n```\n"
    assert pieces(fence, 30) == [
        ("## Run", ("Run",)),
        ("```\nmake build\nmake test\n```", ("Run",)),
    ]


WORDS = st.text(alphabet="abcdefgh", min_size=1, max_size=9)
LINES = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)
PARAGRAPHS = st.lists(LINES, min_size=1, max_size=4).map("\n".join)
HEADINGS = st.tuples(st.integers(1, 4), LINES).map(lambda pair: "#" * pair[0] + " " + pair[1])
BLOCKS = st.lists(st.one_of(HEADINGS, PARAGRAPHS), min_size=1, max_size=12)


def _first_text_line(text: str, heading_end: int, level: int) -> int | None:
    """The end of the first line that is not a heading after the heading ending at
    ``heading_end``, skipping sub-headings (deeper than ``level``, the deepest so far); None
    when a heading of the same or a higher level comes first, or nothing does."""
    position = heading_end
    for line in text[heading_end:].split("\n"):
        start = position
        position += len(line) + 1
        if not line.strip():
            continue
        marks = len(line) - len(line.lstrip("#"))
        if marks > 0 and line[marks : marks + 1] == " ":
            if marks <= level:
                return None
            level = marks
            continue
        return start + len(line)
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=BLOCKS, size=st.integers(8, 120), parent=st.integers(2, 4))
def test_no_child_is_only_a_heading_when_its_first_text_line_fits_with_it(
    blocks: list[str], size: int, parent: int
) -> None:
    text = "\n\n".join(blocks) + "\n"
    chunkers = [
        MarkdownChunker(size),
        ParentChildChunker(size * parent, size, parent_chunker="markdown"),
    ]
    for chunker in chunkers:
        for chunk in chunker.chunk(text):
            body = chunk.text
            marks = len(body) - len(body.lstrip("#"))
            if "\n" in body or marks == 0 or body[marks : marks + 1] != " ":
                continue
            end = _first_text_line(text, chunk.end_char, marks)
            if end is not None:
                assert end - chunk.start_char > size, (body, text[chunk.start_char : end])
