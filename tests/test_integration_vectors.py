"""Ready adapters (``spanchunk.integrations.vectors``): a folder synced into a store and kept in
step with LangChain's ``InMemoryVectorStore``, LlamaIndex's ``SimpleVectorStore`` and
Haystack's ``InMemoryDocumentStore`` over rounds of edits, through each framework's public
calls; the vectors of texts embedded before reused; a rebuild after a compaction.

Real frameworks; each embedding is 8 floats of the text's SHA-256, so every vector is known,
and each embedder records the texts it is asked to embed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from haystack import Document as HaystackDocument
from haystack import component
from haystack.document_stores.in_memory import InMemoryDocumentStore
from langchain_core.documents import Document as LangChainDocument
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import VectorStoreQuery
from qdrant_client import QdrantClient
from spanchunk import Chunk, ParentChildChunker, SqliteRegistry
from spanchunk.ingest import sync
from spanchunk.integrations.vectors import (
    HaystackDocuments,
    LangChainVectors,
    LlamaIndexVectors,
    QdrantVectors,
    VectorCache,
    qdrant_point_id,
)
from spanchunk.stores import ChangesCompacted

PARAGRAPHS = [f"Paragraph {n} tells its own small story about item {n}." for n in range(40)]
CHUNKER = ParentChildChunker(300, 80, parent_chunker="markdown")  # heading paths too


def vector_of(text: str) -> list[float]:
    return [byte / 255 for byte in hashlib.sha256(text.encode("utf-8")).digest()[:8]]


class HashEmbeddings(Embeddings):
    """LangChain: the text's hash as its vector; records the texts embedded."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return [vector_of(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return vector_of(text)


