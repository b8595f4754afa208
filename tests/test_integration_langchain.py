"""LangChain: the splitter, ParentDocumentRetriever end to end, the one-pass indexer, ChunkStore.

Real packages (langchain-core, langchain-text-splitters, langchain-classic), a deterministic
fake embedding, in-memory stores.
"""

from __future__ import annotations

import copy
import doctest
import importlib
import json
import pickle
from importlib import metadata
from pathlib import Path

import pytest
from _fields import LABELLED, MARKDOWN_TABLE, PAGES, html_page, page_at, words
from conftest import corpus_file, read_document
from langchain_classic.retrievers import ParentDocumentRetriever
from langchain_classic.storage import InMemoryStore
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore
from spanchunk import (
    Chunk,
    HierarchicalChunker,
    HtmlChunker,
    ParentChildChunker,
    ParentRegistry,
    RecursiveChunker,
    SqliteRegistry,
    _core,
)
from spanchunk.chunkers.base import Documents
from spanchunk.integrations._common import OWN_KEYS, within_declared_range
from spanchunk.integrations.langchain import (
    ChunkStore,
    SpanchunkTextSplitter,
    chunk_to_document,
    index_documents,
    tree_documents,
)
from spanchunk.integrations.langchain import fields as langchain_fields

REPEATED = "\n\n".join(
    ["The same paragraph, word for word, again and again."] * 12
    + ["A different ending paragraph. " * 6]
    + ["The same paragraph, word for word, again and again."] * 5
)


def frankenstein() -> str:
    return read_document(corpus_file("gutenberg", "pg84.txt"))[:120_000]


def assert_exact(source: str, docs: list[Document]) -> None:
    encoded = source.encode("utf-8")
    for doc in docs:
        meta = doc.metadata
        assert source[meta["start_index"] : meta["end_index"]] == doc.page_content
        assert encoded[meta["start_byte"] : meta["end_byte"]] == doc.page_content.encode()


def test_start_index_is_exact_for_repeated_paragraphs() -> None:
    docs = SpanchunkTextSplitter(chunk_size=60).create_documents([REPEATED], [{"book": "x"}])
    assert len(docs) == 20
    assert_exact(REPEATED, docs)
    starts = [doc.metadata["start_index"] for doc in docs]
    assert starts == sorted(set(starts))
    assert len({doc.id for doc in docs}) == len(docs)
    assert all(doc.metadata["book"] == "x" and doc.metadata["level"] == 0 for doc in docs)


def test_ids_are_deterministic_and_follow_the_document_id() -> None:
    splitter = SpanchunkTextSplitter(chunk_size=60)
    first = splitter.split_documents([Document(REPEATED, id="doc-1")])
    again = SpanchunkTextSplitter(chunk_size=60).split_documents([Document(REPEATED, id="doc-1")])
    other = splitter.split_documents([Document(REPEATED, id="doc-2")])
    assert [d.id for d in first] == [d.id for d in again]
    assert {d.id for d in first}.isdisjoint(d.id for d in other)
    assert {d.metadata["document_id"] for d in first} == {"doc-1"}


def test_split_text_and_transform_documents() -> None:
    splitter = SpanchunkTextSplitter(chunk_size=60)
    texts = splitter.split_text(REPEATED)
    docs = list(splitter.transform_documents([Document(REPEATED)]))
    assert texts == [doc.page_content for doc in docs]


def test_metadata_is_copied_not_shared() -> None:
    docs = SpanchunkTextSplitter(chunk_size=60).create_documents([REPEATED], [{"tags": ["a"]}])
    docs[0].metadata["tags"].append("b")
    assert docs[1].metadata["tags"] == ["a"]


def test_markdown_heading_paths() -> None:
    text = "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n## Use\n\nCall it."
    docs = SpanchunkTextSplitter(chunk_size=30, markdown=True).create_documents([text])
    assert [doc.metadata["headings"] for doc in docs] == [
        ["Guide"],
        ["Guide", "Install"],
        ["Guide", "Use"],
    ]
    assert_exact(text, docs)


def test_child_of_a_parent_gets_source_offsets() -> None:
    parents = SpanchunkTextSplitter(chunk_size=300, level=1).create_documents([REPEATED])
    children = SpanchunkTextSplitter(chunk_size=60).split_documents(parents)
    assert_exact(REPEATED, children)
    by_id = {parent.id: parent for parent in parents}
    for child in children:
        parent = by_id[child.metadata["parent_id"]]
        assert parent.metadata["start_index"] <= child.metadata["start_index"]
        assert child.metadata["end_index"] <= parent.metadata["end_index"]
        assert child.metadata["document_id"] == parent.metadata["document_id"]
    assert len({child.id for child in children}) == len(children)


