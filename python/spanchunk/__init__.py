"""spanchunk: exact-span, parent-child (small-to-big) chunking for retrieval, with a Rust core.

Example:
    >>> from spanchunk import ParentChildChunker
    >>> chunker = ParentChildChunker(parent_size=2000, child_size=400)
    >>> children = chunker.chunk("Some long text. " * 500)
    >>> parents = chunker.expand(children[:5])

The package in layers; a module imports only from its own layer and
the ones before it in
this list (``tests/test_layers.py`` checks every import, and that no two modules import
each other, however indirectly):

1. The base: ``_core`` (the Rust extension), ``chunk``, ``document``, ``errors``, ``units``
   (what a size is counted in) and ``arrow`` (the Arrow schema of a table of chunks).
2. ``stores``: where parents are kept (``ParentStore``, ``ParentRegistry``,
   ``SqliteRegistry``) and the one implementation of swapping hits for their parents.
3. ``retrieval``: hits into context (``assemble``, and the simple rules it chooses between).
4. ``chunkers``: text into chunks, every level filed in a store; and this module, which
   re-exports the public names.
5. ``ingest``: files and folders into a store or an output (the walk, reading, document
   ids, the stat cache, prune, ``sync``).
6. What is built on the rest, none of them importing another: ``batch``, ``cli``,
   ``integrations``.

Names with a leading underscore stay inside their layer, imported or reached as attributes;
what another layer needs has a plain name (``spanchunk.chunkers.hooks`` is what the
integrations and ingestion ask of a chunker beyond its public methods).
"""

from spanchunk._core import __version__
from spanchunk.chunk import Chunk
from spanchunk.chunkers import (
    Chunker,
    CodeChunker,
    HierarchicalChunker,
    HtmlChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
)
from spanchunk.chunkers.settings import DEFAULT_PAGE_PATTERN, SENTENCES
from spanchunk.document import Document
from spanchunk.errors import (
    ChunkingError,
    MissingParentError,
    MissingParentWarning,
    SkippedDocumentWarning,
)
from spanchunk.stores import ParentRegistry, ParentStore, SqliteRegistry

__all__ = [
    "DEFAULT_PAGE_PATTERN",
    "SENTENCES",
    "Chunk",
    "Chunker",
    "ChunkingError",
    "CodeChunker",
    "Document",
    "HierarchicalChunker",
    "HtmlChunker",
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
