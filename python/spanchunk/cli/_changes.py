"""``spanchunk changes STORE``: a store's change feed (``SqliteRegistry.feed_plan`` and the
core's ``write_feed_upserts``, or ``changes`` for Parquet) as JSON Lines or Parquet, for any
other tool to apply; with ``--consumer NAME --acknowledge``, the consumer's position moves
once the feed is written whole."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from spanchunk import _core
from spanchunk.ingest.output import mode_for, temporary_file
from spanchunk.stores import ChangeFeed, SqliteRegistry

__all__ = ["FEED_COLUMNS", "export_changes", "feed_records"]

#: The columns of a Parquet feed, in order: ``op`` is ``"upsert"`` or ``"delete"``; a delete
#: has its ``id`` only (the others null); ``metadata`` is JSON text.
FEED_COLUMNS = (
    "op",
    "id",
    "text",
    "text_hash",
    "document_id",
    "level",
    "index",
    "start_char",
    "end_char",
    "start_byte",
    "end_byte",
    "parent_id",
    "metadata",
)


def feed_records(feed: ChangeFeed) -> Iterator[dict[str, Any]]:
    """The feed as Parquet rows: the deletes first, then the upserts."""
    empty = dict.fromkeys(FEED_COLUMNS[2:])
    for chunk_id in feed.deletes:
        yield {"op": "delete", "id": chunk_id, **empty}
    for item in feed.upserts:
        chunk = item.chunk
        yield {
            "op": "upsert",
            "id": chunk.id,
            "text": chunk.text,
            "text_hash": item.text_hash,
            "document_id": chunk.document_id,
            "level": chunk.level,
            "index": chunk.index,
            "start_char": chunk.start_char,
            "end_char": chunk.end_char,
            "start_byte": chunk.start_byte,
            "end_byte": chunk.end_byte,
            "parent_id": chunk.parent_id,
            "metadata": json.dumps(dict(chunk.metadata), ensure_ascii=False, default=list),
        }


def export_changes(
    path: str,
    output: str,
    *,
    since: int | None,
    consumer: str | None,
    levels: tuple[int, ...] | None,
    acknowledge: bool,
) -> tuple[int, int, int, int]:
    """Write the feed of the store at ``path`` to ``output`` (``-``: stdout; ``.parquet``:
    Parquet, with pyarrow; else JSON Lines, the upserts written by the core), a file
    appearing whole or not at all; with ``acknowledge``, then move ``consumer``'s position
    to the feed's. Returns (upserts, deletes, since, position)."""
    with SqliteRegistry.open(path) as store:
        if output == "-":
            counts = _write_jsonl(
                store,
                path,
                sys.stdout,
                "/dev/stdout",
                since=since,
                consumer=consumer,
                levels=levels,
            )
        else:
            descriptor, temp = temporary_file(output)
            try:
                if output.endswith(".parquet"):
                    os.close(descriptor)
                    feed = store.changes(since, consumer=consumer, levels=levels)
                    _write_parquet(temp, feed)
                    counts = (len(feed.upserts), len(feed.deletes), feed.since, feed.position)
                else:
                    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                        counts = _write_jsonl(
                            store, path, file, temp, since=since, consumer=consumer, levels=levels
                        )
                os.chmod(temp, mode_for(output))
                os.replace(temp, output)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
    if acknowledge and consumer is not None:
        with SqliteRegistry.open(path) as store:
            store.acknowledge(consumer, counts[3])
    return counts


def _write_jsonl(
    store: SqliteRegistry,
    path: str,
    file: TextIO,
    target: str,
    *,
    since: int | None,
    consumer: str | None,
    levels: tuple[int, ...] | None,
) -> tuple[int, int, int, int]:
    """The feed as JSON Lines: the deletes written to ``file``, then the upserts appended to
    ``target`` (the same file, by its path) by the core, which reads them from the store's
    file (its JSON Lines writer, xxh3 for the text hashes) once this process's connection to
    the store is closed."""
    touched, deletes, since, position = store.feed_plan(since, consumer=consumer, levels=levels)
    store.close()  # two copies of SQLite must not hold one file at once
    for chunk_id in deletes:
        file.write(f'{{"op":"delete","id":{json.dumps(chunk_id, ensure_ascii=False)}}}\n')
    file.flush()
    upserts = _core.write_feed_upserts(
        path, target, touched, None if levels is None else list(levels)
    )
    return upserts, len(deletes), since, position


def _write_parquet(path: str, feed: ChangeFeed) -> None:
    try:
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.parquet as pq  # noqa: PLC0415
    except ImportError as error:
        raise ValueError(
            "a Parquet feed needs pyarrow: pip install pyarrow, or write JSON Lines (-o FILE.jsonl)"
        ) from error
    records = list(feed_records(feed))
    columns = {name: [record[name] for record in records] for name in FEED_COLUMNS}
    pq.write_table(pa.table(columns), path)
