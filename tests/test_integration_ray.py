"""Ray Data: the corpus chunked by ChunkBatches on a local 2-CPU Ray equals a local run.

One Ray instance for the module (started once, shut down at the end); small batches so the
run stays short on a shared machine. The batch function itself is tested without Ray too.
"""

from __future__ import annotations

import doctest
import json
import pickle
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import spanchunk.integrations.ray as module
from conftest import corpus_missing, corpus_root, read_document
from spanchunk import Chunk, Document, ParentChildChunker
from spanchunk.cli import main
from spanchunk.ingest import document_id
from spanchunk.integrations.ray import ChunkBatches, chunk_batch, chunk_schema, spark_schema

# Ray Data's DataContext sets its deprecated fields from its own __init__ (a dataclass), which
# warns on every first use; the warning is about Ray's internals, not about this code.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")

SETTINGS = {"parent_size": 2000, "child_size": 400}


def corpus_paths() -> list[Path]:
    root = corpus_root()
    if not root.is_dir():
        corpus_missing(f"corpus folder {root}")
    return sorted(p for p in root.glob("*/*") if p.is_file() and p.suffix in {".md", ".txt"})


def corpus_table() -> pa.Table:
    root = corpus_root()
    paths = corpus_paths()
    return pa.table(
        {
            "id": [str(p.relative_to(root)) for p in paths],
            "text": [read_document(p) for p in paths],
            "source": [p.name for p in paths],
            "folder": [p.parent.name for p in paths],
        }
    )


def sort_rows(table: pa.Table) -> pa.Table:
    return table.sort_by(
        [("document_id", "ascending"), ("level", "descending"), ("index", "ascending")]
    )


@pytest.fixture(scope="module")
def ray_local() -> Iterator[object]:
    ray = pytest.importorskip("ray", reason="the ray extra is part of the test extra")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=300 * 1024 * 1024,
    )
    try:
        yield ray
    finally:
        ray.shutdown()


def in_preorder(tree: list[Chunk]) -> list[Chunk]:
    """A tree, levels from the top, as each parent followed by its children (recursively)."""
    by_id = {chunk.id: chunk for chunk in tree}

    def subtree(chunk: Chunk) -> list[Chunk]:
        return [chunk, *(c for child in chunk.child_ids for c in subtree(by_id[child]))]

    return [c for chunk in tree if chunk.parent_id is None for c in subtree(chunk)]


def test_batch_function_matches_the_chunker() -> None:
    table = corpus_table().slice(0, 12)
    chunks = ChunkBatches(**SETTINGS)(table)
    assert chunks.schema == chunk_schema()
    chunker = ParentChildChunker(**SETTINGS)
    expected = [
        chunk
        for row in table.to_pylist()
        for chunk in in_preorder(chunker.chunk_tree(Document(row["text"], id=row["id"])))
    ]
    assert [chunk.level for chunk in expected[:3]] == [1, 0, 0]
    three = ChunkBatches(sizes=[1000, 300, 80], metadata_columns=())
    assert three(table).column("id").to_pylist() == [
        chunk.id
        for row in table.to_pylist()
        for chunk in in_preorder(three.chunker.chunk_tree(Document(row["text"], id=row["id"])))
    ]
    assert chunks.column("id").to_pylist() == [chunk.id for chunk in expected]
    assert chunks.column("text").to_pylist() == [chunk.text for chunk in expected]
    assert chunks.column("child_ids").to_pylist() == [list(c.child_ids) for c in expected]
    texts = dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))
    for row in chunks.to_pylist()[::37]:
        text = texts[row["document_id"]]
        assert text[row["start_char"] : row["end_char"]] == row["text"]
        assert text.encode()[row["start_byte"] : row["end_byte"]] == row["text"].encode()
        assert json.loads(row["metadata"]) == {"folder": row["document_id"].split("/")[0]}
        assert row["source"] == row["document_id"].split("/")[-1]


