"""``Span``: the one result type of the retrieval helpers that return pieces of a document.

``assemble`` and ``neighbours`` both answer with spans: an exact stretch of one document's
text, the stored chunks it is made of, the hits it holds and its size in the unit asked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from spanchunk.chunk import Chunk
from spanchunk.stores.parents import not_a_chunk

__all__ = ["Span", "scored_hits"]


@dataclass(frozen=True, slots=True)
class Span:
    """One piece of context: an exact span of a document, made of stored chunks.

    ``document_text[span.start_char:span.end_char] == span.text`` and the UTF-8 bytes of
    ``text`` are ``document_bytes[start_byte:end_byte]``, as for a ``Chunk``.

    Attributes:
        document_id: The document the span lies in.
        level: The level of its chunks (0 for a run of leaves, the ancestor's level when
            the span is exactly one ancestor).
        start_char: Start offset in code points, in the document.
        end_char: End offset in code points (exclusive).
        start_byte: Start offset in the UTF-8 document.
        end_byte: End offset in the UTF-8 document (exclusive).
        text: The document's text over the span (the text between its chunks included).
        chunks: The stored chunks it is made of, in document order: one ancestor when the
            span is exactly that chunk, else the run of chunks it joins.
        hits: The hits it holds, in the order they were given.
        score: The best score of a hit in it (hits given without scores: minus their rank,
            so the first hit scores best); 0.0 when it holds none.
        rank: That hit's position among the hits given (-1 when it holds none).
        size: The size of ``text`` in the unit the budget was counted in.
    """

    document_id: str
    level: int
    start_char: int
    end_char: int
    start_byte: int
    end_byte: int
    text: str
    chunks: tuple[Chunk, ...]
    hits: tuple[Chunk, ...]
    score: float
    rank: int
    size: int

    @property
    def chunk_ids(self) -> tuple[str, ...]:
        """The ids of ``chunks``."""
        return tuple(chunk.id for chunk in self.chunks)

    @property
    def first_index(self) -> int:
        """The ``index`` of the first chunk."""
        return self.chunks[0].index

    @property
    def last_index(self) -> int:
        """The ``index`` of the last chunk."""
        return self.chunks[-1].index


def scored_hits(hits: Iterable[object], where: str) -> list[tuple[Chunk, float]]:
    """Hits as (chunk, score), in the order given: a ``(Chunk, number)`` pair keeps its
    score, a bare ``Chunk`` scores minus its rank (so the first is best); ``where`` names
    the function in the error for anything else."""
    scored: list[tuple[Chunk, float]] = []
    for rank, hit in enumerate(hits):
        if type(hit) is Chunk:
            scored.append((hit, -float(rank)))
        elif (
            isinstance(hit, tuple)
            and len(hit) == 2
            and type(hit[0]) is Chunk
            and isinstance(hit[1], (int, float))
            and not isinstance(hit[1], bool)
        ):
            scored.append((hit[0], float(hit[1])))
        else:
            raise not_a_chunk(rank, hit, where)
    return scored
