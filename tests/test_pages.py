"""Pages of text converted from PDF: every chunk of a document with page markers carries the
pages it spans (``page_first``, ``page_last``), for the default markers of the common
converters and for a pattern of one's own, in every structure and every output; PDFs made and
converted for real (PyMuPDF, pymupdf4llm) check the pages against where each word was put."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pyarrow.parquet as pq
import pymupdf
import pymupdf4llm
import pytest
from _contract import check_chunks, parent_child_levels
from hypothesis import given, settings
from hypothesis import strategies as st
from spanchunk import (
    DEFAULT_PAGE_PATTERN,
    CodeChunker,
    HierarchicalChunker,
    HtmlChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
)
from spanchunk.cli import main


def pages_of(chunks: list) -> list[tuple[int, int, str]]:  # type: ignore[type-arg]
    return [(c.metadata["page_first"], c.metadata["page_last"], c.text) for c in chunks]


# ----------------------------------------------------------------------------- the markers


def test_form_feeds_end_pages() -> None:
    text = "First page.\n\fSecond page.\n\fThird page."  # as pdftotext writes them
    chunks = RecursiveChunker(14).chunk(text)
    assert pages_of(chunks) == [
        (1, 1, "First page."),
        (2, 2, "Second page."),
        (3, 3, "Third page."),
    ]


@pytest.mark.parametrize(
    ("marker", "first_page", "second_page"),
    [
        ("<!-- page break -->", 1, 2),  # docling's placeholder, as its users spell it
        ("<!-- page_break -->", 1, 2),
        ("<!-- PageBreak -->", 1, 2),  # Azure Document Intelligence's Markdown
        ("\f", 1, 2),
        ("--- end of page=0 ---", 1, 2),  # pymupdf4llm, counted from 0
        ("--- end of page=11 ---", 12, 13),
    ],
)
def test_break_markers(marker: str, first_page: int, second_page: int) -> None:
    text = f"# One\n\nThe first page's text.\n\n{marker}\n\n# Two\n\nThe second page's text."
    for chunker in (MarkdownChunker(30), RecursiveChunker(30)):
        chunks = chunker.chunk(text)
        first = next(c for c in chunks if "first page" in c.text)
        second = next(c for c in chunks if "second page" in c.text)
        assert (first.metadata["page_first"], first.metadata["page_last"]) == (first_page,) * 2
        assert (second.metadata["page_first"], second.metadata["page_last"]) == (second_page,) * 2
        # A marker belongs to the page it ends.
        alone = [c for c in chunks if c.text.strip() == marker.strip()]
        assert all(c.metadata["page_first"] == first_page for c in alone)


@pytest.mark.parametrize(
    ("label", "page"),
    [
        ("<!-- page 7 -->", 7),
        ("<!-- Page: 7 -->", 7),
        ("<!-- PAGE 7 -->", 7),
        ("{6}" + "-" * 48, 7),  # marker's paginated output, counted from 0
    ],
)
def test_label_markers_start_their_page(label: str, page: int) -> None:
    text = f"{label}\n\nText of this page.\n\n{label.replace('7', '8').replace('6', '7')}\n\nNext."
    chunks = RecursiveChunker(len(label) + 21).chunk(text)
    assert pages_of(chunks)[0][:2] == (page, page)
    assert chunks[0].text.startswith(label)  # a label belongs to the page it starts
    assert pages_of(chunks)[-1][:2] == (page + 1, page + 1)


def test_a_chunk_across_a_page_end_spans_both() -> None:
    text = "Scope\n\nThis manual covers installation.\n\fInstall\n\nUnpack the archive.\n"
    (parent,) = ParentChildChunker(200, 50).chunk_tree(text)[:1]
    assert (parent.metadata["page_first"], parent.metadata["page_last"]) == (1, 2)


def test_no_marker_no_page_fields() -> None:
    for chunk in ParentChildChunker(200, 50).chunk_tree("Plain text.\n\nNo pages at all."):
        assert "page_first" not in chunk.metadata
        assert "page_last" not in chunk.metadata


def test_pages_change_metadata_only() -> None:
    text = "Page one. " * 30 + "\f" + "Page two. " * 30
    marked = ParentChildChunker(200, 50).chunk_tree(text)
    unmarked = ParentChildChunker(200, 50, pages=False).chunk_tree(text)
    assert [(c.id, c.start_char, c.end_char) for c in marked] == [
        (c.id, c.start_char, c.end_char) for c in unmarked
    ]
    assert (
        ParentChildChunker(200, 50).fingerprint()
        == ParentChildChunker(200, 50, pages=False).fingerprint()
    )
    assert all("page_first" in c.metadata for c in marked)
    assert not any("page_first" in c.metadata for c in unmarked)


# ---------------------------------------------------------------------- patterns of one's own


def test_a_pattern_of_ones_own() -> None:
    chunker = RecursiveChunker(40, pages=r"(?m)^\[page (?P<page>\d+)\]$")
    text = "[page 7]\nThe first page.\n\n[page 8]\nThe second page."
    assert [(c.metadata["page_first"], c.text) for c in chunker.chunk(text)] == [
        (7, "[page 7]\nThe first page."),
        (8, "[page 8]\nThe second page."),
    ]
    # The default markers are then not read.
    assert "page_first" not in chunker.chunk("a\fb")[0].metadata
    # An end marker with its number, counted from 1; look-around is allowed.
    ends = RecursiveChunker(20, pages=r"(?<=\n)=== (?P<end>\d+) ===")
    chunks = ends.chunk("Alpha text here.\n=== 3 ===\nBeta text here.")
    assert pages_of(chunks) == [
        (3, 3, "Alpha text here."),
        (3, 3, "=== 3 ==="),
        (4, 4, "Beta text here."),
    ]


def test_settings_and_repr() -> None:
    assert RecursiveChunker(10).pages is True
    assert "pages" not in repr(RecursiveChunker(10))
    assert repr(RecursiveChunker(10, pages=False)) == "RecursiveChunker(chunk_size=10, pages=False)"
    assert RecursiveChunker(10).settings()["pages"] is True
    assert ParentChildChunker(200, 50, pages="X").settings()["pages"] == "X"
    assert DEFAULT_PAGE_PATTERN.startswith("(?m)")


@pytest.mark.parametrize(
    ("pages", "error", "message"),
    [
        ("(", ValueError, "does not compile"),
        ("x*", ValueError, "matches empty text"),
        ("", ValueError, "must not be empty"),
        (3, TypeError, "pages must be True"),
        (None, TypeError, "pages must be True"),
    ],
)
def test_patterns_that_cannot_work_are_refused(pages: object, error: type, message: str) -> None:
    for make in (
        lambda: RecursiveChunker(10, pages=pages),  # type: ignore[arg-type]
        lambda: ParentChildChunker(200, 50, pages=pages),  # type: ignore[arg-type]
        lambda: CodeChunker(100, language="python", pages=pages),  # type: ignore[arg-type]
    ):
        with pytest.raises(error, match=message):
            make()


def test_a_tree_gives_its_pages_to_the_levels_it_makes() -> None:
    text = "A\fB\fC " * 40
    tree = HierarchicalChunker([100, 30, 10], pages=False)
    assert not any("page_first" in c.metadata for c in tree.chunk_tree(text))
    tree = HierarchicalChunker([100, 30, 10], chunkers=["markdown", None, None])
    assert all("page_first" in c.metadata for c in tree.chunk_tree(text))
    # A chunker given for the top level decides with its own.
    given = ParentChildChunker(200, 50, parent_chunker=RecursiveChunker(200, pages=False))
    assert not any("page_first" in c.metadata for c in given.chunk_tree(text))


def test_a_custom_level_below_gets_the_pages_too() -> None:
    class Lines(RecursiveChunker):
        def split_text(self, text: str) -> list[str]:
            return [line for line in text.split("\n") if line.strip()]

    text = "one\ntwo\fthree\nfour"
    tree = HierarchicalChunker([100, 10], chunkers=[None, Lines(10)])
    leaves = tree.chunk(text)
    assert [(c.text, c.metadata["page_first"], c.metadata["page_last"]) for c in leaves] == [
        ("one", 1, 1),
        ("two\fthree", 1, 2),
        ("four", 2, 2),
    ]


# ------------------------------------------------------------------------------ structures


def test_html_page_comments_are_read_in_the_source() -> None:
    page = (
        "<html><body><main><!-- page 1 --><h1>Report</h1><p>First page text here.</p>"
        "<!-- page 2 --><p>Second page text.</p><!-- page 3 --><p>Third.</p></main></body></html>"
    )
    chunks = HtmlChunker(25).chunk(page)
    assert pages_of(chunks) == [
        (1, 1, "Report"),
        (1, 1, "First page text here."),
        (2, 3, "Second page text.\n\nThird."),
    ]
    for chunk in chunks:
        start, end = chunk.metadata["source_start_byte"], chunk.metadata["source_end_byte"]
        assert chunk.text.split()[-1] in page.encode()[start:end].decode()


def test_code_with_form_feeds() -> None:
    # Python's own sources hold form feeds between sections (PEP 8 allows them).
    source = "def a():\n    return 1\n\f\ndef b():\n    return 2\n"
    chunks = CodeChunker(25, language="python").chunk(source)
    assert [(c.metadata["symbols"], c.metadata["page_first"]) for c in chunks] == [
        (("a",), 1),
        (("b",), 2),
    ]


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(
        st.tuples(
            st.text(st.characters(codec="utf-8", exclude_characters="\f{}<>-"), max_size=40),
            st.sampled_from(["", "\f", "\n<!-- page break -->\n", "\n--- end of page=4 ---\n"]),
        ),
        max_size=12,
    ),
    size=st.integers(5, 60),
)
def test_pages_follow_a_reference(pieces: list[tuple[str, str]], size: int) -> None:
    """The pages of every chunk, of every level, equal a reference's: the count of page
    ends before the chunk's first and last char."""
    text = "".join(words + marker for words, marker in pieces)
    ends = sorted(
        match.end() for match in re.finditer(r"\f|<!-- page break -->|--- end of page=4 ---", text)
    )
    first_page = 5 if (match := re.search(r"\f|<!--|---", text)) and match[0] == "---" else 1

    def page_at(char: int) -> int:
        passed = [end for end in ends if end <= char]
        if not passed:
            return first_page
        # After "end of page=4" (page 5 ends), page 6 follows; after a break, the next page.
        page = first_page
        for end in passed:
            marker = text[:end]
            page = 6 if marker.endswith("--- end of page=4 ---") else page + 1
        return page

    chunker = ParentChildChunker(max(size * 3, 10), size)
    chunks = chunker.chunk_tree(text)
    check_chunks(text, chunks, parent_child_levels(max(size * 3, 10), size), "char")
    for chunk in chunks:
        if not ends:
            assert "page_first" not in chunk.metadata
            continue
        first = page_at(chunk.start_char)
        # Markers that number pages out of order (page 5 ends after page 7) cannot make a
        # chunk end before it starts.
        expected = (first, max(first, page_at(chunk.end_char - 1)))
        assert (chunk.metadata["page_first"], chunk.metadata["page_last"]) == expected


