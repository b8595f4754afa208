"""Hierarchical (small-to-big) chunkers: N levels, and the two-level parent-child case.

Each level is a chunker (a default ``RecursiveChunker`` of the level's size, a
``MarkdownChunker``, or any ``Chunker``, a custom strategy included), cut inside the level
above. The leaves are returned; every chunk above them goes to the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Literal, cast

from spanchunk import _core
from spanchunk.chunk import Chunk
from spanchunk.chunkers.base import Chunker, Documents, ParentStore, level_cut
from spanchunk.chunkers.builtin import BuiltInChunker
from spanchunk.chunkers.code import CodeChunker
from spanchunk.chunkers.html import HtmlChunker
from spanchunk.chunkers.markdown import MarkdownChunker
from spanchunk.chunkers.recursive import RecursiveChunker
from spanchunk.chunkers.settings import (
    FlagSetting,
    OptionalSetting,
    Setting,
    UnitSetting,
    nested_settings,
    overlap_setting,
    pages_setting,
    positive_size,
    sizes_setting,
)
from spanchunk.chunkers.spans import Level
from spanchunk.stores.memory import ParentRegistry
from spanchunk.stores.parents import Missing, check_missing
from spanchunk.units import Sizing, Unit

__all__ = ["HierarchicalChunker", "ParentChildChunker"]


def _level_setting(
    name: str,
    value: object,
    size: int,
    units: Sizing,
    language: str | None = None,
    *,
    pages: bool | str = True,
) -> Chunker | None:
    """A level's chunker: a Chunker, None (the default), or "markdown" (a MarkdownChunker of
    the level's size, in the tree's unit), "html" (an HtmlChunker of the level's size: every
    document is then a page, and every level cuts its readable text), "code" (a CodeChunker
    of the level's size, in ``language``: None for each document's) or "text" (the
    default); each with the tree's ``pages``."""
    if value == "markdown":
        return _recursive(size, 0, units, MarkdownChunker, pages=pages)
    if value == "html":
        return _recursive(size, 0, units, HtmlChunker, pages=pages)
    if value == "code":
        return _code(size, 0, units, language, pages)
    if value == "text":
        return None
    if value is None or isinstance(value, Chunker):
        return value
    raise TypeError(
        f"{name} must be a spanchunk.Chunker (e.g. RecursiveChunker(...)), 'markdown', "
        f"'html', 'code', 'text' or None, not {type(value).__name__}"
    )


def _code(
    size: int, overlap: int, units: Sizing, language: str | None, pages: bool | str
) -> CodeChunker:
    """A code level of a tree chunker, in the tree's (already validated) unit."""
    return cast(
        "CodeChunker",
        _recursive(size, overlap, units, CodeChunker, language=language, pages=pages),
    )


def _language_of_tree(_tree: object, value: object) -> str | None:
    """The language of the tree's "code" levels (None: each document's)."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"language must be a str or None, not {type(value).__name__}")
    return value


def _chunkers_setting(tree: HierarchicalChunker, chunkers: object) -> tuple[Chunker | None, ...]:
    """The chunker given for each level (None: the default), one per size."""
    sizes = tree.sizes
    if chunkers is None:
        return (None,) * len(sizes)
    if not isinstance(chunkers, (list, tuple)):
        raise TypeError(
            f"chunkers must be None or a list with one item per size, not {type(chunkers).__name__}"
        )
    if len(chunkers) != len(sizes):
        raise ValueError(
            f"chunkers has {len(chunkers)} items but sizes has {len(sizes)}: give one "
            "item per level (None for the default RecursiveChunker of that size)"
        )
    return tuple(
        _level_setting(
            f"chunkers[{position}]", chunker, size, tree._sizing, tree._language, pages=tree._pages
        )
        for position, (size, chunker) in enumerate(zip(sizes, chunkers, strict=True))
    )


def _child_size_setting(tree: ParentChildChunker, value: object) -> int:
    """A child size: positive (smaller than the parent size too, checked once the child
    chunker is known: see ``_check_child_below_parent``)."""
    return positive_size("child_size", value, tree.unit, 400)


def _check_child_below_parent(tree: ParentChildChunker) -> None:
    """The default child level must be smaller than the parents. A given ``child_chunker``
    has its own size, perhaps in another unit (10 sentences of 60-word children), so
    ``child_size`` is not compared then."""
    if tree._child_chunker is None and tree.child_size >= tree.parent_size:
        raise ValueError(
            f"child_size ({tree.child_size}) must be smaller than parent_size "
            f"({tree.parent_size}): raise parent_size or lower child_size"
        )


def _recursive(
    size: int,
    overlap: int,
    units: Sizing,
    kind: type[RecursiveChunker] | None = None,
    **settings: Any,
) -> RecursiveChunker:
    """A default level of a tree chunker (a ``RecursiveChunker`` unless ``kind`` says
    otherwise, with its own ``settings``), in the tree's (already validated) unit."""
    return (kind or RecursiveChunker)(
        size,
        overlap=overlap,
        unit=units.unit,  # type: ignore[arg-type]
        encoding=units.encoding,
        tokenizer=units.tokenizer,
        length_function=units.length_function,
        **settings,
    )


