"""Every level of documents as LangChain documents in one pass, and the one-pass form of
``ParentDocumentRetriever.add_documents``: children to a vector store, parents to a docstore.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spanchunk import Document as SpanDocument
from spanchunk import HierarchicalChunker
from spanchunk.chunkers.inputs import columns
from spanchunk.integrations._common import missing_extra
from spanchunk.integrations.langchain.fields import _cut, _cuts_in_core, _documents_of

try:
    from langchain_core.documents import Document
    from langchain_core.stores import BaseStore
    from langchain_core.vectorstores import VectorStore
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("langchain-core and langchain-text-splitters", "langchain", error) from None

__all__ = ["index_documents", "tree_documents"]


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
    if _cuts_in_core(chunker, "chunk_tree"):
        texts, ids, metadatas = columns([span_document for span_document, _ in prepared])
        writings = [(base, None, 0, 0, None, None) for _, base in prepared]
        return _cut(chunker, texts, ids, metadatas, writings, leaves_only=False)
    return _documents_of(
        [
            (chunker.chunk_tree(span_document), base, None, 0, 0, None, None)
            for span_document, base in prepared
        ]
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
