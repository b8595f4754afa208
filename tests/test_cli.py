"""The ``spanchunk chunk`` job: output records, byte for byte, in every output kind.

JSON Lines must be exactly what ``json.dumps`` gave for each chunk's record before the core
wrote them (the reference below rebuilds that from the public API), and every output must
round-trip: each chunk's text is its span of the file.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import spanchunk.cli._writers as writers
from _strategies import texts
from conftest import corpus_missing, corpus_root
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from spanchunk import Document, ParentChildChunker
from spanchunk.cli import main, parquet_schema

TEXTS = {
    "a.txt": "Small chunks find, big chunks explain.\n\n" * 40,
    "b/c.md": '# Title\n\nIntro "quoted" \\ back\tslash.\n\n## Part\n\n' + "Body. " * 300,
    "b/d.txt": "émoji 🦀 and CJK 日本語, CRLF\r\nand NUL-free controls \x01\x1f.\n" * 60,
    "e.markdown": "\ufeff# BOM heading\n\ntext\n",
    "empty.txt": "",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    for name, text in TEXTS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def reference_jsonl(paths: list[str], **settings: Any) -> bytes:
    """What the job wrote before the core did: json.dumps of each chunk's record."""
    chunkers = {
        markdown: ParentChildChunker(parent_chunker="markdown" if markdown else None, **settings)
        for markdown in (False, True)
    }
    lines = []
    for path in paths:
        text = Path(path).read_bytes().decode("utf-8")
        chunker = chunkers[path.lower().endswith((".md", ".markdown"))]
        for chunk in chunker.chunk_tree(Document(text, id=os.path.realpath(path), source=path)):
            record: dict[str, object] = {
                "id": chunk.id,
                "document_id": chunk.document_id,
                "source": path,
                "level": chunk.level,
                "index": chunk.index,
                "parent_id": chunk.parent_id,
                "child_ids": list(chunk.child_ids),
                "start_char": chunk.start_char,
                "end_char": chunk.end_char,
                "start_byte": chunk.start_byte,
                "end_byte": chunk.end_byte,
                "text": chunk.text,
            }
            headings = chunk.metadata.get("headings")
            if headings is not None:
                record["headings"] = list(headings)
            header = chunk.metadata.get("table_header")
            if header is not None:
                record["table_header"] = dict(header)
            for key in ("page_first", "page_last"):
                if key in chunk.metadata:
                    record[key] = chunk.metadata[key]
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines).encode("utf-8")


#: The Parquet columns that JSON Lines leaves out where they are null.
PATH_AND_FIELD_COLUMNS = (
    "headings", "symbols", "language", "source_start_byte", "source_end_byte", "table_header",
    "page_first", "page_last",
)  # fmt: skip


def sorted_files(root: Path) -> list[str]:
    return sorted(
        (str(path) for path in root.rglob("*") if path.is_file()),
        key=lambda path: Path(path).relative_to(root).parts,
    )


def run(*args: str) -> int:
    return main(["chunk", *args])


def test_jsonl_is_byte_identical_to_json_dumps(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "--parent-size", "300", "--child-size", "60", "-o", str(out)) == 0
    expected = reference_jsonl(sorted_files(tree), parent_size=300, child_size=60)
    assert out.read_bytes() == expected


@pytest.mark.parametrize(
    ("args", "settings"),
    [
        (["--unit", "byte", "--overlap", "10"], {"unit": "byte", "child_overlap": 10}),
        (["--unit", "token"], {"unit": "token", "encoding": "o200k_base"}),
        (
            ["--unit", "token", "--encoding", "cl100k_base"],
            {"unit": "token", "encoding": "cl100k_base"},
        ),
    ],
)
def test_settings_reach_the_chunker(
    tree: Path, tmp_path: Path, args: list[str], settings: dict[str, Any]
) -> None:
    out = tmp_path / "out.jsonl"
    sizes = ["--parent-size", "200", "--child-size", "50"]
    assert run(str(tree), *sizes, *args, "-o", str(out)) == 0
    expected = reference_jsonl(sorted_files(tree), parent_size=200, child_size=50, **settings)
    assert out.read_bytes() == expected


