"""HTML pages on the command line: --format html, and auto by the file name's ending; every
output (JSON Lines, Parquet, the store) carries the chunks' spans in the page's source."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from spanchunk import Document, HtmlChunker, ParentChildChunker
from spanchunk.cli import main

PAGE = """<!DOCTYPE html><html><head><title>Guide</title><style>p {}</style></head><body>
<nav>Home | Docs</nav>
<main><h1>Guide</h1><p>An introduction with <b>bold</b> words &amp; entities.</p>
<h2>Install</h2><p>{install}</p><pre>pip install spanchunk
spanchunk chunk docs/</pre>
<h2>Use</h2><table><tr><th>Option</th><th>Meaning</th></tr>
<tr><td>--format</td><td>how files are read</td></tr></table></main>
<footer>(c) the authors</footer></body></html>""".replace("{install}", "Run the installer. " * 40)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    root.mkdir()
    (root / "guide.html").write_text(PAGE, encoding="utf-8")
    (root / "page.HTM").write_text("<p>Short <i>page</i>.</p>", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\n<p>kept as Markdown</p>\n", encoding="utf-8")
    (root / "plain.txt").write_text("<p>kept as text</p>", encoding="utf-8")
    return root


def run(*args: str) -> int:
    return main(["chunk", *args])


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_auto_reads_pages_by_their_names(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "--parent-size", "600", "--child-size", "150", "-o", str(out)) == 0
    rows = records(out)
    by_file: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_file.setdefault(Path(str(row["source"])).name, []).append(row)
    assert set(by_file) == {"guide.html", "page.HTM", "notes.md", "plain.txt"}
    for name in ("guide.html", "page.HTM"):
        source = (tree / name).read_text(encoding="utf-8")
        text = HtmlChunker().read(source).text
        encoded = source.encode()
        for row in by_file[name]:
            assert text[row["start_char"] : row["end_char"]] == row["text"]  # type: ignore[misc]
            start, end = row["source_start_byte"], row["source_end_byte"]
            assert 0 <= start <= end <= len(encoded)  # type: ignore[operator]
            assert "headings" in row
    guide = by_file["guide.html"]
    assert not any("Home" in str(row["text"]) or "authors" in str(row["text"]) for row in guide)
    assert guide[0]["headings"] == ["Guide"]
    table = "Option | Meaning\n--format | how files are read"
    assert any(str(row["text"]).endswith(table) for row in guide)
    # Markdown and text files are not pages: their markup is their text.
    assert all("source_start_byte" not in row for row in by_file["notes.md"])
    assert by_file["plain.txt"][0]["text"] == "<p>kept as text</p>"


def test_the_command_line_gives_the_apis_ids(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    page = tree / "guide.html"
    assert run(str(page), "-o", str(out)) == 0
    text = page.read_text(encoding="utf-8")
    chunker = ParentChildChunker(2000, 400, parent_chunker="html")
    document = Document(text, id=os.path.realpath(page), source=str(page))
    expected = [
        (c.id, c.text, c.metadata["source_start_byte"], c.metadata["source_end_byte"])
        for c in chunker.chunk_tree(document)
    ]
    got = [
        (row["id"], row["text"], row["source_start_byte"], row["source_end_byte"])
        for row in records(out)
    ]
    assert got == expected


def test_format_html_reads_every_file_as_a_page(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run(str(tree / "plain.txt"), "--format", "html", "-o", str(out)) == 0
    assert [row["text"] for row in records(out)] == ["kept as text"] * 2


def test_parquet_and_the_store_carry_the_source_spans(tree: Path, tmp_path: Path) -> None:
    jsonl, parquet, store = tmp_path / "a.jsonl", tmp_path / "a.parquet", tmp_path / "a.sqlite"
    for out in (jsonl, parquet, store):
        assert run(str(tree), "--parent-size", "600", "--child-size", "150", "-o", str(out)) == 0
    expected = {
        row["id"]: (row.get("source_start_byte"), row.get("source_end_byte"))
        for row in records(jsonl)
    }
    table = pq.read_table(parquet).to_pylist()
    assert {
        row["id"]: (row["source_start_byte"], row["source_end_byte"]) for row in table
    } == expected
    with sqlite3.connect(store) as connection:
        stored = {
            chunk_id: (
                json.loads(metadata).get("source_start_byte"),
                json.loads(metadata).get("source_end_byte"),
            )
            for chunk_id, metadata in connection.execute("SELECT id, metadata FROM chunks")
        }
    assert stored == expected
    # An unchanged re-run into the store changes nothing.
    assert run(str(tree), "--parent-size", "600", "--child-size", "150", "-o", str(store)) == 0
    with sqlite3.connect(store) as connection:
        assert connection.execute("SELECT count(*) FROM changes").fetchone() == (1,)


def test_a_binary_page_is_skipped_and_a_broken_one_is_read(tree: Path, tmp_path: Path) -> None:
    (tree / "image.html").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (tree / "broken.html").write_text("<p>open <b>never <i>closed", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "-o", str(out)) == 0
    names = {Path(str(row["source"])).name for row in records(out)}
    assert "image.html" not in names
    broken = [row for row in records(out) if str(row["source"]).endswith("broken.html")]
    assert broken and broken[-1]["text"] == "open never closed"
