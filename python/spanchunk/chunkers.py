"""Chunkers: the base class for custom strategies and the built-in recursive, parent-child and
hierarchical chunkers.

Every chunker is a list of levels, the top level first. A level is either a built-in
``_core.Splitter`` (the recursive engine, in Rust) or a custom ``Chunker`` (Python
``split_spans``). When every level is built in, one core call computes the spans of every
level of a batch of documents and builds their ``Chunk`` objects (``_core.chunk_documents``);
otherwise the levels are cut one at a time, custom levels inside each parent's text, into the
core's (n, 7) span array, which ``_core.build_chunks`` turns into ``Chunk`` objects, one call
per document.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import warnings
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from spanchunk import _core
from spanchunk._spans import all_built_in, spans_of_pieces, tree_array, tree_records
from spanchunk._tokens import Sizing, sizing
from spanchunk.chunk import Chunk
from spanchunk.document import Document, _as_document, _text_type_error
from spanchunk.errors import ChunkingError, SkippedDocumentWarning, _encoding_error
from spanchunk.registry import ParentRegistry

if TYPE_CHECKING:
    from collections.abc import Callable

    from spanchunk._spans import Level

__all__ = [
    "Chunker",
    "HierarchicalChunker",
    "MarkdownChunker",
    "ParentChildChunker",
    "RecursiveChunker",
]

Documents = Document | str | Iterable[Document | str]
"""What ``chunk`` accepts: one document or text, or an iterable of them."""
KeepSeparator = Literal["end", "start", False]


class ParentStore(Protocol):
    """What a hierarchical chunker needs from its registry (ParentRegistry, SqliteRegistry)."""

    def add(self, chunks: Chunk | Iterable[Chunk]) -> None: ...
    def parent_of(self, chunk: Chunk) -> Chunk | None: ...
    def expand(self, hits: Iterable[Chunk], max_parents: int | None = None) -> list[Chunk]: ...
    def clear(self) -> None: ...


# --------------------------------------------------------------------------------------------
# Validation helpers: one message style for every setting ("what, the value, the fix").


def _int_setting(name: str, value: object, example: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name} must be an int, not {type(value).__name__} ({value!r}): "
            f"pass a whole number, e.g. {name}={example}"
        )
    return value


def _positive_size(name: str, value: object, unit: str, example: int) -> int:
    size = _int_setting(name, value, example)
    if size < 1:
        raise ValueError(
            f"{name} must be at least 1, got {size}: pass a positive size, e.g. {name}={example}"
        )
    if unit == "byte" and size < 4:
        raise ValueError(
            f"{name} must be at least 4 when unit='byte' (one UTF-8 character takes up to "
            f"4 bytes), got {size}: raise {name} to 4 or more"
        )
    return size


def _overlap_setting(name: str, value: object, limit_name: str, limit: int) -> int:
    if value is None:
        return 0
    overlap = _int_setting(name, value, 0)
    if overlap < 0:
        raise ValueError(f"{name} must be 0 or more, got {overlap}: pass {name}=0 for no overlap")
    if overlap >= limit:
        raise ValueError(
            f"{name} ({overlap}) must be smaller than {limit_name} ({limit}): "
            f"lower {name} or raise {limit_name}"
        )
    return overlap


def _separators_setting(separators: object) -> list[list[str]] | None:
    if separators is None:
        return None
    if not isinstance(separators, (list, tuple)):
        raise TypeError(
            f"separators must be a list of str (or of lists of str), not "
            f"{type(separators).__name__}: e.g. separators=['\\n\\n', '\\n', ' ']"
        )
    levels: list[list[str]] = []
    for position, item in enumerate(separators):
        if isinstance(item, str):
            alternatives = [item]
        elif isinstance(item, (list, tuple)) and all(isinstance(each, str) for each in item):
            alternatives = list(item)
        else:
            raise TypeError(
                f"separators[{position}] must be a str or a list of str (alternatives at one "
                f"level), not {type(item).__name__}"
            )
        if not alternatives:
            raise ValueError(
                f"separators[{position}] is an empty list: give it at least one separator "
                "or remove it"
            )
        if "" in alternatives:
            raise ValueError(
                f"separators[{position}] contains an empty string: separators must be "
                "non-empty (cuts between graphemes and code points are always the last resort)"
            )
        levels.append(alternatives)
    return levels


def _keep_separator_setting(keep_separator: object) -> str:
    """The core's name for a keep_separator choice ("end", "start" or "none")."""
    if keep_separator is False:
        return "none"
    if isinstance(keep_separator, str) and keep_separator in ("end", "start"):
        return keep_separator
    raise ValueError(
        f"keep_separator must be 'end' (the separator ends the previous chunk), 'start' "
        f"(it begins the next) or False (it is dropped at chunk edges), got {keep_separator!r}"
    )


def _workers_setting(workers: object) -> int | None:
    if workers is None:
        return None
    count = _int_setting("workers", workers, 4)
    if count < 1:
        raise ValueError(f"workers must be at least 1, got {count}: pass None to use every core")
    return count


def _level_setting(name: str, value: object, size: int, units: Sizing) -> Chunker | None:
    """A level's chunker: a Chunker, None (the default), or "markdown" (a MarkdownChunker of
    the level's size, in the tree's unit) or "text" (the default)."""
    if value == "markdown":
        return _recursive(size, 0, units, MarkdownChunker)
    if value == "text":
        return None
    if value is None or isinstance(value, Chunker):
        return value
    raise TypeError(
        f"{name} must be a spanchunk.Chunker (e.g. RecursiveChunker(...)), 'markdown', "
        f"'text' or None, not {type(value).__name__}"
    )


def _is_markdown(levels: Sequence[Level]) -> bool:
    """Whether a level cuts Markdown (its chunks then carry their heading paths)."""
    return any(
        isinstance(level, MarkdownChunker)
        or (isinstance(level, _core.Splitter) and level.structure == "markdown")
        for level in levels
    )


