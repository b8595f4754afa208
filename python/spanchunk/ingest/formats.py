"""Which chunker cuts which file: by the run's format and the file's name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from spanchunk.chunkers.code import language_of

if TYPE_CHECKING:
    from spanchunk.chunkers import HierarchicalChunker

__all__ = ["MARKDOWN_SUFFIXES", "FileChunkers"]

MARKDOWN_SUFFIXES = (".md", ".markdown")


class FileChunkers(NamedTuple):
    """The chunker of each file of a run, by its format: Markdown parents for Markdown
    files, code parents for source code, plain ones otherwise.

    ``format`` is the command line's ``--format``: ``"text"`` (every file by ``text``),
    ``"markdown"`` (every file by ``markdown``), ``"auto"`` (Markdown files, by their
    names' endings, by ``markdown``; the rest by ``text``), ``"code"`` (Markdown files by
    ``markdown``; source files by their language's chunker in ``code``; the rest by
    ``text``). :meth:`of` makes the set of one chunker, which cuts every file.
    """

    text: HierarchicalChunker
    markdown: HierarchicalChunker
    format: str
    #: The command line's settings of the run, by option (``child_size``: 400, ...), as a
    #: store records them.
    settings: dict[str, Any] | None = None
    #: ``--input-encoding``: the files' encoding when it is not UTF-8 (None: UTF-8, or
    #: UTF-16 or UTF-32 with a byte order mark).
    input_encoding: str | None = None
    #: The code chunkers by language (``--format code``): None for one that reads each
    #: file's language from its name (the core does, by the document's source).
    code: tuple[tuple[str | None, HierarchicalChunker], ...] = ()
    #: ``--language``: the language of every file with ``--format code``.
    language: str | None = None

    def is_markdown(self, path: str) -> bool:
        """Whether ``path`` is cut as Markdown, by ``--format`` (auto, and code without
        ``--language``: by its suffix)."""
        by_suffix = self.format == "auto" or (self.format == "code" and self.language is None)
        return self.format == "markdown" or (by_suffix and path.lower().endswith(MARKDOWN_SUFFIXES))

    @classmethod
    def of(cls, chunker: HierarchicalChunker) -> FileChunkers:
        """One chunker for every file (``sync``'s ``chunker``)."""
        return cls(chunker, chunker, "text")

    def all(self) -> list[HierarchicalChunker]:
        """Every chunker, in the order of ``chunker_index``: text, Markdown, then each
        language's."""
        return [self.text, self.markdown, *(chunker for _language, chunker in self.code)]

    def chunker_index(self, path: str) -> int:
        """The position in ``all()`` of the chunker of ``path``, by ``--format`` (code: its
        ``--language``, else by its suffix; a file of no known language as text)."""
        if self.is_markdown(path):
            return 1
        if self.format != "code":
            return 0
        language = self.language if self.format == "code" else None
        language = language or language_of(path)
        if language is None:
            return 0
        for position, (name, _chunker) in enumerate(self.code):
            if name is None or name == language:
                return 2 + position
        return 0
