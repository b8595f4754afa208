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
``symbols``         ``list(Chunk.metadata["symbols"])``: source code's symbol path, when asked
``language``        ``Chunk.metadata["language"]``: source code's language, with ``symbols``
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

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from spanchunk import Chunk, Chunker, HierarchicalChunker, _core
from spanchunk import Document as SpanDocument
from spanchunk.chunkers import hooks
from spanchunk.chunkers.inputs import columns
from spanchunk.document import check_id, text_type_error
from spanchunk.integrations._common import (
    PATH_KEYS,
    cut_registered,
    metadata_copier,
    missing_extra,
    path_fields,
    path_metadata,
    recursive_chunker,
    same_model,
    within_declared_range,
)
from spanchunk.units import Unit

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
    "start_index", "end_index", "start_byte", "end_byte", "level", "index", "chunk_id",
    "document_id", "parent_id", "child_ids", "headings", "symbols", "language",
)  # fmt: skip
_SPAN_KEY_SET = frozenset(SPAN_KEYS) - {"language"}  # a document's own is kept (PATH_KEYS)
_PATH_KEYS = frozenset(PATH_KEYS)

# Speed: benches/NOTES.md, under python/spanchunk/integrations/langchain.py.
# The core makes these Documents as ``model_construct`` does (``rust/py/frameworks/``); the
# shortcut is checked once at import against the constructor's (``_same_layout``), and the
# constructor is used whenever they differ.
_FIELDS_SET = frozenset({"id", "metadata", "page_content"})
_SHAPE = _core.ModelShape(
    Document,
    {"id": None, "metadata": None, "page_content": None, "type": "Document"},
    "id",
    "page_content",
    "metadata",
    set(_FIELDS_SET),
    SPAN_KEYS,
)

# One document's chunks and how to write them: the chunks, the metadata they copy, the
# level to write instead of Chunk.level, the char and byte offsets of the text in its
# source, and the document id and parent id to write instead of the chunks' own.
_Group = tuple[Sequence[Chunk], Mapping[str, Any], int | None, int, int, str | None, str | None]


def _own_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata of a document, without the span keys a splitter wrote."""
    span_keys = _SPAN_KEY_SET
    return {key: value for key, value in metadata.items() if key not in span_keys}


def _constructed_documents(group: _Group) -> list[Document]:
    """The documents of one group through LangChain's constructor (the reference path)."""
    chunks, base, level, char_offset, byte_offset, document_id, parent_id = group
    copier = metadata_copier(base)  # LangChain deep-copies per chunk
    out: list[Document] = []
    for chunk in chunks:
        # The document's metadata, then the span keys in their order (a key already in the
        # metadata keeps its place and takes the chunk's value).
        fields = {
            **copier(base),
            "start_index": chunk.start_char + char_offset,
            "end_index": chunk.end_char + char_offset,
            "start_byte": chunk.start_byte + byte_offset,
            "end_byte": chunk.end_byte + byte_offset,
            "level": chunk.level if level is None else level,
            "index": chunk.index,
            "chunk_id": chunk.id,
            "document_id": chunk.document_id if document_id is None else document_id,
            "parent_id": chunk.parent_id if parent_id is None else parent_id,
        }
        if chunk.child_ids:
            fields["child_ids"] = list(chunk.child_ids)
        fields.update(path_fields(chunk.metadata))
        out.append(Document(page_content=chunk.text, metadata=fields, id=chunk.id))
    return out


def _built_documents(groups: Sequence[_Group], shape: Any = _SHAPE) -> list[Document]:
    """The documents of every group, in order, made in the core."""
    return _core.langchain_documents(shape, [(group[0], group[1:]) for group in groups])


def _constructed_groups(groups: Sequence[_Group]) -> list[Document]:
    """The documents of every group, in order, through the constructor."""
    out: list[Document] = []
    for group in groups:
        out.extend(_constructed_documents(group))
    return out


def _same_layout(shape: Any = _SHAPE) -> bool:
    """Whether the core's documents (made by ``shape``) are the constructor's, on probes of
    every key, shallow and deep-copied metadata, and the splitter's overrides."""
    try:
        parent = Chunk("p1", "probe text", "doc", 0, 1, 0, 10, 0, 10, None, ("c1",))
        child = Chunk("c1", "probe", "doc", 0, 0, 0, 5, 0, 5, "p1", (), {"headings": ("H",)})
        code = Chunk("c2", "code", "doc", 1, 0, 5, 9, 5, 9, None, (), {"symbols": ("S",)})
        groups: list[_Group] = [
            ([parent, child], {"key": 1, "level": "stale"}, None, 0, 0, None, None),
            ([child, child], {"tags": ["a"]}, 0, 3, 4, "source", "parent"),
            ([code], {"key": 2}, None, 0, 0, None, None),
        ]
        built, expected = _built_documents(groups, shape), _constructed_groups(groups)
        return (
            len(built) == len(expected)
            and all(
                same_model(reference, filled)
                and list(reference.metadata.items()) == list(filled.metadata.items())
                for reference, filled in zip(expected, built, strict=True)
            )
            and built[2].metadata["tags"] is not built[3].metadata["tags"]
        )
    except Exception:  # any surprise: keep the constructor
        return False


