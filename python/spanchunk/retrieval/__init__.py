"""The query side of small-to-big: what to send to the model for the hits a search returned.

``assemble`` is the way to turn hits into context: exact, non-overlapping spans of the
documents that fit a budget, chosen region by region between the hit, a run of neighbours
and a whole parent. The other helpers are the simple rules it chooses between, for a caller
that wants one of them alone:

- ``expand``: each hit swapped for its parent, de-duplicated, order kept (``store.expand``
  and ``chunker.expand`` are the same function).
- ``auto_merge``: a parent replaces its retrieved children when enough of them were
  retrieved, repeated up the levels (the rule of Haystack's and LlamaIndex's
  ``AutoMergingRetriever``).
- ``neighbours``: a hit grown with the adjacent chunks of its level up to a size budget.
- ``attach_parent_content``: children that carry their parent in their metadata, for vector
  stores that cannot look parents up; ``expand`` falls back to it.

Every helper works with any ``spanchunk.stores.ParentStore`` (``ParentRegistry``,
``SqliteRegistry``, or your own) and takes hits as ``Chunk`` objects or ``(chunk, score)``
pairs, best first. ``assemble`` and ``neighbours`` return ``Span`` objects, and count their
budget in a ``unit`` as the chunkers count sizes.

Example:
    >>> from spanchunk import HierarchicalChunker, ParentRegistry
    >>> from spanchunk.retrieval import assemble, auto_merge, expand
    >>> store = ParentRegistry(children=True)
    >>> chunker = HierarchicalChunker(sizes=[400, 100], registry=store)
    >>> leaves = chunker.chunk("A sentence that repeats itself. " * 40)
    >>> spans = assemble(leaves[:2], store, budget=500, unit="char")
    >>> [(span.level, span.size <= 500) for span in spans]
    [(1, True)]
    >>> [c.level for c in expand(leaves[:3], store)]
    [1]
    >>> hits = [(leaves[0], 0.9), (leaves[1], 0.6), (leaves[2], 0.3)]  # 3 of 4 children
    >>> [(chunk.level, round(score, 2)) for chunk, score in auto_merge(hits, store)]
    [(1, 0.6)]
"""

from spanchunk.retrieval.adjacent import neighbours
from spanchunk.retrieval.attach import attach_parent_content, parent_content
from spanchunk.retrieval.context import assemble
from spanchunk.retrieval.merge import auto_merge, expand
from spanchunk.retrieval.span import Span
from spanchunk.stores.parents import PARENT_CONTENT

__all__ = [
    "PARENT_CONTENT",
    "Span",
    "assemble",
    "attach_parent_content",
    "auto_merge",
    "expand",
    "neighbours",
    "parent_content",
]
