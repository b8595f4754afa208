"""The recursive chunker: one level of chunks, cut at the coarsest separator that fits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from spanchunk import _core
from spanchunk.chunkers.builtin import BuiltInChunker
from spanchunk.chunkers.settings import (
    KeepSeparator,
    Merge,
    Setting,
    UnitSetting,
    bool_setting,
    core_keep_separator,
    core_pages,
    keep_separator_setting,
    merge_setting,
    min_chunk_size_setting,
    name_setting,
    overlap_setting,
    pages_setting,
    positive_size,
    separators_setting,
    splitter_cut,
)
from spanchunk.chunkers.spans import Level
from spanchunk.errors import encoding_error
from spanchunk.units import Unit

__all__ = ["RecursiveChunker"]


def _separators_of(chunker: RecursiveChunker) -> list[list[str]]:
    if chunker._separators is None:
        return _core.default_separators(chunker.unit)
    return [list(level) for level in chunker._separators]


class RecursiveChunker(BuiltInChunker, built_in=True):
    """Recursive splitting at the coarsest separator that fits: one level of chunks.

    Text is cut at blank lines, then line breaks, sentence ends, clause marks and spaces,
    then between grapheme clusters, until every piece fits ``chunk_size``; pieces are then
    merged into chunks of at most ``chunk_size`` (strictly) that end where the text does:
    from a chunk's start, the coarsest separator level whose next piece fits decides, and
    the chunk takes whole pieces of that level while they fit (``merge="boundary"``, the
    default; ``merge="greedy"`` takes pieces of any level while they fit). All of it runs in
    the Rust core with the GIL released.

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
        merge: ``"boundary"`` (the default): a chunk ends after the coarsest cut it can
            reach, holding whole pieces of that separator level; ``"greedy"``: a chunk takes
            pieces of any level while they fit (fuller chunks, fewer of them, some ending
            inside a sentence).
        unit: ``"char"`` (code points, as ``len``), ``"byte"`` (UTF-8 bytes),
            ``"token"`` (with exactly one of ``encoding``, ``tokenizer``, ``length_function``),
            or the units of Haystack's ``split_by``: ``"word"`` (runs of non-whitespace),
            ``"sentence"`` (UAX #29 sentences; the default separators then cut at sentence
            boundaries, ``SENTENCES``), ``"passage"`` (pieces between blank lines) or
            ``"page"`` (pieces between form feeds). Whitespace counts 0 in these four.
        encoding: With ``unit="token"``: a tiktoken encoding compiled into the core
            (``"o200k_base"``, ``"cl100k_base"``, ``"p50k_base"``, ``"r50k_base"``).
        name: A label, reported in ``settings()`` but never part of the fingerprint.
        tokenizer: With ``unit="token"``: the path of a HuggingFace ``tokenizer.json`` (or a
            ``tokenizers.Tokenizer``), counted in Rust without special tokens, truncation or
            padding. ``settings()`` names it by the hash of its content.
        length_function: With ``unit="token"``: any callable ``str -> int``. The slow path:
            the core calls it for every measurement, holding the GIL.
        pages: Page markers of text converted from PDF (see ``docs/pages.md``): True (the
            default) recognises form feeds and the markers of the common converters
            (``DEFAULT_PAGE_PATTERN``), a str is a regular expression of one's own, False
            marks no pages. Every chunk of a document with markers carries
            ``metadata["page_first"]`` and ``metadata["page_last"]``. Changes metadata
            only, not spans or ids.

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
    _separators: list[list[str]] | None

    # The settings, in the order settings() and the repr list them (see _settings.Setting).
    chunk_size: Setting[int] = Setting(
        "The largest chunk, in ``unit``.",
        check=lambda chunker, value: positive_size("chunk_size", value, chunker.unit, 1000),
    )
    overlap: Setting[int] = Setting(
        "The most a chunk repeats of the previous one, in ``unit`` (0: none).",
        check=lambda chunker, value: overlap_setting(
            "overlap", value, "chunk_size", chunker.chunk_size
        ),
        shown=bool,
    )
    min_chunk_size: Setting[int] = Setting(
        "Pieces smaller than this are joined to a neighbour when the result fits.",
        check=lambda chunker, value: min_chunk_size_setting(value, chunker.chunk_size),
        shown=bool,
    )
    separators: Setting[list[list[str]]] = Setting(
        "The separator levels, coarsest first (the defaults when none were given).",
        check=lambda _chunker, value: separators_setting(value),
        read=_separators_of,
        shown=lambda separators: separators is not None,
    )
    keep_separator: Setting[KeepSeparator] = Setting(
        'Where a separator goes: ``"end"``, ``"start"`` or ``False``.',
        check=lambda _chunker, value: keep_separator_setting(value),
        shown=lambda keep: keep != "end",
    )
    trim: Setting[bool] = Setting(
        "Whether whitespace is stripped from chunk edges.",
        check=lambda _chunker, value: bool_setting("trim", value),
        shown=lambda trim: not trim,
    )
    merge: Setting[Merge] = Setting(
        'How pieces are merged: ``"boundary"`` (the default) or ``"greedy"``.',
        check=lambda _chunker, value: merge_setting(value),
        shown=lambda merge: merge != "boundary",
    )
    unit: Setting[str] = UnitSetting(
        '``"char"``, ``"byte"``, ``"token"``, ``"word"``, ``"sentence"``, ``"passage"`` or '
        '``"page"``.'
    )
    name: Setting[str | None] = Setting(
        "The label given at construction (not part of the fingerprint).",
        check=lambda _chunker, value: name_setting(value),
        shown=lambda name: name is not None,
    )
    pages: Setting[bool | str] = Setting(
        "The page markers: True (the defaults), False (none) or a regular expression.",
        check=lambda _chunker, value: pages_setting(value),
        shown=lambda pages: pages is not True,
    )

    # Where each setting's checked value is stored (``Setting`` keeps it as ``_<name>``).
    _chunk_size: int
    _overlap: int
    _min_chunk_size: int
    _keep_separator: KeepSeparator
    _trim: bool
    _merge: Merge
    _pages: bool | str

    # Positional settings mirror the documented signature (RecursiveChunker(512, 50)).
    def __init__(  # noqa: PLR0917
        self,
        chunk_size: int = 1000,
        overlap: int | None = None,
        min_chunk_size: int = 0,
        separators: Sequence[str | Sequence[str]] | None = None,
        keep_separator: KeepSeparator = "end",
        trim: bool = True,
        unit: Unit = "char",
        encoding: str | None = None,
        name: str | None = None,
        *,
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
        merge: Merge = "boundary",
        pages: bool | str = True,
    ) -> None:
        self._configure(
            unit=(unit, encoding, tokenizer, length_function),
            chunk_size=chunk_size,
            overlap=overlap,
            min_chunk_size=min_chunk_size,
            separators=separators,
            keep_separator=keep_separator,
            trim=trim,
            merge=merge,
            name=name,
            pages=pages,
        )
        self._rebuild()

    def _rebuild(self) -> None:
        try:
            self._splitter = _core.Splitter(
                self._chunk_size,
                overlap=self._overlap,
                min_chunk_size=self._min_chunk_size,
                separators=self._separators,
                keep_separator=core_keep_separator(self._keep_separator),
                trim=self._trim,
                merge=self._merge,
                pages=core_pages(self._pages),
                **self._structure(),
                **self._sizing.core(),
            )
        except UnicodeEncodeError as error:
            raise encoding_error(error, "a separator") from None
        self._build_tree()

    def _structure(self) -> dict[str, Any]:
        """The core's structure settings of this chunker's level."""
        return {"structure": self._STRUCTURE}

    def _built_in_levels(self) -> list[Level]:
        return [self._splitter]

    def _built_in_cuts(self) -> list[dict[str, Any]]:
        return [splitter_cut(self._splitter, self._sizing)]
