"""The output of every chunker: an immutable piece of a document with its exact spans.

``Chunk`` is a frozen class of the Rust core (``spanchunk._core.Chunk``), re-exported here
under its public name; its docstring lives on the Rust type (the ``///`` comment on
``PyChunk`` in ``rust/``). It is built in the core, in bulk, because building chunk objects
is most of ``chunk()``: one core call per batch (``_core.chunk_documents``;
``_core.build_chunks`` for the span tables of custom levels) makes the ``Chunk`` objects
with no Python bytecode per chunk.

Speed: ``benches/NOTES.md``, under ``python/spanchunk/chunk.py``.
"""

from __future__ import annotations

from spanchunk._core import Chunk

__all__ = ["Chunk"]
