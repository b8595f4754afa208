"""The change feed of a SQLite store: what each write added and removed, for keeping a vector
database in step with the store without embedding again what did not change.

Every write transaction that changes a store's chunks is numbered (``changes``), and records
the chunk ids it added or removed (``change_chunks``), every level: a chunk whose document,
level and text are unchanged keeps its id (ids follow the text) and is in neither, however far
an edit elsewhere moved it. ``changes(since=N)`` turns the ids touched after change N into
the upserts (the chunks that exist now) and the deletes (the ids that do not), so reading it
twice, or applying it twice, gives the same result. Named consumers keep the number they have
applied in the store (``consumers``); ``compact`` drops the records that every consumer has
read, and a reader that asks for changes from before a compaction is told to rebuild
(``ChangesCompacted``) rather than given a partial feed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from spanchunk import _core
from spanchunk.chunk import Chunk
from spanchunk.stores.codec import chunks_of
from spanchunk.stores.schema import SELECT
from spanchunk.stores.sqlite_file import SqliteFile

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "ChangeFeed",
    "ChangeLog",
    "ChangeRecords",
    "ChangesCompacted",
    "Upsert",
    "apply_changes",
]

#: The ``meta`` key holding the last change number whose records were dropped (``compact``,
#: ``clear``, or a store's first load, which records no ids): a feed from before it is a
#: full state only.
COMPACTED = "changes_compacted_through"
#: The position of a retired consumer (``remove_consumer``).
RETIRED = -1
#: Ids per ``IN (...)`` query.
_BATCH = 500


class ChangesCompacted(LookupError):
    """The changes asked for were compacted: rebuild from a full feed (``since=0``)."""


class Upsert(NamedTuple):
    """A chunk to add to a vector database or to replace there, and the hash of its text
    (16 hex digits): a consumer that has a vector for that text (a renamed or copied file)
    reuses it instead of embedding again."""

    chunk: Chunk
    text_hash: str

    @property
    def id(self) -> str:
        """The chunk's id: the vector's key."""
        return self.chunk.id

    @property
    def text(self) -> str:
        """The chunk's text: what is embedded."""
        return self.chunk.text


class ChangeFeed:
    """What changed in a store after change ``since``, up to change ``position``.

    Attributes:
        upserts: The chunks to add or replace, in the store's order.
        deletes: The ids to remove, sorted.
        since: The change number the feed starts after.
        position: The store's change number the feed brings a reader to: read from it next
            time (``changes(since=feed.position)``, or ``acknowledge(name, feed.position)``).
        full: Whether the feed is the store's whole state (``since=0``): every chunk an
            upsert (and the recorded ids that are gone, for a reader that applied part of it).
    """

    # A plain class, not a dataclass: importing dataclasses (and inspect) cost every
    # command line run 4 ms.
    __slots__ = ("deletes", "full", "position", "since", "upserts")

    def __init__(
        self,
        upserts: tuple[Upsert, ...],
        deletes: tuple[str, ...],
        since: int,
        position: int,
        full: bool,
    ) -> None:
        self.upserts = upserts
        self.deletes = deletes
        self.since = since
        self.position = position
        self.full = full

    def __len__(self) -> int:
        return len(self.upserts) + len(self.deletes)

    def __repr__(self) -> str:
        return (
            f"ChangeFeed(upserts={len(self.upserts)}, deletes={len(self.deletes)}, "
            f"since={self.since}, position={self.position}, full={self.full})"
        )


class ChangeLog:
    """The chunk ids one write transaction adds and removes, recorded as one numbered
    change when it ends (:meth:`record`)."""

    def __init__(self) -> None:
        self.added: dict[str, int] = {}
        self.removed: dict[str, int] = {}

    def replaced(self, old: Iterable[tuple[str, int, str]], rows: Sequence[Sequence[Any]]) -> None:
        """A document's rows ``old`` ((id, level, text) of each) replaced by ``rows``
        (``codec.rows_of``'s): an id kept with the same text and level is no change."""
        kept = {row[0]: (row[4], row[1]) for row in rows}
        for chunk_id, level, text in old:
            now = kept.pop(chunk_id, None)
            if now is None:
                self.removed[chunk_id] = level
            elif now != (level, text):
                self.added[chunk_id] = now[0]
        for chunk_id, (level, _text) in kept.items():
            self.added[chunk_id] = level
            self.removed.pop(chunk_id, None)

    def dropped(self, old: Iterable[tuple[str, int]]) -> None:
        """Chunks ((id, level) of each) removed."""
        for chunk_id, level in old:
            if self.added.pop(chunk_id, None) is None:
                self.removed[chunk_id] = level

    def record(self, connection: sqlite3.Connection) -> int | None:
        """Inside the write transaction: number the change and record its ids (None, and
        nothing written, when it changed nothing)."""
        if not self.added and not self.removed:
            return None
        number = new_change(connection, len(self.added), len(self.removed))
        connection.executemany(
            "INSERT OR REPLACE INTO change_chunks (number, id, level) VALUES (?, ?, ?)",
            [(number, chunk_id, level) for chunk_id, level in self.added.items()]
            + [(number, chunk_id, level) for chunk_id, level in self.removed.items()],
        )
        return number


