"""Which chunker cuts which file: by the run's format and the file's name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from spanchunk.chunkers.code import language_of
from spanchunk.chunkers.html import HTML_SUFFIXES

if TYPE_CHECKING:
    from spanchunk.chunkers import HierarchicalChunker

__all__ = ["MARKDOWN_SUFFIXES", "FileChunkers"]

MARKDOWN_SUFFIXES = (".md", ".markdown")


class FileChunkers(NamedTuple):
    """The chunker of each file of a run, by its format: Markdown parents for Markdown
    files, HTML parents for HTML pages, code parents for source code, plain ones otherwise.

    ``format`` is the command line's ``--format``: ``"text"`` (every file by ``text``),
    ``"markdown"`` (every file by ``markdown``), ``"html"`` (every file by ``html``),
    ``"auto"`` (Markdown files and HTML pages, by their names' endings, by ``markdown`` and
    ``html``; the rest by ``text``), ``"code"`` (as auto, and source files by their
    language's chunker in ``code``). :meth:`of` makes the set of one chunker, which cuts
    every file.
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
    #: The chunker of HTML pages (None: none are read as pages).
    html: HierarchicalChunker | None = None

    def is_markdown(self, path: str) -> bool:
        """Whether ``path`` is cut as Markdown, by ``--format`` (auto, and code without
        ``--language``: by its suffix)."""
        by_suffix = self.format == "auto" or (self.format == "code" and self.language is None)
        return self.format == "markdown" or (by_suffix and path.lower().endswith(MARKDOWN_SUFFIXES))

    def is_html(self, path: str) -> bool:
        """Whether ``path`` is read as an HTML page, by ``--format`` (auto, and code without
        ``--language``: by its suffix)."""
        if self.html is None:
            return False
        by_suffix = self.format == "auto" or (self.format == "code" and self.language is None)
        return self.format == "html" or (by_suffix and path.lower().endswith(HTML_SUFFIXES))

    @classmethod
    def of(cls, chunker: HierarchicalChunker) -> FileChunkers:
        """One chunker for every file (``sync``'s ``chunker``)."""
        return cls(chunker, chunker, "text")

    def all(self) -> list[HierarchicalChunker]:
        """Every chunker, in the order of ``chunker_index``: text, Markdown, each language's,
        then HTML's."""
        return [
            self.text,
            self.markdown,
            *(chunker for _language, chunker in self.code),
            *([self.html] if self.html is not None else []),
        ]

    def chunker_index(self, path: str) -> int:
        """The position in ``all()`` of the chunker of ``path``, by ``--format`` (code: its
        ``--language``, else by its suffix; a file of no known language as text)."""
        if self.is_html(path):
            return 2 + len(self.code)
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