class HashEmbedding(BaseEmbedding):
    """LlamaIndex: the text's hash as its vector; records the texts embedded."""

    _texts: list[str] = PrivateAttr(default_factory=list)

    @property
    def texts(self) -> list[str]:
        return self._texts

    def _get_query_embedding(self, query: str) -> list[float]:
        return vector_of(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return vector_of(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        self._texts.append(text)
        return vector_of(text)


@component
class HashEmbedder:
    """Haystack: a document embedder component, the content's hash as its vector."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    @component.output_types(documents=list[HaystackDocument])
    def run(self, documents: list[HaystackDocument]) -> dict[str, list[HaystackDocument]]:
        texts = [document.content or "" for document in documents]
        self.texts.extend(texts)
        return {
            "documents": [
                replace(document, embedding=vector_of(text))
                for document, text in zip(documents, texts, strict=True)
            ]
        }


@dataclass
class Target:
    """One framework's index behind its adapter: the texts its embedder was asked for, and a
    check that it holds exactly the given leaves, read back through its public calls."""

    adapter: Any
    asked: Callable[[], list[str]]
    check: Callable[[dict[str, Chunk]], None]
    contents: Callable[[], dict[Any, Any]]


def langchain_target() -> Target:
    embedding = HashEmbeddings()
    vector_store = InMemoryVectorStore(LangChainVectors.reusing(embedding))

    def check(leaves: dict[str, Chunk]) -> None:
        assert set(vector_store.store) == set(leaves)  # every id it holds
        documents = vector_store.get_by_ids(list(leaves))
        assert {d.id: d.page_content for d in documents} == {i: c.text for i, c in leaves.items()}
        for document in documents:
            chunk = leaves[str(document.id)]
            assert document.metadata["chunk_id"] == chunk.id
            assert document.metadata["document_id"] == chunk.document_id
            assert document.metadata["level"] == 0
            assert vector_store.store[chunk.id]["vector"] == vector_of(chunk.text)
        if leaves:
            text = next(iter(leaves.values())).text
            assert vector_store.similarity_search(text, k=1)[0].page_content == text

    def contents() -> dict[Any, Any]:
        return {
            key: (value["text"], value["metadata"], value["vector"])
            for key, value in vector_store.store.items()
        }

    return Target(LangChainVectors(vector_store), lambda: embedding.texts, check, contents)


def llamaindex_target() -> Target:
    embed_model = HashEmbedding()
    vector_store = SimpleVectorStore()

    def check(leaves: dict[str, Chunk]) -> None:
        # A SimpleVectorStore keeps no text: the vectors (hashes of the texts) stand for them.
        data = vector_store.data
        assert set(data.embedding_dict) == set(leaves)
        for chunk_id, chunk in leaves.items():
            assert vector_store.get(chunk_id) == vector_of(chunk.text)
            assert data.text_id_to_ref_doc_id[chunk_id] == chunk.document_id
            assert data.metadata_dict[chunk_id]["level"] == 0
        if leaves:
            chunk = next(iter(leaves.values()))
            found = vector_store.query(
                VectorStoreQuery(query_embedding=vector_of(chunk.text), similarity_top_k=1)
            )
            assert found.ids is not None
            assert leaves[found.ids[0]].text == chunk.text

    def contents() -> dict[Any, Any]:
        data = vector_store.data
        return {
            key: (vector, data.text_id_to_ref_doc_id.get(key), data.metadata_dict.get(key))
            for key, vector in data.embedding_dict.items()
        }

    return Target(
        LlamaIndexVectors(vector_store, embed_model), lambda: embed_model.texts, check, contents
    )


def haystack_target() -> Target:
    embedder = HashEmbedder()
    document_store = InMemoryDocumentStore()

    def check(leaves: dict[str, Chunk]) -> None:
        documents = document_store.filter_documents()
        assert {d.id: d.content for d in documents} == {i: c.text for i, c in leaves.items()}
        for document in documents:
            chunk = leaves[document.id]
            assert document.embedding == vector_of(chunk.text)
            assert document.meta["source_id"] == chunk.document_id

    def contents() -> dict[Any, Any]:
        return {d.id: (d.content, d.meta, d.embedding) for d in document_store.filter_documents()}

    return Target(
        HaystackDocuments(document_store, embedder), lambda: embedder.texts, check, contents
    )


def qdrant_target() -> Target:
    # Qdrant's local mode: an embedded vector database in a folder, no server.
    client = QdrantClient(path=tempfile.mkdtemp(prefix="qdrant-"))
    asked: list[str] = []

    def embed(texts: list[str]) -> list[list[float]]:
        asked.extend(texts)
        return [vector_of(text) for text in texts]

    def check(leaves: dict[str, Chunk]) -> None:
        if not client.collection_exists("leaves"):
            assert not leaves
            return
        points, _ = client.scroll("leaves", limit=100_000, with_vectors=True)
        assert {p.payload["chunk_id"]: p.payload["text"] for p in points} == {
            i: c.text for i, c in leaves.items()
        }
        for point in points:
            chunk = leaves[point.payload["chunk_id"]]
            assert point.id == qdrant_point_id(chunk.id)
            assert point.payload["document_id"] == chunk.document_id
        if leaves:
            chunk = next(iter(leaves.values()))
            found = client.query_points("leaves", query=vector_of(chunk.text), limit=1).points
            assert leaves[found[0].payload["chunk_id"]].text == chunk.text

    def contents() -> dict[Any, Any]:
        if not client.collection_exists("leaves"):
            return {}
        points, _ = client.scroll("leaves", limit=100_000, with_vectors=True)
        # Qdrant keeps cosine vectors normalised as float32: compared to 5 places.
        return {p.id: (p.payload, [round(x, 5) for x in p.vector]) for p in points}

    return Target(QdrantVectors(client, "leaves", embed), lambda: asked, check, contents)


TARGETS = {
    "langchain": langchain_target,
    "llamaindex": llamaindex_target,
    "haystack": haystack_target,
    "qdrant": qdrant_target,
}


def write(path: Path, paragraphs: Iterable[str]) -> None:
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")


def folder_of_files(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(5):  # neighbouring files share paragraphs: the same texts in two files
        write(folder / f"f{n}.txt", PARAGRAPHS[n * 6 : n * 6 + 10])
    write(folder / "guide.md", guide("Setup"))
    return folder


def guide(title: str) -> list[str]:
    """A Markdown page whose second section is called ``title``: renaming it changes the
    heading path of the chunks below it, not their texts."""
    return [
        "# Guide",
        *PARAGRAPHS[:3],
        f"## {title}",
        *(f"Step {n}: do the thing numbered {n}, then check it worked." for n in range(12)),
    ]


def leaves_of(store: SqliteRegistry) -> dict[str, Chunk]:
    return {chunk.id: chunk for chunk in store if chunk.level == 0}


@pytest.mark.parametrize("framework", sorted(TARGETS))
def test_a_folder_kept_in_step_over_rounds(framework: str, tmp_path: Path) -> None:
    target = TARGETS[framework]()
    folder = folder_of_files(tmp_path)
    store_path = tmp_path / "store.sqlite"

    def round_(prune: bool = False) -> tuple[list[str], dict[str, Chunk]]:
        """Sync, apply, check the index; the texts embedded in the round, and the leaves."""
        sync(folder, store_path, CHUNKER, prune=prune)
        embedded, asked = target.adapter.embedded, len(target.asked())
        with SqliteRegistry.open(store_path) as store:
            feed = target.adapter.apply(store, consumer="vectors")
            leaves = leaves_of(store)
            target.check(leaves)
            assert store.consumer_position("vectors") == feed.position == store.change_number()
            # Field for field what an index built from the store's present state holds: no
            # offset, position or path of a chunk that an edit elsewhere moved goes stale.
            fresh = TARGETS[framework]()
            fresh.adapter.upsert(list(store.changes(since=0, levels=(0,)).upserts))
            assert target.contents() == fresh.contents()
        new = target.asked()[asked:]
        assert target.adapter.embedded - embedded == len(new)
        return new, leaves

    new, leaves = round_()  # a new store: its whole state, each distinct text embedded once
    texts = {chunk.text for chunk in leaves.values()}
    assert len(texts) < len(leaves)  # shared paragraphs: fewer texts than leaves
    assert sorted(new) == sorted(texts)
    assert round_() == ([], leaves)  # nothing changed

    # An edit at the top of one file: exactly the new texts are embedded.
    path = folder / "f0.txt"
    path.write_text("A brand new opening, on top.\n\n" + path.read_text(encoding="utf-8"))
    new, leaves = round_()
    assert new == ["A brand new opening, on top."]
    assert sorted(new) == sorted({c.text for c in leaves.values()} - texts)

    # A renamed section: the chunks below the heading keep their ids and vectors while their
    # heading path changes (which the index must not hold stale).
    before = {c.id: c.metadata.get("headings") for c in leaves.values()}
    texts = {chunk.text for chunk in leaves.values()}
    write(folder / "guide.md", guide("Installation"))
    new, leaves = round_()
    assert sorted(new) == sorted({c.text for c in leaves.values()} - texts)
    assert any(
        chunk.id in before and chunk.metadata.get("headings") != before[chunk.id]
        for chunk in leaves.values()
    )

    # A new file: its texts.
    added = [
        "Something nobody wrote before, in any file at all.",
        "And more of it, new too, a paragraph of its own.",
    ]
    write(folder / "added.txt", added)
    new, leaves = round_()
    assert sorted(new) == sorted(added)

    # A deleted file, pruned: its vectors go, nothing is embedded.
    old_ids = {c.id for c in leaves.values() if c.document_id.endswith("f3.txt")}
    (folder / "f3.txt").unlink()
    new, leaves = round_(prune=True)
    assert new == [] and old_ids and not old_ids & set(leaves)

    # A renamed file, pruned: new ids, the same texts, whose vectors are reused.
    old_ids = {c.id for c in leaves.values() if c.document_id.endswith("f1.txt")}
    os.rename(folder / "f1.txt", folder / "renamed.txt")
    new, leaves = round_(prune=True)
    assert new == []
    renamed = {c.id for c in leaves.values() if c.document_id.endswith("renamed.txt")}
    assert len(renamed) == len(old_ids) and not old_ids & set(leaves)


@pytest.mark.parametrize("framework", sorted(TARGETS))
def test_a_consumer_behind_a_compaction_rebuilds_through_clear(
    framework: str, tmp_path: Path
) -> None:
    target = TARGETS[framework]()
    folder = folder_of_files(tmp_path)
    store_path = tmp_path / "store.sqlite"
    sync(folder, store_path, CHUNKER)
    with SqliteRegistry.open(store_path) as store:
        target.adapter.apply(store, consumer="vectors")
        position = store.consumer_position("vectors")
    # Changes the index has not seen: an edit and a deleted file (vectors to remove).
    path = folder / "f0.txt"
    path.write_text("A brand new opening, on top.\n\n" + path.read_text(encoding="utf-8"))
    (folder / "f2.txt").unlink()
    sync(folder, store_path, CHUNKER, prune=True)
    with SqliteRegistry.open(store_path) as store:
        # The consumer is removed, the records compacted; it comes back at its old position.
        store.remove_consumer("vectors")
        assert store.compact() == store.change_number()
        store.acknowledge("vectors", position)
        with pytest.raises(ChangesCompacted):
            store.changes(consumer="vectors")
        embedded = target.adapter.embedded
        feed = target.adapter.apply(store, consumer="vectors")
        assert feed.full and feed.position == store.change_number()
        target.check(leaves_of(store))
        # Every text but the new one had a vector already.
        assert target.adapter.embedded - embedded == 1


class DictVectorStore(VectorStore):
    """A LangChain vector store with ids but no way to list them (the interface's case)."""

    def __init__(self, embedding: Embeddings) -> None:
        self.embedding = embedding
        self.rows: dict[str, tuple[str, list[float]]] = {}

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        texts = list(texts)
        assert ids is not None
        vectors = self.embedding.embed_documents(texts)
        self.rows.update(zip(ids, zip(texts, vectors, strict=True), strict=True))
        return ids

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        for chunk_id in ids or []:
            self.rows.pop(chunk_id, None)
        return True

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[LangChainDocument]:
        return []

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> DictVectorStore:
        raise NotImplementedError


def test_langchain_clear_needs_a_way_to_empty_the_index(tmp_path: Path) -> None:
    folder = folder_of_files(tmp_path)
    store_path = tmp_path / "store.sqlite"
    sync(folder, store_path, CHUNKER)
    vector_store = DictVectorStore(HashEmbeddings())
    adapter = LangChainVectors(vector_store)
    with SqliteRegistry.open(store_path) as store:
        adapter.apply(store, consumer="vectors")
        assert {i: text for i, (text, _) in vector_store.rows.items()} == {
            i: c.text for i, c in leaves_of(store).items()
        }
        # No reusing embedding: every text sent is counted as embedded by the store.
        assert adapter.embedded == len(vector_store.rows) and adapter.cache is None
        # A document deleted, the consumer removed and the records compacted: it comes back
        # at its old position, behind the compaction, with vectors of chunks gone.
        position = store.consumer_position("vectors")
        store.delete_document(next(iter(leaves_of(store).values())).document_id)
        store.remove_consumer("vectors")
        store.compact()
        store.acknowledge("vectors", position)
        with pytest.raises(TypeError, match="can neither list nor remove every vector"):
            adapter.apply(store, consumer="vectors")
        assert store.consumer_position("vectors") == position  # applied again next time
        cleared = LangChainVectors(vector_store, clear=vector_store.rows.clear)
        feed = cleared.apply(store, consumer="vectors")
        assert feed.full
        assert {i: text for i, (text, _) in vector_store.rows.items()} == {
            i: c.text for i, c in leaves_of(store).items()
        }


def test_the_cache_embeds_each_missing_text_once_and_keeps_the_last_ones() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [vector_of(text) for text in texts]

    cache = VectorCache(limit=2)
    assert cache.vectors(["a", "b", "a", "c"], ["A", "B", "A2", "C"], embed) == [
        vector_of("A"),
        vector_of("B"),
        vector_of("A"),
        vector_of("C"),
    ]
    assert calls == [["A", "B", "C"]] and cache.embedded == 3
    assert len(cache) == 2 and "a" not in cache and "b" in cache and "c" in cache
    assert cache.vectors(["c"], ["C"], embed) == [vector_of("C")] and len(calls) == 1
    assert cache.vectors([], [], embed) == [] and len(calls) == 1
    with pytest.raises(ValueError, match="returned 1 vectors for 2 texts"):
        cache.vectors(["x", "y"], ["X", "Y"], lambda texts: [[0.0]])
    with pytest.raises(ValueError, match="an int >= 0"):
        VectorCache(limit=-1)


def test_the_module_imports_no_framework() -> None:
    code = (
        "import sys\n"
        "for name in ('langchain_core', 'llama_index', 'haystack'):\n"
        "    sys.modules[name] = None\n"
        "from spanchunk.integrations.vectors import VectorCache\n"
        "print(len(VectorCache()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "0"