def _spans_and_outline(
    levels: Sequence[Level], text: str
) -> tuple[NDArray[np.int64], _core.Outline | None]:
    """The (n, 7) spans of ``text`` cut by levels of which some are custom, and, when a
    level cuts Markdown, the text's outline (the headings) for the chunks' heading paths."""
    outline = _core.Outline(text) if _is_markdown(levels) else None
    return tree_array(levels, text), outline


def _type_name(chunker: object, built_in: type) -> str:
    """The "type" setting: the built-in's name, or a subclass's qualified name (a subclass
    may change the output, so it must change the fingerprint too)."""
    cls = type(chunker)
    if cls is built_in:
        return built_in.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def _fingerprint(settings: Mapping[str, Any]) -> str:
    """16 hex digits of sha256 over the settings (less "name") as canonical JSON."""
    payload = {key: value for key, value in settings.items() if key != "name"}
    try:
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise TypeError(f"settings() must return a JSON-safe dict: {error}") from None
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _nested_settings(chunker: Chunker | None) -> dict[str, Any] | None:
    """A nested chunker's settings without its "name" (a label never changes the ids)."""
    if chunker is None:
        return None
    return {key: value for key, value in chunker.settings().items() if key != "name"}


def _minus_level(chunk: Chunk) -> int:
    return -chunk.level


def _items(values: object, what: str) -> list[object]:
    """The items of an iterable argument; TypeError for non-iterables and for mappings."""
    if isinstance(values, (Document, str)):
        return [values]
    if isinstance(values, (bytes, bytearray, memoryview)):
        raise _text_type_error(values, what, "a str, a spanchunk.Document or a list of them")
    if isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise TypeError(
            f"{what} must be a str, a spanchunk.Document or a list of them, "
            f"not {type(values).__name__}"
        )
    return list(values)


def _documents(values: object) -> list[Document]:
    return [
        _as_document(item, f"documents[{position}]")
        for position, item in enumerate(_items(values, "documents"))
    ]


def _text_of(value: object, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Document):
        return value.text
    raise _text_type_error(value, what, "a str or a spanchunk.Document")


def _skip(position: int, error: BaseException) -> None:
    warnings.warn(
        f"chunk_many skipped document {position} ({type(error).__name__}): {error}",
        SkippedDocumentWarning,
        stacklevel=3,
    )


# --------------------------------------------------------------------------------------------