def test_levels_column_names_and_headings() -> None:
    table = pa.table(
        {
            "body": ["# Title\n\nSome text here.\n\n## Part\n\nMore text. " * 20, "Plain. " * 300],
            "lang": ["en", "fr"],
        }
    )
    batches = ChunkBatches(500, 100, text_column="body", markdown=True, metadata_columns=[])
    both = batches(table)
    leaves = ChunkBatches(500, 100, text_column="body", markdown=True, levels="leaves")(table)
    parents = ChunkBatches(500, 100, text_column="body", markdown=True, levels="parents")(table)
    assert leaves.num_rows + parents.num_rows == both.num_rows
    assert set(leaves.column("level").to_pylist()) == {0}
    assert set(parents.column("level").to_pylist()) == {1}
    assert set(both.column("metadata").to_pylist()) == {"{}"}
    assert json.loads(leaves.column("metadata")[0].as_py()) == {"lang": "en"}
    assert ["Title"] in both.column("headings").to_pylist()
    assert both.column("source").null_count == both.num_rows
    with pytest.raises(KeyError, match="text_column"):
        ChunkBatches()(table)
    with pytest.raises(TypeError, match="null texts"):
        ChunkBatches()(pa.table({"text": ["ok", None]}))


@pytest.mark.parametrize("markdown", [False, True])
def test_rows_are_the_command_lines_parquet_rows(tmp_path: Path, markdown: bool) -> None:
    # The corpus's files as a table, with the command line's document ids (each file's
    # resolved path, `document_id`), give the command line's Parquet rows, in its
    # order, and a metadata column.
    paths = corpus_paths()
    out = tmp_path / "cli.parquet"
    argv = ["chunk", *map(str, paths), "--format", "markdown" if markdown else "text"]
    assert main([*argv, "-o", str(out)]) == 0
    table = pa.table(
        {
            "text": [read_document(p) for p in paths],
            "source": list(map(str, paths)),
            "id": [document_id(p) for p in paths],
        }
    )
    chunks = ChunkBatches(**SETTINGS, markdown=markdown, metadata_columns=())(table)
    assert set(chunks.column("metadata").to_pylist()) == {"{}"}
    assert chunks.drop_columns(["metadata"]).equals(pq.read_table(out))


def test_empty_batches_blank_texts_and_bad_ids() -> None:
    batches = ChunkBatches(500, 100)
    empty = batches(pa.table({"text": pa.array([], pa.string())}))
    assert empty.num_rows == 0
    assert empty.schema == chunk_schema()
    # Blank texts have no chunks; the one text that has gets both levels, valid as Arrow.
    chunks = batches(pa.table({"text": ["", "  \n ", "a b c"], "id": [None, None, "doc"]}))
    chunks.validate(full=True)
    assert chunks.column("text").to_pylist() == ["a b c", "a b c"]
    assert chunks.column("document_id").to_pylist() == ["doc", "doc"]
    assert chunks.column("parent_id").to_pylist() == [None, chunks.column("id")[0].as_py()]
    assert chunks.column("child_ids").to_pylist() == [[chunks.column("id")[1].as_py()], []]
    assert chunks.column("headings").null_count == 2
    with pytest.raises(ValueError, match="cannot be empty"):
        batches(pa.table({"text": ["x"], "id": [""]}))
    with pytest.raises(TypeError, match="must be a str"):
        batches(pa.table({"text": ["x"], "id": [3]}))


def test_text_columns_of_every_arrow_layout() -> None:
    # The core reads the column's own UTF-8 buffers: a slice (offsets not from 0), several
    # chunks, 64-bit offsets, a dictionary and a string view give the rows of plain strings.
    batches = ChunkBatches(50, 20, metadata_columns=())
    texts = ["Erste Zeile. Zweite Zeile. " * 4, "", "日本語の文。次の文。" * 5, "x y z"]
    ids = ["a", "b", "c", "d"]
    expected = batches(pa.table({"text": texts, "id": ids}))
    assert expected.num_rows > 8
    whole = pa.table({"text": ["pad", *texts], "id": ["p", *ids]}).slice(1)
    layouts = {
        "slice": whole,
        "chunks": pa.concat_tables([whole.slice(0, 2), whole.slice(2)]),
        "large_string": pa.table({"text": pa.array(texts, pa.large_string()), "id": ids}),
        "dictionary": pa.table({"text": pa.array(texts).dictionary_encode(), "id": ids}),
        "string_view": pa.table({"text": pa.array(texts, pa.string_view()), "id": ids}),
    }
    for name, table in layouts.items():
        assert batches(table).equals(expected), name
    assert batches(pa.table({"text": pa.array([], pa.large_string())})).num_rows == 0
    with pytest.raises(TypeError, match="row 1 of column 'text' is null"):
        batches(pa.table({"text": pa.chunked_array([["ok"], [None]])}))
    with pytest.raises(TypeError, match="of type binary, not strings"):
        batches(pa.table({"text": pa.array([b"bytes"])}))
    # Arrow data written without a check: not UTF-8 is refused, naming the row.
    unchecked = pa.array([b"fine", b"not \xff UTF-8"], pa.binary()).view(pa.string())
    with pytest.raises(ValueError, match=r"row 1: not UTF-8 \(byte 0xff at offset 4\)"):
        batches(pa.table({"text": unchecked}))