# ----------------------------------------------------------------- PDFs converted for real


@pytest.fixture(scope="module")
def pdf(
    tmp_path_factory: pytest.TempPathFactory, corpus: dict[str, list[tuple[str, str]]]
) -> tuple[Path, list[list[str]]]:
    """A 12-page PDF of real prose (the corpus's Gutenberg texts), and the words of each page
    as PyMuPDF reads them back."""
    prose = " ".join(text for _name, text in corpus["gutenberg"][:3])
    words = prose.split()
    document = pymupdf.open()
    at = 0
    while document.page_count < 12 and at < len(words):
        page = document.new_page()
        box = pymupdf.Rect(54, 54, page.rect.width - 54, page.rect.height - 54)
        taken = 260
        page.insert_textbox(box, " ".join(words[at : at + taken]), fontsize=9)
        at += taken
    path = tmp_path_factory.mktemp("pdf") / "book.pdf"
    document.save(path)
    read = pymupdf.open(path)
    return path, [page.get_text().split() for page in read]


def check_pages(text: str, page_words: list[list[str]]) -> int:
    """Every child's words lie on the pages it says it spans; returns how many were checked."""
    where: dict[str, set[int]] = {}
    for number, words in enumerate(page_words, start=1):
        for word in words:
            where.setdefault(word, set()).add(number)
    checked = 0
    for chunk in ParentChildChunker(1500, 300).chunk_tree(text):
        first, last = chunk.metadata["page_first"], chunk.metadata["page_last"]
        assert 1 <= first <= last <= len(page_words)
        for word in chunk.text.split():
            if len(where.get(word, ())) == 1:
                (page,) = where[word]
                assert first <= page <= last, (word, page, first, last)
                checked += 1
    return checked


