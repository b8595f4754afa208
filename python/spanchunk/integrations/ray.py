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

Speed: ``benches/NOTES.md``, under ``python/spanchunk/integrations/ray.py``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from spanchunk import HierarchicalChunker, _core
from spanchunk.arrow import chunk_table_schema, table_header_type
from spanchunk.chunkers import hooks
from spanchunk.chunkers.spans import core_levels
from spanchunk.document import check_id
from spanchunk.integrations._common import hierarchical_chunker, missing_extra
from spanchunk.units import Unit

try:
    import pyarrow as pa
    import pyarrow.compute as pc
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
    ``symbols``     list<string>,   source code's symbol path (a code level); null
                    null            otherwise
    ``language``    string, null    source code's language; null otherwise
    ``source_st...  int64, null     ``source_start_byte`` and ``source_end_byte``: an
                                    HTML page's chunk's bytes in the page; null otherwise
    ``table_hea...  struct, null    the header row of the chunk's table (``text``,
                                    ``start_char``, ``end_char``, ``start_byte``,
                                    ``end_byte``); null outside a table with one
    ``page_first``  int64, null     the first and last page the chunk spans (see
    ``page_last``                   ``pages``); null where its document marks none
    ``metadata``    string          the document's metadata as a JSON object
    ==============  ==============  ====================================================
    """
    return chunk_table_schema(metadata=True)


_SPARK_TYPES = {
    pa.string(): "string",
    pa.int8(): "tinyint",
    pa.int32(): "int",
    pa.large_string(): "string",
    pa.int64(): "bigint",
    pa.list_(pa.string()): "array<string>",
    table_header_type(): (
        "struct<text:string,start_char:bigint,end_char:bigint,start_byte:bigint,end_byte:bigint>"
    ),
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
        language: Cut the top level of source code of this language (``"python"``, ...) at
            its definitions; ``symbols`` and ``language`` are filled.
        levels: ``"all"`` (parents and children in one table), ``"leaves"`` or
            ``"parents"`` (run two ``map_batches`` for two datasets).
        text_column: The column of the document texts.
        id_column: The column of the document ids (absent or null: a hash of the text).
        source_column: The column of the sources (may be absent).
        metadata_columns: The columns that go into ``metadata`` (None: every other
            column; ``()``: none).

    The chunker is built here, once per instance: with ``map_batches(ChunkBatches, ...)``
    Ray makes one instance per actor. A batch is cut in one core call, with the GIL
    released, that lays its chunks out as Arrow buffers (no Python object per chunk), and
    nothing of it is kept for the next batch.

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
        language: str | None = None,
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
            level_sizes, child_overlap, unit, encoding, markdown, language=language
        )
        # What the core cuts with (every level is built in: the settings above make no
        # other kind of chunker).
        self._core_levels = core_levels(hooks.levels(self.chunker))
        self._fingerprint = self.chunker.fingerprint()
        self.levels = levels
        self.text_column = text_column
        self.id_column = id_column
        self.source_column = source_column
        self.metadata_columns = None if metadata_columns is None else list(metadata_columns)

    def __getstate__(self) -> dict[str, Any]:
        """What pickles: everything but the core's splitters, which do not (Spark pickles
        ``map_in_arrow``'s instance for its workers; Ray pickles one passed as a function)."""
        state = self.__dict__.copy()
        del state["_core_levels"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._core_levels = core_levels(hooks.levels(self.chunker))

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
            TypeError: The text column is not of strings or holds a null, or an id is not
                a string.
            ValueError: A text is not UTF-8 (Arrow's writers are trusted to, not relied
                on), or an id holds a lone surrogate or is empty.
        """
        names = batch.schema.names
        if self.text_column not in names:
            raise KeyError(
                f"no column {self.text_column!r} in the batch (columns: {names}): pass "
                "text_column= the name of the column that holds the texts"
            )
        data, offsets = _utf8_column(batch.column(self.text_column), self.text_column)
        rows = len(offsets) - 1
        ids = [
            None if given is None else check_id(given)
            for given in self._column(batch, self.id_column, rows)
        ]
        sources = self._column(batch, self.source_column, rows)
        meta_names = (
            [n for n in names if n not in (self.text_column, self.id_column, self.source_column)]
            if self.metadata_columns is None
            else self.metadata_columns
        )
        meta_values = [batch.column(name).to_pylist() for name in meta_names]
        metadata_json = [
            json.dumps(
                {name: values[row] for name, values in zip(meta_names, meta_values, strict=True)},
                ensure_ascii=False,
                default=str,
            )
            for row in range(rows)
        ]
        chunks = _core.chunk_columns(
            self._core_levels, self._fingerprint, data, offsets, ids, sources, metadata_json
        )
        table = pa.Table.from_batches([pa.record_batch(chunks)], schema=chunk_schema())
        if self.levels == "all":
            return table
        level = table.column("level")
        keep = pc.equal(level, 0) if self.levels == "leaves" else pc.greater(level, 0)
        return table.filter(keep)

    def map_in_arrow(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The same, for Spark's ``DataFrame.mapInArrow(function, spark_schema())``."""
        for batch in batches:
            yield from self(batch).to_batches()

    @staticmethod
    def _column(batch: pa.Table | pa.RecordBatch, name: str, rows: int) -> list[Any]:
        if name in batch.schema.names:
            values: list[Any] = batch.column(name).to_pylist()
            return values
        return [None] * rows


def _utf8_column(column: pa.Array | pa.ChunkedArray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of a string column and its offsets (int64, one more than rows), as
    numpy views of the column's own buffers where they can be (a column of several chunks
    is joined, 32-bit offsets widened): the core reads the texts there, with no ``str``
    made per text and encoded back to UTF-8.

    Raises:
        TypeError: The column is not of strings, or holds a null.
    """
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_string_view(array.type):
        array = array.cast(pa.large_string())
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        raise TypeError(
            f"column {name!r} is of type {array.type}, not strings: cast it to pa.string() "
            "(bytes decoded as UTF-8) before chunking"
        )
    if array.null_count:
        row = pc.index(array.is_null(), True).as_py()
        raise TypeError(
            f"row {row} of column {name!r} is null, not a str: drop or fill null texts before "
            "chunking"
        )
    rows = len(array)
    _, offsets, data = array.buffers()
    if offsets is None:  # no rows
        return np.empty(0, np.uint8), np.zeros(1, np.int64)
    width = np.int32 if pa.types.is_string(array.type) else np.int64
    bounds = np.frombuffer(offsets, width)[array.offset : array.offset + rows + 1]
    utf8 = np.empty(0, np.uint8) if data is None else np.frombuffer(data, np.uint8)
    return utf8, bounds.astype(np.int64, copy=False)


# One ChunkBatches per thread and settings: a ChunkBatches keeps nothing between batches,
# so threads could share one, but a dict per thread needs no lock to be filled.
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
