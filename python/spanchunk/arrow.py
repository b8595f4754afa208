"""The Arrow schema of a table of chunks, shared by the command line's Parquet output and the
Ray Data integration, so a file written by either reads the same way.

pyarrow is imported only when a schema is asked for (it is an optional extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["chunk_table_schema", "table_header_type"]


def table_header_type() -> pa.DataType:
    """The ``table_header`` column's type: the header row of the table a chunk lies in."""
    import pyarrow as pa  # noqa: PLC0415

    # The fields are nullable as the struct is: a reader casting a null row's fields (Spark's
    # mapInArrow does) must not find a non-nullable field empty.
    return pa.struct(
        [
            pa.field("text", pa.string()),
            *(
                pa.field(name, pa.int64())
                for name in ("start_char", "end_char", "start_byte", "end_byte")
            ),
        ]
    )


def chunk_table_schema(*, metadata: bool = False) -> pa.Schema:
    """One row per chunk: ids, place in the tree, exact spans, text and heading path, for an
    HTML page's chunk its byte span in the page's source, and for a chunk of a table with a
    header row that row (null for any other).

    Args:
        metadata: Add a ``metadata`` column (the document's metadata as a JSON object), as
            the Ray Data integration writes; the command line's files have none.
    """
    import pyarrow as pa  # noqa: PLC0415

    fields = [
        pa.field("id", pa.string(), nullable=False),
        pa.field("document_id", pa.string(), nullable=False),
        pa.field("source", pa.string()),
        pa.field("level", pa.int8(), nullable=False),
        pa.field("index", pa.int32(), nullable=False),
        pa.field("parent_id", pa.string()),
        pa.field("child_ids", pa.list_(pa.string()), nullable=False),
        pa.field("start_char", pa.int64(), nullable=False),
        pa.field("end_char", pa.int64(), nullable=False),
        pa.field("start_byte", pa.int64(), nullable=False),
        pa.field("end_byte", pa.int64(), nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
        pa.field("headings", pa.list_(pa.string())),
        pa.field("symbols", pa.list_(pa.string())),
        pa.field("language", pa.string()),
        pa.field("source_start_byte", pa.int64()),
        pa.field("source_end_byte", pa.int64()),
        pa.field("table_header", table_header_type()),
        pa.field("page_first", pa.int64()),
        pa.field("page_last", pa.int64()),
    ]
    if metadata:
        fields.append(pa.field("metadata", pa.string(), nullable=False))
    return pa.schema(fields)
