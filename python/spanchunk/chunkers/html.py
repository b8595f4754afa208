"""The HTML chunker: a page's readable text, cut by its headings, blocks and rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

from spanchunk import _core
from spanchunk.chunkers.recursive import RecursiveChunker
from spanchunk.chunkers.settings import KeepSeparator, Merge, Setting
from spanchunk.document import Document
from spanchunk.units import Unit

__all__ = ["HTML_SUFFIXES", "HtmlChunker", "PageContent"]

#: The file name endings read as HTML pages (any case).
HTML_SUFFIXES = (".html", ".htm", ".xhtml")

#: Which part of a page is text: the part it marks as its main content, or the whole body.
PageContent = Literal["main", "body"]


def _content_setting(_chunker: object, value: object) -> PageContent:
    if value in ("main", "body"):
        return value
    raise ValueError(
        f"content must be 'main' (the page's main content, where it marks one) or 'body' "
        f"(the whole body), got {value!r}"
    )


class HtmlChunker(RecursiveChunker, built_in=True):
    """HTML pages cut as the text a reader sees: sections by headings, then blocks, then rows.

    Each document is a page's source. The core reads it once, with a WHATWG HTML5 tokenizer,
    into its readable text: block elements end paragraphs, list items and table rows end
    lines (a row's cells joined by ``" | "``), inline elements keep their words in order,
    character references are decoded, white space is collapsed as a browser renders it,
    ``pre`` is kept verbatim and images count by their alt text. ``script``, ``style``,
    ``template``, ``noscript``, the ``head``, ``svg``, ``canvas``, ``iframe``, ``object``,
    ``embed``, ``audio``, ``video``, ``map``, ``select``, ``textarea`` and ``button`` are
    dropped with all they hold.

    The chunks' offsets index that readable text (``read`` gives it, as a ``Document``), so
    the contract holds as everywhere: ``page_text[chunk.start_char:chunk.end_char] ==
    chunk.text``. Every chunk also carries, in its metadata, ``"source_start_byte"`` and
    ``"source_end_byte"``: the byte range of the page's UTF-8 source it came from, to
    highlight the passage in the original HTML; and ``"headings"``, as Markdown's chunks
    do. Sections follow ``h1``-``h6``, merged and cut by the rules of ``MarkdownChunker``.

    Args:
        chunk_size, overlap, min_chunk_size, separators, keep_separator, trim, unit,
            encoding, name, tokenizer, length_function, merge, pages: As for
            ``RecursiveChunker``.
        content: ``"main"`` (the default): the page's main content where it marks one (its
            first ``main`` element or element with ``role="main"``, else its ``article``
            when it has exactly one), the whole body otherwise; ``"body"``: the whole body.

    Example:
        >>> from spanchunk import HtmlChunker
        >>> page = (
        ...     "<nav>Home</nav><main><h1>Guide</h1><p>Intro &amp; more.</p>"
        ...     "<h2>Install</h2><p>Run <code>pip install</code>.</p></main>"
        ... )
        >>> chunker = HtmlChunker(chunk_size=30)
        >>> chunker.read(page).text
        'Guide\\n\\nIntro & more.\\n\\nInstall\\n\\nRun pip install.'
        >>> for chunk in chunker.chunk(page):
        ...     start, end = chunk.metadata["source_start_byte"], chunk.metadata["source_end_byte"]
        ...     print(chunk.metadata["headings"], repr(chunk.text), page[start:end][:22])
        ('Guide',) 'Guide\\n\\nIntro & more.' Guide</h1><p>Intro &
        ('Guide', 'Install') 'Install\\n\\nRun pip install.' Install</h2><p>Run <c
    """

    _STRUCTURE: ClassVar[str | None] = "html"
    _content: PageContent

    content: Setting[PageContent] = Setting(
        'The part of a page that is text: ``"main"`` (the default) or ``"body"``.',
        check=_content_setting,
        shown=lambda content: content != "main",
    )

    # Positional settings mirror RecursiveChunker's; the content is a keyword.
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
        content: PageContent = "main",
        tokenizer: object = None,
        length_function: Callable[[str], int] | None = None,
        merge: Merge = "boundary",
        pages: bool | str = True,
    ) -> None:
        self._configure(content=content)
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
        return {"structure": self._STRUCTURE, "html_content": self._content}

    def read(self, page: str | Document) -> Document:
        """The page's readable text as a ``Document`` (same id, metadata and source): the text
        this chunker's chunks of ``page`` index.

        Args:
            page: The page's source, as a str or a ``Document``.

        Returns:
            A ``Document`` whose text is the readable text.
        """
        return read_page(page, self._content)


def read_page(page: str | Document, content: PageContent = "main") -> Document:
    """The readable text of an HTML page as a ``Document`` (see ``HtmlChunker.read``)."""
    if isinstance(page, Document):
        text, _headings = _core.read_html(page.text, content)
        return Document(text, id=page.id, metadata=page.metadata, source=page.source)
    if not isinstance(page, str):
        raise TypeError(
            f"read takes a page's source as a str or a Document, not {type(page).__name__}"
        )
    # The id the chunks of the page's source carry: the hash of the source, not of the text.
    return Document(_core.read_html(page, content)[0], id=_core.text_id(page))


# Every setting of RecursiveChunker, then the content (``settings()`` and the repr).
HtmlChunker._SETTINGS = (*RecursiveChunker._SETTINGS, HtmlChunker.content)
