"""The ``.sqlite`` output: parents and children in a ``SqliteRegistry`` file, kept up to date.

A run into a new file builds the store in a temporary file next to it and renames it into
place at the end. A run into an existing store is incremental: each file is one document,
whose id is its path (normalised), recorded with a hash of the file's bytes; a file whose
hash is the one recorded is read and hashed but not cut; a changed file replaces its
document, a new one is added, and with ``--prune`` the documents whose files are gone (among
those the run's PATHs and globs cover) are removed. Every batch of documents is written in
one transaction, so a run that is interrupted or killed leaves each document in its old or
its new version.

Performance notes (measured by ``benches/cli.py``):
- Rows are built without ``Chunk`` objects: the core cuts the text (``_core.Tree``, GIL
  released) and hashes the ids (``_core.chunk_ids``); the columns of a document's rows are
  numpy and list operations, zipped into the tuples sqlite3 binds. This was twice as fast
  as ``Chunk`` objects through ``SqliteRegistry._rows``, which had been the largest cost.
- One transaction per batch of about 1 MB (``_job.BATCH_BYTES``), in the main thread, while
  the workers read, hash and cut the next batches. The rows are built in the main thread
  too: sqlite3 releases the GIL for every row it steps and takes it back after, and with
  workers building rows (pure Python, holding the GIL) the writer waited at each row; two
  workers ran at 0.74x one, and as fast as one once the rows moved.
- Where the CPU goes, one worker, 100 MB (the corpus 20 times), loaded machine: SQLite
  inserts 4.4 s, rows 2.5 s, cutting 1.1 s, reading 0.5 s, the final index and sync 0.5 s.
- A new store is built with no journal (``journal_mode=OFF``, ``synchronous=OFF``: it is a
  temporary file until the rename) and without the documents' index, built once at the
  end: inserting 50 MB of the corpus's rows went from 7-8 to 14-24 MB/s of input on the
  loaded 2-core machine. A larger page cache (64 MB) made no measurable difference.
- What is left is SQLite itself: binding twelve values and inserting into the table and its
  unique id index (random keys) costs about 10 us a row there (340,000 rows for 100 MB of
  text), which bounds a first run to the speed of that one writing thread. Tried and
  dropped: multi-row ``INSERT ... VALUES (...), (...)`` statements (slower: the binding is
  per value either way).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from spanchunk import _core
from spanchunk._settings import fingerprint_of
from spanchunk._spans import tree_array
from spanchunk.base import _is_markdown
from spanchunk.cli._files import Globs
from spanchunk.cli._job import NOT_CHUNKED, NOT_UTF8, BatchResult, Chunkers, Part, read_file
from spanchunk.errors import ChunkingError
from spanchunk.store import _ID_SEPARATOR, encode_metadata

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from spanchunk.cli._files import File

Row = tuple[Any, ...]
"""One chunk as ``SqliteRegistry`` stores it (the columns of its ``chunks`` table)."""


def content_hash(data: bytes) -> str:
    """What the store records of a file's bytes to tell, next time, that it is unchanged:
    SHA-256 in hex (OpenSSL's, with the CPU's SHA instructions: four times BLAKE2b's speed
    here, where it had been the largest single cost of a re-run; hashlib releases the GIL
    while it hashes)."""
    return hashlib.sha256(data).hexdigest()


def document_id_of(path: str) -> str:
    """A file's document id in the store: its path as given, normalised (``./docs/a.md`` and
    ``docs/a.md`` are one document)."""
    return os.path.normpath(path)


def run_fingerprint(chunkers: Chunkers) -> str:
    """The fingerprint a run records in the store: that of its one chunker with ``--format
    text`` or ``markdown`` (the API's chunker with those settings can add to the store), of
    both with ``auto``."""
    if chunkers.format == "text":
        return chunkers.text.fingerprint()
    if chunkers.format == "markdown":
        return chunkers.markdown.fingerprint()
    return fingerprint_of(
        {"text": chunkers.text.fingerprint(), "markdown": chunkers.markdown.fingerprint()}
    )


def document_rows(
    text: str,
    document_id: str,
    fingerprint: str,
    spans: NDArray[np.int64],
    outline: _core.Outline | None,
) -> list[Row]:
    """The rows of one document's chunks, every level, top first: what
    ``SqliteRegistry._rows`` makes of ``chunk_tree(Document(text, id=document_id,
    source=document_id))``, without the ``Chunk`` objects.

    ``spans`` is the (n, 7) span table (level, index, parent row within the level above,
    start_byte, end_byte, start_char, end_char), levels in blocks, top first.
    """
    count = len(spans)
    if not count:
        return []
    ids = _core.chunk_ids(document_id, fingerprint, spans)
    levels = spans[:, 0]
    top = int(levels[0])
    # The first row of each level's block: the blocks go top first.
    per_level = np.bincount(levels, minlength=top + 2)
    first_row = np.zeros(top + 2, dtype=np.int64)
    for level in range(top - 1, -1, -1):
        first_row[level] = first_row[level + 1] + per_level[level + 1]
    top_rows = int(per_level[top])
    # Rows below the top, with the row of their parent: non-decreasing, since each level's
    # rows follow their parents' order and each level's parents are the block before it.
    below = slice(top_rows, count)
    parent_rows = spans[below, 2] + first_row[levels[below] + 1]
    parent_list = parent_rows.tolist()
    parent_ids = [None] * top_rows + [ids[row] for row in parent_list]
    every_row = np.arange(count)
    child_starts = (np.searchsorted(parent_rows, every_row, "left") + top_rows).tolist()
    child_ends = (np.searchsorted(parent_rows, every_row, "right") + top_rows).tolist()
    join = _ID_SEPARATOR.join
    child_ids = [join(ids[start:end]) for start, end in zip(child_starts, child_ends, strict=True)]
    start_chars = spans[:, 5].tolist()
    end_chars = spans[:, 6].tolist()
    texts = [text[start:end] for start, end in zip(start_chars, end_chars, strict=True)]
    metadata: Iterable[str]
    if outline is None:
        metadata = repeat(encode_metadata({"source": document_id}))
    else:
        encoded: dict[tuple[str, ...], str] = {}
        metadata = []
        for start_byte in spans[:, 3].tolist():
            path = tuple(outline.path(start_byte))
            text_of_path = encoded.get(path)
            if text_of_path is None:
                text_of_path = encoded[path] = encode_metadata(
                    {"source": document_id, "headings": path}
                )
            metadata.append(text_of_path)
    return list(
        zip(
            ids,
            texts,
            repeat(document_id),
            spans[:, 1].tolist(),
            levels.tolist(),
            start_chars,
            end_chars,
            spans[:, 3].tolist(),
            spans[:, 4].tolist(),
            parent_ids,
            child_ids,
            metadata,
        )
    )


class Cut(NamedTuple):
    """A document a worker cut, for the writer to turn into rows."""

    document_id: str
    text: str
    fingerprint: str
    spans: NDArray[np.int64]
    markdown: bool
    content_hash: str
    stored: bool  # whether the store holds a version of it

    def rows(self) -> list[Row]:
        """The document's rows (its heading paths parsed here for a Markdown one)."""
        outline = _core.Outline(self.text) if self.markdown else None
        return document_rows(self.text, self.document_id, self.fingerprint, self.spans, outline)


@dataclass(frozen=True)
class StoreJob:
    """The ``.sqlite`` job on one batch: read and hash each file; cut those whose hash is
    not the one the store holds.

    Workers do what runs without the GIL (reading, hashing, cutting); the rows are built by
    the writer, in the thread that inserts them: built here, they held the GIL while the
    writer waited for it after every row SQLite stepped, and two workers ran slower than one.
    """

    chunkers: Chunkers
    #: The content hash recorded for each document of the store (empty for a new one).
    stored: Mapping[str, str | None]

    def __call__(self, batch: Sequence[File]) -> BatchResult:
        """Read, compare, cut and prepare the rows of one batch (runs in a worker)."""
        result = BatchResult()
        written: list[Cut] = []
        for file in batch:
            data, skip = read_file(file)
            if skip is not None:
                result.skips.append(skip)
                continue
            assert data is not None
            document_id = document_id_of(file.path)
            digest = content_hash(data)
            recorded = self.stored.get(document_id, "")
            if recorded == digest:
                result.unchanged += 1
                result.documents += 1
                result.bytes_read += len(data)
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as error:
                message = f"not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"
                result.skips.append((file.path, NOT_UTF8, message))
                continue
            markdown = self.chunkers.is_markdown(file.path)
            chunker = self.chunkers.markdown if markdown else self.chunkers.text
            fingerprint = chunker.fingerprint()
            levels = chunker._levels()
            try:
                spans = tree_array(levels, text)
            except (ChunkingError, ValueError, TypeError) as error:
                result.skips.append((file.path, NOT_CHUNKED, str(error)))
                continue
            markdown = _is_markdown(levels)
            written.append(
                Cut(document_id, text, fingerprint, spans, markdown, digest, recorded != "")
            )
            result.documents += 1
            result.bytes_read += len(data)
            if recorded == "":
                result.added += 1
            else:
                result.replaced += 1
            result.sizes.add_spans(spans)
        result.parts.append(Part(written, [], []))
        return result


# --------------------------------------------------------------------------------------------
# Which stored documents a run covers, for --prune.


def covered_by(paths: Sequence[str], globs: Globs) -> Callable[[str], bool]:
    """Whether a stored document id lies where this run looked: it is a PATH argument, or a
    file inside a PATH folder (existing or gone) that the run would have picked (not hidden,
    and chosen by the globs, which match on the path relative to that PATH)."""
    roots = [document_id_of(path) for path in paths]
    folders = [root for root in roots if not os.path.isfile(root)]

    def covers(document_id: str) -> bool:
        if document_id in roots:
            return True
        for folder in folders:
            if folder == os.curdir:
                if os.path.isabs(document_id) or document_id.split(os.sep, 1)[0] == os.pardir:
                    continue
                relative = document_id
            elif document_id.startswith(folder.rstrip(os.sep) + os.sep):
                relative = document_id[len(folder.rstrip(os.sep)) + 1 :]
            else:
                continue
            parts = relative.split(os.sep)
            if any(part.startswith(".") for part in parts):
                continue
            # An excluded folder is not walked: nothing under it is gone.
            if globs.exclude and any(
                globs.excludes("/".join(parts[:depth])) for depth in range(1, len(parts))
            ):
                continue
            if globs.picks("/".join(parts)):
                return True
        return False

    return covers


def gone_documents(
    stored: Iterable[str], listed: set[str], covers: Callable[[str], bool]
) -> list[str]:
    """The stored documents this run covers whose files it did not find."""
    return [
        document_id for document_id in stored if document_id not in listed and covers(document_id)
    ]
