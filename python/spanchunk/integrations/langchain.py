"""LangChain: a text splitter with exact offsets, a one-pass parent/child indexer, a docstore.

``SpanchunkTextSplitter`` is a ``langchain_text_splitters.TextSplitter`` whose documents carry
exact spans computed by construction, never by ``str.find``: LangChain's own
``create_documents`` searches for each chunk's text, so with ``add_start_index=True`` a
repeated paragraph gets the offset of its first occurrence. Used as the ``parent_splitter``
and ``child_splitter`` of ``langchain_classic``'s ``ParentDocumentRetriever``, the children's
offsets stay relative to the source document (LangChain's splitter splits each parent again
and restarts at 0).

``index_documents`` fills a vector store with the children and a docstore with the parents
of one ``HierarchicalChunker`` tree in a single pass, with spanchunk's deterministic ids as
the keys (``id_key`` in the children's metadata), so ingesting a document again upserts.
``ChunkStore`` is a ``BaseStore[str, Document]`` over any spanchunk parent store
(``ParentRegistry``, ``SqliteRegistry``): ``ParentDocumentRetriever`` and
``MultiVectorRetriever`` read their parents from it.

Field mapping (``Document.metadata`` keys; ``Document.id`` is the chunk id):

==================  ======================================================================
``start_index``     ``Chunk.start_char``: char offset in the source document (LangChain's
                    key, as ``add_start_index`` sets it)
``end_index``       ``Chunk.end_char``
``start_byte``      ``Chunk.start_byte`` (UTF-8)
``end_byte``        ``Chunk.end_byte``
``level``           ``Chunk.level``: 0 for the leaves, 1 for their parents, ...
``index``           ``Chunk.index``: position within its document and level
``chunk_id``        ``Chunk.id`` (also ``Document.id``)
``document_id``     ``Chunk.document_id``
``parent_id``       ``Chunk.parent_id`` (None at the top)
``child_ids``       ``list(Chunk.child_ids)`` (trees only: ``index_documents``)
``headings``        ``list(Chunk.metadata["headings"])``: Markdown heading path, when asked
==================  ======================================================================

The input document's own metadata is copied into every chunk, as LangChain's splitters do.

Example:
    >>> from langchain_core.documents import Document
    >>> from spanchunk.integrations.langchain import SpanchunkTextSplitter
    >>> splitter = SpanchunkTextSplitter(chunk_size=20)
    >>> text = "Same words here.\\n\\nSame words here."
    >>> [d.metadata["start_index"] for d in splitter.create_documents([text])]
    [0, 18]
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from spanchunk import Chunk, Chunker, HierarchicalChunker
from spanchunk import Document as SpanDocument
from spanchunk.integrations._common import Unit, missing_extra, recursive_chunker, same_model

try:
    from langchain_core.documents import Document
    from langchain_core.stores import BaseStore
    from langchain_core.vectorstores import VectorStore
    from langchain_text_splitters import TextSplitter
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("langchain-core and langchain-text-splitters", "langchain", error) from None

__all__ = [
    "ChunkStore",
    "SpanchunkTextSplitter",
    "chunk_to_document",
    "index_documents",
    "tree_documents",
]

# Keys this module writes into metadata; a chunk split again (a parent given to the child
# splitter) drops its own before its children get theirs.
SPAN_KEYS = (
    "start_index",
    "end_index",
    "start_byte",
    "end_byte",
    "level",
    "index",
    "chunk_id",
    "document_id",
    "parent_id",
    "child_ids",
    "headings",
)
_SCALARS = (str, int, float, bool, type(None))

# Performance notes
# -----------------
# A LangChain ``Document`` built through its constructor costs ~3-4 us of pydantic
# validation (the fields are already of the right types), more than everything else this
# module does per chunk, and ``model_construct`` is no faster. ``_make_document`` fills the
# instance the way pydantic's own ``model_construct`` does (``__dict__`` in field order, the
# set fields, no extra, no private) through the slots' own descriptors (no attribute lookup
# by name), about 0.8 us; the shortcut is checked once at import against a document built by
# the constructor, and the constructor is used whenever they differ (a future pydantic or
# langchain-core with another layout). Each chunk's metadata is a copy of one template per
# call (the document's metadata, then the span keys in their order) with the span values
# stored into it: about 0.3 us where ``{**base, ...}`` took about 0.7-1.0.
_new = object.__new__
_FIELDS_SET = frozenset({"id", "metadata", "page_content"})


def _slot_setter(name: str) -> Any:
    """The ``__set__`` of the descriptor ``Document`` instances keep ``name`` in."""
    for klass in Document.__mro__:
        if name in vars(klass):
            return vars(klass)[name].__set__
    raise AttributeError(name)  # pragma: no cover - caught by _same_layout


def _constructed(text: str, metadata: dict[str, Any], id: str) -> Document:
    return Document(page_content=text, metadata=metadata, id=id)


try:
    _set_dict = _slot_setter("__dict__")
    _set_fields = _slot_setter("__pydantic_fields_set__")
    _set_extra = _slot_setter("__pydantic_extra__")
    _set_private = _slot_setter("__pydantic_private__")
except AttributeError:  # pragma: no cover - another pydantic: keep the constructor
    _set_dict = _set_fields = _set_extra = _set_private = None


def _filled(text: str, metadata: dict[str, Any], id: str) -> Document:
    document = _new(Document)
    _set_dict(document, {"id": id, "metadata": metadata, "page_content": text, "type": "Document"})
    _set_fields(document, set(_FIELDS_SET))
    _set_extra(document, None)
    _set_private(document, None)
    return document


def _same_layout() -> bool:
    try:
        return same_model(
            _constructed("probe", {"key": 1}, "id"), _filled("probe", {"key": 1}, "id")
        )
    except Exception:  # any surprise: keep the constructor
        return False


_make_document = _filled if _same_layout() else _constructed


def _copier(metadata: Mapping[str, Any]) -> Any:
    """How to copy one document's metadata for each of its chunks.

    LangChain deep-copies per chunk so that no chunk shares a mutable value with another;
    when every value is a scalar a shallow copy is the same thing, and much cheaper.
    """
    if all(isinstance(value, _SCALARS) for value in metadata.values()):
        return dict
    return copy.deepcopy


def _own_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata of a document, without the span keys a splitter wrote."""
    return {key: value for key, value in metadata.items() if key not in SPAN_KEYS}