class Chunker:
    """The base class of every chunker, and the hook for custom strategies.

    A custom strategy subclasses ``Chunker`` and overrides one of two methods:

    - ``split_text(text) -> list[str]``: the pieces in reading order, each a substring of
      ``text``. Their spans are found by walking forward through the text.
    - ``split_spans(text) -> list[tuple[int, int]]``: (start, end) char offsets.

    Either way the spans are checked (inside the text, starts strictly increasing; empty and
    whitespace-only spans are dropped) and byte offsets are computed by the core. A custom
    chunker works on its own or as a level of ``ParentChildChunker`` and
    ``HierarchicalChunker``, where it is called on each parent's text. It is the documented
    slower path: Python runs once per document (or parent), not per character.

    Override ``settings()`` to include your strategy's settings, so that ``fingerprint()``
    (and with it every chunk id) changes when they do.

    Example:
        >>> from spanchunk import Chunker
        >>> class Lines(Chunker):
        ...     def split_text(self, text):
        ...         return text.splitlines()
        >>> [chunk.text for chunk in Lines().chunk("first line\\n\\nsecond line")]
        ['first line', 'second line']
    """

    _registry: ParentStore | None = None
    # The core's handle on this chunker's levels when every one is built in (set by the
    # built-in chunkers); None for custom strategies.
    _tree: _core.Tree | None = None

    # ---------------------------------------------------------------- strategy hooks

    def split_text(self, text: str) -> list[str]:
        """Split ``text`` into pieces, in reading order (override in a custom strategy).

        Args:
            text: The text of a document, or of one parent when used as a lower level.

        Returns:
            Substrings of ``text`` in reading order. The base class returns the text of
            the leaf spans of a built-in chunker.
        """
        if type(self).split_spans is not Chunker.split_spans:
            spans = self.split_spans(text)
        else:
            spans = self._built_in_leaf_spans(text)
        return [text[start:end] for start, end in spans]

    def split_spans(self, text: str) -> list[tuple[int, int]]:
        """The (start, end) char offsets of the pieces of ``text`` (override in a strategy).

        The base class finds the spans of ``split_text``'s pieces by walking forward through
        the text, or returns the leaf spans of a built-in chunker.

        Args:
            text: The text of a document, or of one parent when used as a lower level.

        Returns:
            Char offsets, relative to ``text``, in reading order.

        Raises:
            ChunkingError: A piece from ``split_text`` is not in the text after the
                previous one.
        """
        if type(self).split_text is not Chunker.split_text:
            return spans_of_pieces(text, self.split_text(text), type(self).__name__)
        return self._built_in_leaf_spans(text)

    # ---------------------------------------------------------------- settings

    def settings(self) -> dict[str, Any]:
        """The chunker's settings as a JSON-safe dict with a ``"type"`` key.

        Nested chunkers appear as their own settings. A custom strategy's default is only
        its qualified class name; override this method to add its settings.
        """
        return {"type": _type_name(self, Chunker)}

    def fingerprint(self) -> str:
        """16 hex digits identifying the settings (less ``name``); part of every chunk id."""
        return _fingerprint(self.settings())

    # ---------------------------------------------------------------- public operations

    def chunk(self, documents: Documents) -> list[Chunk]:
        """Chunk one document or several, one after the other.

        Args:
            documents: A ``Document``, a ``str``, or an iterable of either.

        Returns:
            The leaf chunks (level 0) of every document, in input and document order.
            Hierarchical chunkers also record the parents in their registry.

        Raises:
            TypeError: An input is not a ``str`` or a ``Document``.
            ValueError: A text holds a lone surrogate (it cannot be encoded as UTF-8).
        """
        return self._chunk_documents(documents, leaves_only=True)

    def chunk_text(self, text: str, *, metadata: Mapping[str, Any] | None = None) -> list[Chunk]:
        """Chunk one text, giving its chunks ``metadata``.

        Args:
            text: The text.
            metadata: Copied into every chunk's ``metadata``.

        Returns:
            The leaf chunks (level 0), in document order.
        """
        return self.chunk(Document(text, metadata=metadata))

    async def achunk(self, documents: Documents) -> list[Chunk]:
        """``chunk`` in a worker thread, so the event loop keeps running.

        The core releases the GIL while it cuts the text, so other threads (and the event
        loop) make progress during the heavy part.
        """
        return await asyncio.to_thread(self.chunk, documents)

    def chunk_many(
        self,
        documents: Iterable[Document | str],
        *,
        workers: int | None = None,
        errors: Literal["raise", "skip"] = "raise",
    ) -> list[Chunk]:
        """Chunk many documents, computing their spans in parallel.

        The output is identical to ``chunk`` called on each document in turn, in input
        order. Spans are computed on ``workers`` threads with the GIL released when every
        level is built in; custom levels run in this thread.

        Args:
            documents: An iterable of ``Document`` or ``str``.
            workers: Threads for the span computation (None: one per core).
            errors: ``"raise"``: stop at the first bad document. ``"skip"``: warn with a
                ``SkippedDocumentWarning`` naming its position and reason, and chunk the rest.
                A bad document is one that is not a ``str`` or ``Document``, holds a lone
                surrogate, or makes a custom level raise ``ChunkingError``, ``TypeError``
                or ``ValueError``; every input is checked before the spans are computed.

        Returns:
            The leaf chunks of every document chunked, in input order.

        Raises:
            ValueError: ``errors`` or ``workers`` is invalid, or (``errors="raise"``) a text
                holds a lone surrogate.
            TypeError: (``errors="raise"``) an input is not a ``str`` or a ``Document``.
        """
        if errors not in ("raise", "skip"):
            raise ValueError(
                f"errors must be 'raise' (stop at the first bad document) or 'skip' (warn "
                f"and go on), got {errors!r}"
            )
        worker_count = _workers_setting(workers)
        # Validate every document before the batch call, so one bad text loses nothing else.
        accepted: list[tuple[int, Document]] = []
        for position, item in enumerate(_items(documents, "documents")):
            try:
                accepted.append((position, _checked_document(position, item)))
            except (TypeError, ValueError) as error:
                if errors == "raise":
                    raise
                _skip(position, error)
        levels = self._levels()
        fingerprint = self.fingerprint()
        chunks: list[Chunk] = []
        if all_built_in(levels):
            documents = [document for _, document in accepted]
            return self._chunk_built_in_documents(levels, documents, worker_count, leaves_only=True)
        for position, document in accepted:
            try:
                spans, outline = _spans_and_outline(levels, document.text)
            except (ChunkingError, TypeError, ValueError) as error:
                if errors == "raise":
                    raise
                _skip(position, error)
                continue
            chunks.extend(
                self._wrap(document, spans, fingerprint, leaves_only=True, outline=outline)
            )
        return chunks

    def spans(self, text: str | Document) -> NDArray[np.void]:
        """The spans of every chunk of every level of ``text``, as integers only.

        Args:
            text: A ``str`` (or a ``Document``, whose text is used).

        Returns:
            A numpy structured array, one row per chunk, with int64 fields ``level``,
            ``index``, ``parent`` (index of the parent within the level above, -1 at the
            top), ``start_byte``, ``end_byte``, ``start_char``, ``end_char``. Rows come
            top level first, each level in document order.
        """
        tree = self._tree
        if tree is not None and type(text) is str:
            # The common call, one core call: no list of levels to check or pass.
            try:
                return tree.spans(text)
            except UnicodeEncodeError as error:
                raise _encoding_error(error) from None
        return tree_records(self._levels(), _text_of(text, "text"))

    def spans_many(
        self, texts: Iterable[str | Document], *, workers: int | None = None
    ) -> list[NDArray[np.void]]:
        """``spans`` of each text, computed in parallel on ``workers`` threads.

        Args:
            texts: An iterable of ``str`` (or ``Document``).
            workers: Threads to use (None: one per core).

        Returns:
            One structured array per text, in input order.
        """
        worker_count = _workers_setting(workers)
        strings = [
            _text_of(item, f"texts[{position}]")
            for position, item in enumerate(_items(texts, "texts"))
        ]
        tree = self._tree
        if tree is None:
            levels = self._levels()
            return [tree_records(levels, text) for text in strings]
        try:
            return tree.spans_many(strings, worker_count)
        except UnicodeEncodeError as error:
            position = next(
                (index for index, text in enumerate(strings) if text is error.object), None
            )
            what = "text" if position is None else f"texts[{position}]"
            raise _encoding_error(error, what) from None

    # ---------------------------------------------------------------- plumbing

    def _built_in_levels(self) -> list[Level] | None:
        """The levels of a built-in chunker, top first; None for the base class."""
        return None

    def _levels(self) -> list[Level]:
        """The levels this chunker cuts, top first: itself when it is a custom strategy."""
        cls = type(self)
        if cls.split_text is not Chunker.split_text or cls.split_spans is not Chunker.split_spans:
            return [self]
        levels = self._built_in_levels()
        if levels is None:
            raise TypeError(
                f"{cls.__name__} has no strategy: a Chunker subclass must override "
                "split_text or split_spans (or use RecursiveChunker)"
            )
        return levels

    def _as_level(self) -> Level:
        """This chunker as one level of another: its Splitter when it has exactly one."""
        levels = self._levels()
        return levels[0] if len(levels) == 1 else self

    def _built_in_leaf_spans(self, text: str) -> list[tuple[int, int]]:
        levels = self._built_in_levels()
        if levels is None:
            raise TypeError(
                f"{type(self).__name__} must override split_text or split_spans "
                "(the base Chunker has no strategy of its own)"
            )
        spans = tree_array(levels, _text_of(text, "text"))
        leaves = spans[spans[:, 0] == 0, 5:7].tolist()
        return [(start, end) for start, end in leaves]

    def _chunk_documents(self, documents: Documents, *, leaves_only: bool) -> list[Chunk]:
        levels = self._levels()
        if all_built_in(levels):
            if isinstance(documents, str):
                # One text, the commonest call: no Document object, the core hashes its id.
                return self._chunk_built_in(
                    levels, [documents], [None], [None], 1, leaves_only=leaves_only
                )
            return self._chunk_built_in_documents(
                levels, _documents(documents), 1, leaves_only=leaves_only
            )
        fingerprint = self.fingerprint()
        chunks: list[Chunk] = []
        for document in _documents(documents):
            spans, outline = _spans_and_outline(levels, document.text)
            chunks.extend(
                self._wrap(document, spans, fingerprint, leaves_only=leaves_only, outline=outline)
            )
        return chunks

    def _chunk_built_in_documents(
        self,
        levels: list[Level],
        documents: list[Document],
        workers: int | None,
        *,
        leaves_only: bool,
    ) -> list[Chunk]:
        return self._chunk_built_in(
            levels,
            [document.text for document in documents],
            [document.id for document in documents],
            [document._chunk_metadata() for document in documents],
            workers,
            leaves_only=leaves_only,
        )

    def _chunk_built_in(
        self,
        levels: list[Level],
        texts: list[str],
        ids: list[str | None],
        metadatas: list[Mapping[str, Any] | None],
        workers: int | None,
        *,
        leaves_only: bool,
    ) -> list[Chunk]:
        """Every document through the core in one call (built-in levels only): spans, ids
        and ``Chunk`` objects, no span array in between (an id of None: the text's hash, as
        ``Document`` gives it). Parents go to the registry."""
        try:
            results = _core.chunk_documents(
                levels, texts, ids, metadatas, self.fingerprint(), workers
            )
        except UnicodeEncodeError as error:
            raise _encoding_error(error) from None
        if len(results) == 1:
            chunks, first_leaf = results[0]
            if first_leaf:
                self._register(chunks[:first_leaf])
            return chunks[first_leaf:] if leaves_only else chunks
        chunks = []
        parents: list[Chunk] = []
        for document_chunks, first_leaf in results:
            if first_leaf:
                parents += document_chunks[:first_leaf]
            chunks += document_chunks[first_leaf:] if leaves_only else document_chunks
        if parents:
            self._register(parents)
        return chunks

    def _register(self, parents: list[Chunk]) -> None:
        """Parents the core made go to the registry (a ParentRegistry skips the type checks
        that ``add`` does for callers)."""
        registry = self._registry
        if type(registry) is ParentRegistry:
            registry._put(parents)
        elif registry is not None:
            registry.add(parents)

    def _wrap(
        self,
        document: Document,
        spans: NDArray[np.int64],
        fingerprint: str,
        *,
        leaves_only: bool,
        outline: _core.Outline | None = None,
    ) -> list[Chunk]:
        """Chunk objects for one document's span array; parents go to the registry. With a
        Markdown ``outline``, every chunk's metadata holds its heading path."""
        chunks = _core.build_chunks(
            document.text, document.id, fingerprint, document._chunk_metadata(), spans, outline
        )
        # Rows go level by level, the leaves last: a binary search finds the first leaf
        # (a numpy count costs more than the whole wrap of a small document).
        first_leaf = bisect_left(chunks, 0, key=_minus_level)
        if first_leaf and self._registry is not None:
            self._registry.add(chunks[:first_leaf])
        return chunks[first_leaf:] if leaves_only else chunks

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _checked_document(position: int, item: object) -> Document:
    """A Document for chunk_many, checked for encodability; errors name the position."""
    if isinstance(item, Document):
        try:
            _core.text_id(item.text)
        except UnicodeEncodeError as error:
            raise _encoding_error(error, f"documents[{position}] text") from None
        return item
    if isinstance(item, str):
        try:
            return Document(item)
        except ValueError as error:
            raise ValueError(f"documents[{position}]: {error}") from None
    raise _text_type_error(item, f"documents[{position}]", "a str or a spanchunk.Document")