class HierarchicalChunker(BuiltInChunker, built_in=True, hooks=("chunk_tree",)):
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
        unit: ``"char"``, ``"byte"``, ``"token"``, ``"word"``, ``"sentence"``, ``"passage"``
            or ``"page"``, for every default level (see
            ``RecursiveChunker``; mix units with ``chunkers``).
        encoding: The tiktoken encoding of token units.
        chunkers: None, or one item per size: None (a ``RecursiveChunker`` of that size),
            ``"markdown"`` (a ``MarkdownChunker`` of that size), ``"code"`` (a
            ``CodeChunker`` of that size, in ``language``) or a ``Chunker`` that cuts
            that level instead (a custom strategy included). A built-in chunker above the
            leaves must have no overlap.
        registry: Where parents are recorded (default: a new ``ParentRegistry``).
        tokenizer: A ``tokenizer.json`` path (or ``tokenizers.Tokenizer``) for token units.
        length_function: A callable ``str -> int`` for token units (slow path).
        parent_content: Put each leaf's parent (its text, id and span) into the leaf's
            ``metadata["parent_content"]``, for vector stores that keep a payload per vector
            but cannot look parents up: ``spanchunk.retrieval.expand`` then rebuilds the
            parent from the hit alone. Changes metadata only, not spans or ids.
        language: The language of the ``"code"`` levels (``"python"``, ``"rust"``, ...; see
            ``CodeChunker``); None: each document's, by the ending of its ``source``.
        pages: The page markers of the levels the tree makes (see ``RecursiveChunker``):
            every chunk of a document with markers carries ``metadata["page_first"]`` and
            ``metadata["page_last"]``. A chunker given for the top level uses its own.

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
    _given_chunkers: tuple[Chunker | None, ...]
    _level_chunkers: tuple[Chunker, ...]

    # The settings, in the order settings() and the repr list them (see _settings.Setting).
    # Where each setting's checked value is stored (``Setting`` keeps it as ``_<name>``).
    _sizes: tuple[int, ...]
    _overlap: int
    _language: str | None
    _pages: bool | str

    sizes: Setting[tuple[int, ...]] = Setting(
        "The size of every level, top first.",
        check=lambda tree, value: sizes_setting(value, tree.unit),
        entry=lambda tree: list(tree._sizes),
        text=lambda sizes: repr(list(sizes)),
    )
    overlap: Setting[int] = Setting(
        "The overlap between consecutive leaves (parent levels never overlap).",
        check=lambda tree, value: overlap_setting(
            "overlap", value, "the smallest size", tree.sizes[-1]
        ),
        shown=bool,
    )
    unit: Setting[str] = UnitSetting(
        '``"char"``, ``"byte"``, ``"token"``, ``"word"``, ``"sentence"``, ``"passage"`` or '
        '``"page"``, of the default levels.'
    )
    chunkers: Setting[tuple[Chunker, ...]] = Setting(
        "The chunker of every level, top first (defaults included).",
        check=_chunkers_setting,
        read=lambda tree: tree._level_chunkers,
        entry=lambda tree: [nested_settings(given) for given in tree._given_chunkers],
        shown=lambda given: any(chunker is not None for chunker in given),
        text=lambda given: repr(list(given)),
        attribute="_given_chunkers",
    )
    parent_content: Setting[bool] = FlagSetting(
        'Whether each leaf carries its parent in ``metadata["parent_content"]``.'
    )
    language: Setting[str | None] = OptionalSetting(
        'The language of the ``"code"`` levels (None: each document\'s).',
        check=_language_of_tree,
        shown=lambda language: language is not None,
    )
    pages: Setting[bool | str] = Setting(
        "The page markers of the levels the tree makes (see ``RecursiveChunker``).",
        check=lambda _tree, value: pages_setting(value),
        shown=lambda pages: pages is not True,
    )

    # Positional settings mirror the documented signature (HierarchicalChunker([2048, 512])).
    def __init__(  # noqa: PLR0917
        self,
        sizes: Sequence[int] = (2048, 512, 128),
        overlap: int = 0,
        unit: Unit = "char",
        encoding: str | None = None,
        chunkers: Sequence[Chunker | Literal["markdown", "html", "code", "text"] | None]
        | None = None,
        registry: ParentStore | None = None,
        *,
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
        parent_content: bool = False,
        language: str | None = None,
        pages: bool | str = True,
    ) -> None:
        self._configure(
            unit=(unit, encoding, tokenizer, length_function),
            language=language,
            pages=pages,
            sizes=sizes,
            overlap=overlap,
            chunkers=chunkers,
            parent_content=parent_content,
        )
        # Overlap goes to the leaves only: the core refuses overlapping parents, whose
        # children would repeat the same text (and overlap never crosses a parent anyway).
        leaf = len(self._sizes) - 1
        self._setup(
            tuple(
                chunker
                if chunker is not None
                else _recursive(
                    size, self._overlap if depth == leaf else 0, self._sizing, pages=self._pages
                )
                for depth, (size, chunker) in enumerate(
                    zip(self._sizes, self._given_chunkers, strict=True)
                )
            ),
            registry,
        )

    def _setup(
        self,
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
        self._level_chunkers = level_chunkers
        self._registry = ParentRegistry() if registry is None else registry
        self._rebuild()

    def _rebuild(self) -> None:
        self._levels_cache = [chunker._as_level() for chunker in self._level_chunkers]
        self._build_tree()

    def _built_in_levels(self) -> list[Level]:
        return self._levels_cache

    def _built_in_cuts(self) -> list[dict[str, Any]]:
        return [level_cut(chunker) for chunker in self._level_chunkers]

    @property
    def parents(self) -> ParentStore:
        """The registry every chunk above the leaves is recorded in."""
        return self._registry  # type: ignore[return-value]

    def chunk_tree(self, documents: Documents) -> list[Chunk]:
        """Every level of every document: for each, the top level first, parents first.

        Parents are recorded in ``parents`` too.

        Args:
            documents: A ``Document``, a ``str``, or an iterable of either.

        Returns:
            The chunks of every level, document by document; within a document, level by
            level from the top, each level in document order.
        """
        return self._chunk(documents, leaves_only=False, call="chunk_tree")

    def parent_of(self, chunk: Chunk) -> Chunk | None:
        """The parent of ``chunk`` from the registry (None at the top level or if unknown)."""
        return self.parents.parent_of(chunk)

    def expand(
        self, hits: Iterable[Chunk], max_parents: int | None = None, *, missing: Missing = "warn"
    ) -> list[Chunk]:
        """Swap retrieved chunks for their parents: de-duplicated, first-seen order kept.

        ``spanchunk.retrieval.expand(hits, chunker.parents)``, the same function (through
        the store's ``expand``); to fill a context budget, ``spanchunk.retrieval.assemble``
        is the way.

        A hit whose parent the registry does not hold (nor the hit's ``parent_content``) is
        kept as itself, with one ``MissingParentWarning`` per call by default. See
        ``ParentRegistry.expand``.

        Args:
            hits: Retrieved chunks (or ``(chunk, score)`` pairs), best first.
            max_parents: Return at most this many chunks (None: no limit).
            missing: ``"warn"``, ``"raise"`` (``MissingParentError``) or ``"keep"`` (silently),
                for a hit whose parent the registry does not hold.
        """
        if check_missing(missing) == "warn":
            # A store of your own may predate ``missing``: the default is not passed on.
            return self.parents.expand(hits, max_parents=max_parents)
        return self.parents.expand(hits, max_parents=max_parents, missing=missing)

    def clear(self) -> None:
        """Forget every recorded parent."""
        self.parents.clear()


class ParentChildChunker(HierarchicalChunker, built_in=True):
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
            ``"code"`` for ``CodeChunker(parent_size, language=language)``: parents are
            definitions, every chunk carries ``metadata["symbols"]`` and
            ``metadata["language"]``, and the children are ``CodeChunker``'s too by
            default.
        child_chunker: A ``Chunker`` that cuts each parent into children instead of the
            default ``RecursiveChunker(child_size, overlap=child_overlap)`` (a
            ``MarkdownChunker`` under Markdown parents, a ``CodeChunker`` under code
            parents), or ``"markdown"`` or ``"code"`` for that chunker of ``child_size``.
        unit: ``"char"``, ``"byte"``, ``"token"``, ``"word"``, ``"sentence"``, ``"passage"``
            or ``"page"``, for the default levels (see
            ``RecursiveChunker``; mix units with ``parent_chunker`` / ``child_chunker``).
        encoding: The tiktoken encoding of token units.
        registry: Where parents are recorded (default: a new ``ParentRegistry``).
        tokenizer: A ``tokenizer.json`` path (or ``tokenizers.Tokenizer``) for token units.
        length_function: A callable ``str -> int`` for token units (slow path).
        parent_content: Put each leaf's parent (its text, id and span) into the leaf's
            ``metadata["parent_content"]``, for vector stores that keep a payload per vector
            but cannot look parents up: ``spanchunk.retrieval.expand`` then rebuilds the
            parent from the hit alone. Changes metadata only, not spans or ids.
        language: The language of ``"code"`` levels (``"python"``, ``"rust"``, ...; see
            ``CodeChunker``); None: each document's, by the ending of its ``source``.
        pages: The page markers of the levels the tree makes (see ``RecursiveChunker``):
            every chunk of a document with markers carries ``metadata["page_first"]`` and
            ``metadata["page_last"]``. A chunker given for the top level uses its own.

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

    # The settings, in the order settings() and the repr list them (see _settings.Setting).
    # Where each setting's checked value is stored (``Setting`` keeps it as ``_<name>``).
    _parent_size: int
    _child_size: int
    _child_overlap: int
    _parent_chunker: Chunker | None
    _child_chunker: Chunker | None

    parent_size: Setting[int] = Setting(
        "The largest parent, in ``unit``.",
        check=lambda tree, value: positive_size("parent_size", value, tree.unit, 2000),
    )
    child_size: Setting[int] = Setting("The largest child, in ``unit``.", check=_child_size_setting)
    child_overlap: Setting[int] = Setting(
        "The overlap between consecutive children (0: none).",
        check=lambda tree, value: overlap_setting(
            "child_overlap", value, "child_size", tree.child_size
        ),
        shown=bool,
    )
    parent_chunker: Setting[Chunker] = Setting(
        "The chunker that cuts the parents.",
        check=lambda tree, value: _level_setting(
            "parent_chunker",
            value,
            tree.parent_size,
            tree._sizing,
            tree._language,
            pages=tree._pages,
        ),
        read=lambda tree: tree._level_chunkers[0],
        entry=lambda tree: nested_settings(tree._parent_chunker),
        shown=lambda given: given is not None,
    )
    child_chunker: Setting[Chunker] = Setting(
        "The chunker that cuts each parent into children.",
        check=lambda tree, value: _level_setting(
            "child_chunker", value, tree.child_size, tree._sizing, tree._language, pages=tree._pages
        ),
        read=lambda tree: tree._level_chunkers[1],
        entry=lambda tree: nested_settings(tree._child_chunker),
        shown=lambda given: given is not None,
    )
    unit: Setting[str] = UnitSetting(
        '``"char"``, ``"byte"``, ``"token"``, ``"word"``, ``"sentence"``, ``"passage"`` or '
        '``"page"``, of the default levels.'
    )
    parent_content: Setting[bool] = FlagSetting(
        'Whether each leaf carries its parent in ``metadata["parent_content"]``.'
    )
    language: Setting[str | None] = OptionalSetting(
        'The language of ``"code"`` levels (None: each document\'s).',
        check=_language_of_tree,
        shown=lambda language: language is not None,
    )
    pages: Setting[bool | str] = Setting(
        "The page markers of the levels the tree makes (see ``RecursiveChunker``).",
        check=lambda _tree, value: pages_setting(value),
        shown=lambda pages: pages is not True,
    )

    # Positional settings mirror the documented signature (ParentChildChunker(2000, 400)).
    def __init__(  # noqa: PLR0917
        self,
        parent_size: int = 2000,
        child_size: int = 400,
        child_overlap: int | None = None,
        parent_chunker: Chunker | Literal["markdown", "html", "code", "text"] | None = None,
        child_chunker: Chunker | Literal["markdown", "html", "code", "text"] | None = None,
        unit: Unit = "char",
        encoding: str | None = None,
        registry: ParentStore | None = None,
        *,
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
        parent_content: bool = False,
        language: str | None = None,
        pages: bool | str = True,
    ) -> None:
        self._configure(
            unit=(unit, encoding, tokenizer, length_function),
            language=language,
            pages=pages,
            parent_size=parent_size,
            child_size=child_size,
            child_overlap=child_overlap,
            parent_chunker=parent_chunker,
            child_chunker=child_chunker,
            parent_content=parent_content,
        )
        _check_child_below_parent(self)
        given_parent: Chunker | None = self._parent_chunker
        given_child: Chunker | None = self._child_chunker
        # Markdown parents get Markdown children by default: a code block or a table row
        # that fits a child is not cut either, and children do not straddle sections. Code
        # parents get code children (of the parents' language) likewise.
        default_child: Chunker
        if isinstance(given_parent, CodeChunker):
            default_child = _code(
                self._child_size,
                self._child_overlap,
                self._sizing,
                given_parent.language,
                self._pages,
            )
        elif isinstance(given_parent, HtmlChunker):
            # HTML parents: children cut the same readable text by the page's sections.
            default_child = _recursive(
                self._child_size,
                self._child_overlap,
                self._sizing,
                HtmlChunker,
                content=given_parent.content,
                pages=self._pages,
            )
        else:
            child_type = (
                MarkdownChunker if isinstance(given_parent, MarkdownChunker) else RecursiveChunker
            )
            default_child = _recursive(
                self._child_size, self._child_overlap, self._sizing, child_type, pages=self._pages
            )
        self._setup(
            (
                given_parent
                if given_parent is not None
                else _recursive(self._parent_size, 0, self._sizing, pages=self._pages),
                given_child if given_child is not None else default_child,
            ),
            registry,
            names=("parent_chunker", "child_chunker"),
        )

    @property
    def sizes(self) -> tuple[int, ...]:  # type: ignore[override]
        """The size of every level, top first: ``(parent_size, child_size)``."""
        return (self._parent_size, self._child_size)

    @property
    def overlap(self) -> int:  # type: ignore[override]
        """The children's overlap (``child_overlap``); parents never overlap."""
        return self._child_overlap
