"""Pieces every integration shares: building a chunker from plain settings, the import error."""

from __future__ import annotations

import bisect
import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spanchunk import (
    Chunker,
    CodeChunker,
    HierarchicalChunker,
    HtmlChunker,
    MarkdownChunker,
    ParentChildChunker,
    RecursiveChunker,
)
from spanchunk.chunkers import hooks
from spanchunk.errors import encoding_error
from spanchunk.units import Unit

__all__ = [
    "PageNumbers",
    "cut_registered",
    "hierarchical_chunker",
    "missing_extra",
    "recursive_chunker",
    "same_model",
    "within_declared_range",
]


def within_declared_range(distribution: str, extra: str) -> bool:
    """Whether the installed ``distribution`` is in the range this package's ``extra``
    declares for it (``pyproject.toml``, read back from the installed package's metadata).

    An integration fills its framework's objects as the framework's own shortcut does (no
    validation of values already of their types: ``benches/NOTES.md`` has what that saves)
    only for a version in that range, and only when the objects it fills are the ones the
    constructor builds (checked once at import); anywhere else it uses the constructors.

    Raises:
        ImportError: ``packaging`` (one of the extra's packages) is not installed; the
            message names the extra, as for a missing framework.
    """
    from importlib import metadata  # noqa: PLC0415

    try:
        from packaging.requirements import Requirement  # noqa: PLC0415
        from packaging.utils import canonicalize_name  # noqa: PLC0415
    except ImportError as error:
        raise missing_extra("packaging", extra, error) from None
    try:
        installed = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return False
    name = canonicalize_name(distribution)
    for line in extra_requirements(extra):
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == name:
            return requirement.specifier.contains(installed, prereleases=True)
    return False


def same_model(built: Any, filled: Any) -> bool:
    """Whether a pydantic object filled field by field (no validation) is the one its
    constructor builds: same type, fields in the same order, the same pydantic bookkeeping,
    the same dump, equal, and no post-init hook the filling would skip."""
    return (
        type(built) is type(filled)
        and list(built.__dict__.items()) == list(filled.__dict__.items())
        and built.__pydantic_fields_set__ == filled.__pydantic_fields_set__
        and built.__pydantic_extra__ == filled.__pydantic_extra__
        and built.__pydantic_private__ == filled.__pydantic_private__
        and built.model_dump() == filled.model_dump()
        and built == filled
        and not type(built).__pydantic_post_init__
    )


#: Metadata values a deep copy returns as they are.
SCALARS = (str, int, float, bool, type(None))


def is_shallow(metadata: Mapping[str, Any]) -> bool:
    """Whether every value of ``metadata`` is a scalar: a shallow copy is then a deep one."""
    return all(isinstance(value, SCALARS) for value in metadata.values())


def metadata_copier(metadata: Mapping[str, Any]) -> Callable[[Any], Any]:
    """How to copy a document's metadata as the frameworks do (deeply, so that no copy
    shares a mutable value): ``dict`` when every value is a scalar (the same, and much
    cheaper), else ``copy.deepcopy``."""
    return dict if is_shallow(metadata) else copy.deepcopy


def cut_registered(
    chunker: Chunker,
    cut: Callable[..., tuple[Any, list[Any]]],
    *args: Any,
    register: bool = True,
) -> Any:
    """``cut(*args, keep_children)``, a core call that cuts and makes a framework's objects
    (``_core.langchain_cut``, ``_core.haystack_cut``), with the ``Chunk`` objects it returns
    for the chunker's registry sent there as ``chunk_tree`` sends them: the levels above the
    leaves, and the leaves too for a registry that keeps children. Without ``register``
    (a component whose parents go out as framework objects), the core makes none
    (``keep_children=None``).

    Raises:
        ValueError: a text holds a lone surrogate.
    """
    store = hooks.registry(chunker)
    keep_children: bool | None = store is not None and getattr(store, "keeps_children", False)
    if not register:
        keep_children = None
    try:
        made, stored = cut(*args, keep_children)
    except UnicodeEncodeError as error:
        raise encoding_error(error) from None
    if stored:
        hooks.register(chunker, stored)
    return made


