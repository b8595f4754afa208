"""``ChunkStore``: a LangChain ``BaseStore[str, Document]`` over a spanchunk parent store, the
docstore ``ParentDocumentRetriever`` and ``MultiVectorRetriever`` read their parents from.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from spanchunk import Chunk
from spanchunk.integrations._common import carried_metadata, missing_extra
from spanchunk.integrations.langchain.fields import _own_metadata, chunk_to_document

try:
    from langchain_core.documents import Document
    from langchain_core.stores import BaseStore
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("langchain-core and langchain-text-splitters", "langchain", error) from None

__all__ = ["ChunkStore", "ParentStoreLike"]


class ParentStoreLike(Protocol):
    """What ``ChunkStore`` needs of a spanchunk store: ``get`` and ``add`` of chunks."""

    def get(self, chunk_id: str, default: Any = None) -> Any: ...
    def add(self, chunks: Chunk | Iterable[Chunk]) -> None: ...


class ChunkStore(BaseStore[str, Document]):
    """A LangChain ``BaseStore[str, Document]`` over a spanchunk parent store.

    Any store with ``get(id)`` and ``add(chunks)`` works: ``ParentRegistry`` (in memory),
    ``SqliteRegistry`` (a file another process can read), a chunker's ``.parents``.
    ``mget`` answers in the order asked, ``None`` for an unknown key; ``mset`` stores each
    document as a ``Chunk`` keyed by the given key (spans, ids and what a chunk carries read
    from the metadata keys of the module's field mapping, so a round trip keeps them).

    Args:
        store: The spanchunk store (a path is refused: open the file first with
            ``SqliteRegistry.open(path)``).

    Raises:
        TypeError: ``store`` is a path, or has no ``get`` and ``add`` methods.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50)
        >>> children = chunker.chunk("One sentence here. " * 40)
        >>> store = ChunkStore(chunker.parents)
        >>> found = store.mget([children[0].parent_id, "no such id"])
        >>> found[0].metadata["level"], found[1]
        (1, None)
    """

    def __init__(self, store: ParentStoreLike) -> None:
        if isinstance(store, (str, bytes, os.PathLike)):
            raise TypeError(
                f"ChunkStore takes a spanchunk store, not a path ({store!r}): open the file "
                "first, ChunkStore(SqliteRegistry.open(path)) for an existing store (from "
                "spanchunk import SqliteRegistry), or ChunkStore(SqliteRegistry(path)) to "
                "create one"
            )
        lacking = [name for name in ("get", "add") if not callable(getattr(store, name, None))]
        if lacking:
            raise TypeError(
                f"ChunkStore takes a spanchunk store with get() and add() (a ParentRegistry, "
                f"a SqliteRegistry, a chunker's .parents); {type(store).__name__} has no "
                f"{' and no '.join(lacking)}(): pass e.g. ChunkStore(ParentRegistry()) or "
                "ChunkStore(SqliteRegistry.open(path))"
            )
        self.store = store

    def mget(self, keys: Sequence[str]) -> list[Document | None]:
        """The documents of these chunk ids, aligned with ``keys`` (``None`` when missing)."""
        get_many = getattr(self.store, "get_many", None)
        if get_many is not None:
            found: Mapping[str, Chunk] = get_many(keys)
            chunks = [found.get(key) for key in keys]
        else:
            get = self.store.get
            chunks = [get(key) for key in keys]
        return [None if chunk is None else chunk_to_document(chunk) for chunk in chunks]

    def mset(self, key_value_pairs: Sequence[tuple[str, Document]]) -> None:
        """Store documents as chunks, each under its key (an existing key is replaced)."""
        self.store.add([_document_to_chunk(key, document) for key, document in key_value_pairs])

    def mdelete(self, keys: Sequence[str]) -> None:
        """Delete these ids, when the store can delete single chunks (``delete``).

        Raises:
            NotImplementedError: The store deletes whole documents only: use
                ``delete_document``.
        """
        delete = getattr(self.store, "delete", None)
        if delete is None:
            raise NotImplementedError(
                f"{type(self.store).__name__} deletes whole documents, not single chunks: "
                "call ChunkStore.delete_document(document_id) (re-chunking a document "
                "replaces its chunks anyway)"
            )
        delete(list(keys))

    def delete_document(self, document_id: str) -> int:
        """Remove every chunk of one document; returns how many went."""
        return int(self.store.delete_document(document_id))  # type: ignore[attr-defined]

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """Every stored chunk id (those starting with ``prefix``, when given)."""
        for chunk in self.store:  # type: ignore[attr-defined]
            if prefix is None or chunk.id.startswith(prefix):
                yield chunk.id


def _document_to_chunk(key: str, document: Document) -> Chunk:
    """A ``Chunk`` from a LangChain document, spans from its metadata where present."""
    metadata = document.metadata
    text = document.page_content
    start_char = metadata.get("start_index", 0)
    start_byte = metadata.get("start_byte", 0)
    return Chunk(
        id=key,
        text=text,
        document_id=metadata.get("document_id") or key,
        index=metadata.get("index", 0),
        level=metadata.get("level", 1),
        start_char=start_char,
        end_char=metadata.get("end_index", start_char + len(text)),
        start_byte=start_byte,
        end_byte=metadata.get("end_byte", start_byte + len(text.encode("utf-8"))),
        parent_id=metadata.get("parent_id"),
        child_ids=tuple(metadata.get("child_ids", ())),
        metadata={
            **_own_metadata(metadata),
            **carried_metadata(metadata),
        },
    )
