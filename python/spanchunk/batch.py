"""Helpers for chunking many files in a process pool.

A worker function of ``concurrent.futures.ProcessPoolExecutor`` must be importable by name
when the pool starts its workers with ``"spawn"`` (the default on macOS and Windows), so it
cannot be defined interactively (a notebook, a REPL, code run by ``exec``); ``chunk_file``
is that function. Each worker returns every level of its file; the parent process merges the
parents into its chunker's registry, so the result is identical to chunking the files one by
one, in order.

The recipe, in the documentation (``docs/chunkers.md``, "Many documents")::

    with ProcessPoolExecutor() as pool:
        trees = list(pool.map(partial(chunk_file, chunker), paths, chunksize=8))
    for tree in trees:
        chunker.parents.add(chunk for chunk in tree if chunk.level > 0)
        children.extend(chunk for chunk in tree if chunk.level == 0)
"""

from __future__ import annotations

import os

from spanchunk.chunk import Chunk
from spanchunk.chunkers.base import Chunker
from spanchunk.ingest.reading import read_document

__all__ = ["chunk_file", "read_document"]


def chunk_file(chunker: Chunker, path: str | os.PathLike[str]) -> list[Chunk]:
    """Every chunk of every level of one file: the worker of a process pool.

    For a hierarchical chunker (``ParentChildChunker``, ``HierarchicalChunker``) this is
    ``chunk_tree``: the parents first, then the children. For any other chunker it is
    ``chunk``. The chunker arrives pickled in the worker, so the parents it records there
    stay there; the caller adds the parents (``chunk.level > 0``) of the returned chunks to
    its own registry.

    Args:
        chunker: Any spanchunk chunker (it is pickled for each task).
        path: The file, read with ``read_document``.

    Returns:
        The chunks of the file, as ``chunker.chunk_tree`` (or ``chunk``) returns them.

    Raises:
        OSError: The file cannot be read.
        ValueError: The file is not valid UTF-8.

    Example:
        >>> import pathlib, tempfile
        >>> from spanchunk import ParentChildChunker
        >>> from spanchunk.batch import chunk_file
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = pathlib.Path(folder, "a.txt")
        ...     _ = path.write_text("One sentence. " * 300, encoding="utf-8")
        ...     tree = chunk_file(ParentChildChunker(1000, 200), path)
        >>> sorted({chunk.level for chunk in tree}), tree[0].metadata["source"] == str(path)
        ([0, 1], True)
    """
    document = read_document(path)
    chunk_tree = getattr(chunker, "chunk_tree", None)
    if chunk_tree is not None:
        tree: list[Chunk] = chunk_tree(document)
        return tree
    return chunker.chunk(document)
