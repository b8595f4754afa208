"""Where parent chunks are kept so that retrieved children can be swapped for them."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Any, overload

from spanchunk.chunk import Chunk
from spanchunk.stores.parents import Missing, expand_hits, parent_from_content
from spanchunk.stores.protocol import (
    check_fingerprint,
    checked_chunks,
    digest,
    document_chunks,
    fingerprint_conflict,
)

__all__ = ["ParentRegistry"]


class ParentRegistry:
    """A thread-safe, in-memory store of parent chunks, keyed by id, in insertion order.

    Hierarchical chunkers put every chunk above the leaves here; at query time, ``expand``
    swaps retrieved children for their parents. Adding a chunk whose id is already known
    replaces it in place (re-chunking a document upserts). Registries pickle with their
    contents. It implements ``spanchunk.stores.ParentStore``, as ``SqliteRegistry`` does: the
    document lifecycle (``upsert``, ``delete_document``), the recorded chunker fingerprint,
    and ``get_many`` and ``window`` for ``spanchunk.retrieval``.

    Args:
        chunks: Chunks to store at once.
        children: Ask the chunkers to send the leaves too (``keeps_children``), so that
            ``retrieval.neighbours`` can grow leaf hits from the registry alone.

    Example:
        >>> from spanchunk import ParentChildChunker, ParentRegistry
        >>> registry = ParentRegistry()
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50, registry=registry)
        >>> children = chunker.chunk("One sentence here. " * 40)
        >>> parent = registry.parent_of(children[0])
        >>> parent.id == children[0].parent_id, children[0].id in parent.child_ids
        (True, True)
        >>> [chunk.id for chunk in registry.expand(children[:2])] == [parent.id]
        True
    """

    def __init__(
        self, chunks: Chunk | Iterable[Chunk] | None = None, *, children: bool = False
    ) -> None:
        self._lock = threading.RLock()
        self._chunks: dict[str, Chunk] = {}
        self._children = bool(children)
        self._fingerprint: str | None = None
        # document id -> digest of the set its last upsert stored (None: changed by add).
        self._digests: dict[str, str | None] = {}
        # (document id, level) -> {index: chunk}, built by ``window`` on demand and dropped
        # by every write, so the chunkers' hot path (``add_chunks``) pays one store for it.
        self._positions: dict[tuple[str, int], dict[int, Chunk]] | None = None
        if chunks is not None:
            self.add(chunks)

    @property
    def keeps_children(self) -> bool:
        """Whether chunkers should send the leaves too (``children=True``)."""
        return self._children

    @property
    def fingerprint(self) -> str | None:
        """The fingerprint of the chunker that filled the registry (None: not recorded)."""
        return self._fingerprint

    def add(self, chunks: Chunk | Iterable[Chunk], *, fingerprint: str | None = None) -> None:
        """Store one chunk or every chunk of an iterable (an existing id is replaced).

        Args:
            chunks: A ``Chunk`` or an iterable of them.
            fingerprint: The fingerprint of the chunker that made them
                (``chunker.fingerprint()``): recorded by the first call that passes one;
                a later call with another is refused and stores nothing.

        Raises:
            TypeError: An item is not a ``Chunk``.
            ValueError: ``fingerprint`` differs from the one recorded.
        """
        items = checked_chunks(chunks, "ParentRegistry.add")
        self.add_chunks(items, check_fingerprint(fingerprint))

    def add_chunks(self, chunks: list[Chunk], fingerprint: str | None = None) -> None:
        """Store chunks known to be ``Chunk`` objects (the chunkers' own output): ``add``
        without its checks of each item, under ``fingerprint`` (recorded by the first call
        that passes one; a later call with another raises ``ValueError``)."""
        # A plain loop: about 0.2 us for a short document's parents, where building the
        # pairs for ``dict.update`` cost 0.7 (measured; this is once per chunked document).
        stored = self._chunks
        with self._lock:
            if fingerprint is not None and fingerprint != self._fingerprint:
                if self._fingerprint is not None:
                    raise fingerprint_conflict("ParentRegistry", self._fingerprint, fingerprint)
                self._fingerprint = fingerprint
            for chunk in chunks:
                stored[chunk.id] = chunk
            self._positions = None
            if self._digests:
                for chunk in chunks:
                    if chunk.document_id in self._digests:
                        self._digests[chunk.document_id] = None

    def upsert(
        self, document_id: str, chunks: Iterable[Chunk], *, fingerprint: str | None = None
    ) -> bool:
        """Replace every chunk of one document with ``chunks``, atomically.

        A reader (another thread) sees the document's old chunks or its new ones, never a
        mix. When the set is the one the last ``upsert`` of this document stored (same ids,
        spans and texts: re-chunking an unchanged document), nothing is written.

        Args:
            document_id: The ``Document.id``; every chunk must belong to it.
            chunks: The document's chunks (empty removes the document).
            fingerprint: As for ``add``.

        Returns:
            Whether anything was written.

        Raises:
            TypeError: An item is not a ``Chunk``.
            ValueError: A chunk belongs to another document, or ``fingerprint`` differs
                from the one recorded.
        """
        items = document_chunks(document_id, chunks, "ParentRegistry.upsert")
        offered = check_fingerprint(fingerprint)
        wanted = digest(items)
        with self._lock:
            if offered is not None and self._fingerprint not in (None, offered):
                raise fingerprint_conflict("ParentRegistry", self._fingerprint, offered)
            if self._digests.get(document_id) == wanted:
                return False
            self._remove_document(document_id)
            self.add_chunks(items, offered)
            if items:
                self._digests[document_id] = wanted
            return True

    @overload
    def get(self, chunk_id: str) -> Chunk | None: ...
    @overload
    def get(self, chunk_id: str, default: Chunk) -> Chunk: ...
    @overload
    def get(self, chunk_id: str, default: Any) -> Any: ...

    def get(self, chunk_id: str, default: Any = None) -> Any:
        """The chunk with this id, or ``default`` when it is not stored."""
        with self._lock:
            return self._chunks.get(chunk_id, default)

    def get_many(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The stored chunks among ``chunk_ids``, by id."""
        with self._lock:
            stored = self._chunks
            return {
                chunk_id: stored[chunk_id]
                for chunk_id in chunk_ids
                if isinstance(chunk_id, str) and chunk_id in stored
            }

    def window(
        self, document_id: str, level: int, first_index: int, last_index: int
    ) -> list[Chunk]:
        """The stored chunks of one document and level with ``first_index <= index <=
        last_index``, in index order."""
        with self._lock:
            positions = self._positions
            if positions is None:
                positions = {}
                for chunk in self._chunks.values():
                    key = (chunk.document_id, chunk.level)
                    positions.setdefault(key, {})[chunk.index] = chunk
                self._positions = positions
            row = positions.get((document_id, level))
            if not row:
                return []
            if last_index - first_index > len(row):
                return [row[index] for index in sorted(row) if first_index <= index <= last_index]
            return [row[index] for index in range(first_index, last_index + 1) if index in row]

    def __getitem__(self, chunk_id: str) -> Chunk:
        with self._lock:
            try:
                return self._chunks[chunk_id]
            except KeyError:
                raise KeyError(f"no parent chunk with id {chunk_id!r} in this registry") from None

    def __contains__(self, item: object) -> bool:
        """Whether an id (a ``str``) or a ``Chunk`` (by its id) is stored."""
        chunk_id = item.id if isinstance(item, Chunk) else item
        if not isinstance(chunk_id, str):
            return False
        with self._lock:
            return chunk_id in self._chunks

    def __len__(self) -> int:
        with self._lock:
            return len(self._chunks)

    def __iter__(self) -> Iterator[Chunk]:
        """The stored chunks in insertion order (a snapshot: adding while iterating is safe)."""
        with self._lock:
            snapshot = list(self._chunks.values())
        return iter(snapshot)

    def parent_of(self, chunk: Chunk) -> Chunk | None:
        """The parent of ``chunk``: the stored one, else the one the chunk carries in
        ``metadata["parent_content"]``; None at the top level or when unknown."""
        parent_id = chunk.parent_id
        if parent_id is None:
            return None
        with self._lock:
            found = self._chunks.get(parent_id)
        return parent_from_content(chunk) if found is None else found

    def expand(
        self, hits: Iterable[Any], max_parents: int | None = None, *, missing: Missing = "warn"
    ) -> list[Any]:
        """Swap each hit for its parent: de-duplicated by id, first-seen order kept.

        ``spanchunk.retrieval.expand(hits, store)``, the same function; to fill a context
        budget, ``spanchunk.retrieval.assemble`` is the way.

        A hit at the top level is kept as itself. A parent that is not stored comes from the
        hit's ``metadata["parent_content"]`` when it carries one; failing that the hit is
        "missing" (its chunks were cut with other settings or into another store, or its
        document was deleted): ``missing`` says what happens. ``(chunk, score)`` pairs give
        ``(parent, score)`` pairs, with the score of the first hit that reached the parent.

        Args:
            hits: Retrieved chunks (or ``(chunk, score)`` pairs), best first.
            max_parents: Return at most this many chunks (None: no limit).
            missing: For hits whose parent is not stored: ``"warn"`` keeps them as
                themselves with one ``MissingParentWarning`` per call naming how many;
                ``"raise"`` raises ``MissingParentError``; ``"keep"`` keeps them silently.

        Returns:
            The parents (and parentless hits), each once, in the order first reached.

        Raises:
            TypeError: A hit is not a ``Chunk`` (nor a pair with one).
            ValueError: ``max_parents`` is less than 1, or ``missing`` is unknown.
            MissingParentError: (a ``KeyError``) ``missing="raise"`` and a hit's parent is
                not stored.
        """
        return expand_hits(hits, self.get_many, max_parents, "ParentRegistry.expand", missing)

    def clear(self) -> None:
        """Remove every stored chunk and forget the recorded fingerprint."""
        with self._lock:
            self._chunks.clear()
            self._digests.clear()
            self._positions = None
            self._fingerprint = None

    def delete_document(self, document_id: str) -> int:
        """Remove every chunk of one document.

        Args:
            document_id: The ``Document.id`` whose chunks go.

        Returns:
            How many chunks were removed.
        """
        with self._lock:
            self._digests.pop(document_id, None)
            return self._remove_document(document_id)

    def _remove_document(self, document_id: str) -> int:
        doomed = [
            chunk_id for chunk_id, chunk in self._chunks.items() if chunk.document_id == document_id
        ]
        for chunk_id in doomed:
            del self._chunks[chunk_id]
        self._positions = None
        return len(doomed)

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {
                "chunks": list(self._chunks.values()),
                "children": self._children,
                "fingerprint": self._fingerprint,
                "digests": dict(self._digests),
            }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._lock = threading.RLock()
        self._chunks = {chunk.id: chunk for chunk in state["chunks"]}
        self._children = state.get("children", False)
        self._fingerprint = state.get("fingerprint")
        self._digests = state.get("digests", {})
        self._positions = None

    def __repr__(self) -> str:
        return f"ParentRegistry({len(self)} chunks)"