def _chunk_documents(
    chunks: Iterable[Chunk],
    base: Mapping[str, Any],
    *,
    level: int | None = None,
    char_offset: int = 0,
    byte_offset: int = 0,
    document_id: str | None = None,
    parent_id: str | None = None,
) -> list[Document]:
    """The LangChain documents of some chunks of one document, every value from the chunk.

    ``base`` is copied into each (shallowly when all its values are scalars, else deeply);
    the offsets, ``document_id`` and ``parent_id`` serve a piece of a larger document (a
    parent split again); ``level`` replaces ``Chunk.level`` (a flat splitter's role).
    """
    deep = _copier(base) is not dict
    make = _make_document
    fill = make is _filled
    new, set_dict, set_fields, set_extra, set_private = (
        _new,
        _set_dict,
        _set_fields,
        _set_extra,
        _set_private,
    )
    fields_set = set(_FIELDS_SET)
    # The template: the document's metadata, then the span keys in the order every chunk
    # gets them (a key already in the metadata keeps its place and takes the chunk's value).
    template = {
        **base,
        "start_index": 0,
        "end_index": 0,
        "start_byte": 0,
        "end_byte": 0,
        "level": 0,
        "index": 0,
        "chunk_id": "",
        "document_id": "",
        "parent_id": None,
    }
    out: list[Document] = []
    append = out.append
    for chunk in chunks:
        chunk_id = chunk.id
        fields = template.copy()
        if deep:  # the metadata's own values, copied afresh for every chunk
            fields.update(copy.deepcopy(base))
        fields["start_index"] = chunk.start_char + char_offset
        fields["end_index"] = chunk.end_char + char_offset
        fields["start_byte"] = chunk.start_byte + byte_offset
        fields["end_byte"] = chunk.end_byte + byte_offset
        fields["level"] = chunk.level if level is None else level
        fields["index"] = chunk.index
        fields["chunk_id"] = chunk_id
        fields["document_id"] = chunk.document_id if document_id is None else document_id
        fields["parent_id"] = chunk.parent_id if parent_id is None else parent_id
        child_ids = chunk.child_ids
        if child_ids:
            fields["child_ids"] = list(child_ids)
        chunk_metadata = chunk.metadata
        if chunk_metadata:
            headings = chunk_metadata.get("headings")
            if headings is not None:
                fields["headings"] = list(headings)
        if fill:  # _filled, inlined: a call per chunk is a tenth of the loop
            document = new(Document)
            set_dict(
                document,
                {
                    "id": chunk_id,
                    "metadata": fields,
                    "page_content": chunk.text,
                    "type": "Document",
                },
            )
            set_fields(document, fields_set.copy())
            set_extra(document, None)
            set_private(document, None)
            append(document)
        else:
            append(make(chunk.text, fields, chunk_id))
    return out


