"""spanchunk: exact-span, parent-child (small-to-big) chunking for retrieval, with a Rust core.

Example:
    >>> from spanchunk import ParentChildChunker
    >>> chunker = ParentChildChunker(parent_size=2000, child_size=400)
    >>> children = chunker.chunk("Some long text. " * 500)
    >>> parents = chunker.expand(children[:5])
"""

from spanchunk._core import __version__
from spanchunk._settings import SENTENCES
from spanchunk.base import Chunker
from spanchunk.chunk import Chunk
from spanchunk.document import Document
from spanchunk.errors import (
    ChunkingError,
    MissingParentError,
    MissingParentWarning,
    SkippedDocumentWarning,
)
from spanchunk.hierarchical import HierarchicalChunker, ParentChildChunker
from spanchunk.markdown import MarkdownChunker
from spanchunk.recursive import RecursiveChunker
from spanchunk.registry import ParentRegistry
from spanchunk.store import ParentStore, SqliteRegistry

__all__ = [
    "SENTENCES",
    "Chunk",
    "Chunker",
    "ChunkingError",
    "Document",
    "HierarchicalChunker",
    "MarkdownChunker",
    "MissingParentError",
    "MissingParentWarning",
    "ParentChildChunker",
    "ParentRegistry",
    "ParentStore",
    "RecursiveChunker",
    "SkippedDocumentWarning",
    "SqliteRegistry",
    "__version__",
]
