"""The code chunker: definitions first, then statements, then the recursive separators."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from spanchunk import _core
from spanchunk.chunkers.recursive import RecursiveChunker
from spanchunk.chunkers.settings import KeepSeparator, Merge, OptionalSetting, Setting
from spanchunk.units import Unit

__all__ = ["LANGUAGES", "CodeChunker", "language_of"]

#: The languages the core parses, by name: their aliases and file name endings.
LANGUAGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    name: (tuple(aliases), tuple(extensions))
    for name, aliases, extensions in _core.code_languages()
}


#: Each file name ending the core parses, and its language (the table's first, were two to
#: share one).
_BY_ENDING: dict[str, str] = {}
for _language, (_aliases, _endings) in LANGUAGES.items():
    for _ending in _endings:
        _BY_ENDING.setdefault(_ending, _language)


def language_of(path: str) -> str | None:
    """The language of a file by the ending of its name (None: not one the core parses).

    >>> language_of("src/lib.rs"), language_of("README.md")
    ('rust', None)
    """
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    return None if dot < 0 else _BY_ENDING.get(name[dot:])


def _language_setting(_chunker: object, value: object) -> str | None:
    """A language name or alias (any case), as the core names it; None: each document's."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"language must be a str or None, not {type(value).__name__}")
    wanted = value.strip().lower()
    for language, (aliases, _extensions) in LANGUAGES.items():
        if wanted == language or wanted in aliases:
            return language
    raise ValueError(
        f"unknown language {value!r}: use one of {', '.join(LANGUAGES)} (or None, for the "
        "language of each document's source file name)"
    )


class CodeChunker(RecursiveChunker, built_in=True):
    """Source-code-aware recursive splitting: definitions first, then statements, then
    separators.

    The document is parsed once, in the Rust core, by its language's tree-sitter grammar
    (Python, Rust, JavaScript, TypeScript and TSX, Go, Java, C and C++). Its sections are
    its definitions (a class, a function or method, an impl, trait or interface block, a
    type), each with the comments and attributes right above it (a decorator is part of
    its definition), and the groups of statements between them. A definition that fits
    ``chunk_size`` is never cut; one that does not is cut at its inner definitions, then
    between its statements, then between nested lines of code, then by the separators of
    ``RecursiveChunker``. Small sibling definitions merge up to ``chunk_size``, as Markdown
    sections do, and a chunk takes a definition only whole.

    Every chunk carries ``metadata["symbols"]``, the names of the definitions that enclose
    its start, outermost first (``("Parser", "parse_block")``; ``()`` at the top level), and
    ``metadata["language"]``. Text that does not parse is still cut, never refused: the
    grammar's error recovery gives the structure it can, and a file mostly in errors is cut
    by the separators alone. Spans stay exact.

    Args:
        chunk_size, overlap, min_chunk_size, separators, keep_separator, trim, unit,
            encoding, name, tokenizer, length_function, merge, pages: As for
            ``RecursiveChunker``.
        language: A language name (``"python"``, ``"rust"``, ``"javascript"``,
            ``"typescript"``, ``"tsx"``, ``"go"``, ``"java"``, ``"c"``, ``"cpp"``; aliases
            such as ``"py"`` or ``"c++"`` too), or None: each document's language is read
            from the ending of its ``source`` (``Document(text, source="app/main.py")``), and
            a document without a known one is cut as plain text, without symbols.

    Raises:
        TypeError: A size is not an int, or language is not a str.
        ValueError: An impossible setting or an unknown language; the message names the fix.

    Example:
        >>> from spanchunk import CodeChunker
        >>> source = '''class Parser:
        ...     def parse(self, text):
        ...         return [line for line in text.splitlines() if line]
        ...
        ...     def parse_block(self, block):
        ...         return block.strip()
        ... '''
        >>> for chunk in CodeChunker(chunk_size=60, language="python").chunk(source):
        ...     print(chunk.metadata["symbols"], chunk.text.splitlines()[0])
        ('Parser',) class Parser:
        ('Parser', 'parse') def parse(self, text):
        ('Parser', 'parse') return [line for line in text.splitlines() if line]
        ('Parser', 'parse_block') def parse_block(self, block):
    """

    _STRUCTURE: ClassVar[str | None] = "code"
    _language: str | None

    language: Setting[str | None] = OptionalSetting(
        "The language (None: each document's, by its source's file name).",
        check=_language_setting,
        shown=lambda language: language is not None,
    )

    # Positional settings mirror RecursiveChunker's; the language is a keyword.
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
        language: str | None = None,
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
        merge: Merge = "boundary",
        pages: bool | str = True,
    ) -> None:
        self._configure(language=language)
        super().__init__(
            chunk_size,
            overlap,
            min_chunk_size,
            separators,
            keep_separator,
            trim,
            unit,
            encoding,
            name,
            tokenizer=tokenizer,
            length_function=length_function,
            merge=merge,
            pages=pages,
        )

    def _structure(self) -> dict[str, Any]:
        return {"structure": self._STRUCTURE, "language": self._language}


# Every setting of RecursiveChunker, then the language (``settings()`` and the repr).
CodeChunker._SETTINGS = (*RecursiveChunker._SETTINGS, CodeChunker.language)
