"""Ready adapters that keep a framework's vector store in step with a store's change feed.

Each adapter applies ``store.changes(consumer=NAME)`` (``apply_changes``) to one framework's
index through that framework's public add and delete calls, with the chunk id as the
vector's key:

- ``LangChainVectors(vector_store, clear=None)``: any LangChain ``VectorStore``:
  ``add_documents(documents, ids=...)`` and ``delete(ids=...)``; the documents carry the
  fields below. The vector store embeds them itself, so vectors are reused only
  when it embeds through ``LangChainVectors.reusing(embedding)``.
- ``LlamaIndexVectors(vector_store, embed_model)``: a LlamaIndex ``BasePydanticVectorStore``:
  ``add(nodes)`` with the nodes' embeddings from ``embed_model.get_text_embedding_batch``,
  and ``delete_nodes(node_ids=...)``.
- ``HaystackDocuments(document_store, embedder=None)``: a Haystack ``DocumentStore``:
  ``write_documents(documents, policy=DuplicatePolicy.OVERWRITE)`` and
  ``delete_documents(ids)``, the documents embedded by ``embedder.run(documents=...)`` when
  one is given.
- ``QdrantVectors(client, collection, embed)``: a Qdrant collection (``QdrantClient(path=...)``
  runs it embedded, no server): ``upsert`` of points keyed by the number a chunk id spells,
  and ``delete`` by those; ``embed`` turns texts into vectors.

Each has ``upsert(items)``, ``delete(ids)`` and ``clear()`` (what ``apply_changes`` calls, the
last to rebuild an index whose consumer fell behind a compaction), and ``apply(store,
consumer=NAME, levels=(0,))``, which calls ``apply_changes`` with them and returns the feed.

**Reused vectors.** A renamed or copied file gives new ids with the same texts. An adapter
keeps the vectors it computed in this process by ``Upsert.text_hash`` (``VectorCache``: the
last ``limit`` texts, 10,000 by default; 10,000 vectors of 1,536 floats as Python lists take
about half a GB, so lower it for large vectors), and reuses one instead of embedding its text
again; texts repeated within one feed are embedded once. ``embedded`` counts the texts
actually embedded. A vector is taken to depend on the chunk's text only: the adapters embed
``Upsert.text`` (LlamaIndex's own indexing embeds the node's metadata with it), and a Haystack
embedder that embeds meta fields (``meta_fields_to_embed``) should not be given metadata that
differs between copies of a text.

**What is written: what stays right while the chunk keeps its id.** A chunk keeps its id (and
its vector) when an edit elsewhere moves it, so it is not in the feed then, and an index never
hears of its new place. Each adapter therefore writes only what a move cannot change: the text,
the chunk id, the document id, the level and the document's own metadata (``source``, and what
the program gave the document); never the offsets, the position in the document, the parent
id, the heading or symbol path, the pages or a table header, each of which an edit elsewhere
can change. A hit's current ones are the store's (``store.get(id)``, ``store.expand``), as
``docs/vectors.md`` says; the index then equals, field for field, one built from the store's
present state alone. A document's metadata changed with its text left alone gives no change
(ids do not hash metadata): apply ``changes(since=0)`` into a fresh index to rewrite it.

- LangChain ``Document``: ``id`` and ``metadata["chunk_id"]`` = ``Chunk.id``,
  ``page_content``, ``metadata`` = the document's metadata plus ``document_id`` and
  ``level`` (the keys ``chunk_to_document`` gives them).
- LlamaIndex ``TextNode``: ``id_`` = ``Chunk.id``, ``text``, ``metadata`` = the document's
  metadata plus ``document_id`` and ``level`` (both kept out of the embed and LLM text),
  ``SOURCE`` = the document id (the node's ``ref_doc_id``).
- Haystack ``Document``: ``id`` = ``Chunk.id``, ``content``, ``meta`` = the document's
  metadata plus ``source_id`` (the document id, the key of Haystack's splitters) and
  ``level``.
- Qdrant: the payload ``chunk_id``, ``document_id`` and ``text``.

**Emptying an index** (``clear``, for ``rebuild``): LlamaIndex's ``clear()``; Haystack's
``delete_all_documents()`` where the store has it, else ``delete_documents`` of every
document ``filter_documents()`` lists. LangChain's ``VectorStore`` can neither list nor empty
its vectors, so ``LangChainVectors.clear`` calls the ``clear`` given to the constructor (a
client's drop-collection call), empties an ``InMemoryVectorStore`` (its ``store`` dict lists
the ids), and otherwise raises ``TypeError``.

Importing this module imports no framework: each adapter imports its framework when it is
first used.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from spanchunk import Chunk, _core
from spanchunk.integrations._common import CARRIED_KEYS, metadata_copier
from spanchunk.stores.changes import ChangeFeed, ChangeRecords, Upsert, apply_changes

__all__ = [
    "HaystackDocuments",
    "LangChainVectors",
    "LlamaIndexVectors",
    "QdrantVectors",
    "VectorCache",
    "qdrant_point_id",
]

#: How many vectors an adapter keeps for reuse, by default.
REUSED_VECTORS = 10_000


class VectorCache:
    """The vectors embedded in this process, by text hash (``Upsert.text_hash``), the most
    recently used ``limit`` of them, and how many texts were embedded (``embedded``)."""

    def __init__(self, limit: int = REUSED_VECTORS) -> None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise ValueError(f"limit is a number of vectors (an int >= 0), not {limit!r}")
        self.limit = limit
        self.embedded = 0
        self._vectors: OrderedDict[str, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, text_hash: object) -> bool:
        return text_hash in self._vectors

    def vectors(
        self,
        hashes: Sequence[str],
        inputs: Sequence[Any],
        embed: Callable[[list[Any]], Sequence[Any]],
    ) -> list[Any]:
        """The vector of each input (a text, or what ``embed`` takes), by its text hash:
        the kept one, else embedded by one call of ``embed`` with the first input of each
        hash not kept (none: no call).

        Raises:
            ValueError: ``embed`` returned a number of vectors other than the number of
                inputs it was given, or a None.
        """
        if len(hashes) != len(inputs):
            raise ValueError(f"{len(hashes)} hashes for {len(inputs)} inputs")
        kept = self._vectors
        missing: dict[str, Any] = {}
        for text_hash, item in zip(hashes, inputs, strict=True):
            if text_hash not in kept and text_hash not in missing:
                missing[text_hash] = item
        fresh: dict[str, Any] = {}
        if missing:
            computed = list(embed(list(missing.values())))
            if len(computed) != len(missing) or any(vector is None for vector in computed):
                raise ValueError(
                    f"the embedder returned {len(computed)} vectors for {len(missing)} texts"
                    + (" (some None)" if any(v is None for v in computed) else "")
                )
            fresh = dict(zip(missing, computed, strict=True))
            self.embedded += len(fresh)
        out: list[Any] = []
        for text_hash in hashes:
            vector = fresh.get(text_hash)
            if vector is None:
                vector = kept[text_hash]
                kept.move_to_end(text_hash)
            out.append(vector)
        for text_hash, vector in fresh.items():
            kept[text_hash] = vector
        while len(kept) > self.limit:
            kept.popitem(last=False)
        return out


class VectorAdapter:
    """What every adapter has: ``upsert``, ``delete`` and ``clear``, which ``apply`` gives
    to ``apply_changes``, and the count of texts embedded."""

    def upsert(self, items: list[Upsert]) -> None:
        """Add or replace the vectors of ``items``, keyed by chunk id."""
        raise NotImplementedError

    def delete(self, ids: list[str]) -> None:
        """Remove the vectors of ``ids`` (an id not there: nothing)."""
        raise NotImplementedError

    def clear(self) -> None:
        """Empty the index (``apply_changes``'s ``rebuild``)."""
        raise NotImplementedError

    @property
    def embedded(self) -> int:
        """How many texts were embedded (a vector reused is not counted)."""
        raise NotImplementedError

    def apply(
        self,
        store: ChangeRecords,
        *,
        consumer: str,
        levels: Iterable[int] | None = (0,),
    ) -> ChangeFeed:
        """Bring the index up to date with ``store``'s changes after ``consumer``'s position
        (``apply_changes``, with ``clear`` to rebuild an index that fell behind a
        compaction), the leaves by default. Returns the feed applied."""
        return apply_changes(
            store, self.upsert, self.delete, consumer=consumer, levels=levels, rebuild=self.clear
        )


class EmbeddingAdapter(VectorAdapter):
    """An adapter that embeds the texts itself, keeping the vectors for reuse (``cache``)."""

    def __init__(self, limit: int) -> None:
        self.cache = VectorCache(limit)

    @property
    def embedded(self) -> int:
        """How many texts were embedded (a vector reused is not counted)."""
        return self.cache.embedded


@functools.cache
def _reusing_embeddings_type() -> type[Any]:
    """A LangChain ``Embeddings`` that keeps the vectors it computed (``VectorCache``)."""
    from langchain_core.embeddings import Embeddings  # noqa: PLC0415

    class ReusingEmbeddings(Embeddings):
        """``embedding``, reusing the vector of a text it embedded before (by text hash);
        queries are embedded by ``embedding`` every time."""

        def __init__(self, embedding: Any, cache: VectorCache) -> None:
            self.embedding = embedding
            self.cache = cache

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            text_id = _core.text_id
            return self.cache.vectors(
                [text_id(text) for text in texts], texts, self.embedding.embed_documents
            )

        def embed_query(self, text: str) -> list[float]:
            vector: list[float] = self.embedding.embed_query(text)
            return vector

        async def aembed_query(self, text: str) -> list[float]:
            vector: list[float] = await self.embedding.aembed_query(text)
            return vector

    return ReusingEmbeddings


class LangChainVectors(VectorAdapter):
    """A LangChain ``VectorStore`` kept in step with a store's change feed.

    The vector store embeds the documents it is given (``add_documents``), so the vectors of
    texts embedded before are reused only when its embedding is
    ``LangChainVectors.reusing(embedding)``: then ``embedded`` counts the texts that wrapper
    embedded; otherwise it counts every text sent, each embedded by the store.

    Args:
        vector_store: A ``langchain_core.vectorstores.VectorStore`` that takes ids
            (``add_documents(documents, ids=...)``, ``delete(ids=...)``).
        clear: How to empty the index (for a rebuild after a compaction): LangChain's
            interface has none. Not needed for an ``InMemoryVectorStore``.
    """

    def __init__(self, vector_store: Any, *, clear: Callable[[], object] | None = None) -> None:
        self.vector_store = vector_store
        self.sent = 0
        self._empty = clear

    @staticmethod
    def reusing(embedding: Any, *, limit: int = REUSED_VECTORS) -> Any:
        """``embedding`` (a LangChain ``Embeddings``) wrapped to reuse the vector of a text it
        embedded before, the last ``limit`` of them: give it to the vector store."""
        return _reusing_embeddings_type()(embedding, VectorCache(limit))

    @property
    def cache(self) -> VectorCache | None:
        """The vectors kept by the vector store's embedding, when it is ``reusing``'s."""
        kept = getattr(getattr(self.vector_store, "embeddings", None), "cache", None)
        return kept if isinstance(kept, VectorCache) else None

    @property
    def embedded(self) -> int:
        """How many texts were embedded: by ``reusing``'s embedding when the store has it,
        else every text sent (the store embeds each)."""
        cache = self.cache
        return self.sent if cache is None else cache.embedded

    def upsert(self, items: list[Upsert]) -> None:
        """``add_documents`` of the chunks' documents (the module's docstring says which
        fields), the chunk ids as ids."""
        if not items:
            return
        from langchain_core.documents import Document  # noqa: PLC0415

        documents = []
        for item in items:
            metadata = _lasting_metadata(item.chunk)
            metadata["chunk_id"] = item.id
            metadata["document_id"] = item.chunk.document_id
            metadata["level"] = item.chunk.level
            documents.append(Document(page_content=item.text, metadata=metadata, id=item.id))
        self.vector_store.add_documents(documents, ids=[item.id for item in items])
        self.sent += len(items)

    def delete(self, ids: list[str]) -> None:
        """``delete(ids=...)``.

        Raises:
            RuntimeError: the vector store said the delete failed (False).
        """
        if not ids:
            return
        if self.vector_store.delete(ids=list(ids)) is False:
            raise RuntimeError(
                f"{type(self.vector_store).__name__}.delete(ids=...) failed for {len(ids)} ids"
            )

    def clear(self) -> None:
        """Empty the index: the constructor's ``clear``, or every id of an
        ``InMemoryVectorStore``.

        Raises:
            TypeError: neither: LangChain's ``VectorStore`` can neither list nor empty its
                vectors.
        """
        if self._empty is not None:
            self._empty()
            return
        from langchain_core.vectorstores import InMemoryVectorStore  # noqa: PLC0415

        if isinstance(self.vector_store, InMemoryVectorStore):
            ids = list(self.vector_store.store)
            if ids:
                self.vector_store.delete(ids=ids)
            return
        raise TypeError(
            f"cannot empty a {type(self.vector_store).__name__}: LangChain's VectorStore "
            "interface can neither list nor remove every vector. Pass clear= to "
            "LangChainVectors (the client's call that drops or empties the collection), or "
            "empty the index yourself and apply again"
        )


def _lasting_metadata(chunk: Chunk) -> dict[str, Any]:
    """A copy of the metadata of ``chunk``'s document (``source``, what the program gave it):
    ``Chunk.metadata`` without what the chunk carries of its own (its paths, pages, table
    header, place in an HTML page), which an edit elsewhere can change while the id stays."""
    own = {key: value for key, value in chunk.metadata.items() if key not in CARRIED_KEYS}
    copied: dict[str, Any] = metadata_copier(own)(own)  # no two share a mutable value
    return copied


#: The keys a LlamaIndex node gets beside its document's metadata, kept out of the text
#: its embedding and an LLM see.
_LLAMAINDEX_KEYS = ("document_id", "level")


def _llamaindex_leaf(chunk: Chunk, embedding: Any) -> Any:
    """The LlamaIndex ``TextNode`` of one chunk, with its embedding (see the module's
    docstring for the fields)."""
    from llama_index.core.schema import (  # noqa: PLC0415
        NodeRelationship,
        RelatedNodeInfo,
        TextNode,
    )

    metadata = _lasting_metadata(chunk)
    metadata["document_id"] = chunk.document_id
    metadata["level"] = chunk.level
    return TextNode(
        id_=chunk.id,
        text=chunk.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(_LLAMAINDEX_KEYS),
        excluded_llm_metadata_keys=list(_LLAMAINDEX_KEYS),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=chunk.document_id)},
        embedding=list(embedding),
    )


