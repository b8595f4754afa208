"""The output of every chunker: an immutable piece of a document with its exact spans.

Performance notes
-----------------
Turning span rows into ``Chunk`` objects is the hot path of ``chunk()``: the core cuts 5 MB
into spans in about 12 ms, so the per-object cost here decides end-to-end speed. Measured on
the project's 2-core container, CPython 3.11, ``ParentChildChunker(2000, 400)``.

Per object, 20,000 objects with 12 fields (microbenchmark):

- ``object.__setattr__`` per field in ``__init__`` (the usual frozen-class idiom): 916 ns.
- ``object.__new__`` plus the slot descriptors' ``__set__`` bound to locals: 625 ns.
- A plain mutable ``__slots__`` class with ``self.x = x`` stores: 298 ns, not immutable.
- That mutable twin, then ``obj.__class__ = Chunk``: 395 ns. CPython allows the assignment
  because both classes have the same slots; ``Chunk`` refuses ``__setattr__`` and the twin
  never escapes this module. Chosen: real slots, fast reads, immutable.
- A ``tuple`` subclass with ``itemgetter`` properties (namedtuple's trick): 254 ns, but a
  chunk would then be a tuple (len, iteration, indexing, JSON as a list): rejected.

The builder, on the Gutenberg corpus read twice (5.2 MB, 8 documents, 19,244 chunks):

- one ``tolist()`` per row, a Python ``for`` loop, the class set after ``__init__``: 908 ns
  per chunk; one ``tolist()`` per column instead: 860 ns; every object made by ``map`` over
  the columns with the class set inside the twin's ``__init__`` (no Python-level loop):
  830 ns. Chosen. Of that, slicing the text is about 290 ns (the corpus is UCS-2: each
  slice is copied and narrowed) and the cyclic garbage collector about 230 ns.
- Turning the collector off around the loop saves that 230 ns (``chunk()`` 35 -> 30 ms),
  but ``gc.disable()`` is process-wide and would race with the caller's own setting in
  other threads: rejected, left to the application.

End to end on that 5.2 MB (median of 9 runs; runs on this shared box vary by 15%):
``spans`` 405-435 MB/s, ``chunk`` 123-148 MB/s, ``chunk_tree`` 123-145 MB/s, ``chunk_many``
(2 cores) 125-162 MB/s, ``spans_many`` (2 cores) 810-820 MB/s. About 60% of ``chunk`` is
this module (about 1,000 ns per chunk), 30% the core's spans, 5% the core's ids.
Parent ids are looked up with ``map`` (C speed), child ids grouped with one
``searchsorted`` per level, and one metadata mapping is shared by all chunks of a document.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise, repeat
from types import MappingProxyType
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray

__all__ = ["Chunk"]

_FIELDS = (
    "id",
    "text",
    "document_id",
    "index",
    "level",
    "start_char",
    "end_char",
    "start_byte",
    "end_byte",
    "parent_id",
    "child_ids",
    "metadata",
)

_EMPTY_METADATA: Mapping[str, Any] = MappingProxyType({})
_NO_CHILDREN: tuple[str, ...] = ()
# Span columns read by the builder: index, start_byte, end_byte, start_char, end_char.
_COLUMNS = [1, 3, 4, 5, 6]


class _MutableChunk:
    """The mutable twin of Chunk, with the same slots: filled with fast stores, then retyped.

    Calling it returns a ``Chunk``: the last store turns the object into one. CPython allows
    the ``__class__`` assignment because both classes have the same slots and no ``__dict__``.
    """

    __slots__ = _FIELDS

    # One positional argument per field: the builder feeds it column by column through map().
    def __init__(  # noqa: PLR0917
        self,
        id: str,
        text: str,
        document_id: str,
        index: int,
        level: int,
        start_char: int,
        end_char: int,
        start_byte: int,
        end_byte: int,
        parent_id: str | None,
        child_ids: tuple[str, ...],
        metadata: Mapping[str, Any],
    ) -> None:
        self.id = id
        self.text = text
        self.document_id = document_id
        self.index = index
        self.level = level
        self.start_char = start_char
        self.end_char = end_char
        self.start_byte = start_byte
        self.end_byte = end_byte
        self.parent_id = parent_id
        self.child_ids = child_ids
        self.metadata = metadata
        self.__class__ = Chunk  # type: ignore[assignment]


class Chunk:
    """One chunk of a document: its text, exact offsets, place in the hierarchy and metadata.

    Chunks are immutable, hashable and picklable. Offsets are relative to the whole document:
    ``document.text[chunk.start_char:chunk.end_char] == chunk.text`` and
    ``document.text.encode()[chunk.start_byte:chunk.end_byte] == chunk.text.encode()``.
    Chunkers build chunks; constructing one by hand is possible but rarely needed.

    Attributes:
        id: 16 hex digits, a hash of (document id, level, byte span, chunker fingerprint).
        text: The chunk's text (also available as ``content``).
        document_id: The id of the document the chunk was cut from.
        index: Position of the chunk within its document and level: 0, 1, 2, ...
        level: 0 for the leaves (what gets embedded), 1 for their parents, and so on.
        start_char: Start offset in code points (Python ``str`` indices).
        end_char: End offset in code points (exclusive).
        start_byte: Start offset in the UTF-8 encoded document.
        end_byte: End offset in the UTF-8 encoded document (exclusive).
        parent_id: The id of the chunk one level up, or None at the top level.
        child_ids: The ids of the chunks one level down, in order (empty for leaves).
        metadata: Read-only mapping: the document's metadata, plus ``"source"`` when the
            document has one.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> text = "A first sentence. " * 30
        >>> children = ParentChildChunker(parent_size=200, child_size=50).chunk(text)
        >>> child = children[0]
        >>> child.level, child.index, text[child.start_char:child.end_char] == child.text
        (0, 0, True)
        >>> child.parent_id is not None
        True
    """

    __slots__ = _FIELDS

    id: str
    text: str
    document_id: str
    index: int
    level: int
    start_char: int
    end_char: int
    start_byte: int
    end_byte: int
    parent_id: str | None
    child_ids: tuple[str, ...]
    metadata: Mapping[str, Any]

    # The fields in their documented order, as the rows of a span table read.
    def __new__(  # noqa: PLR0917
        cls,
        id: str,
        text: str,
        document_id: str,
        index: int,
        level: int,
        start_char: int,
        end_char: int,
        start_byte: int,
        end_byte: int,
        parent_id: str | None = None,
        child_ids: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Chunk:
        if metadata is None:
            metadata = _EMPTY_METADATA
        elif not isinstance(metadata, MappingProxyType):
            metadata = MappingProxyType(dict(metadata))
        values = (
            id,
            text,
            document_id,
            index,
            level,
            start_char,
            end_char,
            start_byte,
            end_byte,
            parent_id,
            tuple(child_ids),
            metadata,
        )
        if cls is Chunk:
            return _MutableChunk(*values)  # type: ignore[return-value]
        self = object.__new__(cls)  # a subclass may add slots: set the fields one by one
        for name, value in zip(_FIELDS, values, strict=True):
            object.__setattr__(self, name, value)
        return self

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"Chunk is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Chunk is immutable: cannot delete {name!r}")

    @property
    def content(self) -> str:
        """The chunk's text (an alias of ``text``, the name LangChain and Haystack use)."""
        return self.text

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # MappingProxyType does not pickle: send a plain dict; __new__ freezes it again.
        return (
            Chunk,
            (
                self.id,
                self.text,
                self.document_id,
                self.index,
                self.level,
                self.start_char,
                self.end_char,
                self.start_byte,
                self.end_byte,
                self.parent_id,
                self.child_ids,
                dict(self.metadata),
            ),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chunk):
            return NotImplemented
        return (
            self.id == other.id
            and self.start_byte == other.start_byte
            and self.end_byte == other.end_byte
            and self.start_char == other.start_char
            and self.end_char == other.end_char
            and self.text == other.text
        )

    def __hash__(self) -> int:
        return hash((self.id, self.start_byte, self.end_byte))

    def __repr__(self) -> str:
        preview = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return (
            f"Chunk(id={self.id!r}, level={self.level}, index={self.index}, "
            f"chars={self.start_char}:{self.end_char}, text={preview!r})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The chunk as a JSON-safe dict (``child_ids`` a list, ``metadata`` a dict).

        Returns:
            One key per attribute, in the order of the attribute list above.

        Example:
            >>> from spanchunk import RecursiveChunker
            >>> RecursiveChunker(100).chunk("Hello there.")[0].to_dict()["text"]
            'Hello there.'
        """
        return {
            "id": self.id,
            "text": self.text,
            "document_id": self.document_id,
            "index": self.index,
            "level": self.level,
            "start_char": self.start_char,
            "end_char": self.end_char,
            "start_byte": self.start_byte,
            "end_byte": self.end_byte,
            "parent_id": self.parent_id,
            "child_ids": list(self.child_ids),
            "metadata": dict(self.metadata),
        }


def _build_chunks(
    text: str,
    document_id: str,
    metadata: Mapping[str, Any],
    ids: Sequence[str],
    spans: NDArray[np.int64],
) -> list[Chunk]:
    """Chunk objects for every row of a (n, 7) span array, in row order.

    Rows come grouped by level, the top level first, each level in document order (the
    layout of ``_core.tree_spans``); ``ids`` holds one id per row. ``parent`` is the index
    of the parent row within the level above; children of one parent are contiguous.
    """
    if len(ids) == 0:
        return []
    top_level = int(spans[0, 0])
    # Rows per level, top level first.
    counts = np.bincount(spans[:, 0], minlength=top_level + 1)[::-1].tolist()
    chunks: list[Chunk] = []
    level_start = 0
    parent_level_start = 0
    for position, count in enumerate(counts):
        level_end = level_start + count
        block = spans[level_start:level_end]
        indexes, start_bytes, end_bytes, start_chars, end_chars = block[:, _COLUMNS].T.tolist()
        parent_ids: Iterable[str | None]
        if position == 0:
            parent_ids = repeat(None)
        else:
            parent_ids = map(ids.__getitem__, (block[:, 2] + parent_level_start).tolist())
        children: Iterable[tuple[str, ...]]
        if position + 1 < len(counts):
            child_end = level_end + counts[position + 1]
            child_ids = ids[level_end:child_end]
            # First child row of each parent: the children's parent column never decreases.
            bounds = np.searchsorted(spans[level_end:child_end, 2], np.arange(count + 1)).tolist()
            children = [tuple(child_ids[first:last]) for first, last in pairwise(bounds)]
        else:
            children = repeat(_NO_CHILDREN)
        chunks += map(  # type: ignore[arg-type]
            _MutableChunk,  # returns a Chunk (see its __init__)
            ids[level_start:level_end],
            map(text.__getitem__, map(slice, start_chars, end_chars)),
            repeat(document_id),
            indexes,
            repeat(top_level - position),
            start_chars,
            end_chars,
            start_bytes,
            end_bytes,
            parent_ids,
            children,
            repeat(metadata),
        )
        parent_level_start = level_start
        level_start = level_end
    return chunks