def test_a_pdf_as_pdftotext_writes_it(pdf: tuple[Path, list[list[str]]]) -> None:
    path, page_words = pdf
    text = "".join(page.get_text() + "\f" for page in pymupdf.open(path))
    assert check_pages(text, page_words) > 500


def test_a_pdf_through_pymupdf4llm(pdf: tuple[Path, list[list[str]]]) -> None:
    path, page_words = pdf
    markdown = pymupdf4llm.to_markdown(str(path), page_separators=True, show_progress=False)
    assert markdown.count("--- end of page=") == len(page_words)
    assert check_pages(markdown, page_words) > 500
    # Its page chunks, joined with form feeds, give the same pages.
    pages = pymupdf4llm.to_markdown(str(path), page_chunks=True, show_progress=False)
    assert check_pages("\f".join(page["text"] for page in pages), page_words) > 500


# ------------------------------------------------------------------------------- outputs


def test_every_output_of_the_command_line_carries_the_pages(
    tmp_path: Path,
    capsys: pytest.CaptureFixture,  # type: ignore[type-arg]
) -> None:
    root = tmp_path / "in"
    root.mkdir()
    (root / "book.txt").write_text(
        "".join(f"Page {n} says hello. " * 20 + "\f" for n in range(1, 5)), encoding="utf-8"
    )
    (root / "plain.txt").write_text("No pages here. " * 20, encoding="utf-8")
    settings = ["--parent-size", "300", "--child-size", "80"]
    jsonl, parquet, store = tmp_path / "a.jsonl", tmp_path / "a.parquet", tmp_path / "a.sqlite"
    for out in (jsonl, parquet, store):
        assert main(["chunk", str(root), *settings, "-o", str(out)]) == 0
    records = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    expected = {
        record["id"]: (record.get("page_first"), record.get("page_last")) for record in records
    }
    assert {pages for pages in expected.values()} >= {(1, 1), (4, 4), (None, None)}
    for record in records:
        pages = re.findall(r"Page (\d)", record["text"])
        if record["source"].endswith("book.txt"):
            assert record["page_first"] == int(pages[0]) and record["page_last"] == int(pages[-1])
    table = pq.read_table(parquet).to_pylist()
    assert {row["id"]: (row["page_first"], row["page_last"]) for row in table} == expected
    with sqlite3.connect(store) as connection:
        stored = {
            row[0]: tuple(json.loads(row[1]).get(key) for key in ("page_first", "page_last"))
            for row in connection.execute("SELECT id, metadata FROM chunks")
        }
    assert stored == expected
    # --no-pages: none anywhere. A store keeps the pages of one setting: a run with another
    # is refused, naming the difference and the fix, and the store is left as it was.
    assert main(["chunk", str(root), *settings, "--no-pages", "-o", str(jsonl)]) == 0
    assert "page_first" not in jsonl.read_text(encoding="utf-8")
    assert main(["chunk", str(root), *settings, "--no-pages", "-o", str(store)]) != 0
    error = capsys.readouterr().err
    assert "--pages: the store has none, this run off" in error, error
    assert "without --no-pages" in error, error
    with sqlite3.connect(store) as connection:
        after = {row[0] for row in connection.execute("SELECT id FROM chunks")}
    assert after == set(expected)
    fresh = tmp_path / "b.sqlite"
    assert main(["chunk", str(root), *settings, "--no-pages", "-o", str(fresh)]) == 0
    with sqlite3.connect(fresh) as connection:
        metadata = [row[0] for row in connection.execute("SELECT metadata FROM chunks")]
    assert metadata and not any("page_first" in text for text in metadata)
    assert main(["chunk", str(root), *settings, "--no-pages", "-o", str(fresh)]) == 0
    # --pages REGEX.
    (root / "labels.txt").write_text("[p 3]\nThree.\n\n[p 4]\nFour.", encoding="utf-8")
    out = tmp_path / "b.jsonl"
    assert main(["chunk", str(root / "labels.txt"), "--pages", r"\[p (?P<page>\d+)\]", "-o",
                 str(out), "--parent-size", "20", "--child-size", "12"]) == 0  # fmt: skip
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {(row["text"], row["page_first"]) for row in rows if row["level"] == 0} == {
        ("[p 3]\nThree.", 3),
        ("[p 4]\nFour.", 4),
    }


