"""The Arrow schema of a table of chunks, shared by the command line's Parquet output and the
Ray Data integration, so a file written by either reads the same way.

pyarrow is imported only when a schema is asked for (it is an optional extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["chunk_table_schema"]


def chunk_table_schema(*, metadata: bool = False) -> pa.Schema:
    """One row per chunk: ids, place in the tree, exact spans, text and heading path.

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
    ]
    if metadata:
        fields.append(pa.field("metadata", pa.string(), nullable=False))
    return pa.schema(fields)
