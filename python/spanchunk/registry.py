"""Where parent chunks are kept so that retrieved children can be swapped for them."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Any, overload

from spanchunk.chunk import Chunk

__all__ = ["ParentRegistry"]

_CHUNK_TYPE = {Chunk}


class ParentRegistry:
    """A thread-safe, in-memory store of parent chunks, keyed by id, in insertion order.

    Hierarchical chunkers put every chunk above the leaves here; at query time, ``expand``
    swaps retrieved children for their parents. Adding a chunk whose id is already known
    replaces it in place (re-chunking a document upserts). Registries pickle with their
    contents.

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

    def __init__(self, chunks: Chunk | Iterable[Chunk] | None = None) -> None:
        self._lock = threading.RLock()
        self._chunks: dict[str, Chunk] = {}
        if chunks is not None:
            self.add(chunks)

    def add(self, chunks: Chunk | Iterable[Chunk]) -> None:
        """Store one chunk or every chunk of an iterable (an existing id is replaced).

        Args:
            chunks: A ``Chunk`` or an iterable of them.

        Raises:
            TypeError: An item is not a ``Chunk``.
        """
        if isinstance(chunks, Chunk):
            items = [chunks]
        else:
            items = chunks if type(chunks) is list else list(chunks)
            # One C-level pass over the types (Chunk cannot be subclassed); the loop that
            # names the bad item runs only when there is one.
            if not {*map(type, items)} <= _CHUNK_TYPE:
                for position, chunk in enumerate(items):
                    if not isinstance(chunk, Chunk):
                        raise TypeError(
                            f"ParentRegistry.add takes Chunk objects; item {position} is "
                            f"{type(chunk).__name__}"
                        )
        self._put(items)

    def _put(self, chunks: list[Chunk]) -> None:
        """Store chunks known to be ``Chunk`` objects (the chunkers' own output)."""
        # A plain loop: about 0.2 us for a short document's parents, where building the
        # pairs for ``dict.update`` cost 0.7 (measured; this is once per chunked document).
        stored = self._chunks
        with self._lock:
            for chunk in chunks:
                stored[chunk.id] = chunk

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
        """The parent of ``chunk``, or None at the top level or when the parent is unknown."""
        parent_id = chunk.parent_id
        if parent_id is None:
            return None
        with self._lock:
            return self._chunks.get(parent_id)

    def expand(self, hits: Iterable[Chunk], max_parents: int | None = None) -> list[Chunk]:
        """Swap each hit for its parent: de-duplicated by id, first-seen order kept.

        A hit at the top level, or whose parent is not stored, is kept as itself.

        Args:
            hits: Retrieved chunks, best first.
            max_parents: Return at most this many chunks (None: no limit).

        Returns:
            The parents (and parentless hits), each once, in the order first reached.

        Raises:
            ValueError: ``max_parents`` is less than 1.
        """
        if max_parents is not None:
            if isinstance(max_parents, bool) or not isinstance(max_parents, int):
                raise TypeError(
                    f"max_parents must be an int or None, not {type(max_parents).__name__}"
                )
            if max_parents < 1:
                raise ValueError(
                    f"max_parents must be at least 1, got {max_parents}: "
                    "pass a positive limit or None for no limit"
                )
        seen: set[str] = set()
        expanded: list[Chunk] = []
        with self._lock:
            stored = self._chunks
            for hit in hits:
                parent_id = hit.parent_id
                chosen = hit if parent_id is None else stored.get(parent_id, hit)
                if chosen.id in seen:
                    continue
                seen.add(chosen.id)
                expanded.append(chosen)
                if max_parents is not None and len(expanded) >= max_parents:
                    break
        return expanded

    def clear(self) -> None:
        """Remove every stored chunk."""
        with self._lock:
            self._chunks.clear()

    def delete_document(self, document_id: str) -> int:
        """Remove every chunk of one document.

        Args:
            document_id: The ``Document.id`` whose chunks go.

        Returns:
            How many chunks were removed.
        """
        with self._lock:
            doomed = [
                chunk_id
                for chunk_id, chunk in self._chunks.items()
                if chunk.document_id == document_id
            ]
            for chunk_id in doomed:
                del self._chunks[chunk_id]
        return len(doomed)

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {"chunks": list(self._chunks.values())}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._lock = threading.RLock()
        self._chunks = {chunk.id: chunk for chunk in state["chunks"]}

    def __repr__(self) -> str:
        return f"ParentRegistry({len(self)} chunks)"
