"""What the integrations and the command line ask of a chunker beyond its public methods.

Plain functions over a chunker's internals, so that the layers built on the chunkers reach
them by the names of this module, never by a chunker's underscored attributes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spanchunk.chunkers.base import Chunker
from spanchunk.chunkers.spans import all_built_in

if TYPE_CHECKING:
    from spanchunk.chunk import Chunk
    from spanchunk.chunkers.spans import Level
    from spanchunk.stores import ParentStore

__all__ = ["chunk_texts", "cuts_in_core", "levels", "overrides", "register", "registry"]


def levels(chunker: Chunker) -> list[Level]:
    """The levels ``chunker`` cuts, top first: built-in ``_core.Splitter`` objects, or a
    custom ``Chunker`` for a level cut in Python."""
    return chunker._levels()


def registry(chunker: Chunker) -> ParentStore | None:
    """The store ``chunker`` files its chunks above the leaves in (None: it keeps none)."""
    return chunker._registry


def register(chunker: Chunker, chunks: list[Chunk]) -> None:
    """Files ``chunks`` (the core's own, of this chunker) in its store, under its
    fingerprint, as ``chunk`` files them."""
    chunker._register(chunks)


def chunk_texts(
    chunker: Chunker,
    texts: Sequence[str],
    ids: Sequence[str | None],
    metadatas: Sequence[Mapping[str, Any] | None] | None = None,
) -> list[list[Chunk]]:
    """The leaves of each text apart (a batch given as columns, no ``Document`` per text),
    the chunks above them filed as ``chunk`` files them. The texts must be strs and the ids
    checked as ``Document`` checks them (None: the text's hash)."""
    return chunker._chunk_texts(texts, ids, metadatas)


#: The hooks every chunking method runs through (see ``Chunker.overridden_hooks``).
_CHUNKING_HOOKS = frozenset({"_chunk", "_collect"})


def overrides(chunker: Chunker, method: str) -> bool:
    """Whether ``chunker``'s class overrides the hook ``method`` (``chunk``, ``chunk_tree``,
    ``split_text``, ...): a caller then calls the method instead of its own fast path."""
    return method in type(chunker).overridden_hooks


def cuts_in_core(chunker: Chunker, method: str) -> bool:
    """Whether a caller may cut for ``chunker.<method>`` and write its own objects in one
    core call, with no ``Chunk`` objects but those the store gets: ``method`` is a hook of
    the chunker's class, every level is built in, and neither ``method`` nor the chunking
    behind it is overridden (``parent_content`` rewrites the leaves, so it keeps the
    ``Chunk`` path too). A class that overrides another hook keeps this path."""
    kind = type(chunker)
    return (
        method in kind._HOOKS
        and kind.overridden_hooks.isdisjoint(_CHUNKING_HOOKS | {method})
        and not getattr(chunker, "_parent_content", False)
        and all_built_in(chunker._levels())
    )