def new_change(connection: sqlite3.Connection, added: int, removed: int) -> int:
    """Inside a write transaction: the number of a new change."""
    cursor = connection.execute(
        "INSERT INTO changes (written_at, added, removed) VALUES (?, ?, ?)",
        (time.time(), added, removed),
    )
    return int(cursor.lastrowid or 0)


def stored_rows(connection: sqlite3.Connection, document_id: str) -> list[tuple[str, int, str]]:
    """(id, level, text) of a document's stored chunks."""
    return connection.execute(
        "SELECT id, level, text FROM chunks WHERE document_id = ?", (document_id,)
    ).fetchall()


def stored_ids(connection: sqlite3.Connection, document_id: str) -> list[tuple[str, int]]:
    """(id, level) of a document's stored chunks."""
    return connection.execute(
        "SELECT id, level FROM chunks WHERE document_id = ?", (document_id,)
    ).fetchall()


def rows_by_id(connection: sqlite3.Connection, ids: Sequence[str]) -> list[tuple[str, int, str]]:
    """(id, level, text) of the stored chunks among ``ids``."""
    found: list[tuple[str, int, str]] = []
    for start in range(0, len(ids), _BATCH):
        batch = ids[start : start + _BATCH]
        marks = ", ".join("?" * len(batch))
        found.extend(
            connection.execute(
                f"SELECT id, level, text FROM chunks WHERE id IN ({marks})", batch
            ).fetchall()
        )
    return found


def _levels(levels: Iterable[int] | None) -> tuple[int, ...] | None:
    if levels is None:
        return None
    chosen = tuple(levels)
    if not all(isinstance(level, int) and level >= 0 for level in chosen):
        raise ValueError(f"levels must be non-negative ints (0: the leaves), not {chosen!r}")
    return chosen


