"""The output of every chunker: an immutable piece of a document with its exact spans.

``Chunk`` is a frozen class of the Rust core (``spanchunk._core.Chunk``), re-exported here
under its public name; its docstring lives on the Rust type (the ``///`` comment on
``PyChunk`` in ``rust/``). It is built in the core, in bulk, because building chunk objects
is most of ``chunk()``: one core call per batch (``_core.chunk_documents``;
``_core.build_chunks`` for the span tables of custom levels) makes the ``Chunk`` objects
with no Python bytecode per chunk.

Performance notes
-----------------
A Rust class won over the best pure-Python one (``__slots__`` objects filled through a
mutable twin) because slicing the text and the cyclic garbage collector were most of the
cost: the Rust chunk is not tracked by the collector, and its ``id``, ``text``,
``parent_id`` and ``child_ids`` are made on first read, so a job that reads only offsets (or
the texts of its hits) does not pay for the rest. A chunk keeps its document's ``str``
alive. The measurements are in ``benches/NOTES.md``.
"""

from __future__ import annotations

from spanchunk._core import Chunk

__all__ = ["Chunk"]
