"""``SpanchunkTextSplitter``: a LangChain ``TextSplitter`` whose documents carry exact spans
and deterministic ids, for ``ParentDocumentRetriever``'s parent and child splitters alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spanchunk import Chunker
from spanchunk import Document as SpanDocument
from spanchunk.chunkers import hooks
from spanchunk.document import check_id, text_type_error
from spanchunk.integrations._common import missing_extra, recursive_chunker
from spanchunk.integrations.langchain.fields import (
    _SPAN_KEY_SET,
    _cut,
    _cuts_in_core,
    _documents_of,
    _own_metadata,
)
from spanchunk.units import Unit

try:
    from langchain_core.documents import Document
    from langchain_text_splitters import TextSplitter
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("langchain-core and langchain-text-splitters", "langchain", error) from None

__all__ = ["SpanchunkTextSplitter"]


class SpanchunkTextSplitter(TextSplitter):
    """A LangChain ``TextSplitter`` whose chunks carry exact spans and deterministic ids.

    Chunks are cut by spanchunk's ``RecursiveChunker`` (or ``MarkdownChunker``,
    ``HtmlChunker``, ``CodeChunker``, or any ``Chunker`` you pass) and never searched for:
    ``start_index`` is exact even for repeated text. ``split_documents`` recognises a
    document this splitter family produced (it has ``chunk_id``, ``document_id``,
    ``start_index`` and ``start_byte`` in its metadata): its pieces get offsets in the
    *source* document, its id as ``parent_id`` and its ``document_id``, which is what
    ``ParentDocumentRetriever`` needs when it splits each parent again with the child
    splitter; a table header's span moves with them, and the pieces' pages count from its
    ``page_first``.

    Args:
        chunk_size: The largest chunk, in ``unit``.
        chunk_overlap: Overlap between consecutive chunks, at most, at a separator
            boundary (0: none). LangChain's default of 200 is not taken: spanchunk's default
            is no overlap.
        unit: ``"char"``, ``"byte"`` or ``"token"`` (with ``encoding``).
        encoding: A tiktoken encoding for token units (``"cl100k_base"``, ``"o200k_base"``).
        markdown: Cut at Markdown structure and add ``headings`` to every chunk.
        html: Cut each text as an HTML page (``HtmlChunker``): the chunks are its readable
            text, their offsets index that text, and every chunk gets ``headings``,
            ``source_start_byte`` and ``source_end_byte`` (its byte range in the page's
            UTF-8 source).
        language: Cut source code of this language (``"python"``, ``"rust"``, ...) at its
            definitions and add ``symbols`` and ``language`` to every chunk.
        chunker: A spanchunk ``Chunker`` to use instead (the size settings are then only
            reported to LangChain).
        level: The ``level`` written into the metadata: 0 for a child splitter, 1 for a
            parent splitter.
        **kwargs: Passed to ``TextSplitter`` (``strip_whitespace`` and ``keep_separator``
            are ignored: spanchunk trims chunk edges and keeps separators at chunk ends).

    Raises:
        ValueError: Two of ``markdown``, ``html`` and ``language`` are given.

    Example:
        >>> splitter = SpanchunkTextSplitter(chunk_size=400)
        >>> docs = splitter.create_documents(["Some text. " * 100], [{"source": "a.txt"}])
        >>> docs[1].metadata["start_index"], docs[1].metadata["source"]
        (396, 'a.txt')
    """

    def __init__(
        self,
        chunk_size: int = 1000,
        chunk_overlap: int = 0,
        *,
        unit: Unit = "char",
        encoding: str | None = None,
        markdown: bool = False,
        language: str | None = None,
        html: bool = False,
        chunker: Chunker | None = None,
        level: int = 0,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("add_start_index", True)
        super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap, **kwargs)
        self._chunker = (
            chunker
            if chunker is not None
            else recursive_chunker(
                chunk_size, chunk_overlap, unit, encoding, markdown, language=language, html=html
            )
        )
        self._level = level

    @property
    def chunker(self) -> Chunker:
        """The spanchunk chunker that cuts the text."""
        return self._chunker

    def split_text(self, text: str) -> list[str]:
        """The chunk texts, in reading order (no offsets: use ``create_documents``)."""
        return [chunk.text for chunk in self._chunker.chunk(text)]

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """One ``Document`` per chunk of every text, with exact spans in its metadata.

        Args:
            texts: The texts to split.
            metadatas: One metadata dict per text (copied into each of its chunks). A dict
                with the span keys of a chunk of this splitter family marks its text as a
                piece of a larger document: see the class docstring.

        Returns:
            The chunks of every text, text by text, in reading order.
        """
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(
                f"got {len(texts)} texts and {len(metadatas)} metadatas: pass one metadata "
                "dict per text, or None"
            )
        return self._documents(texts, metadatas, [None] * len(texts))

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        """Split LangChain documents; a document's ``id`` becomes its spanchunk document id.

        Returns:
            The chunks of every document, document by document, in reading order.
        """
        texts: list[str] = []
        metadatas: list[dict[Any, Any]] = []
        ids: list[str | None] = []
        for document in documents:
            texts.append(document.page_content)
            metadatas.append(document.metadata)
            ids.append(document.id)
        return self._documents(texts, metadatas, ids)

    def _documents(
        self,
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]] | None,
        ids: Sequence[str | None],
    ) -> list[Document]:
        chunker = self._chunker
        level = self._level
        # Every text first, then one call that chunks the whole batch (one core call when
        # the chunker is built in: a parent splitter's output is many small texts), with no
        # spanchunk Document per text: a parent split again costs a few dict look-ups here.
        span_ids: list[str | None] = []
        pieces: list[tuple[Mapping[str, Any], int, int, str | None, str | None]] = []
        span_keys = _SPAN_KEY_SET
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise text_type_error(text)
            metadata: Mapping[str, Any] = {} if metadatas is None else metadatas[position]
            source_id = metadata.get("document_id")
            if (
                source_id is not None
                and "chunk_id" in metadata
                and "start_index" in metadata
                and "start_byte" in metadata
            ):
                # A piece of a larger document: offsets continue in the source, and the
                # piece's id (unique per span) seeds its children's ids.
                parent_id = metadata["chunk_id"]
                span_ids.append(check_id(parent_id))
                pieces.append(
                    (
                        _own_metadata(metadata),
                        metadata["start_index"],
                        metadata["start_byte"],
                        source_id,
                        parent_id,
                    )
                )
            else:
                given = ids[position]
                span_ids.append(None if given is None else check_id(given))
                stale = not span_keys.isdisjoint(metadata)
                pieces.append((_own_metadata(metadata) if stale else metadata, 0, 0, None, None))
        writings = [
            (base, level, char_offset, byte_offset, source_id, parent_id)
            for base, char_offset, byte_offset, source_id, parent_id in pieces
        ]
        if _cuts_in_core(chunker, "chunk"):
            return _cut(chunker, texts, span_ids, [None] * len(texts), writings, leaves_only=True)
        if not hooks.overrides(chunker, "chunk"):
            chunked = hooks.chunk_texts(chunker, texts, span_ids)
        else:  # a chunker with its own ``chunk``: one call per text
            chunked = [
                chunker.chunk(SpanDocument(text, id=id))
                for text, id in zip(texts, span_ids, strict=True)
            ]
        return _documents_of(
            [(chunks, *writing) for chunks, writing in zip(chunked, writings, strict=True)]
        )