class ChangeRecords(SqliteFile):
    """A store's change feed and its consumers (see the module's docstring);
    ``SqliteRegistry`` inherits these methods."""

    def change_number(self) -> int:
        """The number of the store's last change (0: none yet)."""
        with self._read() as connection:
            return _latest(connection)

    def changes(
        self,
        since: int | None = None,
        *,
        consumer: str | None = None,
        levels: Iterable[int] | None = None,
    ) -> ChangeFeed:
        """What changed after change ``since`` (or after the position of ``consumer``):
        the chunks to upsert and the ids to delete, every level or only ``levels``.

        ``since=0`` (a new reader) gives the whole state: every chunk an upsert, and the
        recorded ids that are gone (for a reader that applied part of it before, and stopped
        before it moved its position).

        Raises:
            ChangesCompacted: the changes after ``since`` were compacted: rebuild the index
                from ``changes(since=0)``.
            ValueError: ``since`` is not a change number of this store, or both or neither
                of ``since`` and ``consumer`` are given.
        """
        with self._read() as connection:
            plan = _plan(connection, since, consumer, _levels(levels))
            rows, deletes = plan.rows(connection)
        chunks = chunks_of(rows, self._metadata)
        since, latest = plan.since, plan.latest
        text_id = _core.text_id
        return ChangeFeed(
            upserts=tuple(Upsert(chunk, text_id(chunk.text)) for chunk in chunks),
            deletes=tuple(deletes),
            since=since,
            position=latest,
            full=since == 0,
        )

    def feed_plan(
        self,
        since: int | None = None,
        *,
        consumer: str | None = None,
        levels: Iterable[int] | None = None,
    ) -> tuple[list[str] | None, list[str], int, int]:
        """What ``changes`` would give, without its chunks: the ids whose chunks are the
        upserts (None: every chunk, the whole state), the ids to delete, ``since`` and the
        position; for a writer that reads the chunks itself (``spanchunk changes``). Raises
        as ``changes`` does."""
        with self._read() as connection:
            plan = _plan(connection, since, consumer, _levels(levels))
            return plan.touched, plan.gone(connection), plan.since, plan.latest

    def consumer_position(self, name: str) -> int:
        """The change number consumer ``name`` has applied (0: none, or a new name; -1: removed)."""
        with self._read() as connection:
            return _position(connection, name)

    def consumers(self) -> dict[str, int]:
        """Every consumer's position."""
        with self._read() as connection:
            return dict(
                connection.execute(
                    "SELECT name, position FROM consumers WHERE position >= 0"
                ).fetchall()
            )

    def acknowledge(self, name: str, position: int) -> None:
        """Record that consumer ``name`` applied the changes up to ``position`` (a feed's
        ``position``): its next ``changes(consumer=name)`` starts there. Call it after the
        changes are applied, so a consumer killed midway applies them again."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a consumer's name is a non-empty str, not {name!r}")
        with self._write() as connection:
            latest = _latest(connection)
            if not isinstance(position, int) or not 0 <= position <= latest:
                raise ValueError(
                    f"position {position!r} is not a change number of this store (0 to "
                    f"{latest}): pass the position of the feed that was applied"
                )
            connection.execute(
                "INSERT OR REPLACE INTO consumers (name, position) VALUES (?, ?)",
                (name, position),
            )

    def remove_consumer(self, name: str) -> None:
        """Retire consumer ``name``: a compaction no longer waits for it, and a reader under
        that name again is told to rebuild (its index missed what was compacted), until it
        acknowledges a full feed."""
        with self._write() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO consumers (name, position) VALUES (?, ?)", (name, RETIRED)
            )

    def compact(self) -> int:
        """Drop the change records every consumer has applied (all of them when there is no
        consumer); returns the change number they were dropped up to. A reader from before
        it is told to rebuild."""
        with self._write() as connection:
            row = connection.execute(
                "SELECT min(position) FROM consumers WHERE position >= 0"
            ).fetchone()
            through = _latest(connection) if row[0] is None else int(row[0])
            if through > _compacted(connection):
                connection.execute("DELETE FROM change_chunks WHERE number <= ?", (through,))
                connection.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)", (COMPACTED, str(through))
                )
            return max(through, _compacted(connection))

    def record_load(self) -> int:
        """The change of a store's first load (the bulk load of a new store): numbered,
        with no ids recorded (a reader of the store starts from its whole state)."""
        with self._write() as connection:
            (added,) = connection.execute("SELECT count(*) FROM chunks").fetchone()
            number = new_change(connection, int(added), 0)
            connection.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", (COMPACTED, str(number))
            )
            return number


class _Plan(NamedTuple):
    """What a feed holds, read in one transaction: from ``since`` to ``latest``, the ids
    touched (None: the whole state), and the levels asked for."""

    since: int
    latest: int
    touched: list[str] | None
    chosen: tuple[int, ...] | None

    def rows(self, connection: sqlite3.Connection) -> tuple[list[Any], list[str]]:
        """The rows of the upserts, in the store's order, and the ids to delete."""
        select = SELECT
        chosen = self.chosen
        marks = "" if chosen is None else ", ".join("?" * len(chosen))
        if self.touched is None:
            where = "" if chosen is None else f" WHERE level IN ({marks})"
            rows = connection.execute(f"{select}{where} ORDER BY rowid", chosen or ()).fetchall()
            # The recorded ids that are gone: a reader that applied part of a feed from 0
            # and stopped before moving its position has them.
            return rows, self.gone(connection)
        ids = self.touched
        rows = []
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            in_batch = ", ".join("?" * len(batch))
            rows.extend(
                connection.execute(
                    f"{select} WHERE id IN ({in_batch}) ORDER BY document_id, level, idx",
                    batch,
                ).fetchall()
            )
        return rows, self.gone(connection)

    def gone(self, connection: sqlite3.Connection) -> list[str]:
        """The ids to delete: those touched that the store does not hold (the whole state:
        the recorded ids it does not hold)."""
        chosen = self.chosen
        also = "" if chosen is None else f" AND level IN ({', '.join('?' * len(chosen))})"
        if self.touched is None:
            gone = connection.execute(
                "SELECT DISTINCT id FROM change_chunks WHERE NOT EXISTS (SELECT 1 FROM "
                f"chunks WHERE chunks.id = change_chunks.id){also} ORDER BY id",
                chosen or (),
            )
            return [chunk_id for (chunk_id,) in gone]
        ids = self.touched
        found: set[str] = set()
        for start in range(0, len(ids), _BATCH):
            batch = ids[start : start + _BATCH]
            in_batch = ", ".join("?" * len(batch))
            found.update(
                chunk_id
                for (chunk_id,) in connection.execute(
                    f"SELECT id FROM chunks WHERE id IN ({in_batch})", batch
                )
            )
        return [chunk_id for chunk_id in ids if chunk_id not in found]