class LlamaIndexVectors(EmbeddingAdapter):
    """A LlamaIndex vector store kept in step with a store's change feed.

    Chunks are deleted node by node (``delete_nodes(node_ids=...)``): a vector store without
    it is refused rather than given ``delete(ref_doc_id)``, which deletes every node of a
    document, those the store still holds included.

    Args:
        vector_store: A ``BasePydanticVectorStore`` (``SimpleVectorStore``, ...).
        embed_model: A LlamaIndex ``BaseEmbedding``: ``get_text_embedding_batch`` embeds the
            chunks' texts.
        limit: How many vectors to keep for reuse (``VectorCache``).
    """

    def __init__(self, vector_store: Any, embed_model: Any, *, limit: int = REUSED_VECTORS) -> None:
        self.vector_store = vector_store
        self.embed_model = embed_model
        super().__init__(limit)

    def upsert(self, items: list[Upsert]) -> None:
        """``add`` of the chunks' nodes, each with its embedding (reused or computed)."""
        if not items:
            return
        vectors = self.cache.vectors(
            [item.text_hash for item in items],
            [item.text for item in items],
            self.embed_model.get_text_embedding_batch,
        )
        nodes = [
            _llamaindex_leaf(item.chunk, vector)
            for item, vector in zip(items, vectors, strict=True)
        ]
        self.vector_store.add(nodes)

    def delete(self, ids: list[str]) -> None:
        """``delete_nodes(node_ids=...)``.

        Raises:
            TypeError: the vector store has no node-level delete.
        """
        if not ids:
            return
        try:
            self.vector_store.delete_nodes(node_ids=list(ids))
        except NotImplementedError:
            raise TypeError(
                f"{type(self.vector_store).__name__} has no delete_nodes, so single chunks "
                "cannot be removed from it (its delete(ref_doc_id) removes a whole document's "
                "nodes, those the store still holds too)"
            ) from None

    def clear(self) -> None:
        """The vector store's ``clear()``.

        Raises:
            TypeError: the vector store has no ``clear``.
        """
        try:
            self.vector_store.clear()
        except NotImplementedError:
            raise TypeError(
                f"{type(self.vector_store).__name__} has no clear(): empty it yourself and "
                "apply again"
            ) from None


