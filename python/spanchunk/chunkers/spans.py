"""Span plumbing shared by the chunkers: level-by-level trees and custom strategies' spans.

Rows are grouped by level, the top level first, each level in document order, with the
columns of ``SPAN_COLUMNS``: as a structured array (``SPAN_DTYPE``, what ``spans`` returns and
the core builds) or as its (n, 7) int64 view (what the custom-level path and
``_core.build_chunks`` work with).

The core (``spanchunk._core``, whose ``_core.pyi`` holds signatures only), as this package
uses it. Offsets are int64 and relative to the whole document: byte offsets into
``text.encode("utf-8")``, char offsets in code points (Python's ``len``). Text that cannot be
UTF-8 encoded (a lone surrogate) raises ``UnicodeEncodeError`` from the argument conversion,
which the Python layer turns into a ``ValueError`` naming the position. Every pass over the
text releases the GIL.

- ``SPAN_COLUMNS``: ``("level", "index", "parent", "start_byte", "end_byte", "start_char",
  "end_char")``.
- ``Splitter(chunk_size, *, overlap, min_chunk_size, separators, keep_separator, trim, unit,
  structure, merge, encoding, tokenizer_json, length_function)``: one level of the recursive
  engine; its settings are checked on construction (``ValueError`` naming the setting and the
  fix). ``measure(text)`` sizes a text in the unit; ``split(text)`` gives the (n, 4)
  ``start_byte, end_byte, start_char, end_char`` of each chunk; ``seekable`` says whether a
  tree of such levels finds its chunks by seeking (sizes in chars, trim, no overlap, no
  min_chunk_size, plain text, keep_separator not "start", separators that cannot overlap or
  are all whitespace) rather than from atoms; the output is the same either way.
- ``BLANK_CHARS``: every char that is no content (whitespace as ``str.isspace`` sees it, and
  the invisible format chars such as U+200B, U+200D, U+2060 and U+FEFF): a piece made only
  of them is no chunk, and trimming strips them from chunk edges.
- ``default_separators()``: the separator levels used when none are given.
- ``forget_token_counts()``: drops the token counts kept per tokenizer, so the next
  chunking starts cold (for benchmarks).
- ``Tree(levels)``: a chunker's Splitters, top first, held by the core. ``levels[0]`` cuts
  the document (the top level, numbered ``len(levels) - 1``); each following one cuts inside
  every span of the one before; the last is level 0. ``ValueError`` for no levels, or an
  upper level with an overlap. ``spans(text)`` is the structured array (rows: the top level
  first, each level in document order; ``parent`` is the ``index`` of the parent row in the
  level above, -1 at the top); ``spans_by_atoms(text)`` the same by the atom engine alone,
  never by seeking (the reference seeking is tested against); ``spans_many(texts,
  workers)`` the spans of each text on ``workers`` threads (None: every core).
- ``Outline(text)``: a Markdown document's structure, parsed once (pulldown-cmark):
  ``headings`` is ``(start_byte of the heading's line, level 1-6, plain text)`` of every
  heading, ``path(start_byte)`` the plain texts of the headings enclosing a chunk that starts
  there.
- ``level_spans(splitter, text, parents)``: cuts inside each parent byte span (``parents``:
  (m, 2) ``start_byte, end_byte``); returns (n, 5) ``parent`` (row in ``parents``),
  ``start_byte, end_byte, start_char, end_char``.
- ``char_spans_to_bytes(text, spans)``: (n, 2) char spans to (n, 2) byte spans;
  ``ValueError`` when a span is out of range or reversed.
- ``write_feed_upserts(store, output, ids=None, levels=None)``: appends a store's change-feed
  upserts (every chunk, or those among ``ids``; at ``levels``, or all) to the file ``output``
  as JSON Lines, reading the store's file itself (no Python connection may hold it
  meanwhile); returns how many (``spanchunk changes``).
- ``chunk_ids(text, document_id, fingerprint, spans)``: the 16-hex-digit id of every row of
  an (n, 7) span array of ``text``: xxh3-64 of (document id, fingerprint, level, the hash of
  the row's text, how many rows of that level and text come before it).
- ``Chunk``: the public ``spanchunk.Chunk`` (see ``chunk.py``); frozen, hashable, picklable.
- ``build_chunks(text, document_id, fingerprint, metadata, spans, outline=None, pages=None)``:
  ``Chunk`` objects for every row of an (n, 7) span array, in row order: ids as ``chunk_ids``
  gives them, texts sliced from ``text``, parent ids and child-id tuples linked through the
  ``parent`` column, ``metadata`` frozen once and shared by every chunk (with an ``outline``:
  one mapping per heading path, ``metadata`` plus ``"headings"``; with ``pages``, a
  ``Splitter`` whose page markers the text has: each chunk's ``"page_first"`` and
  ``"page_last"``). ``ValueError`` when a row
  is malformed (negative, reversed, past the end of the text, levels out of order, a parent
  that is not a row of the level above).
- ``chunk_documents(levels, texts, document_ids, metadatas, fingerprint, workers=1)``: every
  level of every text as ``Chunk`` objects, as ``build_chunks(Tree(levels).spans(...))``
  gives them, with no span array in between: spans, outlines and ids computed with the GIL
  released on ``workers`` threads (1: this thread, None: every core). Returns, per text, its
  chunks and the row of its first leaf.
- ``text_id(text)``: 16 hex digits, xxh3-64 of the UTF-8 text (the default ``Document`` id).
- ``write_files(chunkers, paths, sources, format="jsonl", expected_bytes=0, parquet=None,
  chunker_of=None)``: the command line's writer, one call per batch: every file read
  (skipped when unreadable, binary or changed while read), checked as UTF-8, cut by its
  chunker (``chunkers``: (levels, fingerprint) pairs; ``chunker_of``: each file's index) and
  written as ``format`` (``"jsonl"``: a ``JsonlBatch`` of every chunk's record, in order,
  which ``write_to(fd)`` writes; ``"parquet"``: a ``ParquetGroup``, the batch as one row
  group encoded for ``parquet``, a ``ParquetFile(path).encoder()``, which
  ``ParquetFile.append`` writes), GIL released. Returns that, each file's failure (None:
  written; else its kind and message) and the ``ChunkSizes`` of the chunks.
  ``write_documents(chunkers, datas, sources, ...)`` is the same for bytes in memory.
- ``FileWalk(paths, file_class, excludes=None, picks=None)``: the command line's listing of
  its PATHs (``spanchunk.cli._files.iter_files`` says what it finds and skips); iterates over
  lists of ``file_class(path, size, mtime_ns, ctime_ns, inode)`` and ``(path, kind,
  message)`` skips, in order. ``excludes`` and ``picks`` (callables of a relative path) are
  asked of folders and files when given; without them it runs with the GIL released.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeGuard

from spanchunk import _core
from spanchunk.errors import ChunkingError, encoding_error

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class SpanStrategy(Protocol):
    """A level cut in Python: what this module needs of a custom ``Chunker``."""

    def split_spans(self, text: str) -> list[tuple[int, int]]:
        """The (start, end) char offsets of the pieces of ``text``."""
        ...


Level: TypeAlias = _core.Splitter | SpanStrategy
"""One level of a chunker: a core Splitter, or a strategy cut in Python."""

SPAN_COLUMNS: tuple[str, ...] = tuple(_core.SPAN_COLUMNS)
_WIDTH = len(SPAN_COLUMNS)

# numpy is imported on first use, not with the package: it is a fifth of a second of the
# command line's startup, and the command line's JSON Lines path never needs it.


@cache
def span_dtype() -> np.dtype[np.void]:
    """The structured dtype of a span table: one int64 field per ``SPAN_COLUMNS`` name."""
    import numpy as np  # noqa: PLC0415

    return np.dtype([(name, np.int64) for name in SPAN_COLUMNS])


def __getattr__(name: str) -> Any:
    if name == "SPAN_DTYPE":
        return span_dtype()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def structured(spans: NDArray[np.int64]) -> NDArray[np.void]:
    """The (n, 7) array as a structured array of n rows: a view, no copy."""
    import numpy as np  # noqa: PLC0415

    spans = np.ascontiguousarray(spans, dtype=np.int64).reshape(-1, _WIDTH)
    return spans.view(span_dtype()).reshape(-1)


_SPLITTER_TYPE = {_core.Splitter}


def all_built_in(levels: Sequence[Level]) -> TypeGuard[Sequence[_core.Splitter]]:
    """Whether every level is a core Splitter (one core call does the whole tree)."""
    # Splitter cannot be subclassed: comparing the set of types is one C-level pass.
    return {*map(type, levels)} <= _SPLITTER_TYPE


def core_levels(levels: Sequence[Level]) -> Sequence[_core.Splitter]:
    """``levels`` as the core's Splitters, for the paths that take no custom level (the
    command line's, Ray's).

    Raises:
        TypeError: a level is a custom strategy (cut in Python).
    """
    if not all_built_in(levels):
        custom = next(level for level in levels if not isinstance(level, _core.Splitter))
        raise TypeError(
            f"this path cuts in the core only, and a level is a custom strategy "
            f"({type(custom).__qualname__}): use the chunker's chunk() instead"
        )
    return levels


def tree_records(levels: Sequence[Level], text: str) -> NDArray[np.void]:
    """The spans of every level of ``text`` as a structured array (``SPAN_DTYPE``), levels
    listed top first: the core builds it directly when every level is built in.

    Raises:
        ValueError: The text holds a lone surrogate (it cannot be encoded as UTF-8).
        ChunkingError: A custom level returned pieces or spans that break the contract.
    """
    try:
        if all_built_in(levels):
            return _core.Tree(levels).spans(text)
        return structured(_tree_array_by_level(levels, text))
    except UnicodeEncodeError as error:
        raise encoding_error(error) from None


def tree_array(levels: Sequence[Level], text: str) -> NDArray[np.int64]:
    """``tree_records`` as an (n, 7) int64 array (a view, no copy)."""
    import numpy as np  # noqa: PLC0415

    return tree_records(levels, text).view(np.int64).reshape(-1, _WIDTH)


def _reads_pages(level: object) -> bool:
    """Whether ``level`` cuts HTML pages (a level of ``HtmlChunker``, or a chunker with one)."""
    if isinstance(level, _core.Splitter):
        return level.structure == "html"
    levels = getattr(level, "_levels", None)
    # A custom strategy is its own one level.
    return callable(levels) and any(_reads_pages(inner) for inner in levels() if inner is not level)


def _tree_array_by_level(levels: Sequence[Level], text: str) -> NDArray[np.int64]:
    """The slow path: one level at a time, custom levels through their ``split_spans``."""
    import numpy as np  # noqa: PLC0415

    if any(_reads_pages(level) for level in levels):
        raise ValueError(
            "an HTML level cuts a page's readable text, not the text it is given, so it cannot "
            "be combined with levels cut in Python (a Chunker of your own, or a tree used as a "
            "level): read the page first (HtmlChunker().read(page)) and cut that Document's "
            "text with the other levels, or use HtmlChunker or parent_chunker='html' with the "
            "built-in levels alone"
        )

    blocks: list[NDArray[np.int64]] = []
    above: NDArray[np.int64] | None = None  # (m, 4): start_byte, end_byte, start_char, end_char
    for depth, level in enumerate(levels):
        if isinstance(level, _core.Splitter):
            if above is None:
                spans = level.split(text)
                parents = np.full(len(spans), -1, dtype=np.int64)
            else:
                cut = _core.level_spans(level, text, np.ascontiguousarray(above[:, 0:2]))
                parents, spans = cut[:, 0], cut[:, 1:5]
        else:
            parents, spans = _custom_level(level, text, above)
        count = len(spans)
        block = np.empty((count, _WIDTH), dtype=np.int64)
        block[:, 0] = len(levels) - 1 - depth
        block[:, 1] = np.arange(count, dtype=np.int64)
        block[:, 2] = parents
        block[:, 3:7] = spans
        blocks.append(block)
        above = spans
    if not blocks:
        return np.empty((0, _WIDTH), dtype=np.int64)
    return np.concatenate(blocks)


def _custom_level(
    strategy: SpanStrategy, text: str, above: NDArray[np.int64] | None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Parent rows and (k, 4) spans of a custom level: the whole text, or inside each parent."""
    import numpy as np  # noqa: PLC0415

    parents: list[int] = []
    char_spans: list[tuple[int, int]] = []
    if above is None:
        char_spans = checked_spans(strategy, text)
        parents = [-1] * len(char_spans)
    else:
        for row, (start_char, end_char) in enumerate(above[:, 2:4].tolist()):
            inside = checked_spans(strategy, text[start_char:end_char])
            # Every parent has at least one child: a strategy that returns nothing for a
            # parent gives it one child with the parent's own span.
            for start, end in inside or [(0, end_char - start_char)]:
                char_spans.append((start_char + start, start_char + end))
                parents.append(row)
    chars = np.array(char_spans, dtype=np.int64).reshape(-1, 2)
    byte_spans = _core.char_spans_to_bytes(text, chars)
    spans = np.concatenate([np.asarray(byte_spans, dtype=np.int64).reshape(-1, 2), chars], axis=1)
    return np.array(parents, dtype=np.int64), spans


