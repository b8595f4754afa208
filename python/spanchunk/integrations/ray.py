"""Ray Data (and Spark): chunk a table of documents into a table of chunks, batch by batch.

``ChunkBatches`` is a callable class for ``Dataset.map_batches(..., batch_format="pyarrow")``:
Ray builds one instance per actor, so the chunker is built once per actor, and calls it with
a ``pyarrow.Table`` of documents; it returns a ``pyarrow.Table`` of chunks with the schema of
``chunk_schema()``. The same object's ``map_in_arrow`` is a function for Spark's
``DataFrame.mapInArrow`` (``spark_schema()`` gives the matching DDL).

Example (a local Ray; on a cluster, ``ray.init(address="auto")`` and a shared path):

.. code-block:: python

    import ray
    from spanchunk.integrations.ray import ChunkBatches

    documents = ray.data.read_parquet("s3://bucket/documents/")  # columns: id, text, ...
    chunks = documents.map_batches(
        ChunkBatches,
        fn_constructor_kwargs={"parent_size": 2000, "child_size": 400},
        batch_format="pyarrow",
        concurrency=8,  # actors; each builds its chunker once
    )
    chunks.write_parquet("s3://bucket/chunks/")

``chunk_batch`` is the same as a plain function, for ``map_batches(chunk_batch,
fn_kwargs={...})``: Ray runs it as tasks on its pooled worker processes (no actor to start
per execution) and each process builds the chunker of given settings once.

Input columns (names configurable): ``text`` (required), ``id`` (the document id; a hash of
the text when absent or null), ``source`` (a path or URL), and metadata: every other column
(or those named by ``metadata_columns``), stored per chunk as one JSON object.
"""

from __future__ import annotations

import bisect
import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

from spanchunk import Chunk, HierarchicalChunker
from spanchunk import Document as SpanDocument
from spanchunk._schema import chunk_schema as _chunk_schema
from spanchunk.integrations._common import Unit, hierarchical_chunker, missing_extra

try:
    import pyarrow as pa
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("pyarrow", "ray", error) from None

__all__ = ["ChunkBatches", "chunk_batch", "chunk_schema", "spark_schema"]

Levels = Literal["all", "leaves", "parents"]


def chunk_schema() -> pa.Schema:
    """The Arrow schema of a table of chunks: one row per chunk, every level.

    ==============  ==============  ====================================================
    column          type            value
    ==============  ==============  ====================================================
    ``id``          string          ``Chunk.id`` (16 hex digits, deterministic)
    ``document_id`` string          ``Chunk.document_id``
    ``source``      string, null    the document's source (path or URL)
    ``level``       int8            ``Chunk.level``: 0 for the leaves, 1 for parents, ...
    ``index``       int32           ``Chunk.index`` within its document and level
    ``parent_id``   string, null    ``Chunk.parent_id`` (null at the top)
    ``child_ids``   list<string>    ``Chunk.child_ids`` (empty for the leaves)
    ``start_char``  int64           ``Chunk.start_char`` (code points, as Python's len)
    ``end_char``    int64           ``Chunk.end_char``
    ``start_byte``  int64           ``Chunk.start_byte`` (UTF-8)
    ``end_byte``    int64           ``Chunk.end_byte``
    ``text``        large_string    ``Chunk.text``
    ``headings``    list<string>,   the Markdown heading path; null for plain text
                    null
    ``metadata``    string          the document's metadata as a JSON object
    ==============  ==============  ====================================================
    """
    return _chunk_schema(metadata=True)


_SPARK_TYPES = {
    pa.string(): "string",
    pa.int8(): "tinyint",
    pa.int32(): "int",
    pa.large_string(): "string",
    pa.int64(): "bigint",
    pa.list_(pa.string()): "array<string>",
}


def spark_schema() -> str:
    """``chunk_schema()`` as a Spark DDL string, for ``DataFrame.mapInArrow``."""
    return ", ".join(
        f"`{field.name}` {_SPARK_TYPES[field.type]}" + ("" if field.nullable else " not null")
        for field in chunk_schema()
    )