def retriever(docstore: object) -> ParentDocumentRetriever:
    return ParentDocumentRetriever(
        vectorstore=InMemoryVectorStore(DeterministicFakeEmbedding(size=32)),
        docstore=docstore,  # type: ignore[arg-type]
        child_splitter=SpanchunkTextSplitter(chunk_size=400),
        parent_splitter=SpanchunkTextSplitter(chunk_size=2000, level=1),
    )


@pytest.mark.parametrize("store", ["memory", "chunkstore", "chunkstore-sqlite"])
def test_parent_document_retriever_returns_the_right_parents(store: str, tmp_path: Path) -> None:
    text = frankenstein()
    if store == "memory":
        docstore: object = InMemoryStore()
    elif store == "chunkstore":
        docstore = ChunkStore(ParentRegistry())
    else:  # random-UUID keys and list metadata from ParentDocumentRetriever, on disk
        docstore = ChunkStore(SqliteRegistry(tmp_path / "parents.sqlite"))
    pdr = retriever(docstore)
    pdr.add_documents([Document(text, metadata={"source": "pg84.txt"})])

    children = list(pdr.vectorstore.store.values())  # type: ignore[attr-defined]
    child_docs = [
        Document(item["text"], metadata=item["metadata"], id=item["id"]) for item in children
    ]
    assert_exact(text, child_docs)
    # The same cut as one ParentChildChunker tree: parents, then children inside each.
    tree = ParentChildChunker(parent_size=2000, child_size=400).chunk_tree(text)
    expected = sorted((c.start_char, c.end_char) for c in tree if c.level == 0)
    got = sorted((d.metadata["start_index"], d.metadata["end_index"]) for d in child_docs)
    assert got == expected

    for child in child_docs[5::97]:
        # The fake embedding is a hash of the text: the child's own text is its best match.
        hits = pdr.invoke(child.page_content)
        parent = hits[0]
        assert parent.metadata["level"] == 1
        assert parent.metadata["source"] == "pg84.txt"
        assert parent.metadata["start_index"] <= child.metadata["start_index"]
        assert child.metadata["end_index"] <= parent.metadata["end_index"]
        assert text[parent.metadata["start_index"] : parent.metadata["end_index"]] == (
            parent.page_content
        )


def test_index_documents_fills_both_stores_and_upserts() -> None:
    text = frankenstein()
    chunker = ParentChildChunker(parent_size=2000, child_size=400)
    vectorstore = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    registry = ParentRegistry()
    docstore = ChunkStore(registry)
    source = Document(text, id="pg84", metadata={"source": "pg84.txt"})
    child_ids, parent_ids = index_documents(
        [source], chunker, vectorstore=vectorstore, docstore=docstore
    )
    assert len(vectorstore.store) == len(child_ids)  # type: ignore[attr-defined]
    assert len(registry) == len(parent_ids)
    # Ingesting the same document again replaces, never duplicates.
    again = index_documents([source], chunker, vectorstore=vectorstore, docstore=docstore)
    assert again == (child_ids, parent_ids)
    assert len(vectorstore.store) == len(child_ids)  # type: ignore[attr-defined]
    assert len(registry) == len(parent_ids)

    pdr = ParentDocumentRetriever(
        vectorstore=vectorstore,
        docstore=docstore,
        child_splitter=SpanchunkTextSplitter(chunk_size=400),
    )
    child = vectorstore.get_by_ids([child_ids[40]])[0]
    hits = pdr.invoke(child.page_content)
    assert hits[0].id == child.metadata["doc_id"]
    assert child.id in hits[0].metadata["child_ids"]
    assert_exact(text, hits)


def test_index_documents_three_levels() -> None:
    text = frankenstein()[:30_000]
    chunker = HierarchicalChunker(sizes=[3000, 800, 200])
    vectorstore = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    docstore = InMemoryStore()
    child_ids, parent_ids = index_documents(
        [text], chunker, vectorstore=vectorstore, docstore=docstore, id_key="parent"
    )
    parents = docstore.mget(parent_ids)
    assert {doc.metadata["level"] for doc in parents if doc} == {1, 2}
    children = vectorstore.get_by_ids(child_ids)
    assert all(doc.metadata["parent"] == doc.metadata["parent_id"] for doc in children)
    assert_exact(text, children + [doc for doc in parents if doc])