def is_blank(text: str) -> bool:
    """Whether ``text`` has no content: empty, or only whitespace and invisible format
    chars (``_core.BLANK_CHARS``), as the core decides it.

    >>> is_blank("\\ufeff\\u200b \\n"), is_blank("\\u200da")
    (True, False)
    """
    return not text.strip(_core.BLANK_CHARS)


def _is_int(value: object) -> bool:
    if isinstance(value, int):
        return not isinstance(value, bool)
    import numpy as np  # noqa: PLC0415  (a numpy integer, from a strategy that uses numpy)

    return isinstance(value, np.integer)


def checked_spans(strategy: SpanStrategy, text: str) -> list[tuple[int, int]]:
    """``strategy.split_spans(text)``, validated: in range, starts strictly increasing.

    Empty and blank spans (whitespace and invisible chars only, ``is_blank``) are dropped
    (no chunk is ever empty or blank).

    Raises:
        ChunkingError: A span is malformed, outside the text, reversed, or does not start
            after the previous kept span.
    """
    name = type(strategy).__name__
    length = len(text)
    kept: list[tuple[int, int]] = []
    previous_start = -1
    for number, span in enumerate(strategy.split_spans(text)):
        try:
            start, end = span
        except (TypeError, ValueError):
            raise ChunkingError(
                f"{name}.split_spans must return (start, end) pairs of char offsets; "
                f"item {number} is {span!r}"
            ) from None
        if not (_is_int(start) and _is_int(end)):
            raise ChunkingError(
                f"{name}.split_spans returned span {number} {span!r}: offsets must be ints"
            )
        start, end = int(start), int(end)
        if not 0 <= start <= end <= length:
            raise ChunkingError(
                f"{name}.split_spans returned span {number} ({start}, {end}), which is "
                f"reversed or outside the text of {length} chars: spans must satisfy "
                "0 <= start <= end <= len(text)"
            )
        if is_blank(text[start:end]):
            continue
        if start <= previous_start:
            raise ChunkingError(
                f"{name}.split_spans returned span {number} ({start}, {end}), which does not "
                f"start after the previous span (start {previous_start}): starts must "
                "strictly increase, in reading order"
            )
        kept.append((start, end))
        previous_start = start
    return kept


