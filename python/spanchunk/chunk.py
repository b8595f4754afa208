"""The output of every chunker: an immutable piece of a document with its exact spans.

``Chunk`` is a frozen class of the Rust core (``spanchunk._core.Chunk``), re-exported here
under its public name; its docstring lives on the Rust type (``rust/py.rs``). It is built in
the core, in bulk, because building chunk objects is most of ``chunk()``: one core call per
batch (``_core.chunk_documents``; ``_core.build_chunks`` for the span tables of custom
levels) makes the ``Chunk`` objects with no Python bytecode per chunk.

Performance notes
-----------------
Measured on the project's 2-core shared container (runs vary by 10-15%), CPython 3.11,
release wheels of the same engine before and after the change, taking turns, results kept
alive while timed. Job: ``ParentChildChunker(2000, 400).chunk_tree(text)`` per file; ns per
chunk = the whole ``chunk_tree`` time over the chunks made (parents and children).

=============================  ==========================  ==========================
corpus                         pure-Python ``Chunk``       Rust ``Chunk``
=============================  ==========================  ==========================
gutenberg, 2.61 MB, 9,622      220 MB/s, 1,233 ns/chunk    431 MB/s, 631 ns/chunk
markdown-en, 1.22 MB, 4,574    180 MB/s, 1,486 ns/chunk    363 MB/s, 735 ns/chunk
=============================  ==========================  ==========================

(Medians of 45 runs.) Object building alone, same spans, same process: 870 -> 306 ns per
chunk on Gutenberg, 1,029 -> 279 on markdown-en; about 210 when the memory of the previous
run is reused. What is left of ``chunk_tree`` is mostly the core's spans (about 300 ns per
chunk) and the registry (about 40).

The pure-Python class it replaces was the best of what was tried in Python: ``__slots__``,
filled through a mutable twin with the same slots and retyped with ``obj.__class__ = Chunk``,
every object made by ``map`` over numpy columns. Of its ~850 ns per chunk, slicing the text
was about 290 ns, the cyclic garbage collector about 230 ns, stores and calls the rest.

The Rust class is built by ``_core.build_chunks``, one call per document: ids hashed with the
GIL released, each text sliced with ``PyUnicode_Substring`` straight from the document str
(no UTF-8 round trip), the parent's own id object reused as ``parent_id``, one child-id tuple
per parent, one document id and one metadata mapping shared by every chunk. The class has no
``__traverse__``, so chunks are not tracked by the cyclic collector (their fields are strs,
ints, a tuple of strs and a read-only mapping): the collector's share is gone. perf puts most
of the remaining cost in CPython itself: copying and narrowing the slices (the Gutenberg
files are UCS-2, most chunks ASCII), and allocating the strs and objects.

Lazy fields (second round). With the objects at ~300 ns each, ``Chunk`` building was still
about half of ``chunk_tree`` on the Markdown folders. A chunk now holds its offsets, its row
and a reference to one ``DocumentRows`` per document (the document str, the document id and
fingerprint, the span rows with their parent and child rows); ``id``, ``text``,
``parent_id`` and ``child_ids`` are made on first read and kept (``PyOnceLock``), and even
the id's hash is computed then (most children's ids are never read: the registry reads the
parents'). Same measurement, objects alone: 306 -> 65 ns per chunk on Gutenberg, 279 -> 101
on markdown-en, 135 on markdown-zh (short documents: the per-document part weighs more).
Reading every ``text`` once afterwards costs 240-340 ns per chunk, about what the eager
slice cost, so a job that reads every text pays what it paid before, and one that reads the
offsets (or the texts of the hits only) does not pay for the rest. A chunk keeps its
document's str alive (the ``Document`` usually does anyway).

``chunk_documents`` then took the span array out of the path: one core call per batch
computes the spans, the default document ids and the chunk ids with the GIL released and
builds the objects from the span table directly; a single ``str`` skips the ``Document``
object, and parents go to a ``ParentRegistry`` in a plain loop without ``add``'s type
checks. ``chunk_tree`` of an 11-char text: 4.9 -> 2.8 us, of which the engine itself is 0.34
(allocations, mostly); the rest is the binding (argument lists, about 20 small allocations,
the objects) and the Python method calls.

Tried and dropped: taking ASCII-only chunks (byte length == char length) from the document's
cached UTF-8 with ``PyUnicode_FromStringAndSize`` instead of ``PyUnicode_Substring`` (no
faster: 210 vs 203 ns per chunk); hashing ids into a stack buffer with one-shot xxh3 instead
of ``ids::chunk_id`` (no measurable gain, so the ids keep one implementation).
"""

from __future__ import annotations

from spanchunk._core import Chunk

__all__ = ["Chunk"]
