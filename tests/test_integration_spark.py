"""Spark: ``mapInArrow(ChunkBatches(...).map_in_arrow, spark_schema())`` on a local Spark gives
the rows ``ChunkBatches`` gives in this process.

One SparkSession for the module (``local[2]``, no UI, two shuffle partitions; started once,
stopped at the end). Its Python workers run this interpreter (``PYSPARK_PYTHON``), the one
that has spanchunk; Spark pickles the ``ChunkBatches`` behind ``map_in_arrow`` for them, so
every row compared here was cut in a worker process, from Arrow batches of Spark's making
(four rows a batch, so a partition is several calls).
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest
from _contract import TextInfo, check_chunks, hierarchical_levels, parent_child_levels
from conftest import corpus_missing, corpus_root, read_document
from pyspark.errors import PythonException
from pyspark.sql import DataFrame, SparkSession
from spanchunk.integrations.ray import ChunkBatches, chunk_schema, spark_schema

# mapInArrow checks for pandas (pyspark 4.3 needs it >= 2.2), and pyspark warns that it does
# not yet fully support pandas 3; the warning is about pyspark's pandas paths, which
# mapInArrow's Arrow batches do not take.
pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning"
)

STDLIB = Path(sysconfig.get_paths()["stdlib"])
#: Real Python source for the code chunker: modules of the standard library.
STDLIB_MODULES = ("argparse.py", "textwrap.py", "json/decoder.py", "string.py", "shlex.py")

#: Each chunker ChunkBatches builds, with its settings, the corpus it cuts and its levels.
CASES = {
    "parent_child": (
        {"parent_size": 2000, "child_size": 400},
        "text",
        parent_child_levels(2000, 400),
    ),
    "hierarchical": ({"sizes": [3000, 800, 200]}, "text", hierarchical_levels([3000, 800, 200])),
    "markdown": (
        {"parent_size": 2000, "child_size": 400, "markdown": True},
        "text",
        parent_child_levels(2000, 400),
    ),
    "python": (
        {"parent_size": 1500, "child_size": 300, "language": "python"},
        "code",
        parent_child_levels(1500, 300),
    ),
}
KEY = [("document_id", "ascending"), ("level", "descending"), ("index", "ascending")]


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with pytest.MonkeyPatch.context() as patch:
        # Spark starts its workers with $PYSPARK_PYTHON (else the first python3 on PATH).
        patch.setenv("PYSPARK_PYTHON", sys.executable)
        session = (
            SparkSession.builder.master("local[2]")
            .appName("spanchunk-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "4")
            .getOrCreate()
        )
        try:
            yield session
        finally:
            session.stop()


def corpus_table() -> pa.Table:
    root = corpus_root()
    if not root.is_dir():
        corpus_missing(f"corpus folder {root}")
    paths = sorted(p for p in root.glob("*/*") if p.is_file() and p.suffix in {".md", ".txt"})
    return pa.table(
        {
            "id": [str(p.relative_to(root)) for p in paths],
            "text": [read_document(p) for p in paths],
            "source": [p.name for p in paths],
            "folder": [p.parent.name for p in paths],
        }
    )


def code_table() -> pa.Table:
    paths = [STDLIB / name for name in STDLIB_MODULES]
    return pa.table({"id": list(STDLIB_MODULES), "text": [read_document(p) for p in paths]})


TABLES = {"text": corpus_table, "code": code_table}


def chunk_on_spark(documents: DataFrame, batches: ChunkBatches) -> pa.Table:
    """Spark's rows, with ``chunk_schema()``'s types (Spark hands ``text`` back as string)."""
    rows = documents.mapInArrow(batches.map_in_arrow, spark_schema()).toArrow()
    assert rows.schema.names == chunk_schema().names
    return rows.cast(chunk_schema())


def chunks_of(rows: list[dict[str, Any]]) -> list[SimpleNamespace]:
    """One document's rows as Chunk-like objects for the contract checker, parents first."""
    ordered = sorted(rows, key=lambda row: (-row["level"], row["index"]))
    return [
        SimpleNamespace(**{**row, "content": row["text"], "child_ids": tuple(row["child_ids"])})
        for row in ordered
    ]