def chunk_to_document(chunk: Chunk, metadata: Mapping[str, Any] | None = None) -> Document:
    """The LangChain ``Document`` of one chunk (see the module's field mapping).

    Args:
        chunk: A spanchunk chunk.
        metadata: Metadata to copy into the document (the source document's); None: the
            chunk's own metadata (its document's, plus ``source``).

    Returns:
        A ``langchain_core.documents.Document`` whose ``id`` is the chunk id.
    """
    if metadata is None:
        metadata = {key: value for key, value in chunk.metadata.items() if key != "headings"}
    return _chunk_documents([chunk], metadata)[0]


def _as_span_document(
    document: Document | SpanDocument | str,
) -> tuple[SpanDocument, Mapping[str, Any]]:
    """A spanchunk document and the metadata its chunks get, from any accepted input."""
    if isinstance(document, Document):
        return SpanDocument(document.page_content, id=document.id), document.metadata
    span_document = document if isinstance(document, SpanDocument) else SpanDocument(document)
    base = dict(span_document.metadata)
    if span_document.source is not None:
        base["source"] = span_document.source
    return span_document, base


def tree_documents(
    documents: Iterable[Document | SpanDocument | str], chunker: HierarchicalChunker
) -> list[Document]:
    """Every level of every document as LangChain documents, in one pass per document.

    Args:
        documents: LangChain documents (``id`` and ``metadata`` kept), spanchunk
            documents or strs.
        chunker: A ``ParentChildChunker`` or ``HierarchicalChunker`` (its registry records
            the parents, as ``chunk_tree`` does).

    Returns:
        For each document, its chunks level by level from the top, each level in reading
        order; parents carry ``child_ids``, children ``parent_id``.
    """
    out: list[Document] = []
    for document in documents:
        span_document, base = _as_span_document(document)
        tree = chunker.chunk_tree(span_document)
        out.extend(_chunk_documents(tree, base))
    return out