def test_chunk_store_mget_is_aligned_and_none_for_missing() -> None:
    chunker = ParentChildChunker(parent_size=200, child_size=50)
    children = chunker.chunk(REPEATED)
    store = ChunkStore(chunker.parents)
    parent_ids = list(dict.fromkeys(child.parent_id for child in children))
    keys = [parent_ids[1], "missing", parent_ids[0]]
    docs = store.mget(keys)
    assert docs[1] is None
    assert [doc.id for doc in (docs[0], docs[2])] == [parent_ids[1], parent_ids[0]]  # type: ignore[union-attr]
    assert_exact(REPEATED, [doc for doc in docs if doc is not None])
    assert sorted(store.yield_keys()) == sorted(parent_ids)
    assert list(store.yield_keys(prefix=parent_ids[0][:16])) == [parent_ids[0]]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_chunk_store_round_trip_and_delete(kind: str, tmp_path: Path) -> None:
    chunker = ParentChildChunker(parent_size=200, child_size=50)
    chunker.chunk(REPEATED)
    parent = next(iter(chunker.parents))
    registry = ParentRegistry() if kind == "memory" else SqliteRegistry(tmp_path / "p.sqlite")
    store = ChunkStore(registry)
    document = chunk_to_document(parent)
    store.mset([(parent.id, document)])
    [back] = store.mget([parent.id])
    assert back is not None
    assert back.metadata == document.metadata
    assert back.page_content == parent.text
    with pytest.raises(NotImplementedError, match="delete_document"):
        store.mdelete([parent.id])
    assert store.delete_document(parent.document_id) == 1
    assert store.mget([parent.id]) == [None]


def test_documents_are_the_same_objects_the_constructor_builds() -> None:
    docs = tree_documents(
        [Document(REPEATED, id="t", metadata={"k": [1]})], ParentChildChunker(300, 60)
    )
    for doc in docs[:3]:
        built = Document(page_content=doc.page_content, metadata=doc.metadata, id=doc.id)
        assert doc == built
        assert doc.model_dump() == built.model_dump()
        assert doc.model_fields_set == built.model_fields_set
        assert pickle.loads(pickle.dumps(doc)) == built
        assert copy.deepcopy(doc) == built
        assert Document.model_validate(doc.model_dump()) == doc
    # The levels come top first, parents with child_ids, children with parent_id.
    assert [doc.metadata["level"] for doc in docs] == sorted(
        (doc.metadata["level"] for doc in docs), reverse=True
    )
    assert_exact(REPEATED, docs)


def test_metadata_keys_in_order_and_each_chunk_its_own() -> None:
    docs = tree_documents(
        [Document(REPEATED, id="t", metadata={"source": "a.txt", "level": "stale"})],
        ParentChildChunker(300, 60),
    )
    parent, child = docs[0], docs[-1]
    assert list(parent.metadata) == [
        "source",
        "level",
        "start_index",
        "end_index",
        "start_byte",
        "end_byte",
        "index",
        "chunk_id",
        "document_id",
        "parent_id",
        "child_ids",
    ]
    assert parent.metadata["level"] == 1 and child.metadata["level"] == 0
    assert "child_ids" not in child.metadata
    for doc in (parent, child):
        built = Document(page_content=doc.page_content, metadata=doc.metadata, id=doc.id)
        assert doc == built and doc.model_fields_set == built.model_fields_set
        assert list(doc.__dict__.items()) == list(built.__dict__.items())
    parent.metadata["source"] = "changed"  # no chunk shares another's metadata dict
    assert {doc.metadata["source"] for doc in docs[1:]} == {"a.txt"}


def test_splitter_batch_equals_one_text_at_a_time() -> None:
    documents = [
        Document(REPEATED, id="one", metadata={"source": "a"}),
        Document("   ", metadata={"source": "blank"}),
        Document(REPEATED[:500], metadata={"source": "b"}),
    ]
    parents_splitter = SpanchunkTextSplitter(300, level=1)
    child_splitter = SpanchunkTextSplitter(60)
    parents = parents_splitter.split_documents(documents)
    children = child_splitter.split_documents(parents)
    one_by_one = [doc for parent in parents for doc in child_splitter.split_documents([parent])]
    assert children == one_by_one
    assert [doc.metadata for doc in children] == [doc.metadata for doc in one_by_one]
    assert {doc.metadata["parent_id"] for doc in children} == {doc.id for doc in parents}


