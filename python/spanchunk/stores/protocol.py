"""What every store shares: the ``ParentStore`` protocol (public as
``spanchunk.stores.ParentStore``), the checks of what is added, a document's digest, and the
error for a refused fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, overload, runtime_checkable

from spanchunk.chunk import Chunk

if TYPE_CHECKING:
    from collections.abc import Iterator

    from spanchunk.stores.parents import Missing

__all__ = [
    "ParentStore",
    "check_fingerprint",
    "checked_chunks",
    "digest",
    "document_chunks",
    "fingerprint_conflict",
]


@runtime_checkable
class ParentStore(Protocol):
    """Everything the chunkers and ``spanchunk.retrieval`` ask of a store of chunks.

    ``ParentRegistry`` (in memory) and ``SqliteRegistry`` (an SQLite file) implement it; back
    it with Redis or Postgres by writing a class with these members (``isinstance(x,
    ParentStore)`` checks that they exist). Chunks are keyed by ``Chunk.id``; ``get`` must give
    back a chunk equal to the one stored, every field.

    Attributes:
        keeps_children: Whether the chunkers should send the leaves (level 0) too, not only
            the chunks above them (``neighbours`` over leaves needs them stored).
        fingerprint: The fingerprint of the chunker that filled the store, or None while no
            chunker has (``add`` and ``upsert`` record it and refuse another one).

    Example:
        >>> from spanchunk import ParentRegistry, ParentStore
        >>> isinstance(ParentRegistry(), ParentStore)
        True
    """

    @property
    def keeps_children(self) -> bool: ...
    @property
    def fingerprint(self) -> str | None: ...

    def add(self, chunks: Chunk | Iterable[Chunk], *, fingerprint: str | None = None) -> None:
        """Store chunks (an existing id is replaced). With ``fingerprint``: record it, or
        raise ``ValueError`` naming both when the store holds another one."""
        ...

    def upsert(
        self, document_id: str, chunks: Iterable[Chunk], *, fingerprint: str | None = None
    ) -> bool:
        """Replace every chunk of one document at once (readers see the old set or the new);
        False, writing nothing, when the set is the one stored."""
        ...

    @overload
    def get(self, chunk_id: str) -> Chunk | None: ...
    @overload
    def get(self, chunk_id: str, default: Chunk) -> Chunk: ...
    @overload
    def get(self, chunk_id: str, default: Any) -> Any: ...
    def get(self, chunk_id: str, default: Any = None) -> Any:
        """The chunk with this id, or ``default``."""
        ...

    def get_many(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The stored chunks among these ids, by id (one round trip for a database)."""
        ...

    def window(
        self, document_id: str, level: int, first_index: int, last_index: int
    ) -> list[Chunk]:
        """The stored chunks of one document and level with ``first_index <= index <=
        last_index``, in index order."""
        ...

    def parent_of(self, chunk: Chunk) -> Chunk | None:
        """The stored parent of ``chunk``, or None."""
        ...

    def expand(
        self, hits: Iterable[Chunk], max_parents: int | None = None, *, missing: Missing = "warn"
    ) -> list[Chunk]:
        """Hits swapped for their parents, de-duplicated, order kept; ``missing`` ("warn",
        "raise" or "keep") says what becomes of a hit whose parent is not stored (the
        chunkers pass it only when it is not "warn")."""
        ...

    def delete_document(self, document_id: str) -> int:
        """Remove every chunk (every level) of one document; how many went."""
        ...

    def clear(self) -> None:
        """Remove every chunk and forget the fingerprint."""
        ...

    def __getitem__(self, chunk_id: str) -> Chunk: ...
    def __contains__(self, item: object) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Chunk]: ...


# --------------------------------------------------------------------------------------------
# Shared by both registries: what a refused fingerprint says, and a document's digest.


def fingerprint_conflict(store: str, recorded: str, offered: str) -> ValueError:
    """The error for chunks made by another chunker than the one that filled the store."""
    return ValueError(
        f"this {store} was filled by a chunker with fingerprint {recorded}, and these chunks "
        f"come from one with fingerprint {offered} (other settings): their ids and sizes "
        "would not match at query time. Use a new store for the new settings, or call "
        "clear() first to start this one again"
    )


def check_fingerprint(fingerprint: object) -> str | None:
    """A fingerprint argument validated: None or a str."""
    if fingerprint is None or isinstance(fingerprint, str):
        return fingerprint
    raise TypeError(
        f"fingerprint must be a str (chunker.fingerprint()) or None, not "
        f"{type(fingerprint).__name__}"
    )


def checked_chunks(chunks: Chunk | Iterable[Chunk], where: str) -> list[Chunk]:
    """A list of the chunks, each checked to be a ``Chunk``."""
    if type(chunks) is Chunk:
        return [chunks]
    if isinstance(chunks, (str, bytes)) or not isinstance(chunks, Iterable):
        raise TypeError(
            f"{where} takes a Chunk or an iterable of Chunk objects, not {type(chunks).__name__}"
        )
    items = chunks if type(chunks) is list else list(chunks)
    if not {*map(type, items)} <= {Chunk}:
        for position, chunk in enumerate(items):
            if type(chunk) is not Chunk:
                raise TypeError(
                    f"{where} takes Chunk objects; item {position} is {type(chunk).__name__}"
                )
    return items


def document_chunks(document_id: object, chunks: Iterable[Chunk], where: str) -> list[Chunk]:
    """The chunks of an ``upsert``, checked to be ``Chunk`` objects of that document."""
    if not isinstance(document_id, str):
        raise TypeError(f"document_id must be a str, not {type(document_id).__name__}")
    items = checked_chunks(chunks, where)
    for position, chunk in enumerate(items):
        if chunk.document_id != document_id:
            raise ValueError(
                f"{where}({document_id!r}, ...): chunk {position} belongs to document "
                f"{chunk.document_id!r}; pass the chunks of one document, or upsert each "
                "document on its own"
            )
    return items


def digest(chunks: list[Chunk]) -> str:
    """What a document's chunk set is: ids, spans, levels and texts, hashed.

    Ids are deterministic, so re-chunking an unchanged document gives the same digest and
    ``upsert`` can skip the write; the texts are in it too because a caller-chosen document
    id can stay while the text under it changes.
    """
    hasher = hashlib.blake2b(digest_size=16)
    for chunk in chunks:
        hasher.update(
            f"{chunk.id}\x1f{chunk.level}\x1f{chunk.start_byte}\x1f{chunk.end_byte}\x1e".encode()
        )
        hasher.update(chunk.text.encode("utf-8", "surrogatepass"))
        hasher.update(b"\x1d")
    return hasher.hexdigest()