def spans_of_pieces(text: str, pieces: Iterable[str], name: str) -> list[tuple[int, int]]:
    """The char spans of ``pieces`` in ``text``, found by walking forward.

    Each piece is looked for from the end of the previous one (the common case: pieces that
    do not overlap), then from just after the previous piece's start (pieces that overlap).
    Empty and blank pieces (``is_blank``) are skipped.

    Raises:
        ChunkingError: A piece is not a str, or is not in the text at or after that point.
    """
    spans: list[tuple[int, int]] = []
    previous_start = -1
    previous_end = 0
    for number, piece in enumerate(pieces):
        if not isinstance(piece, str):
            raise ChunkingError(
                f"{name}.split_text must return str pieces; piece {number} is "
                f"{type(piece).__name__}"
            )
        if is_blank(piece):
            continue
        start = text.find(piece, previous_end)
        if start < 0 and spans:
            start = text.find(piece, previous_start + 1)
        if start < 0:
            preview = piece if len(piece) <= 60 else piece[:57] + "..."
            where = f"after char {previous_start}" if spans else "anywhere"
            raise ChunkingError(
                f"{name}.split_text returned piece {number} {preview!r}, which is not in the "
                f"text {where}: pieces must be substrings of the text, in reading order"
            )
        previous_start, previous_end = start, start + len(piece)
        spans.append((previous_start, previous_end))
    return spans