def _haystack_leaf(chunk: Chunk) -> Any:
    """The Haystack ``Document`` of one chunk, without embedding (see the module's docstring
    for the fields)."""
    from haystack import Document  # noqa: PLC0415

    meta = _lasting_metadata(chunk)
    meta["source_id"] = chunk.document_id
    meta["level"] = chunk.level
    return Document(id=chunk.id, content=chunk.text, meta=meta)


class HaystackDocuments(EmbeddingAdapter):
    """A Haystack document store kept in step with a store's change feed.

    Args:
        document_store: A Haystack ``DocumentStore`` (``InMemoryDocumentStore``, ...).
        embedder: A document embedder component (``run(documents=...)`` returns
            ``{"documents": [...]}`` with their ``embedding`` set), or None to write the
            documents without embeddings (a BM25 index).
        limit: How many vectors to keep for reuse (``VectorCache``).
    """

    def __init__(
        self, document_store: Any, embedder: Any = None, *, limit: int = REUSED_VECTORS
    ) -> None:
        self.document_store = document_store
        self.embedder = embedder
        super().__init__(limit)

    def _embed(self, documents: list[Any]) -> list[Any]:
        done = self.embedder.run(documents=documents)["documents"]
        return [document.embedding for document in done]

    def upsert(self, items: list[Upsert]) -> None:
        """``write_documents`` with ``DuplicatePolicy.OVERWRITE``, embedded first when there
        is an embedder (reused or computed)."""
        if not items:
            return
        from haystack.document_stores.types import DuplicatePolicy  # noqa: PLC0415

        documents = [_haystack_leaf(item.chunk) for item in items]
        if self.embedder is not None:
            vectors = self.cache.vectors([item.text_hash for item in items], documents, self._embed)
            documents = [
                replace(document, embedding=vector)
                for document, vector in zip(documents, vectors, strict=True)
            ]
        self.document_store.write_documents(documents, policy=DuplicatePolicy.OVERWRITE)

    def delete(self, ids: list[str]) -> None:
        """``delete_documents(ids)``."""
        if ids:
            self.document_store.delete_documents(list(ids))

    def clear(self) -> None:
        """``delete_all_documents()`` where the store has it, else ``delete_documents`` of
        every document ``filter_documents()`` lists."""
        delete_all = getattr(self.document_store, "delete_all_documents", None)
        if callable(delete_all):
            delete_all()
            return
        ids = [document.id for document in self.document_store.filter_documents()]
        if ids:
            self.document_store.delete_documents(ids)


