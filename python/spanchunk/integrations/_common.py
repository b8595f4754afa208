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


def path_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's paths back from a framework's metadata (``path_fields`` undone)."""
    return {key: tuple(metadata[key]) for key in PATH_KEYS if key in metadata}


def recursive_chunker(
    chunk_size: int,
    overlap: int,
    unit: Unit,
    encoding: str | None,
    markdown: bool,
    *,
    language: str | None = None,
) -> RecursiveChunker:
    """A one-level chunker: Markdown-aware (heading paths), source code of ``language``
    (symbol paths), or plain recursive."""
    if language is not None:
        return CodeChunker(
            chunk_size, overlap=overlap or None, unit=unit, encoding=encoding, language=language
        )
    kind = MarkdownChunker if markdown else RecursiveChunker
    return kind(chunk_size, overlap=overlap or None, unit=unit, encoding=encoding)


def hierarchical_chunker(
    sizes: Sequence[int],
    overlap: int,
    unit: Unit,
    encoding: str | None,
    markdown: bool,
    *,
    language: str | None = None,
) -> HierarchicalChunker:
    """An N-level chunker, top size first; Markdown sections (or the definitions of source
    code in ``language``) at the top level when asked.

    Two sizes give a ``ParentChildChunker`` (the command line's chunker), so the ids agree
    with everything else that cuts parents and children with the same settings.
    """
    sizes = list(sizes)
    if markdown and language is not None:
        raise ValueError("markdown and language are two structures: give one of them")
    structure = "code" if language is not None else "markdown" if markdown else None
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