class SpanchunkTextSplitter(TextSplitter):
    """A LangChain ``TextSplitter`` whose chunks carry exact spans and deterministic ids.

    Chunks are cut by spanchunk's ``RecursiveChunker`` (or ``MarkdownChunker``, or any
    ``Chunker`` you pass) and never searched for: ``start_index`` is exact even for repeated
    text. ``split_documents`` recognises a document this splitter family produced (it has
    ``chunk_id``, ``document_id``, ``start_index`` and ``start_byte`` in its metadata): its
    pieces get offsets in the *source* document, its id as ``parent_id`` and its
    ``document_id``, which is what ``ParentDocumentRetriever`` needs when it splits each
    parent again with the child splitter.

    Args:
        chunk_size: The largest chunk, in ``unit``.
        chunk_overlap: Overlap between consecutive chunks, at most, at a separator
            boundary (0: none). LangChain's default of 200 is not taken: spanchunk's default
            is no overlap.
        unit: ``"char"``, ``"byte"`` or ``"token"`` (with ``encoding``).
        encoding: A tiktoken encoding for token units (``"cl100k_base"``, ``"o200k_base"``).
        markdown: Cut at Markdown structure and add ``headings`` to every chunk.
        chunker: A spanchunk ``Chunker`` to use instead (the size settings are then only
            reported to LangChain).
        level: The ``level`` written into the metadata: 0 for a child splitter, 1 for a
            parent splitter.
        **kwargs: Passed to ``TextSplitter`` (``strip_whitespace`` and ``keep_separator``
            are ignored: spanchunk trims chunk edges and keeps separators at chunk ends).

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
        chunker: Chunker | None = None,
        level: int = 0,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("add_start_index", True)
        super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap, **kwargs)
        self._chunker = (
            chunker
            if chunker is not None
            else recursive_chunker(chunk_size, chunk_overlap, unit, encoding, markdown)
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
        # the chunker is built in: a parent splitter's output is many small texts).
        span_documents: list[SpanDocument] = []
        pieces: list[tuple[Mapping[str, Any], int, int, str | None, str | None]] = []
        for position, text in enumerate(texts):
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
                span_documents.append(SpanDocument(text, id=parent_id))
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
                span_documents.append(SpanDocument(text, id=ids[position]))
                stale = any(key in metadata for key in SPAN_KEYS)
                pieces.append((_own_metadata(metadata) if stale else metadata, 0, 0, None, None))
        if type(chunker).chunk is Chunker.chunk:
            chunked = chunker._chunk_each(span_documents)
        else:  # a chunker with its own ``chunk``: one call per text
            chunked = [chunker.chunk(document) for document in span_documents]
        out: list[Document] = []
        for chunks, (base, char_offset, byte_offset, source_id, parent_id) in zip(
            chunked, pieces, strict=True
        ):
            out.extend(
                _chunk_documents(
                    chunks,
                    base,
                    level=level,
                    char_offset=char_offset,
                    byte_offset=byte_offset,
                    document_id=source_id,
                    parent_id=parent_id,
                )
            )
        return out


def index_documents(
    documents: Iterable[Document | SpanDocument | str],
    chunker: HierarchicalChunker,
    *,
    vectorstore: VectorStore,
    docstore: BaseStore[str, Document],
    id_key: str = "doc_id",
    **kwargs: Any,
) -> tuple[list[str], list[str]]:
    """Chunk documents once into a tree; children to a vector store, parents to a docstore.

    The one-pass form of ``ParentDocumentRetriever.add_documents``: one
    ``chunker.chunk_tree`` per batch instead of a parent split and a child split per parent,
    and spanchunk's deterministic ids instead of random UUIDs, so ingesting the same
    document again replaces its chunks instead of adding copies. Each child's metadata gets
    ``id_key`` = its parent's id, which is what ``ParentDocumentRetriever`` (with the same
    ``id_key``) looks up in the docstore. With three levels or more, every level above the
    leaves goes to the docstore.

    Args:
        documents: LangChain documents (``id`` and ``metadata`` kept), spanchunk
            documents or strs.
        chunker: A ``ParentChildChunker`` or ``HierarchicalChunker``.
        vectorstore: Where the children go (``add_documents(docs, ids=...)``).
        docstore: Where the parents go (``mset``), keyed by chunk id.
        id_key: The metadata key of the parent id in the children (the retriever's).
        **kwargs: Passed to ``vectorstore.add_documents``.

    Returns:
        The children's ids and the parents' ids, in the order written.
    """
    children: list[Document] = []
    parents: list[tuple[str, Document]] = []
    for converted in tree_documents(documents, chunker):
        metadata = converted.metadata
        if metadata["level"] == 0:
            metadata[id_key] = metadata["parent_id"]
            children.append(converted)
        else:
            parents.append((metadata["chunk_id"], converted))
    child_ids = [child.id for child in children]  # type: ignore[misc]
    if children:
        vectorstore.add_documents(children, ids=child_ids, **kwargs)
    if parents:
        docstore.mset(parents)
    return child_ids, [key for key, _ in parents]  # type: ignore[return-value]


class ParentStoreLike(Protocol):
    """What ``ChunkStore`` needs of a spanchunk store: ``get`` and ``add`` of chunks."""

    def get(self, chunk_id: str, default: Any = None) -> Any: ...
    def add(self, chunks: Chunk | Iterable[Chunk]) -> None: ...


class ChunkStore(BaseStore[str, Document]):
    """A LangChain ``BaseStore[str, Document]`` over a spanchunk parent store.

    Any store with ``get(id)`` and ``add(chunks)`` works: ``ParentRegistry`` (in memory),
    ``SqliteRegistry`` (a file another process can read), a chunker's ``.parents``.
    ``mget`` answers in the order asked, ``None`` for an unknown key; ``mset`` stores each
    document as a ``Chunk`` keyed by the given key (spans and ids read from the metadata
    keys of the module's field mapping, so a round trip keeps them).

    Args:
        store: The spanchunk store.

    Example:
        >>> from spanchunk import ParentChildChunker
        >>> chunker = ParentChildChunker(parent_size=200, child_size=50)
        >>> children = chunker.chunk("One sentence here. " * 40)
        >>> store = ChunkStore(chunker.parents)
        >>> found = store.mget([children[0].parent_id, "no such id"])
        >>> found[0].metadata["level"], found[1]
        (1, None)
    """

    def __init__(self, store: ParentStoreLike) -> None:
        self.store = store

    def mget(self, keys: Sequence[str]) -> list[Document | None]:
        """The documents of these chunk ids, aligned with ``keys`` (``None`` when missing)."""
        get_many = getattr(self.store, "get_many", None)
        if get_many is not None:
            found: Mapping[str, Chunk] = get_many(keys)
            chunks = [found.get(key) for key in keys]
        else:
            get = self.store.get
            chunks = [get(key) for key in keys]
        return [None if chunk is None else chunk_to_document(chunk) for chunk in chunks]

    def mset(self, key_value_pairs: Sequence[tuple[str, Document]]) -> None:
        """Store documents as chunks, each under its key (an existing key is replaced)."""
        self.store.add([_document_to_chunk(key, document) for key, document in key_value_pairs])

    def mdelete(self, keys: Sequence[str]) -> None:
        """Delete these ids, when the store can delete single chunks (``delete``).

        Raises:
            NotImplementedError: The store deletes whole documents only: use
                ``delete_document``.
        """
        delete = getattr(self.store, "delete", None)
        if delete is None:
            raise NotImplementedError(
                f"{type(self.store).__name__} deletes whole documents, not single chunks: "
                "call ChunkStore.delete_document(document_id) (re-chunking a document "
                "replaces its chunks anyway)"
            )
        delete(list(keys))

    def delete_document(self, document_id: str) -> int:
        """Remove every chunk of one document; returns how many went."""
        return int(self.store.delete_document(document_id))  # type: ignore[attr-defined]

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """Every stored chunk id (those starting with ``prefix``, when given)."""
        for chunk in self.store:  # type: ignore[attr-defined]
            if prefix is None or chunk.id.startswith(prefix):
                yield chunk.id


def _document_to_chunk(key: str, document: Document) -> Chunk:
    """A ``Chunk`` from a LangChain document, spans from its metadata where present."""
    metadata = document.metadata
    text = document.page_content
    start_char = metadata.get("start_index", 0)
    start_byte = metadata.get("start_byte", 0)
    return Chunk(
        id=key,
        text=text,
        document_id=metadata.get("document_id") or key,
        index=metadata.get("index", 0),
        level=metadata.get("level", 1),
        start_char=start_char,
        end_char=metadata.get("end_index", start_char + len(text)),
        start_byte=start_byte,
        end_byte=metadata.get("end_byte", start_byte + len(text.encode("utf-8"))),
        parent_id=metadata.get("parent_id"),
        child_ids=tuple(metadata.get("child_ids", ())),
        metadata={
            **_own_metadata(metadata),
            **({"headings": tuple(metadata["headings"])} if "headings" in metadata else {}),
        },
    )