def test_documents_made_in_the_core_pass_the_import_check_and_a_wrong_shape_fails() -> None:
    assert langchain_fields._FAST and langchain_fields._same_langchain_layout()
    fields = {"id": None, "metadata": None, "page_content": None, "type": "Document"}
    keys = langchain_fields.SPAN_KEYS
    fields_set = {"id", "metadata", "page_content"}

    def shape(
        fields: dict[str, object], fields_set: set[str] | None, meta_keys: tuple[str, ...] = keys
    ) -> _core.ModelShape:
        return _core.ModelShape(
            Document, fields, "id", "page_content", "metadata", fields_set, meta_keys
        )

    assert langchain_fields._same_langchain_layout(shape(fields, fields_set))
    wrong_type = shape({**fields, "type": "Other"}, {"id"})
    unset_fields = shape(fields, set())
    not_pydantic = shape(fields, None)
    renamed_key = shape(fields, fields_set, ("start", *keys[1:]))
    for wrong in (wrong_type, unset_fields, not_pydantic, renamed_key):
        assert not langchain_fields._same_langchain_layout(wrong)
    # The core knows no LangChain field name: a shape without the writer's keys is refused.
    with pytest.raises(ValueError, match="needs a ModelShape with 18 meta_keys, not 0"):
        _core.langchain_documents(
            shape(fields, fields_set, ()), [([], ({}, None, 0, 0, None, None))]
        )
    with pytest.raises(ValueError, match="no key"):
        _core.ModelShape(Document, fields, "id", "text", "metadata")


