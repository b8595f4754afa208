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
from spanchunk.document import Document

__all__ = ["chunk_file", "file_document_id", "read_document"]


#: Byte order marks of the wide encodings, and the codec that keeps the mark as U+FEFF
#: (UTF-32's first: UTF-32LE's mark starts with UTF-16LE's).
_WIDE_MARKS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def file_document_id(path: str | os.PathLike[str]) -> str:
    """The document id of a file, as the command line gives it in every output: its
    resolved path (absolute, every symbolic link resolved).

    So the same file gets the same chunk ids whether it was chunked into JSON Lines, Parquet
    or a store, from any working directory, and two files with the same text get different
    ids. Moving or renaming a file (or the folder it is in) changes its id.

    Example:
        >>> import os
        >>> file_document_id("docs/../README.md") == os.path.realpath("README.md")
        True
    """
    return os.path.realpath(path)


def read_document(path: str | os.PathLike[str], *, encoding: str | None = None) -> Document:
    """A file as a ``Document``, read as the command line reads files: its id is
    :func:`file_document_id` (so its chunk ids are those of the command line's outputs, with
    the same settings) and its ``source`` the path as given.

    The bytes are decoded as strict UTF-8 with a byte order mark and line ends kept, so the
    chunks' offsets are offsets into the file's text; a file that starts with a UTF-16 or
    UTF-32 byte order mark is decoded from that encoding (the mark kept as U+FEFF, offsets
    those of the decoded text), and ``encoding`` (any Python codec, the command line's
    ``--input-encoding``) reads text in another one.

    Args:
        path: The file.
        encoding: The file's encoding, when it is not UTF-8 (None: UTF-8, or UTF-16 or
            UTF-32 by a byte order mark).

    Returns:
        ``Document(text, id=file_document_id(path), source=os.fspath(path))``.

    Raises:
        OSError: The file cannot be read.
        ValueError: The file is not text in its encoding (the message names the byte and
            offset).
    """
    with open(path, "rb") as file:
        data = file.read()
    codec = encoding or next((name for mark, name in _WIDE_MARKS if data.startswith(mark)), "utf-8")
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as error:
        name = "UTF-8" if codec == "utf-8" else codec
        raise ValueError(
            f"{os.fspath(path)}: not {name} (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}): pass encoding=... for text in another encoding"
        ) from None
    return Document(text, id=file_document_id(path), source=os.fspath(path))


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