class ChunkBatches:
    """Documents table in, chunks table out: the batch function for Ray Data and Spark.

    Args:
        parent_size: The largest parent (with ``child_size``: two levels).
        child_size: The largest child.
        child_overlap: Overlap between consecutive children, at a separator boundary.
        sizes: Instead of the two sizes: every level's size, the top first.
        unit: ``"char"``, ``"byte"`` or ``"token"`` (with ``encoding``).
        encoding: A tiktoken encoding for token units.
        markdown: Cut the top level at Markdown sections; ``headings`` is filled.
        levels: ``"all"`` (parents and children in one table), ``"leaves"`` or
            ``"parents"`` (run two ``map_batches`` for two datasets).
        text_column: The column of the document texts.
        id_column: The column of the document ids (absent or null: a hash of the text).
        source_column: The column of the sources (may be absent).
        metadata_columns: The columns that go into ``metadata`` (None: every other
            column; ``()``: none).

    The chunker is built here, once per instance: with ``map_batches(ChunkBatches, ...)``
    Ray makes one instance per actor. Parents are not kept between batches.

    Example:
        >>> import pyarrow as pa
        >>> table = pa.table({"id": ["a"], "text": ["Some text. " * 100], "lang": ["en"]})
        >>> chunks = ChunkBatches(parent_size=500, child_size=100)(table)
        >>> chunks.schema == chunk_schema(), chunks.column("metadata")[0].as_py()
        (True, '{"lang": "en"}')
    """

    def __init__(
        self,
        parent_size: int = 2000,
        child_size: int = 400,
        child_overlap: int = 0,
        *,
        sizes: Sequence[int] | None = None,
        unit: Unit = "char",
        encoding: str | None = None,
        markdown: bool = False,
        levels: Levels = "all",
        text_column: str = "text",
        id_column: str = "id",
        source_column: str = "source",
        metadata_columns: Sequence[str] | None = None,
    ) -> None:
        if levels not in ("all", "leaves", "parents"):
            raise ValueError(f"levels must be 'all', 'leaves' or 'parents', not {levels!r}")
        level_sizes = [parent_size, child_size] if sizes is None else list(sizes)
        self.chunker: HierarchicalChunker = hierarchical_chunker(
            level_sizes, child_overlap, unit, encoding, markdown
        )
        self.levels = levels
        self.text_column = text_column
        self.id_column = id_column
        self.source_column = source_column
        self.metadata_columns = None if metadata_columns is None else list(metadata_columns)

    def __call__(self, batch: pa.Table | pa.RecordBatch) -> pa.Table:
        """Chunk one batch of documents.

        Args:
            batch: A table (or record batch) with the text column.

        Returns:
            One row per chunk, with ``chunk_schema()``: document by document, each
            document's chunks in pre-order (each parent followed by its children), as
            the command line's Parquet rows (the files a quarter smaller than in level
            order: a child's text is a copy of its parent's to the codec).

        Raises:
            KeyError: The text column is missing.
            TypeError: A text is null or not a string.
        """
        names = batch.schema.names
        if self.text_column not in names:
            raise KeyError(
                f"no column {self.text_column!r} in the batch (columns: {names}): pass "
                "text_column= the name of the column that holds the texts"
            )
        texts = batch.column(self.text_column).to_pylist()
        rows = len(texts)
        ids = self._column(batch, self.id_column, rows)
        sources = self._column(batch, self.source_column, rows)
        meta_names = (
            [n for n in names if n not in (self.text_column, self.id_column, self.source_column)]
            if self.metadata_columns is None
            else self.metadata_columns
        )
        meta_values = [batch.column(name).to_pylist() for name in meta_names]
        documents = []
        metadata_json = []
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(
                    f"row {row} of column {self.text_column!r} is {type(text).__name__}, not "
                    "a str: drop or fill null texts before chunking"
                )
            documents.append(SpanDocument(text, id=ids[row]))
            metadata_json.append(
                json.dumps(
                    {
                        name: values[row]
                        for name, values in zip(meta_names, meta_values, strict=True)
                    },
                    ensure_ascii=False,
                    default=str,
                )
            )
        keep = self.levels
        chunks: list[Chunk] = []
        origin: list[int] = []  # the input row of each chunk
        try:
            for row, document in enumerate(documents):
                tree = self.chunker.chunk_tree(document)
                if keep == "leaves":  # in reading order either way
                    tree = [chunk for chunk in tree if chunk.level == 0]
                else:
                    tree = _preorder(tree)
                if keep == "parents":
                    tree = [chunk for chunk in tree if chunk.level > 0]
                chunks.extend(tree)
                origin.extend([row] * len(tree))
        finally:
            self.chunker.clear()  # parents live in the output table, not in the actor
        return self._table(chunks, origin, sources, metadata_json)

    def map_in_arrow(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The same, for Spark's ``DataFrame.mapInArrow(function, spark_schema())``."""
        for batch in batches:
            yield from self(batch).to_batches()

    @staticmethod
    def _column(batch: pa.Table | pa.RecordBatch, name: str, rows: int) -> list[Any]:
        if name in batch.schema.names:
            return batch.column(name).to_pylist()
        return [None] * rows

    @staticmethod
    def _table(
        chunks: list[Chunk],
        origin: list[int],
        sources: list[str | None],
        metadata_json: list[str],
    ) -> pa.Table:
        headings = [chunk.metadata.get("headings") for chunk in chunks]
        columns = {
            "id": [chunk.id for chunk in chunks],
            "document_id": [chunk.document_id for chunk in chunks],
            "source": [sources[row] for row in origin],
            "level": [chunk.level for chunk in chunks],
            "index": [chunk.index for chunk in chunks],
            "parent_id": [chunk.parent_id for chunk in chunks],
            "child_ids": [list(chunk.child_ids) for chunk in chunks],
            "start_char": [chunk.start_char for chunk in chunks],
            "end_char": [chunk.end_char for chunk in chunks],
            "start_byte": [chunk.start_byte for chunk in chunks],
            "end_byte": [chunk.end_byte for chunk in chunks],
            "text": [chunk.text for chunk in chunks],
            "headings": [None if path is None else list(path) for path in headings],
            "metadata": [metadata_json[row] for row in origin],
        }
        return pa.Table.from_pydict(columns, schema=chunk_schema())


def _preorder(tree: list[Chunk]) -> list[Chunk]:
    """A document's tree in pre-order, each parent followed by its children.

    ``chunk_tree`` gives the levels from the top (``level`` falling to 0), each level's
    chunks grouped by parent in the parents' order: each parent's children are the next
    run of the level below. Only the parents are visited (the leaves go over in slices),
    which keeps this a few percent of the batch.
    """
    if not tree or tree[0].level == 0:
        return tree
    ends = [
        bisect.bisect_left(tree, -level + 1, key=lambda chunk: -chunk.level)
        for level in range(tree[0].level, -1, -1)
    ]
    levels = [tree[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]
    order: list[Chunk] = []
    taken = [0] * len(levels)
    last = len(levels) - 1

    def place(depth: int, parents: list[Chunk]) -> None:
        below = levels[depth + 1]
        for parent in parents:
            order.append(parent)
            first = taken[depth + 1]
            taken[depth + 1] = first + len(parent.child_ids)
            children = below[first : taken[depth + 1]]
            if depth + 1 == last:
                order.extend(children)
            else:
                place(depth + 1, children)

    place(0, levels[0])
    return order


# One ChunkBatches per thread and settings: a ChunkBatches clears its chunker's registry
# after each batch, so two threads must not share one.
_PER_THREAD = threading.local()


def chunk_batch(batch: pa.Table | pa.RecordBatch, **settings: Any) -> pa.Table:
    """``ChunkBatches(**settings)(batch)``, the chunker built once per process and settings.

    The form of ``ChunkBatches`` for Ray Data tasks: ``map_batches(chunk_batch,
    fn_kwargs={"parent_size": 2000, "child_size": 400}, batch_format="pyarrow")``. Tasks run
    on the worker processes Ray keeps started, so an execution starts no actors (on a small
    job, starting them costs more than the chunking); each process (each thread) keeps one
    ``ChunkBatches`` per distinct settings.

    Args:
        batch: A table (or record batch) with the text column.
        **settings: ``ChunkBatches``'s arguments (JSON-safe values).

    Returns:
        The chunks table, as ``ChunkBatches`` gives it.

    Example:
        >>> table = pa.table({"id": ["a"], "text": ["Some text. " * 100]})
        >>> chunk_batch(table, parent_size=500, child_size=100).equals(
        ...     ChunkBatches(parent_size=500, child_size=100)(table)
        ... )
        True
    """
    functions: dict[str, ChunkBatches] | None = getattr(_PER_THREAD, "functions", None)
    if functions is None:
        functions = _PER_THREAD.functions = {}
    key = json.dumps(settings, sort_keys=True, default=str)
    function = functions.get(key)
    if function is None:
        function = functions[key] = ChunkBatches(**settings)
    return function(batch)
