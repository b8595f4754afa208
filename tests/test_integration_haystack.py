"""Haystack: SpanchunkDocumentSplitter's tree fields, and AutoMergingRetriever in real pipelines.

Real haystack-ai; BM25 over an InMemoryDocumentStore, so no model is needed.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from itertools import pairwise

import pytest
from _fields import (
    LABELLED,
    MARKDOWN_TABLE,
    PAGES,
    check_markdown_table_header,
    html_page,
    page_at,
    words,
)
from conftest import corpus_file, read_document
from haystack import Document, Pipeline
from haystack.components.retrievers import AutoMergingRetriever
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.components.writers import DocumentWriter
from haystack.document_stores.in_memory import InMemoryDocumentStore
from spanchunk import Document as SpanDocument
from spanchunk import HtmlChunker, ParentChildChunker, _core
from spanchunk.integrations import haystack
from spanchunk.integrations._common import OWN_KEYS
from spanchunk.integrations.haystack import SpanchunkDocumentSplitter

REPEATED = "\n\n".join(["Exactly the same paragraph, repeated many times over."] * 24)


def corpus_text(folder: str, name: str) -> str:
    return read_document(corpus_file(folder, name))


def assert_exact(text: str, documents: list[Document]) -> None:
    encoded = text.encode("utf-8")
    for doc in documents:
        if doc.meta["__level"] == 0:
            assert doc.content == text
            continue
        meta = doc.meta
        assert text[meta["split_idx_start"] : meta["split_idx_end"]] == doc.content
        assert encoded[meta["start_byte"] : meta["end_byte"]] == doc.content.encode()  # type: ignore[union-attr]


def test_tree_fields_follow_haystacks_conventions() -> None:
    text = corpus_text("gutenberg", "pg1342.txt")[:200_000]
    source = Document(content=text, meta={"file": "pg1342.txt"})
    splitter = SpanchunkDocumentSplitter(block_sizes={2000, 500, 120})
    result = splitter.run([source])
    docs = result["documents"]
    assert_exact(text, docs)
    root = docs[0]
    assert root.id == source.id
    assert root.meta["__level"] == 0
    assert root.meta["__block_size"] == 0
    assert root.meta["__parent_id"] is None
    by_id = {doc.id: doc for doc in docs}
    assert len(by_id) == len(docs)
    block_of_level = {0: 0, 1: 2000, 2: 500, 3: 120}
    for doc in docs:
        meta = doc.meta
        assert meta["file"] == "pg1342.txt"
        assert meta["__block_size"] == block_of_level[meta["__level"]]
        for child_id in meta["__children_ids"]:
            child = by_id[child_id]
            assert child.meta["__parent_id"] == doc.id
            assert child.meta["__level"] == meta["__level"] + 1
        if doc is not root:
            assert meta["source_id"] == root.id
            parent = by_id[meta["__parent_id"]]
            assert doc.id in parent.meta["__children_ids"]
    leaves = result["leaf_documents"]
    assert {doc.meta["__level"] for doc in leaves} == {3}
    assert {doc.meta["__level"] for doc in result["parent_documents"]} == {0, 1, 2}
    assert len(leaves) + len(result["parent_documents"]) == len(docs)
    # Offsets are in the original document, not in the block each split was cut from.
    assert max(doc.meta["split_idx_start"] for doc in leaves) > len(text) // 2 > 2000


def test_identical_paragraphs_get_distinct_ids() -> None:
    docs = SpanchunkDocumentSplitter(block_sizes=[300, 60]).run([Document(content=REPEATED)])[
        "documents"
    ]
    assert len({doc.id for doc in docs}) == len(docs)
    leaves = [doc for doc in docs if not doc.meta["__children_ids"]]
    assert len(leaves) == 24
    assert len({doc.content for doc in leaves}) == 1
    assert_exact(REPEATED, docs)
    # A document store keeps every one of them.
    store = InMemoryDocumentStore()
    assert store.write_documents(leaves) == 24


def test_page_numbers_count_form_feeds() -> None:
    text = "\f".join(f"Page {n} has a sentence. And another one here." for n in range(1, 9))
    text = text.replace("\fPage 5", "\f\fPage 5")  # an empty page
    docs = SpanchunkDocumentSplitter(block_sizes=[120, 30], include_root=False).run(
        [Document(content=text)]
    )["documents"]
    assert_exact(text, docs)
    for doc in docs:
        assert doc.meta["page_number"] == 1 + text[: doc.meta["split_idx_start"]].count("\f")
    assert max(doc.meta["page_number"] for doc in docs) == 9
    assert all(doc.meta["__parent_id"] is None for doc in docs if doc.meta["__level"] == 1)


def test_split_overlap_in_haystacks_format() -> None:
    text = " ".join(f"word{n}" for n in range(60))
    docs = SpanchunkDocumentSplitter(block_sizes=[200, 40], split_overlap=12).run(
        [Document(content=text)]
    )["documents"]
    leaves = [doc for doc in docs if not doc.meta["__children_ids"]]
    linked = 0
    for before, after in pairwise(leaves):
        if before.meta["__parent_id"] != after.meta["__parent_id"]:
            continue
        [forward] = [o for o in after.meta["_split_overlap"] if o["doc_id"] == before.id]
        start, end = forward["range"]
        assert after.content.startswith(before.content[start:end])  # type: ignore[union-attr]
        [backward] = [o for o in before.meta["_split_overlap"] if o["doc_id"] == after.id]
        assert backward["range"] == (0, end - start)
        linked += 1
    assert linked > 0


def test_to_dict_from_dict_and_pipeline_serialisation() -> None:
    splitter = SpanchunkDocumentSplitter(block_sizes={800, 200}, split_overlap=20, markdown=True)
    data = splitter.to_dict()
    assert data["type"] == "spanchunk.integrations.haystack.SpanchunkDocumentSplitter"
    assert data["init_parameters"]["block_sizes"] == [800, 200]
    again = SpanchunkDocumentSplitter.from_dict(data)
    text = corpus_text("markdown-en", "ch01-01-installation.md")
    first = splitter.run([Document(content=text, id="ch01")])["documents"]
    second = again.run([Document(content=text, id="ch01")])["documents"]
    assert [d.id for d in first] == [d.id for d in second]
    assert all("headings" in d.meta for d in first[1:])
    pipeline = Pipeline()
    pipeline.add_component("splitter", splitter)
    loaded = Pipeline.loads(pipeline.dumps(), allowed_modules=["spanchunk.integrations"])
    component = loaded.get_component("splitter")
    assert isinstance(component, SpanchunkDocumentSplitter)
    assert component.to_dict() == data


def fruit_text() -> str:
    filler = "words that fill the paragraph to a good length for the test"
    paragraphs = [
        f"apple apple apple {filler} one.",
        f"apple apple {filler} two.",
        f"apple {filler} three.",
        f"banana {filler} four.",
        *[f"banana cherry {filler} more {n}." for n in range(8)],
    ]
    return "\n\n".join(paragraphs)


def stores(text: str) -> tuple[InMemoryDocumentStore, InMemoryDocumentStore, list[Document]]:
    leaf_store = InMemoryDocumentStore()
    parent_store = InMemoryDocumentStore()
    indexing = Pipeline()
    indexing.add_component("splitter", SpanchunkDocumentSplitter(block_sizes=[330, 100]))
    indexing.add_component("leaf_writer", DocumentWriter(leaf_store))
    indexing.add_component("parent_writer", DocumentWriter(parent_store))
    indexing.connect("splitter.leaf_documents", "leaf_writer.documents")
    indexing.connect("splitter.parent_documents", "parent_writer.documents")
    result = indexing.run(
        {"splitter": {"documents": [Document(content=text, id="fruit")]}},
        include_outputs_from={"splitter"},
    )
    return leaf_store, parent_store, result["splitter"]["documents"]


def query_pipeline(
    leaf_store: InMemoryDocumentStore, parent_store: InMemoryDocumentStore, top_k: int
) -> Pipeline:
    query = Pipeline()
    query.add_component("bm25", InMemoryBM25Retriever(leaf_store, top_k=top_k))
    query.add_component("merge", AutoMergingRetriever(parent_store, threshold=0.5))
    query.connect("bm25.documents", "merge.documents")
    return query


@pytest.mark.parametrize(("top_k", "merged"), [(3, True), (2, False)])
def test_auto_merging_retriever_in_a_pipeline(top_k: int, merged: bool) -> None:
    text = fruit_text()
    leaf_store, parent_store, docs = stores(text)
    first_parent = next(doc for doc in docs if doc.meta["__level"] == 1)
    assert len(first_parent.meta["__children_ids"]) == 4
    result = query_pipeline(leaf_store, parent_store, top_k).run({"bm25": {"query": "apple"}})
    found = result["merge"]["documents"]
    if merged:  # 3 of the parent's 4 children matched: more than the threshold, so merged
        assert [doc.id for doc in found] == [first_parent.id]
        assert found[0].content == text[: first_parent.meta["split_idx_end"]]
    else:  # 2 of 4 is not more than 0.5: the leaves are returned
        assert first_parent.id not in {doc.id for doc in found}
        assert sorted(doc.content.count("apple") for doc in found) == [2, 3]  # type: ignore[union-attr]


def test_merging_climbs_to_the_root_and_async_paths_agree() -> None:
    text = fruit_text()
    leaf_store, parent_store, docs = stores(text)
    leaves = [doc for doc in docs if not doc.meta["__children_ids"]]
    retriever = AutoMergingRetriever(parent_store, threshold=0.5)
    merged = retriever.run(leaves)["documents"]
    assert [doc.id for doc in merged] == ["fruit"]  # every family complete: up to the root

    splitter = SpanchunkDocumentSplitter(block_sizes=[330, 100])
    sync = splitter.run([Document(content=text, id="fruit")])
    async_result = asyncio.run(splitter.run_async([Document(content=text, id="fruit")]))
    assert [d.id for d in async_result["documents"]] == [d.id for d in sync["documents"]]

    pipeline = Pipeline()  # Haystack 3 runs any pipeline with run_async
    pipeline.add_component("bm25", InMemoryBM25Retriever(leaf_store, top_k=3))
    pipeline.add_component("merge", AutoMergingRetriever(parent_store, threshold=0.5))
    pipeline.connect("bm25.documents", "merge.documents")
    result = asyncio.run(pipeline.run_async({"bm25": {"query": "apple"}}))
    first_parent = next(doc for doc in docs if doc.meta["__level"] == 1)
    assert [doc.id for doc in result["merge"]["documents"]] == [first_parent.id]


def test_no_content_is_refused() -> None:
    with pytest.raises(ValueError, match="has no content"):
        SpanchunkDocumentSplitter().run([Document(content=None, id="empty")])


def test_documents_are_the_same_objects_the_constructor_builds() -> None:
    docs = SpanchunkDocumentSplitter(block_sizes=[300, 60]).run(
        [Document(content=REPEATED, meta={"tags": ["a"]})]
    )["documents"]
    for doc in docs[:4]:
        built = Document(id=doc.id, content=doc.content, meta=doc.meta)
        assert doc == built
        assert doc.to_dict() == built.to_dict()
        assert Document.from_dict(doc.to_dict()) == doc
    docs[1].meta["tags"].append("b")  # metadata with lists is copied per chunk
    assert docs[2].meta["tags"] == ["a"]


def test_meta_keys_in_order_and_each_chunk_its_own() -> None:
    docs = SpanchunkDocumentSplitter(block_sizes=[300, 60]).run(
        [Document(content=REPEATED, meta={"name": "a.txt"})]
    )["documents"]
    top, leaf = docs[1], docs[-1]
    for doc in (top, leaf):
        assert list(doc.meta) == [
            "name",
            "__level",
            "__block_size",
            "__parent_id",
            "__children_ids",
            "source_id",
            "page_number",
            "split_id",
            "split_idx_start",
            "split_idx_end",
            "start_byte",
            "end_byte",
        ]
        built = Document(id=doc.id, content=doc.content, meta=doc.meta)
        assert doc == built and list(doc.__dict__.items()) == list(built.__dict__.items())
    top.meta["name"] = "changed"  # no chunk shares another's meta dict
    assert {doc.meta["name"] for doc in docs[2:]} == {"a.txt"}


def test_the_root_is_the_document_haystack_replace_gives() -> None:
    original = Document(content=REPEATED, meta={"name": "a.txt", "tags": ["x"]}, score=0.5)
    root = SpanchunkDocumentSplitter(block_sizes=[300, 60]).run([original])["documents"][0]
    expected = replace(original, meta=root.meta)
    assert root == expected and list(root.__dict__.items()) == list(expected.__dict__.items())
    assert root.to_dict() == expected.to_dict() and root.id == original.id
    assert root.meta["tags"] is not original.meta["tags"] and original.meta == {
        "name": "a.txt",
        "tags": ["x"],
    }


def test_documents_made_in_the_core_pass_the_import_check_and_a_wrong_shape_fails() -> None:
    assert haystack._FAST and haystack._same_haystack_layout()
    fields = {
        "id": None,
        "content": None,
        "blob": None,
        "meta": None,
        "score": None,
        "embedding": None,
        "sparse_embedding": None,
    }
    keys = haystack.META_KEYS

    def shape(fields: dict[str, object], meta_keys: tuple[str, ...] = keys) -> _core.ModelShape:
        return _core.ModelShape(Document, fields, "id", "content", "meta", None, meta_keys)

    assert haystack._same_haystack_layout(shape(fields))
    reordered = shape({"content": None, **fields})
    wrong_default = shape({**fields, "score": 0.0})
    renamed_key = shape(fields, ("level", *keys[1:]))
    for wrong in (reordered, wrong_default, renamed_key):
        assert not haystack._same_haystack_layout(wrong)
    # The core knows no Haystack field name: a shape without the writer's keys is refused.
    with pytest.raises(ValueError, match="needs a ModelShape with 19 meta_keys, not 11"):
        _core.haystack_documents(shape(fields, keys[:11]), [], {}, [2], "r", None, [])


@pytest.mark.parametrize("meta", [{"name": "a.txt"}, {"tags": ["a"], "__level": "stale"}])
def test_the_constructor_fallback_gives_the_same_documents(
    meta: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "# Title\n\n" + REPEATED + "\f\n\n## Part\n\n" + REPEATED[:300]
    documents = [Document(content=text, meta=meta), Document(content=REPEATED[:200])]

    def everything() -> list[Document]:
        splitter = SpanchunkDocumentSplitter(block_sizes=[300, 120, 40], split_overlap=10)
        markdown = SpanchunkDocumentSplitter(block_sizes=[300, 60], markdown=True)
        return splitter.run(documents)["documents"] + markdown.run(documents)["documents"]

    fast = everything()
    monkeypatch.setattr(haystack, "_FAST", False)
    slow = everything()
    assert len(fast) == len(slow) > 40
    for made, built in zip(fast, slow, strict=True):
        assert list(made.__dict__.items()) == list(built.__dict__.items())
        assert list(made.meta.items()) == list(built.meta.items())
        assert made == built and made.to_dict() == built.to_dict()
    assert {doc.meta.get("page_number") for doc in fast} == {None, 1, 2}  # roots: None
    assert any("headings" in doc.meta for doc in fast)


def test_the_core_call_and_chunk_tree_agree_and_keep_no_parents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The parents go out as documents (for the document store): the component's chunker
    # keeps none of them, so a long-lived pipeline does not grow with every run.
    documents = [Document(content="# T\n\n" + REPEATED, meta={"name": "a"})]

    def run_twice() -> tuple[list[Document], int]:
        splitter = SpanchunkDocumentSplitter(block_sizes=[300, 120, 40], markdown=True)
        splitter.run(documents)
        docs = splitter.run(documents)["documents"]
        return docs, len(list(splitter._chunker.parents))

    fast, fast_kept = run_twice()
    monkeypatch.setattr(haystack, "_FAST", False)
    slow, slow_kept = run_twice()
    assert fast == slow and [list(d.meta.items()) for d in fast] == [
        list(d.meta.items()) for d in slow
    ]
    assert len(fast) > 5 and fast_kept == slow_kept == 0


@pytest.mark.parametrize("sizes", [[400, 120], [400, 150, 60]])
def test_html_pages_carry_their_source_spans(sizes: list[int]) -> None:
    page = html_page()
    readable = HtmlChunker(100).read(page).text
    splitter = SpanchunkDocumentSplitter(block_sizes=sizes, html=True)
    result = splitter.run([Document(content=page, id="page.html", meta={"name": "page.html"})])
    root, *docs = result["documents"]
    assert root.content == page and not any(key in root.meta for key in OWN_KEYS)
    assert {doc.meta["__level"] for doc in docs} == set(range(1, len(sizes) + 1))
    source = page.encode("utf-8")
    for doc in docs:
        meta = doc.meta
        # The offsets index the page's readable text, the source span its HTML.
        assert readable[meta["split_idx_start"] : meta["split_idx_end"]] == doc.content
        start, end = meta["source_start_byte"], meta["source_end_byte"]
        assert 0 <= start < end <= len(source)
        found = iter(words(source[start:end].decode("utf-8")))
        assert all(word in found for word in words(doc.content or "")), doc.content
        assert meta["page_number"] == 1 and meta["name"] == "page.html"
    assert result["leaf_documents"] == [doc for doc in docs if not doc.meta["__children_ids"]]
    headed = [doc for doc in docs if "table_header" in doc.meta]
    assert headed
    for doc in headed:
        header = doc.meta["table_header"]
        assert (
            header["text"] == "Name | Size" == readable[header["start_char"] : header["end_char"]]
        )


def test_table_chunks_carry_the_header_as_a_plain_dict() -> None:
    docs = SpanchunkDocumentSplitter(block_sizes=[200, 60], markdown=True).run(
        [Document(content=MARKDOWN_TABLE, id="table")]
    )["documents"]
    headed = [doc for doc in docs if "table_header" in doc.meta]
    assert {doc.meta["__level"] for doc in headed} == {1, 2} and len(headed) < len(docs) - 1
    for doc in headed:
        check_markdown_table_header(doc.meta["table_header"])
        json.dumps(doc.to_dict())
        assert Document.from_dict(doc.to_dict()) == doc
    headed[0].meta["table_header"]["text"] = "changed"  # each document has its own
    assert headed[1].meta["table_header"]["text"] == "| Name | Size |"


@pytest.mark.parametrize("text", [PAGES, LABELLED])
def test_pages_of_a_text_with_page_markers(text: str) -> None:
    docs = SpanchunkDocumentSplitter(block_sizes=[400, 150, 60], include_root=False).run(
        [Document(content=text, id="paged")]
    )["documents"]
    assert_exact(text, docs)
    for doc in docs:
        start, end = doc.meta["split_idx_start"], doc.meta["split_idx_end"]
        assert doc.meta["page_first"] == page_at(text, start), doc.content
        assert doc.meta["page_last"] == page_at(text, end - 1), doc.content
        if text is PAGES:  # Haystack's page_number counts form feeds: the first page
            assert doc.meta["page_number"] == doc.meta["page_first"]
    assert any(doc.meta["page_first"] < doc.meta["page_last"] for doc in docs)


def test_documents_without_them_carry_none_of_the_keys() -> None:
    text = "# Title\n\n" + REPEATED + "\n\n## Part\n\n" + REPEATED[:300]
    docs = [
        *SpanchunkDocumentSplitter(block_sizes=[300, 60]).run([Document(content=REPEATED)])[
            "documents"
        ],
        *SpanchunkDocumentSplitter(block_sizes=[300, 120, 60], markdown=True).run(
            [Document(content=text)]
        )["documents"],
        *SpanchunkDocumentSplitter(block_sizes=[60], language="python").run(
            [Document(content="def f():\n    return 1\n")]
        )["documents"],
    ]
    assert len(docs) > 40
    assert not any(key in doc.meta for doc in docs for key in OWN_KEYS)


def test_html_is_one_structure_and_the_setting_serialises() -> None:
    for other in ({"markdown": True}, {"language": "python"}):
        with pytest.raises(ValueError, match="two structures: give one of them"):
            SpanchunkDocumentSplitter(block_sizes=[400, 100], html=True, **other)  # type: ignore[arg-type]
    splitter = SpanchunkDocumentSplitter(block_sizes={400, 100}, html=True)
    data = splitter.to_dict()
    assert data["init_parameters"]["html"] is True
    assert SpanchunkDocumentSplitter().to_dict()["init_parameters"]["html"] is False
    again = SpanchunkDocumentSplitter.from_dict(data)
    assert again.html and again.to_dict() == data
    documents = [Document(content=html_page(), id="page.html")]
    expected = splitter.run(documents)["documents"]
    assert again.run(documents)["documents"] == expected
    pipeline = Pipeline()
    pipeline.add_component("splitter", splitter)
    loaded = Pipeline.loads(pipeline.dumps(), allowed_modules=["spanchunk.integrations"])
    component = loaded.get_component("splitter")
    assert isinstance(component, SpanchunkDocumentSplitter) and component.to_dict() == data
    assert component.run(documents)["documents"] == expected
    # Ids as the spanchunk tree of the page gives them.
    tree = ParentChildChunker(400, 100, parent_chunker="html").chunk_tree(
        SpanDocument(html_page(), id="page.html")
    )
    assert [doc.id for doc in expected[1:]] == [chunk.id for chunk in tree]


def test_an_html_pages_pages_are_its_comments_and_page_numbers_its_form_feeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # page_first and page_last: the page's markers (comments); page_number: Haystack's count
    # of the form feeds before the chunk in the text it indexes (the readable text, where a
    # form feed survives inside pre).
    page = (
        "<main>"
        + "".join(
            f"<!-- page {n} --><h2>Page {n}</h2><p>{'A sentence of this page. ' * 4}</p>"
            for n in range(1, 6)
        )
        + "<pre>"
        + "a line of code\n" * 4
        + "\f"
        + "another line of code\n" * 6
        + "</pre></main>"
    )
    readable = HtmlChunker(60).read(page).text
    splitter = SpanchunkDocumentSplitter(block_sizes=[200, 60], html=True, include_root=False)
    docs = splitter.run([Document(content=page, id="paged.html")])["documents"]
    assert {doc.meta["page_first"] for doc in docs} == {1, 2, 3, 4, 5}
    assert {doc.meta["page_number"] for doc in docs} == {1, 2}
    for doc in docs:
        start = doc.meta["split_idx_start"]
        assert doc.meta["page_number"] == 1 + readable[:start].count("\f")
        assert f"Page {doc.meta['page_first']}" in readable[: doc.meta["split_idx_end"]]
    monkeypatch.setattr(haystack, "_FAST", False)
    assert splitter.run([Document(content=page, id="paged.html")])["documents"] == docs


def test_the_constructor_fallback_carries_the_same_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = [
        Document(content=MARKDOWN_TABLE, id="table", meta={"tags": ["a"]}),
        Document(content=PAGES, id="pages"),
        Document(content=LABELLED, id="labels", meta={"page_first": 3}),
    ]
    page = [Document(content=html_page(), id="page.html")]

    def everything() -> list[Document]:
        html = SpanchunkDocumentSplitter(block_sizes=[300, 60], html=True).run(page)
        markdown = SpanchunkDocumentSplitter(block_sizes=[300, 120, 40], markdown=True)
        return html["documents"] + markdown.run(documents)["documents"]

    fast = everything()
    monkeypatch.setattr(haystack, "_FAST", False)
    slow = everything()
    assert len(fast) == len(slow) > 40
    for made, built in zip(fast, slow, strict=True):
        assert list(made.meta.items()) == list(built.meta.items())
        assert made == built and made.to_dict() == built.to_dict()
    for key in OWN_KEYS:
        assert any(key in doc.meta for doc in fast), key
    # A document that says which page it starts on: its chunks' pages count from there.
    labelled = [doc for doc in fast if doc.meta.get("source_id") == "labels"]
    assert min(doc.meta["page_first"] for doc in labelled) == 3