class _BuiltInChunker(Chunker):
    """Shared by the built-in chunkers: a cached fingerprint, and pickling without the
    core's Splitter objects (which do not pickle), rebuilt from the settings."""

    _TRANSIENT: ClassVar[tuple[str, ...]] = ("_tree",)
    _cached_fingerprint: str

    def _rebuild(self) -> None:
        raise NotImplementedError

    def _build_tree(self) -> None:
        """Hands the levels to the core once, when every one is built in (see ``spans``)."""
        levels = self._levels()
        self._tree = _core.Tree(levels) if all_built_in(levels) else None

    def fingerprint(self) -> str:
        """16 hex digits identifying the settings (less ``name``); part of every chunk id."""
        return self._cached_fingerprint

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in self._TRANSIENT:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._rebuild()


class RecursiveChunker(_BuiltInChunker):
    """Recursive splitting at the coarsest separator that fits: one level of chunks.

    Text is cut at blank lines, then line breaks, sentence ends, clause marks and spaces,
    then between grapheme clusters, until every piece fits ``chunk_size``; pieces are then
    merged greedily into chunks of at most ``chunk_size`` (strictly). All of it runs in the
    Rust core with the GIL released.

    Args:
        chunk_size: The largest chunk, in ``unit`` (at least 1; at least 4 for bytes).
        overlap: How much of the end of a chunk the next one repeats, at most, taken at a
            separator boundary (None or 0: no overlap). Must be smaller than chunk_size.
        min_chunk_size: A piece smaller than this is joined to its neighbour when the
            result still fits (0: never); at most chunk_size.
        separators: None for the defaults, or a list, coarsest first, whose items are a
            str or a list of str (alternatives at one level).
        keep_separator: ``"end"``: a separator ends the chunk before it; ``"start"``: it
            begins the chunk after it; ``False``: it never stands at a chunk edge.
        trim: Strip whitespace from both edges of every chunk.
        unit: ``"char"`` (code points, as ``len``), ``"byte"`` (UTF-8 bytes) or
            ``"token"`` (with exactly one of ``encoding``, ``tokenizer``, ``length_function``).
        encoding: With ``unit="token"``: a tiktoken encoding compiled into the core
            (``"o200k_base"``, ``"cl100k_base"``, ``"p50k_base"``, ``"r50k_base"``).
        name: A label, reported in ``settings()`` but never part of the fingerprint.
        tokenizer: With ``unit="token"``: the path of a HuggingFace ``tokenizer.json`` (or a
            ``tokenizers.Tokenizer``), counted in Rust without special tokens, truncation or
            padding. ``settings()`` names it by the hash of its content.
        length_function: With ``unit="token"``: any callable ``str -> int``. The slow path:
            the core calls it for every measurement, holding the GIL.

    Raises:
        TypeError: A size is not an int, or separators are not strings.
        ValueError: An impossible setting; the message names it and the fix.

    Example:
        >>> from spanchunk import RecursiveChunker
        >>> chunker = RecursiveChunker(chunk_size=20)
        >>> text = "It was a dark night. The wind howled.\\n\\nNobody came."
        >>> [chunk.text for chunk in chunker.chunk(text)]
        ['It was a dark night.', 'The wind howled.', 'Nobody came.']
    """

    _TRANSIENT: ClassVar[tuple[str, ...]] = ("_splitter", "_tree")
    # The document structure the core cuts at before the separators (None: plain text).
    _STRUCTURE: ClassVar[str | None] = None

    # Positional settings mirror the documented signature (RecursiveChunker(512, 50)).
    def __init__(  # noqa: PLR0917
        self,
        chunk_size: int = 1000,
        overlap: int | None = None,
        min_chunk_size: int = 0,
        separators: Sequence[str | Sequence[str]] | None = None,
        keep_separator: KeepSeparator = "end",
        trim: bool = True,
        unit: Literal["char", "byte", "token"] = "char",
        encoding: str | None = None,
        name: str | None = None,
        *,
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
    ) -> None:
        self._sizing = sizing(unit, encoding, tokenizer, length_function)
        unit = self._sizing.unit  # type: ignore[assignment]
        self._chunk_size = _positive_size("chunk_size", chunk_size, unit, 1000)
        self._overlap = _overlap_setting("overlap", overlap, "chunk_size", self._chunk_size)
        self._min_chunk_size = _int_setting("min_chunk_size", min_chunk_size, 0)
        if self._min_chunk_size < 0:
            raise ValueError(
                f"min_chunk_size must be 0 or more, got {self._min_chunk_size}: "
                "pass min_chunk_size=0 to join nothing"
            )
        if self._min_chunk_size > self._chunk_size:
            raise ValueError(
                f"min_chunk_size ({self._min_chunk_size}) must not exceed chunk_size "
                f"({self._chunk_size}): lower min_chunk_size or raise chunk_size"
            )
        self._separators = _separators_setting(separators)
        self._keep_separator = keep_separator
        self._core_keep_separator = _keep_separator_setting(keep_separator)
        if not isinstance(trim, bool):
            raise TypeError(f"trim must be True or False, not {type(trim).__name__}")
        self._trim = trim
        self._unit = unit
        self._encoding = self._sizing.encoding
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str or None, not {type(name).__name__}")
        self._name = name
        self._rebuild()

    def _rebuild(self) -> None:
        try:
            self._splitter = _core.Splitter(
                self._chunk_size,
                overlap=self._overlap,
                min_chunk_size=self._min_chunk_size,
                separators=self._separators,
                keep_separator=self._core_keep_separator,
                trim=self._trim,
                structure=self._STRUCTURE,
                **self._sizing.core(),
            )
        except UnicodeEncodeError as error:
            raise _encoding_error(error, "a separator") from None
        self._cached_fingerprint = _fingerprint(self.settings())
        self._build_tree()

    def _built_in_levels(self) -> list[Level]:
        return [self._splitter]

    @property
    def chunk_size(self) -> int:
        """The largest chunk, in ``unit``."""
        return self._chunk_size

    @property
    def overlap(self) -> int:
        """The most a chunk repeats of the previous one, in ``unit`` (0: none)."""
        return self._overlap

    @property
    def min_chunk_size(self) -> int:
        """Pieces smaller than this are joined to a neighbour when the result fits."""
        return self._min_chunk_size

    @property
    def separators(self) -> list[list[str]]:
        """The separator levels, coarsest first (the defaults when none were given)."""
        if self._separators is None:
            return _core.default_separators()
        return [list(level) for level in self._separators]

    @property
    def keep_separator(self) -> KeepSeparator:
        """Where a separator goes: ``"end"``, ``"start"`` or ``False``."""
        return self._keep_separator

    @property
    def trim(self) -> bool:
        """Whether whitespace is stripped from chunk edges."""
        return self._trim

    @property
    def unit(self) -> str:
        """``"char"``, ``"byte"`` or ``"token"``."""
        return self._unit

    @property
    def encoding(self) -> str | None:
        """The tiktoken encoding of token units (None otherwise)."""
        return self._encoding

    @property
    def name(self) -> str | None:
        """The label given at construction (not part of the fingerprint)."""
        return self._name

    def settings(self) -> dict[str, Any]:
        """Every setting as a JSON-safe dict (separators resolved to their levels)."""
        return {
            "type": _type_name(self, RecursiveChunker),
            "chunk_size": self._chunk_size,
            "overlap": self._overlap,
            "min_chunk_size": self._min_chunk_size,
            "separators": self.separators,
            "keep_separator": self._keep_separator,
            "trim": self._trim,
            **self._sizing.settings(),
            "name": self._name,
        }

    def __repr__(self) -> str:
        parts = [f"chunk_size={self._chunk_size}"]
        if self._overlap:
            parts.append(f"overlap={self._overlap}")
        if self._min_chunk_size:
            parts.append(f"min_chunk_size={self._min_chunk_size}")
        if self._separators is not None:
            parts.append(f"separators={self._separators!r}")
        if self._keep_separator != "end":
            parts.append(f"keep_separator={self._keep_separator!r}")
        if not self._trim:
            parts.append("trim=False")
        if self._unit != "char":
            parts.append(f"unit={self._unit!r}")
        if self._name is not None:
            parts.append(f"name={self._name!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _recursive(
    size: int, overlap: int, units: Sizing, kind: type[RecursiveChunker] | None = None
) -> RecursiveChunker:
    """A default level of a tree chunker (a ``RecursiveChunker`` unless ``kind`` says
    otherwise), in the tree's (already validated) unit."""
    return (kind or RecursiveChunker)(
        size,
        overlap=overlap,
        unit=units.unit,  # type: ignore[arg-type]
        encoding=units.encoding,
        tokenizer=units.tokenizer,
        length_function=units.length_function,
    )


