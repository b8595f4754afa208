"""The Markdown chunker: sections first, then blocks, then the recursive separators."""

from __future__ import annotations

from typing import ClassVar

from spanchunk.chunkers.recursive import RecursiveChunker

__all__ = ["MarkdownChunker"]


class MarkdownChunker(RecursiveChunker, built_in=True):
    """Markdown-aware recursive splitting: sections first, then blocks, then separators.

    The document is parsed once, in the Rust core, by a CommonMark parser (pulldown-cmark;
    tables, task lists, footnotes and a leading ``---`` YAML or ``+++`` TOML front matter
    block included), so a ``#`` inside a code fence is not a heading. A section (a heading
    with everything up to the next heading of the same or a higher level) that does not fit
    ``chunk_size`` is cut at its sub-headings, then between top-level blocks (paragraphs,
    list items, code blocks, tables, quotes, front matter), then between nested blocks and
    table rows, then by the separators of ``RecursiveChunker``. A code block or a table row
    is never cut while it fits.

    Pieces are merged up to ``chunk_size`` as ``RecursiveChunker`` merges them (``merge``),
    with two rules for headings: the cut right after a heading's line is a chunk's last
    resort (a heading stays with the start of its section), and a chunk takes a heading
    that is not its first line only together with that heading's whole section, and only
    when the chunk began at a heading of the same or a higher level (or at the start of the
    document). Small sibling sections under one parent heading merge; a
    chunk never ends inside a section it entered, nor runs from the tail of one section into
    the next.

    Every chunk of a chunker that has a Markdown level (this one, or a ``ParentChildChunker``
    whose parents are Markdown: its children too) carries ``metadata["headings"]``: the
    plain text of the headings that enclose the chunk's start, outermost first (inline
    markup removed; ``()`` before the first heading). Spans stay exact: no text is rewritten.

    Args:
        chunk_size, overlap, min_chunk_size, separators, keep_separator, trim, unit,
            encoding, name, pages: As for ``RecursiveChunker``.

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