def extra_requirements(extra: str) -> list[str]:
    """The requirements the installed spanchunk declares for ``extra`` (none when it is not
    installed as a package), markers left out."""
    from importlib.metadata import PackageNotFoundError, requires  # noqa: PLC0415

    try:
        declared = requires("spanchunk") or []
    except PackageNotFoundError:
        declared = []
    return [
        requirement.strip()
        for requirement, _, marker in (line.partition(";") for line in declared)
        if marker.replace(" ", "").replace('"', "'") == f"extra=='{extra}'"
    ]


def missing_extra(framework: str, extra: str, error: ImportError) -> ImportError:
    """The ImportError raised when a framework is absent, naming what installs it: the
    extra's packages as the installed spanchunk declares them (spanchunk is on no package
    index, so ``pip install 'spanchunk[extra]'`` cannot find it), or the extra from a
    clone."""
    packages = extra_requirements(extra)
    command = "pip install " + " ".join(f"'{package}'" for package in packages)
    return ImportError(
        f"spanchunk.integrations.{extra} needs {framework}, which is not installed "
        f"({error}): {command if packages else 'install it'} (or, from a clone of "
        f"spanchunk: pip install '.[{extra}]')"
    )


#: The keys of a chunk's paths (Markdown's heading path, source code's symbol path): written
#: under their own keys, never copied with the document's metadata. A code chunk's
#: ``language`` is written too, but a document's own ``language`` (LangChain's code loaders
#: set one) is the document's metadata, kept.
PATH_KEYS = ("headings", "symbols")