def _plan(
    connection: sqlite3.Connection,
    since: int | None,
    consumer: str | None,
    chosen: tuple[int, ...] | None,
) -> _Plan:
    """Inside a read transaction: what the feed after ``since`` (or ``consumer``'s
    position) holds; see ``ChangeRecords.changes`` for the errors."""
    if (since is None) == (consumer is None):
        raise ValueError(
            "pass since=N (a change number, 0 for the whole state) or consumer=NAME, one of the two"
        )
    if consumer is not None:
        since = _position(connection, consumer)
        if since == RETIRED:
            raise ChangesCompacted(
                f"consumer {consumer!r} was removed, and its index missed the changes "
                "compacted since: rebuild the index from changes(since=0) and acknowledge "
                "its position (apply_changes(..., rebuild=...) does it)"
            )
    if not isinstance(since, int) or isinstance(since, bool):
        raise TypeError(f"since must be an int change number, not {since!r}")
    latest = _latest(connection)
    if not 0 <= since <= latest:
        raise ValueError(
            f"since={since} is not a change number of this store (0 to {latest}): pass the "
            "position a feed of this store gave"
        )
    compacted = _compacted(connection)
    registered = consumer is not None and _registered(connection, consumer)
    if since == 0 and not (registered and compacted):
        return _Plan(since, latest, None, chosen)
    if since < compacted:
        who = f"consumer {consumer!r} (at change {since})" if consumer else f"since={since}"
        raise ChangesCompacted(
            f"the changes after {since} were compacted up to change {compacted}, so {who} "
            "cannot be brought up to date from them: rebuild the index from "
            "changes(since=0), the whole state (apply_changes(..., rebuild=...) does it)"
        )
    also = "" if chosen is None else f" AND level IN ({', '.join('?' * len(chosen))})"
    touched = connection.execute(
        f"SELECT DISTINCT id FROM change_chunks WHERE number > ?{also} ORDER BY id",
        (since, *(chosen or ())),
    )
    return _Plan(since, latest, [chunk_id for (chunk_id,) in touched], chosen)


def reset_changes(connection: sqlite3.Connection, removed: int) -> None:
    """Inside the write transaction that removes every chunk (``clear``): a change that
    readers from before it cannot follow id by id: they rebuild."""
    number = new_change(connection, 0, removed)
    connection.execute("DELETE FROM change_chunks")
    connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (COMPACTED, str(number)))


def _latest(connection: sqlite3.Connection) -> int:
    return int(connection.execute("SELECT ifnull(max(number), 0) FROM changes").fetchone()[0])


def _compacted(connection: sqlite3.Connection) -> int:
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (COMPACTED,)).fetchone()
    return 0 if row is None else int(row[0])


def _registered(connection: sqlite3.Connection, name: str) -> bool:
    row = connection.execute("SELECT 1 FROM consumers WHERE name = ?", (name,)).fetchone()
    return row is not None


def _position(connection: sqlite3.Connection, name: str) -> int:
    row = connection.execute("SELECT position FROM consumers WHERE name = ?", (name,)).fetchone()
    return 0 if row is None else int(row[0])


def apply_changes(
    store: ChangeRecords,
    upsert: Callable[[list[Upsert]], object],
    delete: Callable[[list[str]], object],
    *,
    consumer: str,
    levels: Iterable[int] | None = (0,),
    rebuild: Callable[[], object] | None = None,
) -> ChangeFeed:
    """Bring one index (a vector database) up to date with ``store``: read the changes after
    ``consumer``'s position, call ``delete`` with the ids to remove and ``upsert`` with the
    chunks to add or replace (the leaves by default: what is embedded), then move the
    consumer's position. Both callables must be idempotent (by id), as vector databases'
    upserts and deletes are: a run killed before the position moved applies the same changes
    again.

    Args:
        store: The ``SqliteRegistry``.
        upsert: Called once with every ``Upsert`` (none: not called).
        delete: Called once with every id to remove (none: not called).
        consumer: The index's name in the store.
        levels: The levels the index holds (None: all).
        rebuild: Called to empty the index when the consumer fell behind a compaction; the
            whole state is then upserted. Without it, ``ChangesCompacted`` is raised.

    Returns:
        The feed applied.
    """
    try:
        feed = store.changes(consumer=consumer, levels=levels)
    except ChangesCompacted:
        if rebuild is None:
            raise
        rebuild()
        feed = store.changes(since=0, levels=levels)
    if feed.deletes:
        delete(list(feed.deletes))
    if feed.upserts:
        upsert(list(feed.upserts))
    store.acknowledge(consumer, feed.position)
    return feed