def qdrant_point_id(chunk_id: str) -> int:
    """A chunk id as a Qdrant point id: the unsigned 64-bit number its 16 hex digits spell
    (Qdrant takes unsigned ints or UUIDs; a hand-made id that is not 16 hex digits is
    refused)."""
    if len(chunk_id) != 16:
        raise ValueError(
            f"chunk id {chunk_id!r} is not 16 hex digits: Qdrant points are keyed by the "
            "number a spanchunk id spells"
        )
    return int(chunk_id, 16)


class QdrantVectors(EmbeddingAdapter):
    """A Qdrant collection kept in step with a store's change feed: an embedded vector
    database for local work (``QdrantClient(path=FOLDER)``, no server) or a Qdrant server.

    Each leaf is a point whose id is the number its chunk id spells (``qdrant_point_id``),
    with the payload ``{"chunk_id", "document_id", "text"}``: the store stays the source of
    offsets and parents, so a chunk an edit elsewhere moved needs no write here.

    Args:
        client: A ``qdrant_client.QdrantClient``.
        collection: The collection's name; made on the first upsert, cosine distance, with
            the size of the first vector.
        embed: Texts to vectors (a list of lists of floats, one per text).
        limit: How many vectors to keep for reuse (``VectorCache``).
    """

    def __init__(
        self,
        client: Any,
        collection: str,
        embed: Callable[[list[str]], Sequence[Sequence[float]]],
        *,
        limit: int = REUSED_VECTORS,
    ) -> None:
        self.client = client
        self.collection = collection
        self.embed = embed
        super().__init__(limit)

    def upsert(self, items: list[Upsert]) -> None:
        """``upsert`` of one point per chunk, its vector reused or embedded."""
        if not items:
            return
        from qdrant_client import models  # noqa: PLC0415

        texts = [item.text for item in items]
        vectors = self.cache.vectors([item.text_hash for item in items], texts, self.embed)
        if not self.client.collection_exists(self.collection):
            self.client.create_collection(
                self.collection,
                vectors_config=models.VectorParams(
                    size=len(vectors[0]), distance=models.Distance.COSINE
                ),
            )
        self.client.upsert(
            self.collection,
            points=[
                models.PointStruct(
                    id=qdrant_point_id(item.id),
                    vector=list(vector),
                    payload={
                        "chunk_id": item.id,
                        "document_id": item.chunk.document_id,
                        "text": item.text,
                    },
                )
                for item, vector in zip(items, vectors, strict=True)
            ],
        )

    def delete(self, ids: list[str]) -> None:
        """``delete`` of the points of ``ids`` (none there: nothing happens)."""
        if not ids or not self.client.collection_exists(self.collection):
            return
        from qdrant_client import models  # noqa: PLC0415

        self.client.delete(
            self.collection,
            points_selector=models.PointIdsList(points=[qdrant_point_id(i) for i in ids]),
        )

    def clear(self) -> None:
        """Drop the collection (the next upsert makes it again)."""
        if self.client.collection_exists(self.collection):
            self.client.delete_collection(self.collection)