def test_child_unit_cuts_children_in_their_own_unit(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run(str(tree / "a.txt"), "--parent-size", "400", "--child-size", "30",
               "--child-unit", "byte", "-o", str(out)) == 0  # fmt: skip
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    children = [r for r in records if r["level"] == 0]
    assert children and all(r["end_byte"] - r["start_byte"] <= 30 for r in children)
    assert max(r["end_char"] - r["start_char"] for r in records if r["level"] == 1) > 300


def test_merge_greedy_reaches_both_levels(tree: Path, tmp_path: Path) -> None:
    from spanchunk import MarkdownChunker, RecursiveChunker  # noqa: PLC0415

    out = tmp_path / "out.jsonl"
    files = sorted_files(tree)
    assert run(*files, "--parent-size", "200", "--child-size", "50", "--merge", "greedy",
               "-o", str(out)) == 0  # fmt: skip
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    spans = {(r["source"], r["level"], r["start_char"], r["end_char"]) for r in records}
    for path in files:
        kind = MarkdownChunker if path.endswith(".md") else RecursiveChunker
        chunker = ParentChildChunker(
            parent_chunker=kind(200, merge="greedy"), child_chunker=kind(50, merge="greedy")
        )
        text = Path(path).read_bytes().decode("utf-8")
        for chunk in chunker.chunk_tree(text):
            assert (path, chunk.level, chunk.start_char, chunk.end_char) in spans
    default = tmp_path / "default.jsonl"
    assert run(*files, "--parent-size", "200", "--child-size", "50", "-o", str(default)) == 0
    assert default.read_bytes() != out.read_bytes()


def test_stdout_is_the_default(tree: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert run(str(tree / "a.txt"), "--workers", "1") == 0
    assert capsysbinary.readouterr().out == reference_jsonl([str(tree / "a.txt")])


def check_round_trip(records: list[dict[str, Any]]) -> None:
    """Every chunk's text is its span of the file, and parents and children link up."""
    by_id = {record["id"]: record for record in records}
    texts: dict[str, str] = {}
    for record in records:
        source = record["source"]
        if source not in texts:
            texts[source] = Path(source).read_bytes().decode("utf-8")
        text = texts[source]
        assert record["text"] == text[record["start_char"] : record["end_char"]]
        encoded = text.encode("utf-8")
        assert record["text"].encode("utf-8") == encoded[record["start_byte"] : record["end_byte"]]
        for child in record["child_ids"]:
            assert by_id[child]["parent_id"] == record["id"]
        if record["parent_id"] is not None:
            assert record["id"] in by_id[record["parent_id"]]["child_ids"]


def preorder(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """JSON Lines records (each document's levels from the top) in the Parquet order: each
    document's top chunks in reading order, each followed by its subtree."""
    # By source too: identical files have the same ids (JSON Lines ids hash the text).
    by_id = {(record["source"], record["id"]): record for record in records}
    order: list[dict[str, Any]] = []

    def visit(record: dict[str, Any]) -> None:
        order.append(record)
        for child in record["child_ids"]:
            visit(by_id[record["source"], child])

    for record in records:
        if record["parent_id"] is None:
            visit(record)
    return order


def test_jsonl_round_trips(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run(str(tree), "--parent-size", "120", "--child-size", "30", "-o", str(out)) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["level"] for r in records} == {0, 1}
    check_round_trip(records)


def test_parquet_round_trips_and_matches_jsonl(tree: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "out.parquet"
    jsonl = tmp_path / "out.jsonl"
    settings = ["--parent-size", "120", "--child-size", "30"]
    assert run(str(tree), *settings, "-o", str(out)) == 0
    assert run(str(tree), *settings, "-o", str(jsonl)) == 0
    table = pq.read_table(out)
    assert table.schema.field("level").type == "int8"
    assert str(table.schema.field("headings").type.value_type) == "string"
    rows = table.to_pylist()
    expected = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        # A column JSON Lines leaves out where it is null: the paths of Markdown and code,
        # the spans of a page's source.
        for key in PATH_AND_FIELD_COLUMNS:
            if row[key] is None:
                del row[key]
    # The same records, each parent followed by its children.
    assert rows == preorder(expected)
    assert [row["level"] for row in rows[:3]] == [1, 0, 0]
    check_round_trip(rows)


def test_parquet_schema_is_the_documented_one(tree: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "out.parquet"
    assert run(str(tree), "-o", str(out)) == 0
    schema = pq.read_schema(out)
    assert schema.remove_metadata() == parquet_schema()
    assert schema.field("text").type == "large_string"
    metadata = pq.read_metadata(out)
    assert metadata.created_by.startswith("spanchunk ")
    # Statistics where queries filter, none on the texts; dictionaries on the repeated columns.
    columns = {
        metadata.row_group(0).column(c).path_in_schema: metadata.row_group(0).column(c)
        for c in range(metadata.num_columns)
    }
    assert columns["level"].is_stats_set and columns["start_char"].is_stats_set
    assert not columns["text"].is_stats_set
    assert columns["document_id"].has_dictionary_page
    assert not columns["text"].has_dictionary_page


@pytest.mark.parametrize("compression", ["snappy", "lz4", "none"])
def test_parquet_compressions_read_everywhere(tree: Path, tmp_path: Path, compression: str) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "out.parquet"
    jsonl = tmp_path / "out.jsonl"
    assert run(str(tree), "--compression", compression, "-o", str(out)) == 0
    assert run(str(tree), "-o", str(jsonl)) == 0
    codec = pq.read_metadata(out).row_group(0).column(11).compression
    # pyarrow names LZ4_RAW, the codec written, "LZ4".
    assert codec == {"snappy": "SNAPPY", "lz4": "LZ4", "none": "UNCOMPRESSED"}[compression]
    records = [json.loads(line) for line in jsonl.read_text("utf-8").splitlines()]
    expected = [record["text"] for record in preorder(records)]
    assert pq.read_table(out).column("text").to_pylist() == expected
    assert polars.read_parquet(out)["text"].to_list() == expected
    rows = duckdb.sql(f"select text from '{out}'").fetchall()
    assert [row[0] for row in rows] == expected


def test_parquet_row_group_per_batch_whatever_the_formats(tmp_path: Path) -> None:
    # Markdown and plain files alternate (each cut by its own chunker), and still one batch
    # makes one row group; a folder larger than a batch makes several, in order.
    pq = pytest.importorskip("pyarrow.parquet")
    root = tmp_path / "mixed"
    root.mkdir()
    for number in range(20):
        suffix = ".md" if number % 2 else ".txt"
        text = f"# Part {number}\n\n" + f"Sentence {number}. " * 200
        (root / f"{number:02d}{suffix}").write_text(text, encoding="utf-8")
    out = tmp_path / "out.parquet"
    assert run(str(root), "-o", str(out)) == 0
    metadata = pq.read_metadata(out)
    assert metadata.num_row_groups == 1
    table = pq.read_table(out)
    assert table.column("source").unique().to_pylist() == sorted(
        str(path) for path in root.iterdir()
    )
    headings = {
        source: value
        for source, value in zip(
            table.column("source").to_pylist(), table.column("headings").to_pylist(), strict=True
        )
    }
    assert all((value is not None) == source.endswith(".md") for source, value in headings.items())


def test_parquet_row_groups_follow_the_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(writers.ParquetWriter, "batch_files", 3)
    root = tmp_path / "many"
    root.mkdir()
    for number in range(10):
        (root / f"{number:02d}.txt").write_text(f"File {number}. " * 50, encoding="utf-8")
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.parquet"
        assert run(str(root), "--workers", workers, "-o", str(out)) == 0
        outputs.append(out.read_bytes())
        metadata = pq.read_metadata(out)
        assert metadata.num_row_groups == 4  # 3 + 3 + 3 + 1 files
    assert outputs[0] == outputs[1]
    sources = pq.read_table(tmp_path / "w2.parquet").column("source").to_pylist()
    assert sources == sorted(sources)


def test_parquet_reads_in_pandas(tree: Path, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    out = tmp_path / "out.parquet"
    assert run(str(tree), "-o", str(out)) == 0
    frame = pd.read_parquet(out)
    assert list(frame.columns) == [
        "id", "document_id", "source", "level", "index", "parent_id", "child_ids",
        "start_char", "end_char", "start_byte", "end_byte", "text", "headings", "symbols",
        "language", "source_start_byte", "source_end_byte", "table_header", "page_first",
        "page_last",
    ]  # fmt: skip
    assert set(frame["level"]) == {0, 1}
    assert frame["parent_id"].isna().sum() == (frame["level"] == 1).sum()


def test_parquet_reads_in_polars_and_duckdb(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    assert run(str(tree), "-o", str(out)) == 0
    polars = pytest.importorskip("polars")
    frame = polars.read_parquet(out)
    assert frame.height == len(frame.filter(polars.col("text").str.len_bytes() >= 0))
    duckdb = pytest.importorskip("duckdb")
    rows = duckdb.sql(f"select count(*) from '{out}' where level = 0").fetchall()
    assert rows[0][0] == int((frame["level"] == 0).sum())


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_two_workers_write_what_one_writes(tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    root = corpus_root()
    if not root.is_dir():
        corpus_missing(f"corpus folder {root}")
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}{suffix}"
        assert run(str(root), "--workers", workers, "-o", str(out)) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    if suffix == ".jsonl":
        files = sorted_files(root)
        # Every file of the folder is a document (the licences; the shared corpus's README),
        # so compare on the whole folder's files.
        assert outputs[0] == reference_jsonl([f for f in files if not Path(f).name.startswith(".")])


def test_process_pool_writes_what_threads_write(tree: Path, tmp_path: Path) -> None:
    outputs = []
    for pool in ("thread", "process"):
        out = tmp_path / f"{pool}.jsonl"
        assert run(str(tree), "--workers", "2", "--pool", pool, "-o", str(out)) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_summary_counts_and_percentiles(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(tree / "a.txt", tree / "bin.dat")
    (tree / "bin.dat").write_bytes(b"\x00\x01binary")
    assert run(str(tree), "-o", str(tmp_path / "out.jsonl")) == 0
    err = capsys.readouterr().err
    assert "5 documents" in err
    assert "1 skipped (1 binary)" in err
    assert "bin.dat" not in err
    assert "parents (chars): p50" in err
    assert "children (chars): p50" in err
    assert "MB/s" in err


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    documents=st.lists(st.tuples(texts, st.booleans()), min_size=1, max_size=5),
    parent_size=st.integers(20, 300),
    child_share=st.integers(2, 6),
)
def test_outputs_agree_on_hostile_text(
    documents: list[tuple[str, bool]], parent_size: int, child_share: int
) -> None:
    # Plain and Markdown files of hostile Unicode (NULs make some binary: skipped by both):
    # JSON Lines is json.dumps of each chunk, Parquet the same records in pre-order, and
    # every chunk's text is its span of its file.
    pq = pytest.importorskip("pyarrow.parquet")
    child_size = max(1, parent_size // child_share)
    root = Path(tempfile.mkdtemp(prefix="spanchunk-outputs-"))
    try:
        folder = root / "in"
        folder.mkdir()
        for number, (text, markdown) in enumerate(documents):
            name = f"{number:02d}.{'md' if markdown else 'txt'}"
            (folder / name).write_bytes(text.encode("utf-8"))
        kept = [
            path for path in sorted_files(folder) if b"\x00" not in Path(path).read_bytes()[:8192]
        ]
        assume(kept)  # with every file binary the run fails, as it should (tested apart)
        settings_args = ["--parent-size", str(parent_size), "--child-size", str(child_size)]
        jsonl, parquet = root / "out.jsonl", root / "out.parquet"
        assert run(str(folder), *settings_args, "-o", str(jsonl)) == 0
        assert run(str(folder), *settings_args, "-o", str(parquet)) == 0
        expected = reference_jsonl(kept, parent_size=parent_size, child_size=child_size)
        assert jsonl.read_bytes() == expected
        # Records end at "\n" only: U+0085 and U+2028 are text inside them.
        lines = expected.decode("utf-8").split("\n")[:-1]
        records = [json.loads(line) for line in lines]
        rows = pq.read_table(parquet).to_pylist()
        for row in rows:
            for key in PATH_AND_FIELD_COLUMNS:
                if row[key] is None:
                    del row[key]
        assert rows == preorder(records)
        check_round_trip(rows)
    finally:
        shutil.rmtree(root)
