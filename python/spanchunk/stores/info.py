"""What a store holds (``spanchunk info STORE`` shows it): read-only (SQLite's
``mode=ro``), so it never creates a file, never changes one, and works beside a run that is
writing it.
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["store_info"]


def store_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What the store at ``path`` holds, as a JSON-safe dict: ``path``, ``schema``,
    ``fingerprint``, ``settings`` (the command line's, when it filled the store),
    ``documents`` (and ``documents_with_chunks``), ``levels`` (per level: ``chunks``,
    ``chars`` and the sizes' min, median, mean and max), ``skipped_files`` (by kind) and
    ``file_bytes`` (the store's file and its ``-wal``).

    Example:
        >>> import os, tempfile
        >>> from spanchunk import ParentChildChunker, SqliteRegistry
        >>> from spanchunk.stores.info import store_info
        >>> path = os.path.join(tempfile.mkdtemp(), "parents.sqlite")
        >>> with SqliteRegistry(path, children=True) as store:
        ...     _ = ParentChildChunker(200, 50, registry=store).chunk("Some text. " * 40)
        >>> [(level["level"], level["chunks"]) for level in store_info(path)["levels"]]
        [(1, 3), (0, 11)]

    Raises:
        FileNotFoundError: there is no file at ``path``.
        ValueError: the file is not a spanchunk store.
    """
    import sqlite3  # noqa: PLC0415

    from spanchunk.stores.schema import APPLICATION_ID  # noqa: PLC0415

    path = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{path} is a folder: give the path of a .sqlite store")
    if not os.path.exists(path):
        raise FileNotFoundError(f"no spanchunk store at {path}: check the path")
    uri = "file:" + _uri_path(os.path.abspath(path)) + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as error:
        raise ValueError(f"cannot open {path}: {error}") from None
    try:
        try:
            application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        except sqlite3.DatabaseError as error:
            raise ValueError(f"{path} is not a spanchunk store (SQLite says: {error})") from None
        if application_id != APPLICATION_ID:
            raise ValueError(f"{path} is not a spanchunk store")
        return _read(connection, path)
    finally:
        connection.close()


def _uri_path(path: str) -> str:
    from urllib.parse import quote  # noqa: PLC0415

    return quote(path)


def _read(connection: Any, path: str) -> dict[str, Any]:
    schema = connection.execute("PRAGMA user_version").fetchone()[0]
    meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    settings = json.loads(meta["cli_settings"]) if "cli_settings" in meta else None
    documents = connection.execute("SELECT count(*) FROM documents").fetchone()[0]
    with_chunks = connection.execute("SELECT count(DISTINCT document_id) FROM chunks").fetchone()[0]
    levels = []
    for level, count, chars, smallest, largest in connection.execute(
        "SELECT level, count(*), sum(end_char - start_char), min(end_char - start_char), "
        "max(end_char - start_char) FROM chunks GROUP BY level ORDER BY level DESC"
    ).fetchall():
        levels.append(
            {
                "level": level,
                "chunks": count,
                "chars": chars,
                "mean_chars": round(chars / count, 1) if count else 0,
                "min_chars": smallest,
                "median_chars": _median(connection, level, count),
                "max_chars": largest,
            }
        )
    skipped: dict[str, int] = {}
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    if "skipped_files" in tables:
        skipped = dict(
            connection.execute("SELECT kind, count(*) FROM skipped_files GROUP BY kind").fetchall()
        )
    files = {
        suffix or "store": os.path.getsize(path + suffix)
        for suffix in ("", "-wal")
        if os.path.exists(path + suffix)
    }
    return {
        "path": os.path.abspath(path),
        "schema": schema,
        "fingerprint": meta.get("fingerprint"),
        "settings": settings,
        "documents": documents,
        "documents_with_chunks": with_chunks,
        "levels": levels,
        "skipped_files": skipped,
        "file_bytes": files,
    }


def _median(connection: Any, level: int, count: int) -> int | None:
    if not count:
        return None
    row = connection.execute(
        "SELECT end_char - start_char AS size FROM chunks WHERE level = ? ORDER BY size "
        "LIMIT 1 OFFSET ?",
        (level, (count - 1) // 2),
    ).fetchone()
    return None if row is None else row[0]
