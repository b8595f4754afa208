"""Children that carry their parent in their metadata, for vector stores that cannot look
parents up: ``attach_parent_content``; ``expand`` falls back to what they carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spanchunk.chunk import Chunk
from spanchunk.document import freeze_metadata
from spanchunk.stores import ParentStore
from spanchunk.stores.parents import PARENT_CONTENT, not_a_chunk

__all__ = ["attach_parent_content", "parent_content"]


def parent_content(parent: Chunk) -> dict[str, Any]:
    """What a child carries of its parent under ``metadata["parent_content"]``: the parent's
    id, text, index, level, spans, parent id and child ids (JSON-safe)."""
    return {
        "id": parent.id,
        "text": parent.text,
        "index": parent.index,
        "level": parent.level,
        "start_char": parent.start_char,
        "end_char": parent.end_char,
        "start_byte": parent.start_byte,
        "end_byte": parent.end_byte,
        "parent_id": parent.parent_id,
        "child_ids": list(parent.child_ids),
    }


def attach_parent_content(
    children: Iterable[Chunk], parents: ParentStore | Mapping[str, Chunk] | Iterable[Chunk]
) -> list[Chunk]:
    """Copies of ``children`` that carry their parent in ``metadata["parent_content"]``.

    For vector stores that keep a payload per vector but cannot look parents up: store the
    children's metadata with them, and ``expand`` (with any store, or ``store=None``) gives
    back the parent from the hit alone, equal (``==``) to the real one. A child whose parent
    is not among ``parents`` is returned as it is. Siblings share one metadata mapping.

    Args:
        children: The chunks to copy (usually the leaves).
        parents: A ``ParentStore``, a mapping from id to chunk, or the parent chunks.

    Returns:
        The children, in order, with ``parent_content`` added to their metadata.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> from spanchunk.retrieval import expand
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50)
        >>> children = attach_parent_content(chunker.chunk("Words. " * 80), chunker.parents)
        >>> expand(children[:1], None)[0] == chunker.parents[children[0].parent_id]
        True
    """
    items = list(children)
    for position, item in enumerate(items):
        if type(item) is not Chunk:
            raise not_a_chunk(position, item, "attach_parent_content")
    wanted = list({chunk.parent_id: None for chunk in items if chunk.parent_id is not None})
    if hasattr(parents, "get_many"):
        known: Mapping[str, Chunk] = parents.get_many(wanted)
    elif isinstance(parents, Mapping):
        known = parents
    else:
        known = {chunk.id: chunk for chunk in parents}
    shared: dict[tuple[str, int], Mapping[str, Any]] = {}
    result = []
    for child in items:
        parent = known.get(child.parent_id) if child.parent_id is not None else None
        if parent is None:
            result.append(child)
            continue
        key = (parent.id, id(child.metadata))
        metadata = shared.get(key)
        if metadata is None:
            # Read-only all the way down, as a Document's metadata is (siblings share it).
            metadata = shared[key] = freeze_metadata(
                {**child.metadata, PARENT_CONTENT: parent_content(parent)}
            )
        result.append(
            Chunk(
                child.id,
                child.text,
                child.document_id,
                child.index,
                child.level,
                child.start_char,
                child.end_char,
                child.start_byte,
                child.end_byte,
                child.parent_id,
                child.child_ids,
                metadata,
            )
        )
    return result