@pytest.mark.parametrize("case", CASES)
def test_spark_rows_are_the_in_process_rows(spark: SparkSession, case: str) -> None:
    settings, corpus, levels = CASES[case]
    table = TABLES[corpus]()
    batches = ChunkBatches(**settings)
    got = chunk_on_spark(spark.createDataFrame(table), batches)
    local = batches(table)
    assert got.num_rows == local.num_rows > 2 * table.num_rows
    # createDataFrame keeps the rows' order in its partitions, and a partition's batches in
    # order: the same rows in the same order, every column.
    assert got.equals(local)
    assert len(set(got.column("level").to_pylist())) == len(levels)
    if case == "markdown":
        assert ["Introduction"] in got.column("headings").to_pylist()
    if case == "python":
        assert set(got.column("language").to_pylist()) == {"python"}
        assert ["ArgumentParser"] in got.column("symbols").to_pylist()


@pytest.mark.parametrize("case", CASES)
def test_the_contract_holds_on_sparks_rows(spark: SparkSession, case: str) -> None:
    settings, corpus, levels = CASES[case]
    table = TABLES[corpus]()
    got = chunk_on_spark(spark.createDataFrame(table), ChunkBatches(**settings))
    texts = dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))
    by_document: dict[str, list[dict[str, Any]]] = {}
    for row in got.to_pylist():
        document = texts[row["document_id"]]
        assert row["text"] == document[row["start_char"] : row["end_char"]], row["id"]
        by_document.setdefault(row["document_id"], []).append(row)
    assert set(by_document) == {i for i, text in texts.items() if text.strip()}
    for document_id, rows in by_document.items():
        text = texts[document_id]
        check_chunks(
            text, chunks_of(rows), levels, "char", document_id=document_id, info=TextInfo(text)
        )


def test_ids_do_not_depend_on_the_partitions(spark: SparkSession) -> None:
    settings, _, _ = CASES["parent_child"]
    table = corpus_table()
    batches = ChunkBatches(**settings)
    documents = spark.createDataFrame(table)
    one = chunk_on_spark(documents.coalesce(1), batches)
    # Documents dealt at random to five partitions, cut by two workers at a time.
    spread = documents.repartition(5)
    assert spread.rdd.getNumPartitions() == 5
    several = chunk_on_spark(spread, batches)
    assert one.column("id").to_pylist() == batches(table).column("id").to_pylist()
    assert several.num_rows == one.num_rows
    assert several.sort_by(KEY).equals(one.sort_by(KEY))


def test_a_bad_setting_fails_before_spark_runs() -> None:
    with pytest.raises(ValueError, match="levels must be 'all', 'leaves' or 'parents'"):
        ChunkBatches(levels="children")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rows", "ddl", "settings", "error"),
    [
        (
            [("a", "Some text.")],
            "id string, text string",
            {"text_column": "body"},
            r"KeyError: \"no column 'body' in the batch \(columns: \['id', 'text'\]\)",
        ),
        (
            [("a", "Some text."), ("b", None)],
            "id string, text string",
            {},
            r"TypeError: row 1 of column 'text' is null, not a str",
        ),
        (
            [("a", 7)],
            "id string, text bigint",
            {},
            r"TypeError: column 'text' is of type int64, not strings",
        ),
        ([("", "Some text.")], "id string, text string", {}, r"ValueError: .*cannot be empty"),
    ],
    ids=["missing column", "null text", "not strings", "empty id"],
)
def test_a_bad_row_fails_the_job_with_the_batch_functions_error(
    spark: SparkSession, rows: list[tuple[Any, ...]], ddl: str, settings: dict[str, Any], error: str
) -> None:
    documents = spark.createDataFrame(rows, ddl).coalesce(1)
    chunks = documents.mapInArrow(ChunkBatches(**settings).map_in_arrow, spark_schema())
    with pytest.raises(PythonException, match=error):
        chunks.collect()
