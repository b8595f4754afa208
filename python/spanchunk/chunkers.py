"""Every chunker in one namespace (they live in ``base``, ``recursive``, ``markdown`` and
``hierarchical``); ``from spanchunk import ...`` is the public way to import them."""

from spanchunk.base import Chunker, Documents, ParentStore
from spanchunk.hierarchical import HierarchicalChunker, ParentChildChunker
from spanchunk.markdown import MarkdownChunker
from spanchunk.recursive import RecursiveChunker

__all__ = [
    "Chunker",
    "Documents",
    "HierarchicalChunker",
    "MarkdownChunker",
    "ParentChildChunker",
    "ParentStore",
    "RecursiveChunker",
]
