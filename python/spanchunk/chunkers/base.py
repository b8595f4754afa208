"""The base ``Chunker``: the public operations of every chunker, and custom strategies.

Every chunker is a list of levels, the top level first. A level is either a built-in
``_core.Splitter`` (the recursive engine, in Rust) or a custom ``Chunker`` (Python
``split_spans``). ``Chunker._chunk`` is the one path from documents to ``Chunk`` objects:
when every level is built in, one core call computes the spans of every level of a batch of
documents and builds their ``Chunk`` objects (``_core.chunk_documents``); otherwise the levels
are cut one at a time, custom levels inside each parent's text, into the core's (n, 7) span
array, which ``_core.build_chunks`` turns into ``Chunk`` objects, one call per document.

Speed: ``benches/NOTES.md``, under ``python/spanchunk/chunkers/base.py``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from spanchunk import _core
from spanchunk.chunk import Chunk
from spanchunk.chunkers.inputs import (
    Checked,
    Documents,
    checked_document,
    columns,
    items_of,
    numbered_documents,
    refuse_misused,
    text_of,
    warn_skipped,
)
from spanchunk.chunkers.settings import (
    cuts_fingerprint,
    strategy_cut,
    type_name,
    workers_setting,
)
from spanchunk.chunkers.spans import Level, all_built_in, spans_of_pieces, tree_array, tree_records
from spanchunk.document import Document, text_type_error
from spanchunk.errors import ChunkingError, encoding_error
from spanchunk.stores import ParentRegistry, ParentStore

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Chunker", "Documents", "ParentStore", "cuts_in_python", "level_cut"]


def _structure_of(level: Level) -> tuple[str | None, str | None]:
    """(structure, language) of a level: built in, or a custom chunker's class's."""
    if isinstance(level, _core.Splitter):
        return level.structure, level.language
    return getattr(level, "_STRUCTURE", None), getattr(level, "_language", None)


def _outline(levels: Sequence[Level], document: Document) -> _core.Outline | None:
    """The outline of the first level with a structure, for the chunks' paths: Markdown
    headings, or code symbols (a code level of no language: the document source's)."""
    for level in levels:
        structure, language = _structure_of(level)
        if structure == "markdown":
            return _core.Outline(document.text)
        if structure == "code":
            outline = _core.Outline.code(document.text, language, document.source)
            return outline if outline.language is not None else None
    return None


def _spans_and_outline(
    levels: Sequence[Level], document: Document
) -> tuple[NDArray[np.int64], _core.Outline | None]:
    """The (n, 7) spans of ``document`` cut by levels of which some are custom, and, when a
    level cuts Markdown or code, the text's outline for the chunks' heading or symbol
    paths."""
    return tree_array(levels, document.text), _outline(levels, document)


def _minus_level(chunk: Chunk) -> int:
    return -chunk.level


#: The hooks that make a class a custom strategy, cut in Python.
_STRATEGY_HOOKS = frozenset({"split_text", "split_spans"})


def cuts_in_python(cls: type[Chunker]) -> bool:
    """Whether a chunker class is a custom strategy (it overrides split_text or split_spans)."""
    return not cls.overridden_hooks.isdisjoint(_STRATEGY_HOOKS)


def _defined_by(cls: type, name: str) -> type | None:
    """The class whose definition of ``name`` ``cls`` uses (the first of its MRO that has one:
    a mixin's included)."""
    return next((kind for kind in cls.__mro__ if name in vars(kind)), None)


def level_cut(chunker: Chunker) -> dict[str, Any]:
    """What ``chunker`` cuts by as one level of a tree: the part of the tree's fingerprint
    that stands for that level.

    A chunker of one level is that level's cut (a default level of a tree and the same
    ``RecursiveChunker`` given for it are one cut); one of several levels, used as a level,
    cuts at the leaves of its own tree, so its cut is every one of its levels'.
    """
    cuts = chunker._cuts()
    return cuts[0] if len(cuts) == 1 else {"leaves": cuts}


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

    Which of the hooks a subclass overrides is recorded when its class is made, in
    ``overridden_hooks``, and decides which fast paths it keeps: overriding ``split_text``
    or ``split_spans`` makes it a custom strategy (cut in Python; a built-in chunker's
    subclass reaches its own levels through ``super()``); overriding ``chunk`` (or a
    hierarchical chunker's ``chunk_tree``) makes the integrations call that method, once per
    text, instead of cutting a batch in one core call, and every method it did not override
    keeps its fast path.

    Example:
        >>> from spanchunk import Chunker
        >>> class Lines(Chunker):
        ...     def split_text(self, text):
        ...         return text.splitlines()
        >>> [chunk.text for chunk in Lines().chunk("first line\\n\\nsecond line")]
        ['first line', 'second line']
    """

    _registry: ParentStore | None = None
    # The hooks a subclass may override, each with the class whose definition is the
    # reference: a class that adds one names it in its class statement (``hooks=``).
    _HOOKS: ClassVar[Mapping[str, type[Chunker]]]
    overridden_hooks: ClassVar[frozenset[str]] = frozenset()
    """The hooks this class overrides, among ``split_text``, ``split_spans``, ``chunk``,
    ``chunk_tree`` (a hierarchical chunker's) and the private ``_chunk`` and ``_collect``
    that every chunking path runs through; recorded when the class is made (a method
    assigned to the class later is not seen)."""
    # The document structure this chunker cuts at before the separators (None: plain text;
    # "markdown": its chunks carry their heading paths; "code": their symbol paths).
    _STRUCTURE: ClassVar[str | None] = None
    # The core's handle on this chunker's levels when every one is built in (set by the
    # built-in chunkers); None for custom strategies.
    _tree: _core.Tree | None = None

    def __init_subclass__(cls, *, hooks: Iterable[str] = (), **kwargs: Any) -> None:
        """Records the hooks ``cls`` overrides (``overridden_hooks``); ``hooks`` names the
        methods ``cls`` adds as hooks of its own, which its subclasses may override."""
        super().__init_subclass__(**kwargs)
        added = tuple(hooks)
        if missing := [name for name in added if name not in vars(cls)]:
            raise TypeError(f"{cls.__qualname__} names hooks it does not define: {missing}")
        owners = {**cls._HOOKS, **dict.fromkeys(added, cls)}
        cls._HOOKS = MappingProxyType(owners)
        cls.overridden_hooks = frozenset(
            name for name, owner in owners.items() if _defined_by(cls, name) is not owner
        )

    # ---------------------------------------------------------------- strategy hooks

    def split_text(self, text: str) -> list[str]:
        """Split ``text`` into pieces, in reading order (override in a custom strategy).

        Args:
            text: The text of a document, or of one parent when used as a lower level.

        Returns:
            Substrings of ``text`` in reading order. The base class returns the text of
            the leaf spans of a built-in chunker.
        """
        if "split_spans" in self.overridden_hooks:
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
        if "split_text" in self.overridden_hooks:
            return spans_of_pieces(text, self.split_text(text), type(self).__name__)
        return self._built_in_leaf_spans(text)

    # ---------------------------------------------------------------- settings

    def settings(self) -> dict[str, Any]:
        """The chunker's settings as a JSON-safe dict with a ``"type"`` key.

        Nested chunkers appear as their own settings. A custom strategy's default is only
        its qualified class name; override this method to add its settings.
        """
        return {"type": type_name(self, Chunker)}

    def fingerprint(self) -> str:
        """16 hex digits identifying the cut; part of every chunk id.

        It hashes what decides the spans of each level, top first, and nothing else: two
        chunkers that cut alike (``ParentChildChunker(2000, 400)`` and
        ``HierarchicalChunker([2000, 400])``) give the same ids, whatever their ``name``.
        A custom strategy's level is its qualified class name and its ``settings()``.
        """
        return cuts_fingerprint(self._cuts())

    # ---------------------------------------------------------------- public operations

    def chunk(self, documents: Documents) -> list[Chunk]:
        """Chunk one document or several, one after the other.

        Args:
            documents: A ``Document``, a ``str``, or an iterable of either.

        Returns:
            The leaf chunks (level 0) of every document, in input and document order.
            Hierarchical chunkers also record the parents in their registry.

        Raises:
            TypeError: An input is not a ``str`` or a ``Document``: the message names what
                to call instead for an open file, a path, bytes, or a LangChain, LlamaIndex
                or Haystack document (and its position, inside a list).
            ValueError: A text holds a lone surrogate (it cannot be encoded as UTF-8).
        """
        return self._chunk(documents, leaves_only=True)

    def chunk_text(self, text: str, *, metadata: Mapping[str, Any] | None = None) -> list[Chunk]:
        """Chunk one text, giving its chunks ``metadata``.

        Args:
            text: The text.
            metadata: Copied into every chunk's ``metadata``.

        Returns:
            The leaf chunks (level 0), in document order.

        Raises:
            TypeError: ``text`` is not a ``str`` (the message names the fix).
        """
        if not isinstance(text, str):
            raise text_type_error(text, "text", "a str", "chunk_text")
        return self.chunk(Document(text, metadata=metadata))

    async def achunk(self, documents: Documents) -> list[Chunk]:
        """``chunk`` in a worker thread, so the event loop keeps running.

        The core releases the GIL while it cuts the text, so other threads (and the event
        loop) make progress during the heavy part.
        """
        import asyncio  # noqa: PLC0415  (a tenth of the package's import time)

        # An open file, a path, ... (or one in a list): refused here, naming achunk, not in
        # the worker thread. Only types are checked: the texts are not touched here.
        if isinstance(documents, (list, tuple)):
            for position, item in enumerate(documents):
                if not isinstance(item, (str, Document)):
                    raise text_type_error(
                        item, f"documents[{position}]", "a str or a spanchunk.Document", "achunk"
                    )
        elif not isinstance(documents, (str, Document)):
            refuse_misused(documents, "documents", "achunk")
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
        worker_count = workers_setting(workers)
        # Validate every document before the batch call, so one bad text loses nothing else.
        accepted: list[tuple[int, Document]] = []
        for position, item in enumerate(items_of(documents, "documents", "chunk_many")):
            try:
                accepted.append((position, checked_document(position, item)))
            except (TypeError, ValueError) as error:
                if errors == "raise":
                    raise
                warn_skipped(position, error, stacklevel=2)
        checked = Checked(
            documents=[document for _, document in accepted],
            positions=[position for position, _ in accepted],
            skip=errors == "skip",
        )
        return self._chunk(checked, leaves_only=True, workers=worker_count)

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
                raise encoding_error(error) from None
        return tree_records(self._levels(), text_of(text, "text", "spans"))

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
        worker_count = workers_setting(workers)
        strings = [
            text_of(item, f"texts[{position}]", "spans_many")
            for position, item in enumerate(items_of(texts, "texts", "spans_many"))
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
            raise encoding_error(error, what) from None

    # ---------------------------------------------------------------- plumbing

    def _built_in_levels(self) -> list[Level] | None:
        """The levels of a built-in chunker, top first; None for the base class."""
        return None

    def _cuts(self) -> list[dict[str, Any]]:
        """What each level cuts by, top first (see ``fingerprint``): a custom strategy is one
        level, cut in Python."""
        return [strategy_cut(self)]

    def _levels(self) -> list[Level]:
        """The levels this chunker cuts, top first: itself when it is a custom strategy."""
        cls = type(self)
        if cuts_in_python(cls):
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
        spans = tree_array(levels, text_of(text, "text"))
        leaves = spans[spans[:, 0] == 0, 5:7].tolist()
        return [(start, end) for start, end in leaves]

    def _chunk(
        self,
        documents: Documents | Checked,
        *,
        leaves_only: bool,
        workers: int | None = 1,
        call: str = "chunk",
    ) -> list[Chunk]:
        """The one path from documents to chunks (``chunk``, ``chunk_tree``, ``chunk_many``).

        Args:
            documents: What ``chunk`` accepts, or the documents ``chunk_many`` checked.
            leaves_only: Return the leaves only (``chunk``), not every level.
            workers: Threads for the core's batch call (1: this thread; None: every core).
            call: The public method, named in the errors for bad input.

        Returns:
            The chunks of every document in input order, each document's levels top first.
            The chunks above the leaves also go to the registry.
        """
        levels = self._levels()
        if all_built_in(levels):
            # Every document through the core in one call: spans, ids and Chunk objects,
            # no span array in between.
            texts, ids, metadatas = columns(documents, call)
            try:
                results = _core.chunk_documents(
                    levels, texts, ids, metadatas, self.fingerprint(), workers
                )
            except UnicodeEncodeError as error:
                raise encoding_error(error) from None
            return self._collect(results, leaves_only=leaves_only)
        # A custom level: each document's span array, level by level, then its chunks.
        fingerprint = self.fingerprint()
        numbered, skip = numbered_documents(documents, call)
        chunks = []
        for position, document in numbered:
            try:
                spans, outline = _spans_and_outline(levels, document)
            except (ChunkingError, TypeError, ValueError) as error:
                if not skip:
                    raise
                warn_skipped(position, error, stacklevel=3)
                continue
            chunks.extend(
                self._wrap(
                    document,
                    spans,
                    fingerprint,
                    leaves_only=leaves_only,
                    outline=outline,
                    pages=levels[0] if isinstance(levels[0], _core.Splitter) else None,
                )
            )
        return chunks

    def _chunk_each(self, documents: Sequence[Document]) -> list[list[Chunk]]:
        """``chunk`` of each document apart, in one core call when every level is built in.

        The integrations' path for a batch whose documents each get their own metadata (a
        parent split again into children): the leaves of each document, in input order,
        the chunks above them recorded as ``chunk`` records them.
        """
        return self._chunk_texts(*columns(documents))

    def _chunk_texts(
        self,
        texts: Sequence[str],
        ids: Sequence[str | None],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[list[Chunk]]:
        """``_chunk_each`` of a batch given as columns, with no ``Document`` per text.

        The texts must be strs and the ids checked as ``Document`` checks them (None: the
        text's hash); no metadata: every chunk's metadata is empty.
        """
        if metadatas is None:
            metadatas = [None] * len(texts)
        levels = self._levels()
        if not all_built_in(levels):
            return [
                self._chunk(Document(text, id=id, metadata=metadata), leaves_only=True)
                for text, id, metadata in zip(texts, ids, metadatas, strict=True)
            ]
        try:
            results = _core.chunk_documents(levels, texts, ids, metadatas, self.fingerprint(), 1)
        except UnicodeEncodeError as error:
            raise encoding_error(error) from None
        return [self._collect([result], leaves_only=True) for result in results]

    def _collect(
        self, results: Sequence[tuple[list[Chunk], int]], *, leaves_only: bool
    ) -> list[Chunk]:
        """What ``_chunk`` returns from each document's chunks (levels top first, the leaves
        from ``first_leaf`` on); the registry gets the chunks above the leaves (all of them
        when it keeps children), in one call, under this chunker's fingerprint."""
        registry = self._registry
        keeps_children = registry is not None and getattr(registry, "keeps_children", False)
        parent_content = getattr(self, "_parent_content", False)
        if len(results) == 1 and not parent_content:
            chunks, first_leaf = results[0]
            if first_leaf or keeps_children:
                self._register(chunks if keeps_children else chunks[:first_leaf])
            return chunks[first_leaf:] if leaves_only else chunks
        returned: list[Chunk] = []
        stored: list[Chunk] = []
        for document_chunks, first_leaf in results:
            chunks = document_chunks
            if parent_content and first_leaf:
                parents = chunks[:first_leaf]
                # Imported here: the retrieval side is not needed to cut (nor its startup).
                from spanchunk.retrieval import attach_parent_content  # noqa: PLC0415

                chunks = parents + attach_parent_content(chunks[first_leaf:], parents)
            if registry is not None:
                stored += chunks if keeps_children else chunks[:first_leaf]
            returned += chunks[first_leaf:] if leaves_only else chunks
        if stored:
            self._register(stored)
        return returned

    def _register(self, chunks: list[Chunk]) -> None:
        """Chunks go to the registry under this chunker's fingerprint (a ParentRegistry skips
        the type checks that ``add`` does for callers: these are the core's own chunks)."""
        registry = self._registry
        if type(registry) is ParentRegistry:
            registry.add_chunks(chunks, self.fingerprint())
        elif registry is not None:
            registry.add(chunks, fingerprint=self.fingerprint())

    def _wrap(
        self,
        document: Document,
        spans: NDArray[np.int64],
        fingerprint: str,
        *,
        leaves_only: bool,
        outline: _core.Outline | None = None,
        pages: _core.Splitter | None = None,
    ) -> list[Chunk]:
        """Chunk objects for one document's span array; parents go to the registry. With a
        Markdown ``outline``, every chunk's metadata holds its heading path; with ``pages``
        (the top level, when built in), the pages its markers give."""
        chunks = _core.build_chunks(
            document.text,
            document.id,
            fingerprint,
            document.chunk_metadata(),
            spans,
            outline,
            pages,
        )
        # Rows go level by level, the leaves last: a binary search finds the first leaf
        # (a numpy count costs more than the whole wrap of a small document).
        first_leaf = bisect_left(chunks, 0, key=_minus_level)
        return self._collect([(chunks, first_leaf)], leaves_only=leaves_only)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


Chunker._HOOKS = MappingProxyType(
    dict.fromkeys(("split_text", "split_spans", "chunk", "_chunk", "_collect"), Chunker)
)
