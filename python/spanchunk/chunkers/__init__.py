"""The chunkers: text into chunks, every level above the leaves filed in a parent store.

``base`` holds ``Chunker`` (the public operations, and custom strategies), ``recursive``,
``markdown``, ``code``, ``html`` and
``hierarchical`` the built-in chunkers on ``builtin``'s shared base;
``inputs`` checks what is chunked, ``settings`` declares each setting once, ``spans`` is the
span table, and ``hooks`` is what the integrations and the command line ask of a chunker
beyond its public methods. ``from spanchunk import ...`` is the public way to import them.
"""

from spanchunk.chunkers.base import Chunker, Documents, ParentStore
from spanchunk.chunkers.code import CodeChunker
from spanchunk.chunkers.hierarchical import HierarchicalChunker, ParentChildChunker
from spanchunk.chunkers.html import HtmlChunker
from spanchunk.chunkers.markdown import MarkdownChunker
from spanchunk.chunkers.recursive import RecursiveChunker

__all__ = [
    "Chunker",
    "CodeChunker",
    "Documents",
    "HierarchicalChunker",
    "HtmlChunker",
    "MarkdownChunker",
    "ParentChildChunker",
    "ParentStore",
    "RecursiveChunker",
]