def _shortcut() -> bool:
    """Whether the core fills the Documents: for a declared langchain-core whose Documents it
    fills as the constructor builds them."""
    return within_declared_range("langchain-core", "langchain") and _same_layout()


_FAST = _shortcut()


def _cut(
    chunker: Chunker,
    texts: Sequence[str],
    ids: Sequence[str | None],
    metadatas: Sequence[Mapping[str, Any] | None],
    writings: Sequence[tuple[Mapping[str, Any], int | None, int, int, str | None, str | None]],
    *,
    leaves_only: bool,
) -> list[Document]:
    """The documents of texts cut and written in one core call (see ``hooks.cuts_in_core``); the
    chunks above the leaves go to the chunker's registry, as ``chunk_tree`` sends them."""
    documents: list[Document] = cut_registered(
        chunker,
        _core.langchain_cut,
        _SHAPE,
        hooks.levels(chunker),
        chunker.fingerprint(),
        texts,
        ids,
        metadatas,
        writings,
        leaves_only,
    )
    return documents


def _documents_of(groups: Sequence[_Group]) -> list[Document]:
    """The LangChain documents of every group, in order (see the module's field mapping).

    Each group's metadata is copied into each of its documents (shallowly when all its
    values are scalars, else deeply, as LangChain's splitters copy it).
    """
    return _built_documents(groups) if _FAST else _constructed_groups(groups)


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
        metadata = {key: value for key, value in chunk.metadata.items() if key not in _PATH_KEYS}
    return _documents_of([([chunk], metadata, None, 0, 0, None, None)])[0]


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
    prepared = [_as_span_document(document) for document in documents]
    if _FAST and hooks.cuts_in_core(chunker, "chunk_tree"):
        texts, ids, metadatas = columns([span_document for span_document, _ in prepared])
        writings = [(base, None, 0, 0, None, None) for _, base in prepared]
        return _cut(chunker, texts, ids, metadatas, writings, leaves_only=False)
    return _documents_of(
        [
            (chunker.chunk_tree(span_document), base, None, 0, 0, None, None)
            for span_document, base in prepared
        ]
    )


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
        language: Cut source code of this language (``"python"``, ``"rust"``, ...) at its
            definitions and add ``symbols`` and ``language`` to every chunk.
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
        language: str | None = None,
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
                chunk_size, chunk_overlap, unit, encoding, markdown, language=language
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
        if _FAST and hooks.cuts_in_core(chunker, "chunk"):
            return _cut(chunker, texts, span_ids, [None] * len(texts), writings, leaves_only=True)
        if type(chunker).chunk is Chunker.chunk:
            chunked = hooks.chunk_texts(chunker, texts, span_ids)
        else:  # a chunker with its own ``chunk``: one call per text
            chunked = [
                chunker.chunk(SpanDocument(text, id=id))
                for text, id in zip(texts, span_ids, strict=True)
            ]
        return _documents_of(
            [(chunks, *writing) for chunks, writing in zip(chunked, writings, strict=True)]
        )


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
    child_ids = [child.id for child in children]
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
        store: The spanchunk store (a path is refused: open the file first with
            ``SqliteRegistry.open(path)``).

    Raises:
        TypeError: ``store`` is a path, or has no ``get`` and ``add`` methods.

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
        if isinstance(store, (str, bytes, os.PathLike)):
            raise TypeError(
                f"ChunkStore takes a spanchunk store, not a path ({store!r}): open the file "
                "first, ChunkStore(SqliteRegistry.open(path)) for an existing store (from "
                "spanchunk import SqliteRegistry), or ChunkStore(SqliteRegistry(path)) to "
                "create one"
            )
        lacking = [name for name in ("get", "add") if not callable(getattr(store, name, None))]
        if lacking:
            raise TypeError(
                f"ChunkStore takes a spanchunk store with get() and add() (a ParentRegistry, "
                f"a SqliteRegistry, a chunker's .parents); {type(store).__name__} has no "
                f"{' and no '.join(lacking)}(): pass e.g. ChunkStore(ParentRegistry()) or "
                "ChunkStore(SqliteRegistry.open(path))"
            )
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
            **path_metadata(metadata),
        },
    )