@pytest.mark.parametrize(
    ("distribution", "extra", "module", "shortcut"),
    [
        (
            "langchain-core",
            "langchain",
            "spanchunk.integrations.langchain.fields",
            "_langchain_shortcut",
        ),
        ("haystack-ai", "haystack", "spanchunk.integrations.haystack", "_haystack_shortcut"),
        (
            "llama-index-core",
            "llamaindex",
            "spanchunk.integrations.llamaindex",
            "_llamaindex_shortcut",
        ),
    ],
)
def test_a_framework_outside_its_declared_range_gets_the_constructors(
    distribution: str, extra: str, module: str, shortcut: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shortcut fills objects as this framework's versions lay them out: only for the
    # versions its extra in pyproject.toml declares (read back from the installed metadata).
    assert within_declared_range(distribution, extra)
    assert not within_declared_range("no-such-distribution", extra)
    assert not within_declared_range(distribution, "no-such-extra")
    real_version = metadata.version
    monkeypatch.setattr(
        metadata,
        "version",
        lambda name: "999.0" if name == distribution else real_version(name),
    )
    assert not within_declared_range(distribution, extra)
    assert not getattr(importlib.import_module(module), shortcut)()


@pytest.mark.parametrize("metadata", [{"source": "a.txt"}, {"tags": ["a"], "level": "stale"}])
def test_the_constructor_fallback_gives_the_same_documents(
    metadata: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "# Title\n\n" + REPEATED + "\n\n## Part\n\n" + REPEATED[:300]
    documents = [Document(text, id="doc", metadata=metadata), Document(REPEATED[:200])]

    def everything() -> list[Document]:
        tree = tree_documents(documents, HierarchicalChunker([300, 120, 40], overlap=10))
        parents = SpanchunkTextSplitter(300, level=1, markdown=True).split_documents(documents)
        children = SpanchunkTextSplitter(60, chunk_overlap=10).split_documents(parents)
        return (
            tree
            + parents
            + children
            + [chunk_to_document(ParentChildChunker(300, 60).chunk(text)[0])]
        )

    fast = everything()
    monkeypatch.setattr(langchain_fields, "_FAST", False)
    slow = everything()
    assert len(fast) == len(slow) > 40
    for made, built in zip(fast, slow, strict=True):
        assert list(made.__dict__.items()) == list(built.__dict__.items())
        assert list(made.metadata.items()) == list(built.metadata.items())
        assert made.__pydantic_fields_set__ == built.__pydantic_fields_set__
        assert made.__pydantic_extra__ is None and made.__pydantic_private__ is None
        assert made == built and made.model_dump() == built.model_dump()
    assert any("headings" in doc.metadata for doc in fast)
    assert any("child_ids" in doc.metadata for doc in fast)


@pytest.mark.parametrize("children", [False, True])
def test_one_core_call_registers_what_chunk_tree_registers(
    children: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "# Title\n\n" + REPEATED + "\n\n## Part\n\n" + REPEATED[:300]
    documents = [Document(text, id="doc", metadata={"source": "a"}), Document(REPEATED[:90])]

    def registered() -> tuple[list[Document], list[tuple[object, ...]]]:
        chunker = HierarchicalChunker(
            [300, 120, 40],
            chunkers=["markdown", None, None],
            registry=ParentRegistry(children=children),
        )
        docs = tree_documents(documents, chunker)
        stored = [
            (c.id, c.text, c.level, c.start_char, c.parent_id, c.child_ids, dict(c.metadata))
            for c in chunker.parents
        ]
        return docs, stored

    fast, fast_stored = registered()
    monkeypatch.setattr(langchain_fields, "_FAST", False)
    slow, slow_stored = registered()
    assert [list(d.metadata.items()) for d in fast] == [list(d.metadata.items()) for d in slow]
    assert fast == slow
    assert fast_stored == slow_stored
    assert len(fast_stored) == (
        len(fast) if children else sum(d.metadata["level"] > 0 for d in fast)
    )


class CountedChunker(RecursiveChunker):
    """Overrides ``chunk``: the splitter calls it, once per text."""

    calls = 0

    def chunk(self, documents: Documents) -> list[Chunk]:
        type(self).calls += 1
        return super().chunk(documents)


class CountedTree(ParentChildChunker):
    """Overrides ``chunk`` only: ``tree_documents`` keeps its one core call."""

    calls = 0

    def chunk(self, documents: Documents) -> list[Chunk]:
        type(self).calls += 1
        return super().chunk(documents)


def test_an_overridden_chunk_is_called_and_the_rest_keeps_the_core_path() -> None:
    texts = [REPEATED, REPEATED[:120]]
    spans = [
        (d.metadata["start_index"], d.metadata["end_index"])
        for d in SpanchunkTextSplitter(60).create_documents(texts)
    ]
    before = CountedChunker.calls
    splitter = SpanchunkTextSplitter(60, chunker=CountedChunker(60))
    documents = splitter.create_documents(texts)
    assert CountedChunker.calls == before + len(texts)
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in documents] == spans

    assert langchain_fields._cuts_in_core(CountedTree(300, 60), "chunk_tree")
    before = CountedTree.calls
    tree = tree_documents([REPEATED], CountedTree(300, 60))
    assert CountedTree.calls == before
    expected = tree_documents([REPEATED], ParentChildChunker(300, 60))
    assert [d.metadata["start_index"] for d in tree] == [
        d.metadata["start_index"] for d in expected
    ]


def assert_source_spans(page: str, docs: list[Document]) -> None:
    """Each document's source span slices the page's bytes to HTML holding its words, in
    order."""
    source = page.encode("utf-8")
    assert docs
    for doc in docs:
        start, end = doc.metadata["source_start_byte"], doc.metadata["source_end_byte"]
        assert 0 <= start < end <= len(source)
        found = iter(words(source[start:end].decode("utf-8")))
        assert all(word in found for word in words(doc.page_content)), doc.page_content


def assert_pages(text: str, docs: list[Document]) -> None:
    assert docs
    for doc in docs:
        start, end = doc.metadata["start_index"], doc.metadata["end_index"]
        assert doc.metadata["page_first"] == page_at(text, start), doc.page_content
        assert doc.metadata["page_last"] == page_at(text, end - 1), doc.page_content


def test_html_pages_carry_their_source_spans() -> None:
    page = html_page()
    readable = HtmlChunker(120).read(page).text
    source = Document(page, id="page.html", metadata={"source": "page.html"})
    docs = SpanchunkTextSplitter(120, html=True).split_documents([source])
    assert len(docs) > 5
    assert_source_spans(page, docs)
    assert_exact(readable, docs)  # the offsets index the page's readable text
    assert "Home" not in readable and "Footer" not in readable
    assert docs == SpanchunkTextSplitter(chunker=HtmlChunker(120)).split_documents([source])
    assert list(docs[0].metadata)[-3:] == ["headings", "source_start_byte", "source_end_byte"]
    # Every level of a tree, and the one-pass indexer, carry them too.
    tree = tree_documents([source], ParentChildChunker(400, 120, parent_chunker="html"))
    assert {doc.metadata["level"] for doc in tree} == {0, 1}
    assert_source_spans(page, tree)
    vectorstore = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
    docstore = ChunkStore(ParentRegistry())
    child_ids, parent_ids = index_documents(
        [source],
        ParentChildChunker(400, 120, parent_chunker="html"),
        vectorstore=vectorstore,
        docstore=docstore,
    )
    assert_source_spans(page, vectorstore.get_by_ids(child_ids))
    parents = docstore.mget(parent_ids)
    assert_source_spans(page, [doc for doc in parents if doc is not None])


def test_table_chunks_carry_the_header_as_a_plain_dict() -> None:
    docs = SpanchunkTextSplitter(80, markdown=True).create_documents([MARKDOWN_TABLE])
    headed = [doc for doc in docs if "table_header" in doc.metadata]
    assert 3 < len(headed) < len(docs)
    for doc in headed:
        header = doc.metadata["table_header"]
        assert type(header) is dict and set(header) == {
            "text", "start_char", "end_char", "start_byte", "end_byte",
        }  # fmt: skip
        assert header["text"] == "| Name | Size |"
        assert MARKDOWN_TABLE[header["start_char"] : header["end_char"]] == header["text"]
        json.dumps(doc.metadata)
    assert all("row" in doc.page_content for doc in headed)
    assert "table_header" not in docs[0].metadata and "table_header" not in docs[-1].metadata
    headed[0].metadata["table_header"]["text"] = "changed"  # each document has its own
    assert headed[1].metadata["table_header"]["text"] == "| Name | Size |"
    # An HTML page's table: the header row indexes the page's readable text.
    page = html_page()
    readable = HtmlChunker(60).read(page).text
    html_docs = SpanchunkTextSplitter(60, html=True).create_documents([page])
    html_headed = [doc for doc in html_docs if "table_header" in doc.metadata]
    assert len(html_headed) > 2
    for doc in html_headed:
        header = doc.metadata["table_header"]
        assert (
            header["text"] == "Name | Size" == readable[header["start_char"] : header["end_char"]]
        )


def test_pages_of_a_text_with_page_markers() -> None:
    [whole] = SpanchunkTextSplitter(60).split_documents([Document("One.\n\fTwo.\n\fThree.")])
    assert (whole.metadata["page_first"], whole.metadata["page_last"]) == (1, 3)
    small = SpanchunkTextSplitter(5).split_documents([Document("One.\n\fTwo.\n\fThree.")])
    assert [(d.metadata["page_first"], d.metadata["page_last"]) for d in small][:3] == [
        (1, 1),
        (2, 2),
        (3, 3),
    ]
    for text in (PAGES, LABELLED):
        docs = SpanchunkTextSplitter(70).split_documents([Document(text, id="paged")])
        assert_pages(text, docs)
        assert_pages(text, tree_documents([Document(text, id="t")], ParentChildChunker(300, 70)))


def test_a_parent_split_again_gives_its_children_their_place_in_the_source() -> None:
    # ParentDocumentRetriever's way: the child splitter cuts each parent's text. The
    # children's pages count from the parent's first page, and a header's span moves with the
    # offsets, into the source document.
    for text in (PAGES, LABELLED):
        parents = SpanchunkTextSplitter(400, level=1).split_documents([Document(text, id="p")])
        assert any(p.metadata["page_first"] < p.metadata["page_last"] for p in parents)
        children = SpanchunkTextSplitter(70).split_documents(parents)
        assert_exact(text, children)
        assert_pages(text, children)
    text = "# Intro\n\n" + "Some words of an introduction, café. " * 7 + "\n\n" + MARKDOWN_TABLE
    parents = SpanchunkTextSplitter(200, level=1, markdown=True).create_documents([text])
    children = SpanchunkTextSplitter(60, markdown=True).split_documents(parents)
    headed = [doc for doc in children if "table_header" in doc.metadata]
    assert headed and all(doc.metadata["table_header"]["start_char"] > 200 for doc in headed)
    for doc in headed:
        header = doc.metadata["table_header"]
        assert text[header["start_char"] : header["end_char"]] == header["text"]
        assert text.encode()[header["start_byte"] : header["end_byte"]] == header["text"].encode()
    # A parent's source span is its own: its children, cut from its readable text, have none.
    html_parents = SpanchunkTextSplitter(400, level=1, html=True).create_documents([html_page()])
    assert all("source_start_byte" in doc.metadata for doc in html_parents)
    html_children = SpanchunkTextSplitter(60).split_documents(html_parents)
    assert not any("source_start_byte" in doc.metadata for doc in html_children)


def test_documents_without_them_carry_none_of_the_keys() -> None:
    text = "# Title\n\n" + REPEATED + "\n\n## Part\n\n" + REPEATED[:300]
    docs = (
        SpanchunkTextSplitter(60).split_documents([Document(REPEATED)])
        + SpanchunkTextSplitter(60, markdown=True).create_documents([text])
        + SpanchunkTextSplitter(60, language="python").create_documents(
            ["def f():\n    return 1\n"]
        )
        + tree_documents([text], HierarchicalChunker([300, 120, 40]))
        + [chunk_to_document(ParentChildChunker(300, 60).chunk(text)[0])]
    )
    assert len(docs) > 40
    assert not any(key in doc.metadata for doc in docs for key in OWN_KEYS)


def test_html_is_one_structure_and_the_splitter_pickles() -> None:
    for other in ({"markdown": True}, {"language": "python"}):
        with pytest.raises(ValueError, match="two structures: give one of them"):
            SpanchunkTextSplitter(100, html=True, **other)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"markdown=True and language='python'"):
        SpanchunkTextSplitter(100, markdown=True, language="python")
    splitter = SpanchunkTextSplitter(120, html=True)
    again = pickle.loads(pickle.dumps(splitter))
    assert isinstance(again.chunker, HtmlChunker)
    page = html_page()
    assert again.create_documents([page]) == splitter.create_documents([page])


def test_chunk_store_and_chunk_to_document_keep_what_a_chunk_carries(tmp_path: Path) -> None:
    page = html_page()
    chunker = ParentChildChunker(300, 60, parent_chunker="html")
    chunker.chunk(page)
    parents = list(chunker.parents)
    [table_parent] = [p for p in parents if "table_header" in p.metadata][:1]
    document = chunk_to_document(table_parent)
    metadata = document.metadata
    assert list(metadata)[-4:] == [
        "headings", "source_start_byte", "source_end_byte", "table_header",
    ]  # fmt: skip
    assert type(metadata["table_header"]) is dict
    assert metadata["table_header"] == dict(table_parent.metadata["table_header"])
    for registry in (ParentRegistry(), SqliteRegistry(tmp_path / "p.sqlite")):
        store = ChunkStore(registry)
        store.mset([(table_parent.id, document)])
        [back] = store.mget([table_parent.id])
        assert back is not None and list(back.metadata.items()) == list(metadata.items())


@pytest.mark.parametrize("children", [False, True])
def test_the_constructor_fallback_carries_the_same_fields(
    children: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = [
        Document(html_page(), id="page"),
        Document(MARKDOWN_TABLE, id="table", metadata={"tags": ["a"]}),
        Document(PAGES, id="pages"),
        Document(LABELLED, id="labels", metadata={"page_first": 3}),
    ]

    def everything() -> list[Document]:
        html = SpanchunkTextSplitter(120, html=True).split_documents(documents[:1])
        tree = tree_documents(
            documents[1:],
            ParentChildChunker(300, 60, registry=ParentRegistry(children=children)),
        )
        parents = SpanchunkTextSplitter(300, level=1, markdown=True).split_documents(documents[1:])
        return (
            html
            + tree
            + parents
            + SpanchunkTextSplitter(60, markdown=True).split_documents(parents)
        )

    fast = everything()
    monkeypatch.setattr(langchain_fields, "_FAST", False)
    slow = everything()
    assert len(fast) == len(slow) > 40
    for made, built in zip(fast, slow, strict=True):
        assert list(made.metadata.items()) == list(built.metadata.items())
        assert made == built and made.model_dump() == built.model_dump()
    for key in OWN_KEYS:
        assert any(key in doc.metadata for doc in fast), key
    # A document that says which page it starts on: its chunks' pages count from there.
    labelled = [doc for doc in fast if doc.metadata.get("document_id") == "labels"]
    assert min(doc.metadata["page_first"] for doc in labelled) == 3


@pytest.mark.parametrize("module", ["", ".splitter", ".docstore"])
def test_docstring_examples(module: str) -> None:
    imported = importlib.import_module("spanchunk.integrations.langchain" + module)
    failures, tried = doctest.testmod(imported)
    assert tried and not failures
