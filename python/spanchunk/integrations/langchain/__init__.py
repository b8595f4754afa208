"""LangChain: a text splitter with exact offsets, a one-pass parent/child indexer, a docstore.

``SpanchunkTextSplitter`` (``splitter``) is a ``langchain_text_splitters.TextSplitter`` whose
documents carry exact spans computed by construction, never by ``str.find``: LangChain's own
``create_documents`` searches for each chunk's text, so with ``add_start_index=True`` a
repeated paragraph gets the offset of its first occurrence. Used as the ``parent_splitter``
and ``child_splitter`` of ``langchain_classic``'s ``ParentDocumentRetriever``, the children's
offsets stay relative to the source document (LangChain's splitter splits each parent again
and restarts at 0).

``index_documents`` (``indexer``) fills a vector store with the children and a docstore with
the parents of one ``HierarchicalChunker`` tree in a single pass, with spanchunk's
deterministic ids as the keys (``id_key`` in the children's metadata), so ingesting a
document again upserts. ``ChunkStore`` (``docstore``) is a ``BaseStore[str, Document]`` over
any spanchunk parent store (``ParentRegistry``, ``SqliteRegistry``):
``ParentDocumentRetriever`` and ``MultiVectorRetriever`` read their parents from it.

Every chunk becomes a ``Document`` by one field mapping (``fields``: ``chunk_to_document``
and the ``Document.metadata`` keys, ``SPAN_KEYS``). The input document's own metadata is
copied into every chunk, as LangChain's splitters do.

Example:
    >>> from langchain_core.documents import Document
    >>> from spanchunk.integrations.langchain import SpanchunkTextSplitter
    >>> splitter = SpanchunkTextSplitter(chunk_size=20)
    >>> text = "Same words here.\\n\\nSame words here."
    >>> [d.metadata["start_index"] for d in splitter.create_documents([text])]
    [0, 18]
"""

from __future__ import annotations

from spanchunk.integrations.langchain.docstore import ChunkStore
from spanchunk.integrations.langchain.docstore import ParentStoreLike as ParentStoreLike
from spanchunk.integrations.langchain.fields import SPAN_KEYS as SPAN_KEYS
from spanchunk.integrations.langchain.fields import chunk_to_document
from spanchunk.integrations.langchain.indexer import index_documents, tree_documents
from spanchunk.integrations.langchain.splitter import SpanchunkTextSplitter

__all__ = [
    "ChunkStore",
    "SpanchunkTextSplitter",
    "chunk_to_document",
    "index_documents",
    "tree_documents",
]