def test_a_bad_pattern_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:  # type: ignore[type-arg]
    (tmp_path / "a.txt").write_text("text", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["chunk", str(tmp_path / "a.txt"), "--pages", "(", "-o", str(out)]) == 2
    assert "does not compile" in capsys.readouterr().err
    assert not out.exists()


def test_a_store_kept_by_sync_keeps_the_pages_of_one_setting(tmp_path: Path) -> None:
    from spanchunk.ingest import sync  # noqa: PLC0415
    from spanchunk.ingest.output import OutputError  # noqa: PLC0415

    root = tmp_path / "in"
    root.mkdir()
    (root / "book.txt").write_text("One.\n\fTwo.\n\fThree.\n", encoding="utf-8")
    store = tmp_path / "s.sqlite"
    sync(root, store, ParentChildChunker(200, 50))
    before = store.read_bytes()
    # The same chunks with other metadata: refused, the store as it was.
    with pytest.raises(OutputError, match="other page markers") as refused:
        sync(root, store, ParentChildChunker(200, 50, pages=False))
    assert "the store: the default markers; this run: no pages" in str(refused.value)
    assert store.read_bytes() == before
    # And the other way round.
    other = tmp_path / "u.sqlite"
    sync(root, other, ParentChildChunker(200, 50, pages=r"\f"))
    with pytest.raises(OutputError, match=r"the store: pages='\\\\f'; this run: the default"):
        sync(root, other, ParentChildChunker(200, 50))
    # Pages never change the ids, so other page markers in a new store give the same ids.
    other = tmp_path / "t.sqlite"
    sync(root, other, ParentChildChunker(200, 50, pages=False))
    with sqlite3.connect(store) as first, sqlite3.connect(other) as second:
        ids = [
            sorted(row[0] for row in db.execute("SELECT id FROM chunks")) for db in (first, second)
        ]
    assert ids[0] == ids[1]


def test_a_pattern_that_gives_up_on_a_file_skips_that_file_alone(
    tmp_path: Path,
    capsys: pytest.CaptureFixture,  # type: ignore[type-arg]
) -> None:
    (tmp_path / "a.txt").write_text("a" * 50_000 + "\n\nok text\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("fine\n\fpage two\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    # A backreference after a nested repeat: the backtracking limit is met on a.txt.
    assert main(["chunk", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"),
                 "--pages", r"(a+)+\1b", "-o", str(out)]) == 0  # fmt: skip
    error = capsys.readouterr().err
    assert "skipped" in error and "a.txt" in error and "simplify it" in error, error
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {Path(row["source"]).name for row in rows} == {"b.txt"}
    # Both main options at once are refused before anything is read.
    with pytest.raises(SystemExit) as refused:
        main(
            ["chunk", str(tmp_path), "--pages", "x", "--no-pages", "-o", str(tmp_path / "c.jsonl")]
        )
    assert refused.value.code == 2
    assert not (tmp_path / "c.jsonl").exists()