def path_fields(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's paths as the frameworks' metadata hold them, where it has them: the
    heading and symbol paths as lists, and with a symbol path, the language."""
    fields: dict[str, Any] = {}
    for key in PATH_KEYS:
        value = metadata.get(key)
        if value is not None:
            fields[key] = list(value)
    if "symbols" in fields and metadata.get("language") is not None:
        fields["language"] = metadata["language"]
    return fields


#: What a chunk of an HTML page, of a table with a header row or of a text with page markers
#: carries in its metadata beyond its paths (``Chunk.metadata``'s keys, and the frameworks'):
#: written under the same keys where a chunk has them, never copied with the document's
#: metadata.
OWN_KEYS = ("source_start_byte", "source_end_byte", "table_header", "page_first", "page_last")

#: Every key of what a chunk carries: its paths and its own fields.
CARRIED_KEYS = (*PATH_KEYS, *OWN_KEYS)


class CarriedFields:
    """What the chunks of one document carry, as the frameworks' metadata hold it: the
    paths (``path_fields``), then the own fields, each where a chunk has it; a table header
    as a plain dict of its own. The core's framework writers write the same.

    A document's text may lie inside a larger one (a parent split again): a table header's
    span then moves by the text's offsets in its source (``byte_offset`` None: unknown, and
    the header's bytes are None), and when the document's metadata says which page its text
    starts on (``page_first``, an int), its chunks' pages count from there (moved by the
    difference between it and the first chunk's own first page).
    """

    __slots__ = ("_byte_offset", "_char_offset", "_shift", "_start_page")

    def __init__(
        self, base: Mapping[str, Any], char_offset: int = 0, byte_offset: int | None = 0
    ) -> None:
        start = base.get("page_first")
        self._start_page = start if isinstance(start, int) and not isinstance(start, bool) else None
        self._char_offset = char_offset
        self._byte_offset = byte_offset
        self._shift: int | None = None

    def of(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """The fields of the chunk whose metadata is ``metadata``, in their order."""
        fields = path_fields(metadata)
        if not metadata:
            return fields
        for key in ("source_start_byte", "source_end_byte"):
            value = metadata.get(key)
            if value is not None:
                fields[key] = value
        header = metadata.get("table_header")
        if header is not None:
            fields["table_header"] = self._header(header)
        first, last = metadata.get("page_first"), metadata.get("page_last")
        if first is not None and self._shift is None and self._start_page is not None:
            self._shift = self._start_page - first
        shift = self._shift or 0
        if first is not None:
            fields["page_first"] = first + shift if shift else first
        if last is not None:
            fields["page_last"] = last + shift if shift else last
        return fields

    def _header(self, header: Mapping[str, Any]) -> dict[str, Any]:
        """A table header as a plain dict, its span moved by the text's offsets."""
        moved = dict(header)
        char_offset, byte_offset = self._char_offset, self._byte_offset
        for key, offset in (
            ("start_char", char_offset),
            ("end_char", char_offset),
            ("start_byte", byte_offset),
            ("end_byte", byte_offset),
        ):
            if key in moved and offset != 0:
                moved[key] = None if offset is None else moved[key] + offset
        return moved


def carried_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What a chunk carries, back from a framework's metadata (``CarriedFields.of`` undone):
    the paths as tuples, the own fields as they are."""
    carried = {key: tuple(metadata[key]) for key in PATH_KEYS if key in metadata}
    carried.update((key, metadata[key]) for key in OWN_KEYS if key in metadata)
    return carried


def structure_of(markdown: bool, language: str | None, html: bool) -> str | None:
    """The structure an integration's settings ask for: ``"html"``, ``"markdown"``,
    ``"code"`` or None (plain text).

    Raises:
        ValueError: two of them are asked for.
    """
    asked = [
        setting
        for setting, given in (
            ("html=True", html),
            ("markdown=True", markdown),
            (f"language={language!r}", language is not None),
        )
        if given
    ]
    if len(asked) > 1:
        raise ValueError(
            f"{' and '.join(asked)} are {'two' if len(asked) == 2 else 'three'} structures: "
            "give one of them (html=True for HTML pages, markdown=True for Markdown, "
            "language=... for source code)"
        )
    if html:
        return "html"
    if markdown:
        return "markdown"
    return None if language is None else "code"


def recursive_chunker(
    chunk_size: int,
    overlap: int,
    unit: Unit,
    encoding: str | None,
    markdown: bool,
    *,
    language: str | None = None,
    html: bool = False,
) -> RecursiveChunker:
    """A one-level chunker: of HTML pages, Markdown-aware (heading paths), source code of
    ``language`` (symbol paths), or plain recursive.

    Raises:
        ValueError: two structures are asked for.
    """
    structure = structure_of(markdown, language, html)
    if structure == "code":
        return CodeChunker(
            chunk_size, overlap=overlap or None, unit=unit, encoding=encoding, language=language
        )
    kind: type[RecursiveChunker] = RecursiveChunker
    if structure == "html":
        kind = HtmlChunker
    elif structure == "markdown":
        kind = MarkdownChunker
    return kind(chunk_size, overlap=overlap or None, unit=unit, encoding=encoding)


def hierarchical_chunker(
    sizes: Sequence[int],
    overlap: int,
    unit: Unit,
    encoding: str | None,
    markdown: bool,
    *,
    language: str | None = None,
    html: bool = False,
) -> HierarchicalChunker:
    """An N-level chunker, top size first; HTML pages (every level cuts a page's readable
    text), Markdown sections or the definitions of source code in ``language`` at the top
    level when asked.

    Two sizes give a ``ParentChildChunker`` (the command line's chunker), so the ids agree
    with everything else that cuts parents and children with the same settings.

    Raises:
        ValueError: two structures are asked for.
    """
    sizes = list(sizes)
    structure = structure_of(markdown, language, html)
    if len(sizes) == 2:
        return ParentChildChunker(
            parent_size=sizes[0],
            child_size=sizes[1],
            child_overlap=overlap or None,
            parent_chunker=structure,  # type: ignore[arg-type]
            unit=unit,
            encoding=encoding,
            language=language,
        )
    chunkers = [structure, *([None] * (len(sizes) - 1))] if structure else None
    return HierarchicalChunker(
        sizes=sizes,
        overlap=overlap,
        unit=unit,
        encoding=encoding,
        chunkers=chunkers,  # type: ignore[arg-type]
        language=language,
    )


class PageNumbers:
    """The page a char offset lies on, counting form feeds (``\\f``) as Haystack does.

    Built once per document: a text with no form feed answers 1 without searching.
    """

    __slots__ = ("_breaks",)

    def __init__(self, text: str) -> None:
        breaks: list[int] = []
        if "\f" in text:
            position = text.find("\f")
            while position >= 0:
                breaks.append(position)
                position = text.find("\f", position + 1)
        self._breaks = breaks

    @property
    def breaks(self) -> list[int]:
        """The char offsets of the form feeds, in order."""
        return self._breaks

    def at(self, start_char: int) -> int:
        """1 + the number of form feeds before ``start_char``."""
        if not self._breaks:
            return 1
        return 1 + bisect.bisect_left(self._breaks, start_char)