class HierarchicalChunker(_BuiltInChunker):
    """N levels of chunks, each cut inside the one above: small-to-big retrieval.

    ``sizes`` lists the chunk size of every level, the top (largest) first. ``chunk``
    returns the leaves (level 0, what gets embedded), each with a ``parent_id``; every chunk
    above the leaves goes into ``parents``, a registry that swaps retrieved leaves for their
    parents (``expand``). ``chunk_tree`` returns every level.

    Args:
        sizes: Chunk size of each level, top first, strictly decreasing positive ints.
        overlap: Overlap between consecutive leaves (level 0) of one parent, in ``unit``;
            smaller than the smallest size. Parent levels never overlap: their children
            would repeat the same text.
        unit: ``"char"``, ``"byte"`` or ``"token"``, for every default level (see
            ``RecursiveChunker``; mix units with ``chunkers``).
        encoding: The tiktoken encoding of token units.
        chunkers: None, or one item per size: None (a ``RecursiveChunker`` of that size),
            ``"markdown"`` (a ``MarkdownChunker`` of that size) or a ``Chunker`` that cuts
            that level instead (a custom strategy included). A built-in chunker above the
            leaves must have no overlap.
        registry: Where parents are recorded (default: a new ``ParentRegistry``).
        tokenizer: A ``tokenizer.json`` path (or ``tokenizers.Tokenizer``) for token units.
        length_function: A callable ``str -> int`` for token units (slow path).

    Raises:
        TypeError: A size is not an int, or a chunkers item is not a Chunker.
        ValueError: An impossible setting; the message names it and the fix.

    Example:
        >>> from spanchunk import HierarchicalChunker
        >>> chunker = HierarchicalChunker(sizes=[400, 100, 30])
        >>> leaves = chunker.chunk("The quick brown fox jumps over the lazy dog. " * 20)
        >>> leaves[0].level, chunker.parent_of(leaves[0]).level
        (0, 1)
        >>> chunker.parent_of(chunker.parent_of(leaves[0])).level
        2
    """

    _TRANSIENT: ClassVar[tuple[str, ...]] = ("_levels_cache", "_tree")

    # Positional settings mirror the documented signature (HierarchicalChunker([2048, 512])).
    def __init__(  # noqa: PLR0917
        self,
        sizes: Sequence[int] = (2048, 512, 128),
        overlap: int = 0,
        unit: Literal["char", "byte", "token"] = "char",
        encoding: str | None = None,
        chunkers: Sequence[Chunker | Literal["markdown", "text"] | None] | None = None,
        registry: ParentStore | None = None,
        *,
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
    ) -> None:
        units = sizing(unit, encoding, tokenizer, length_function)
        unit = units.unit  # type: ignore[assignment]
        if not isinstance(sizes, (list, tuple)):
            raise TypeError(
                f"sizes must be a list of ints, top level first, not {type(sizes).__name__}: "
                "e.g. sizes=[2048, 512, 128]"
            )
        if not sizes:
            raise ValueError("sizes cannot be empty: pass one size per level, e.g. [2048, 512]")
        checked = tuple(
            _positive_size(f"sizes[{position}]", size, unit, 512)
            for position, size in enumerate(sizes)
        )
        for above, below in pairwise(checked):
            if below >= above:
                raise ValueError(
                    f"sizes must be strictly decreasing, top level first, got {list(checked)}: "
                    f"list the largest size first, e.g. sizes={sorted(set(checked), reverse=True)}"
                )
        level_overlap = _overlap_setting("overlap", overlap, "the smallest size", checked[-1])
        if chunkers is None:
            given: tuple[Chunker | None, ...] = (None,) * len(checked)
        elif not isinstance(chunkers, (list, tuple)):
            raise TypeError(
                f"chunkers must be None or a list with one item per size, not "
                f"{type(chunkers).__name__}"
            )
        elif len(chunkers) != len(checked):
            raise ValueError(
                f"chunkers has {len(chunkers)} items but sizes has {len(checked)}: give one "
                "item per level (None for the default RecursiveChunker of that size)"
            )
        else:
            given = tuple(
                _level_setting(f"chunkers[{position}]", chunker, size, units)
                for position, (size, chunker) in enumerate(zip(checked, chunkers, strict=True))
            )
        # Overlap goes to the leaves only: the core refuses overlapping parents, whose
        # children would repeat the same text (and overlap never crosses a parent anyway).
        leaf = len(checked) - 1
        levels = tuple(
            chunker
            if chunker is not None
            else _recursive(size, level_overlap if depth == leaf else 0, units)
            for depth, (size, chunker) in enumerate(zip(checked, given, strict=True))
        )
        self._overlap = level_overlap
        self._setup(
            sizes=checked,
            units=units,
            given=given,
            level_chunkers=levels,
            registry=registry,
        )

    def _setup(
        self,
        *,
        sizes: tuple[int, ...],
        units: Sizing,
        given: tuple[Chunker | None, ...],
        level_chunkers: tuple[Chunker, ...],
        registry: ParentStore | None,
        names: tuple[str, ...] = (),
    ) -> None:
        """The machinery every tree chunker shares, once its settings are checked."""
        for depth, chunker in enumerate(level_chunkers[:-1]):
            level = chunker._as_level()
            if isinstance(level, _core.Splitter) and level.overlap > 0:
                what = names[depth] if names else f"chunkers[{depth}]"
                raise ValueError(
                    f"{what} has overlap={level.overlap}, but a parent level cannot overlap "
                    "(its children would repeat): give it overlap=0 and put the overlap on "
                    "the leaf level"
                )
        self._sizes = sizes
        self._sizing = units
        self._unit = units.unit
        self._encoding = units.encoding
        self._given_chunkers = given
        self._level_chunkers = level_chunkers
        self._registry = ParentRegistry() if registry is None else registry
        self._rebuild()

    def _rebuild(self) -> None:
        self._levels_cache = [chunker._as_level() for chunker in self._level_chunkers]
        self._cached_fingerprint = _fingerprint(self.settings())
        self._build_tree()

    def _built_in_levels(self) -> list[Level]:
        return self._levels_cache

    @property
    def sizes(self) -> tuple[int, ...]:
        """The size of every level, top first."""
        return self._sizes

    @property
    def overlap(self) -> int:
        """The overlap between consecutive leaves (parent levels never overlap)."""
        return self._overlap

    @property
    def unit(self) -> str:
        """``"char"``, ``"byte"`` or ``"token"``, of the default levels."""
        return self._unit

    @property
    def encoding(self) -> str | None:
        """The tiktoken encoding of token units (None otherwise)."""
        return self._encoding

    @property
    def chunkers(self) -> tuple[Chunker, ...]:
        """The chunker of every level, top first (defaults included)."""
        return self._level_chunkers

    @property
    def parents(self) -> ParentStore:
        """The registry every chunk above the leaves is recorded in."""
        return self._registry  # type: ignore[return-value]

    def settings(self) -> dict[str, Any]:
        """Every setting as a JSON-safe dict; a level's chunker appears when one was given."""
        return {
            "type": _type_name(self, HierarchicalChunker),
            "sizes": list(self._sizes),
            "overlap": self._overlap,
            **self._sizing.settings(),
            "chunkers": [_nested_settings(chunker) for chunker in self._given_chunkers],
        }

    def chunk_tree(self, documents: Documents) -> list[Chunk]:
        """Every level of every document: for each, the top level first, parents first.

        Parents are recorded in ``parents`` too.

        Args:
            documents: A ``Document``, a ``str``, or an iterable of either.

        Returns:
            The chunks of every level, document by document; within a document, level by
            level from the top, each level in document order.
        """
        return self._chunk_documents(documents, leaves_only=False)

    def parent_of(self, chunk: Chunk) -> Chunk | None:
        """The parent of ``chunk`` from the registry (None at the top level or if unknown)."""
        return self.parents.parent_of(chunk)

    def expand(self, hits: Iterable[Chunk], max_parents: int | None = None) -> list[Chunk]:
        """Swap retrieved chunks for their parents: de-duplicated, first-seen order kept.

        A hit whose parent is not known is kept as itself. See ``ParentRegistry.expand``.
        """
        return self.parents.expand(hits, max_parents=max_parents)

    def clear(self) -> None:
        """Forget every recorded parent."""
        self.parents.clear()

    def __repr__(self) -> str:
        parts = [f"sizes={list(self._sizes)}"]
        if self._overlap:
            parts.append(f"overlap={self._overlap}")
        if self._unit != "char":
            parts.append(f"unit={self._unit!r}")
        if any(chunker is not None for chunker in self._given_chunkers):
            parts.append(f"chunkers={list(self._given_chunkers)!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


class ParentChildChunker(HierarchicalChunker):
    """Two levels: children to embed and search, parents to hand to the model.

    The two-level case of ``HierarchicalChunker``: ``chunk`` returns the children (level 0),
    each with a ``parent_id``, and records the parents (level 1) in ``parents``; at query
    time ``expand(hits)`` swaps retrieved children for their parents.

    Args:
        parent_size: The largest parent, in ``unit``.
        child_size: The largest child; smaller than ``parent_size``.
        child_overlap: Overlap between consecutive children of one parent (None or 0: none);
            smaller than ``child_size``. Parents never overlap.
        parent_chunker: A ``Chunker`` that cuts the parents instead of the default
            ``RecursiveChunker(parent_size)`` (a custom strategy included), or
            ``"markdown"`` for ``MarkdownChunker(parent_size)``: parents are heading
            sections, and every chunk carries ``metadata["headings"]``. Markdown parents
            get ``MarkdownChunker(child_size, overlap=child_overlap)`` children by default.
        child_chunker: A ``Chunker`` that cuts each parent into children instead of the
            default ``RecursiveChunker(child_size, overlap=child_overlap)`` (a
            ``MarkdownChunker`` under Markdown parents), or ``"markdown"`` for
            ``MarkdownChunker(child_size)``.
        unit: ``"char"``, ``"byte"`` or ``"token"``, for the default levels (see
            ``RecursiveChunker``; mix units with ``parent_chunker`` / ``child_chunker``).
        encoding: The tiktoken encoding of token units.
        registry: Where parents are recorded (default: a new ``ParentRegistry``).
        tokenizer: A ``tokenizer.json`` path (or ``tokenizers.Tokenizer``) for token units.
        length_function: A callable ``str -> int`` for token units (slow path).

    Raises:
        TypeError: A size is not an int, or a chunker is not a Chunker.
        ValueError: An impossible setting; the message names it and the fix.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> chunker = ParentChildChunker(parent_size=300, child_size=60)
        >>> children = chunker.chunk("Small chunks find, big chunks explain. " * 30)
        >>> parents = chunker.expand(children[:3])
        >>> len(parents), parents[0].level, children[0].id in parents[0].child_ids
        (1, 1, True)
    """

    # Positional settings mirror the documented signature (ParentChildChunker(2000, 400)).
    def __init__(  # noqa: PLR0917
        self,
        parent_size: int = 2000,
        child_size: int = 400,
        child_overlap: int | None = None,
        parent_chunker: Chunker | Literal["markdown", "text"] | None = None,
        child_chunker: Chunker | Literal["markdown", "text"] | None = None,
        unit: Literal["char", "byte", "token"] = "char",
        encoding: str | None = None,
        registry: ParentStore | None = None,
        *,
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
    ) -> None:
        units = sizing(unit, encoding, tokenizer, length_function)
        unit = units.unit  # type: ignore[assignment]
        parent_size = _positive_size("parent_size", parent_size, unit, 2000)
        child_size = _positive_size("child_size", child_size, unit, 400)
        if child_size >= parent_size:
            raise ValueError(
                f"child_size ({child_size}) must be smaller than parent_size ({parent_size}): "
                "raise parent_size or lower child_size"
            )
        overlap = _overlap_setting("child_overlap", child_overlap, "child_size", child_size)
        given = (
            _level_setting("parent_chunker", parent_chunker, parent_size, units),
            _level_setting("child_chunker", child_chunker, child_size, units),
        )
        # Markdown parents get Markdown children by default: a code block or a table row
        # that fits a child is not cut either, and children do not straddle sections.
        child_type = MarkdownChunker if isinstance(given[0], MarkdownChunker) else RecursiveChunker
        levels = (
            given[0] if given[0] is not None else _recursive(parent_size, 0, units),
            given[1]
            if given[1] is not None
            else _recursive(child_size, overlap, units, child_type),
        )
        self._overlap = overlap
        self._setup(
            sizes=(parent_size, child_size),
            units=units,
            given=given,
            level_chunkers=levels,
            registry=registry,
            names=("parent_chunker", "child_chunker"),
        )

    @property
    def parent_size(self) -> int:
        """The largest parent, in ``unit``."""
        return self._sizes[0]

    @property
    def child_size(self) -> int:
        """The largest child, in ``unit``."""
        return self._sizes[1]

    @property
    def child_overlap(self) -> int:
        """The overlap between consecutive children (0: none)."""
        return self._overlap

    @property
    def overlap(self) -> int:
        """The children's overlap (``child_overlap``); parents never overlap."""
        return self._overlap

    @property
    def parent_chunker(self) -> Chunker:
        """The chunker that cuts the parents."""
        return self._level_chunkers[0]

    @property
    def child_chunker(self) -> Chunker:
        """The chunker that cuts each parent into children."""
        return self._level_chunkers[1]

    def settings(self) -> dict[str, Any]:
        """Every setting as a JSON-safe dict; a level's chunker appears when one was given."""
        return {
            "type": _type_name(self, ParentChildChunker),
            "parent_size": self._sizes[0],
            "child_size": self._sizes[1],
            "child_overlap": self._overlap,
            "parent_chunker": _nested_settings(self._given_chunkers[0]),
            "child_chunker": _nested_settings(self._given_chunkers[1]),
            **self._sizing.settings(),
        }

    def __repr__(self) -> str:
        parts = [f"parent_size={self._sizes[0]}", f"child_size={self._sizes[1]}"]
        if self._overlap:
            parts.append(f"child_overlap={self._overlap}")
        if self._given_chunkers[0] is not None:
            parts.append(f"parent_chunker={self._given_chunkers[0]!r}")
        if self._given_chunkers[1] is not None:
            parts.append(f"child_chunker={self._given_chunkers[1]!r}")
        if self._unit != "char":
            parts.append(f"unit={self._unit!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


class MarkdownChunker(RecursiveChunker):
    """Markdown-aware recursive splitting: sections first, then blocks, then separators.

    The document is parsed once, in the Rust core, by a CommonMark parser (pulldown-cmark;
    tables, task lists, footnotes and a leading ``---`` YAML or ``+++`` TOML front matter
    block included), so a ``#`` inside a code fence is not a heading. A section (a heading
    with everything up to the next heading of the same or a higher level) that does not fit
    ``chunk_size`` is cut at its sub-headings, then between top-level blocks (paragraphs,
    list items, code blocks, tables, quotes, front matter), then between nested blocks and
    table rows, then by the separators of ``RecursiveChunker``. A code block or a table row
    is never cut while it fits.

    Pieces are merged greedily up to ``chunk_size``, with one rule for headings: a chunk
    takes a heading that is not its first line only together with that heading's whole
    section, and only when the chunk began at a heading of the same or a higher level (or at
    the start of the document). Small sibling sections under one parent heading merge; a
    chunk never ends inside a section it entered, nor runs from the tail of one section into
    the next.

    Every chunk of a chunker that has a Markdown level (this one, or a ``ParentChildChunker``
    whose parents are Markdown: its children too) carries ``metadata["headings"]``: the
    plain text of the headings that enclose the chunk's start, outermost first (inline
    markup removed; ``()`` before the first heading). Spans stay exact: no text is rewritten.

    Args:
        chunk_size, overlap, min_chunk_size, separators, keep_separator, trim, unit,
            encoding, name: As for ``RecursiveChunker``.

    Example:
        >>> from spanchunk import MarkdownChunker
        >>> text = "# Guide\\n\\nIntro.\\n\\n## Install\\n\\nRun it.\\n\\n## Use\\n\\nCall it."
        >>> chunks = MarkdownChunker(chunk_size=30).chunk(text)
        >>> for chunk in chunks:
        ...     print(chunk.metadata["headings"], chunk.text.splitlines()[-1])
        ('Guide',) Intro.
        ('Guide', 'Install') Run it.
        ('Guide', 'Use') Call it.
    """

    _STRUCTURE: ClassVar[str | None] = "markdown"

    def settings(self) -> dict[str, Any]:
        """Every setting as a JSON-safe dict (separators resolved to their levels)."""
        return {**super().settings(), "type": _type_name(self, MarkdownChunker)}