def test_batches_pickle_as_spark_and_ray_ship_them() -> None:
    # Spark pickles the instance behind ``map_in_arrow`` for its Python workers, and Ray an
    # instance passed as a function: the copy cuts the same rows.
    batches = ChunkBatches(300, 60, markdown=True, levels="leaves", text_column="body")
    table = pa.table({"body": ["# T\n\nSome text. " * 80, "Other words. " * 90]})
    copy = pickle.loads(pickle.dumps(batches))
    assert copy(table).equals(batches(table))
    method = pickle.loads(pickle.dumps(batches.map_in_arrow))
    assert pa.Table.from_batches(list(method(table.to_batches()))).equals(batches(table))


def test_spark_schema_names_every_column() -> None:
    ddl = spark_schema()
    assert [part.split()[0].strip("`") for part in ddl.split(", ")] == chunk_schema().names
    assert "`child_ids` array<string> not null" in ddl


def test_ray_data_to_parquet_equals_a_local_run(ray_local: object, tmp_path: Path) -> None:
    ray = ray_local
    table = corpus_table()
    # Several blocks (8), so that both actors get work.
    size = -(-table.num_rows // 8)
    blocks = [table.slice(start, size) for start in range(0, table.num_rows, size)]
    dataset = ray.data.from_arrow(blocks)  # type: ignore[attr-defined]
    chunks = dataset.map_batches(
        ChunkBatches,
        fn_constructor_kwargs=SETTINGS,
        batch_format="pyarrow",
        batch_size=10,
        concurrency=2,
    )
    out = tmp_path / "chunks"
    chunks.write_parquet(str(out))
    written = pq.read_table(out, schema=chunk_schema())
    local = ChunkBatches(**SETTINGS)(table)
    assert written.num_rows == local.num_rows
    assert sort_rows(written).equals(sort_rows(local))


def test_chunk_batch_is_chunk_batches_built_once_per_settings() -> None:
    table = pa.table({"id": ["a", "b"], "text": ["Some text. " * 300, "Other words. " * 200]})
    assert chunk_batch(table, **SETTINGS).equals(ChunkBatches(**SETTINGS)(table))
    small = chunk_batch(table, parent_size=500, child_size=100, levels="leaves")
    assert small.equals(ChunkBatches(500, 100, levels="leaves")(table))
    functions = module._PER_THREAD.functions
    assert len(functions) == 2  # one per distinct settings, kept for the next batch
    chunk_batch(table, **SETTINGS)
    assert len(functions) == 2
    failures, tried = doctest.testmod(module)
    assert tried and not failures


def test_ray_data_tasks_equal_a_local_run(ray_local: object) -> None:
    ray = ray_local
    table = corpus_table()
    size = -(-table.num_rows // 4)
    blocks = [table.slice(start, size) for start in range(0, table.num_rows, size)]
    chunks = ray.data.from_arrow(blocks).map_batches(  # type: ignore[attr-defined]
        chunk_batch, fn_kwargs=SETTINGS, batch_format="pyarrow", batch_size=None
    )
    got = pa.concat_tables(ray.get(chunks.to_arrow_refs()))  # type: ignore[attr-defined]
    local = ChunkBatches(**SETTINGS)(table)
    assert sort_rows(got.cast(chunk_schema())).equals(sort_rows(local))
